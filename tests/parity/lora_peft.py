#!/usr/bin/env python3
"""LoRA adapters between lmk and PEFT, both ways, on a random model made by transformers.

  lora_peft.py --lmk BIN --work DIR ARCH        ARCH: qwen3, llama or bert

lmk -> PEFT: `lmk train` with [lora] (rank 4, every linear layer, dropout 0.1) fine-tunes the
model contrastively for a few steps and writes last/ (the adapters merged) and last-adapter/
(a PEFT folder). PEFT loads last-adapter/ onto transformers' AutoModel of the base
(PeftModel.from_pretrained); its hidden states, pooled as lmk pools, must equal `lmk encode` of
last/ within 1e-5, and PEFT's merge_and_unload must give last/'s weights. The weights lmk did not
adapt must be the base's exactly (frozen), the B matrices must have moved from zero (trained),
and a planted bug (adapter_config.json's lora_alpha doubled) must break the agreement.

PEFT -> lmk: PEFT attaches random adapters (init_lora_weights=False: A and B both random) on the
base class and on the *ForCausalLM / *ForMaskedLM class (tensor names with the class prefix),
saves them, and `lmk model merge-lora` merges each into the base: `lmk encode` of the merged
folder must equal PEFT's forward within 1e-5.
"""
import argparse
import json
import os
import shutil
import sys

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # the load reports name lm_head etc.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models  # noqa: E402
from hf_models import (DECODERS, decoder_reference, decoder_tokenizer, lmk_encode,  # noqa: E402
                       random_texts, reference, result, run, word_tokenizer, write_jsonl)

import numpy as np  # noqa: E402
import torch  # noqa: E402

POOLINGS = {"decoder": ("last", "mean", "lmk"), "encoder": ("cls", "mean", "lmk")}


def make_base(arch, work):
    """A random transformers model (the parity tests' first shape) saved with a tokenizer."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM
    decoder = arch in DECODERS
    label, config, _, _ = hf_models.hf_shapes(arch)[0]
    torch.manual_seed(0)
    config._attn_implementation = "eager"
    auto = AutoModelForCausalLM if decoder else AutoModelForMaskedLM
    folder = os.path.join(work, "base")
    shutil.rmtree(folder, ignore_errors=True)
    auto.from_config(config).eval().save_pretrained(folder)
    tok_path = os.path.join(folder, "tokenizer.json")
    decoder_tokenizer(tok_path, bos=False) if decoder else word_tokenizer(tok_path)
    return folder, label


def pooled(arch, model, tok, texts, pooling):
    """Hidden states of a transformers (or PEFT) model, pooled as lmk pools (hf_models)."""
    if arch in DECODERS:
        return decoder_reference(model, tok, texts, pooling)
    return reference(model, tok, texts, pooling)


def base_model(folder):
    from transformers import AutoModel
    return AutoModel.from_pretrained(folder, dtype=torch.float32,
                                     attn_implementation="eager").eval()


def training_pairs(path):
    """A learnable retrieval task over the word vocabulary (as tests/cli/train_cli_test)."""
    filler = " ".join(f"w{k % 10}" for k in range(40))
    with open(path, "w") as f:
        for i in range(32):
            a, b, c = 10 + (i * 7) % 80, 10 + (i * 13 + 5) % 80, 10 + (i * 11 + 40) % 80
            f.write(json.dumps({"query": f"w{a} w{b}", "pos": [f"w{a} {filler} w{b}"],
                                "neg": [f"w{c} {filler} w{c + 1}"]}) + "\n")


def lmk_to_peft(args, base, tok, texts, kind):
    from peft import PeftModel
    from safetensors.torch import load_file
    work = args.work
    training_pairs(os.path.join(work, "pairs.jsonl"))
    with open(os.path.join(work, "train.toml"), "w") as f:
        f.write(f"""[model]
init = "{base}"
[data]
train = "pairs.jsonl"
[train]
pooling = "lmk"
granularity = {hf_models.G}
batch_size = 4
negatives = 1
learning_rate = 5e-3
max_steps = 6
log_every = 1
seed = 3
[lora]
rank = 4
alpha = 8
dropout = 0.1
[output]
dir = "out"
""")
    shutil.rmtree(os.path.join(work, "out"), ignore_errors=True)
    run([args.lmk, "train", "--config", os.path.join(work, "train.toml")])
    merged, adapter = os.path.join(work, "out", "last"), os.path.join(work, "out", "last-adapter")

    lora = load_file(os.path.join(adapter, "adapter_model.safetensors"))
    moved = min(float(t.abs().max()) for n, t in lora.items() if n.endswith("lora_B.weight"))
    print(f"RESULT lmk {args.arch}: every B matrix trained away from zero: smallest max |B| "
          f"{moved:.2e} {'ok' if moved > 0 else 'FAIL'}", flush=True)
    if moved <= 0:
        hf_models.FAILED.append("B trained")

    peft = PeftModel.from_pretrained(base_model(base), adapter).eval()
    docs = os.path.join(work, "docs.jsonl")
    write_jsonl(docs, texts)
    for pooling in POOLINGS[kind]:
        ours = lmk_encode(args, merged, docs, pooling, os.path.join(work, "ours.npy"))
        diff = float(np.abs(ours - pooled(args.arch, peft, tok, texts, pooling)).max())
        result(f"lmk {args.arch} LoRA training -> PEFT adapter folder -> transformers + peft, "
               f"{pooling}", diff)

    # Frozen weights unchanged; adapted ones equal PEFT's merge.
    unloaded = {n: t for n, t in peft.merge_and_unload().state_dict().items()}
    mine = base_model(merged).state_dict()
    before = base_model(base).state_dict()
    adapted = {p + ".weight" for p in json.load(open(os.path.join(adapter,
                                                                  "adapter_config.json")))
               ["target_modules"]}
    # (BERT's pooler is not lmk's: transformers draws it anew for a folder without it.)
    frozen = max(float((mine[n] - before[n]).abs().max()) for n in mine
                 if n not in adapted and not n.startswith("pooler."))
    result(f"lmk {args.arch} LoRA: weights outside the adapters unchanged", frozen, 0.0)
    merge = max(float((mine[n] - unloaded[n]).abs().max()) for n in adapted)
    result(f"lmk {args.arch} LoRA: merged weights against PEFT's merge_and_unload", merge, 1e-6)
    moved_weights = max(float((mine[n] - before[n]).abs().max()) for n in adapted)
    print(f"RESULT lmk {args.arch}: adapted weights moved by up to {moved_weights:.2e}", flush=True)

    # Planted bug: an adapter folder whose scale differs must not agree.
    planted = os.path.join(work, "planted-adapter")
    shutil.rmtree(planted, ignore_errors=True)
    shutil.copytree(adapter, planted)
    config = json.load(open(os.path.join(planted, "adapter_config.json")))
    config["lora_alpha"] *= 2
    json.dump(config, open(os.path.join(planted, "adapter_config.json"), "w"))
    wrong = PeftModel.from_pretrained(base_model(base), planted).eval()
    ours = lmk_encode(args, merged, docs, "mean", os.path.join(work, "ours.npy"))
    diff = float(np.abs(ours - pooled(args.arch, wrong, tok, texts, "mean")).max())
    caught = diff > hf_models.LIMIT
    print(f"RESULT planted bug (lora_alpha doubled) detected: diff {diff:.2e} "
          f"{'ok' if caught else 'FAIL'}", flush=True)
    if not caught:
        hf_models.FAILED.append("planted lora_alpha")


def peft_to_lmk(args, base, tok, texts, kind):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM
    work = args.work
    targets = (["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
               if kind == "decoder" else ["query", "key", "value", "output.dense",
                                          "intermediate.dense"])  # not the MLM head's dense
    head_class = AutoModelForCausalLM if kind == "decoder" else AutoModelForMaskedLM
    docs = os.path.join(work, "docs.jsonl")
    write_jsonl(docs, texts)
    for label, load in (("base class", base_model),
                        ("head class", lambda f: head_class.from_pretrained(
                            f, dtype=torch.float32, attn_implementation="eager").eval())):
        torch.manual_seed(5)
        config = LoraConfig(r=4, lora_alpha=16, target_modules=targets, init_lora_weights=False)
        peft = get_peft_model(load(base), config).eval()
        with torch.no_grad():  # B: random, larger than PEFT's draw, so the adapters matter
            for name, p in peft.named_parameters():
                if "lora_B" in name:
                    p.normal_(0, 0.05)
        adapter = os.path.join(work, "peft-adapter")
        shutil.rmtree(adapter, ignore_errors=True)
        peft.save_pretrained(adapter)
        merged = os.path.join(work, "peft-merged")
        shutil.rmtree(merged, ignore_errors=True)
        run([args.lmk, "model", "merge-lora", "--adapter", adapter, "--base", base, "--out",
             merged])
        backbone = peft.base_model.model
        backbone = getattr(backbone, "base_model", backbone)  # *For...: its base model
        for pooling in POOLINGS[kind]:
            ours = lmk_encode(args, merged, docs, pooling, os.path.join(work, "ours.npy"))
            diff = float(np.abs(ours - pooled(args.arch, backbone, tok, texts, pooling)).max())
            result(f"PEFT adapter on transformers {args.arch} ({label}) -> lmk model merge-lora, "
                   f"{pooling}", diff)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lmk", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("arch", choices=["qwen3", "llama", "bert"])
    args = parser.parse_args()
    args.lmk = os.path.abspath(args.lmk)
    os.makedirs(args.work, exist_ok=True)
    os.chdir(args.work)
    from tokenizers import Tokenizer
    base, label = make_base(args.arch, args.work)
    tok = Tokenizer.from_file(os.path.join(base, "tokenizer.json"))
    kind = "decoder" if args.arch in DECODERS else "encoder"
    texts = random_texts(11, [3, 17, 60, 200])
    lmk_to_peft(args, base, tok, texts, kind)
    peft_to_lmk(args, base, tok, texts, kind)
    if hf_models.FAILED:
        print("FAILED: " + "; ".join(hf_models.FAILED))
        return 1
    print(f"lora_peft {args.arch} ({label}): every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
