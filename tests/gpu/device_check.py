#!/usr/bin/env python3
"""The Python half of tests/gpu/device_check.sh (read that file first): facts, Hugging Face
parity, CUDA fine-tuning and pretraining, and speed against transformers' SDPA. Every check
prints `RESULT ...` lines and exits non-zero when it fails. Needs torch (CUDA), transformers,
tokenizers and numpy -- the GPU machine's own --; no network (models are random, made here).
`imports` (the plan's check) only imports them."""
import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time

import numpy as np

# The word-level tokenizer the CPU parity tests use (one definition, tests/parity/hf_models.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parity"))
from hf_models import word_tokenizer  # noqa: E402


def run(cmd, **kw):
    print("+", " ".join(map(str, cmd)), flush=True)
    return subprocess.run(cmd, check=True, text=True, **kw)


def result(text):
    print("RESULT " + text, flush=True)


def words(rng, n):
    return " ".join(f"w{rng.randrange(1000)}" for _ in range(n))


def read_npy(path):
    return np.load(path).astype(np.float64)


# ---- facts -----------------------------------------------------------------------------------

def imports(_):
    import tokenizers  # noqa: F401
    import torch  # noqa: F401
    import transformers  # noqa: F401
    return 0


def facts(args):
    import torch
    import transformers
    result(f"python {sys.executable}")
    result(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cxx11 ABI "
           f"{torch._C._GLIBCXX_USE_CXX11_ABI}, transformers {transformers.__version__}")
    manifest = os.path.join(args.bundle or "", "MANIFEST")
    if os.path.exists(manifest):
        with open(manifest) as f:
            head = [line.strip("# \n") for line in f if line.startswith("#")][:2]
        result("bundle " + "; ".join(head))
    if not torch.cuda.is_available():
        print("FAIL torch sees no CUDA device")
        return 1
    p = torch.cuda.get_device_properties(0)
    count = torch.cuda.device_count()
    result(f"GPU {p.name}, {p.total_memory / 2**30:.0f} GiB, {count} device(s)")
    if count < 2:
        # NCCL needs a GPU per rank (two ranks on one device are refused): lmk's NCCL group
        # (bound device, prefix store, shutdown) is not checked here.
        result("NCCL: not tested (one GPU; two ranks on one device are refused)")
    subprocess.run(["nvidia-smi"], check=False)
    if not torch._C._GLIBCXX_USE_CXX11_ABI:
        print("NOTE this wheel uses the pre-C++11 ABI: linking lmk against the system's C++ "
              "libraries (sentencepiece) may fail; a cxx11-ABI LibTorch avoids that")
    return 0


# ---- parity ----------------------------------------------------------------------------------

def make_hf_model(arch, folder, tok_path):
    import shutil
    import torch
    from transformers import BertConfig, BertForMaskedLM, ModernBertConfig, ModernBertForMaskedLM
    torch.manual_seed(0)
    if arch in ("qwen3", "llama"):
        # Decoders (causal): head size 32, grouped-query attention 4 / 2. Qwen3's per-head
        # query / key RMSNorms run in fp32: under autocast its q and k must meet v's dtype
        # before FlashAttention (the first-run bug this checks).
        from transformers import LlamaConfig, LlamaForCausalLM, Qwen3Config, Qwen3ForCausalLM
        shape = dict(vocab_size=1005, hidden_size=128, intermediate_size=192,
                     num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                     max_position_embeddings=1024, pad_token_id=0, bos_token_id=2,
                     eos_token_id=3, attn_implementation="eager")
        model = (Qwen3ForCausalLM(Qwen3Config(head_dim=32, **shape)) if arch == "qwen3"
                 else LlamaForCausalLM(LlamaConfig(**shape)))
    elif arch == "gte":
        from transformers import GteConfig, GteForMaskedLM  # transformers >= 5.2x
        config = GteConfig(vocab_size=1005, hidden_size=64, intermediate_size=96,
                           num_hidden_layers=2, num_attention_heads=4, pad_token_id=0,
                           max_position_embeddings=1024, attn_implementation="eager")
        model = GteForMaskedLM(config)
    elif arch == "modernbert":
        config = ModernBertConfig(vocab_size=1005, hidden_size=64, intermediate_size=96,
                                  num_hidden_layers=3, num_attention_heads=4,
                                  global_attn_every_n_layers=3, local_attention=16,
                                  max_position_embeddings=1024, pad_token_id=0, cls_token_id=2,
                                  sep_token_id=3, bos_token_id=2, eos_token_id=3,
                                  attn_implementation="eager")
        model = ModernBertForMaskedLM(config)
    else:
        config = BertConfig(vocab_size=1005, hidden_size=64, intermediate_size=128,
                            num_hidden_layers=2, num_attention_heads=4,
                            max_position_embeddings=512, pad_token_id=0,
                            attn_implementation="eager")
        model = BertForMaskedLM(config)
    model.eval().save_pretrained(folder, safe_serialization=True)
    shutil.copy(tok_path, os.path.join(folder, "tokenizer.json"))
    return model


def reference(model, tok, texts, pooling, device, bf16):
    """transformers' last hidden states pooled as lmk pools (CLS: position 0; last: the final
    position; mean: every position of the input, special tokens included)."""
    import torch
    base = model.base_model.to(device)
    out = []
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
        for text in texts:
            ids = torch.tensor([tok.encode(text).ids], device=device)
            h = base(input_ids=ids).last_hidden_state[0].float()
            pooled = h[0] if pooling == "cls" else h[-1] if pooling == "last" else h.mean(0)
            out.append(pooled.cpu().numpy())
    return np.stack(out).astype(np.float64)


def parity(args):
    from tokenizers import Tokenizer
    os.makedirs(args.work, exist_ok=True)
    tok_path = os.path.join(args.work, "tokenizer.json")
    word_tokenizer(tok_path)
    tok = Tokenizer.from_file(tok_path)
    rng = random.Random(1)
    texts = [words(rng, rng.randrange(5, 400)) for _ in range(12)]
    docs = os.path.join(args.work, "docs.jsonl")
    with open(docs, "w") as f:
        for t in texts:
            f.write(json.dumps({"text": t}) + "\n")
    failed = 0
    for arch in ("modernbert", "bert", "gte", "qwen3", "llama"):
        folder = os.path.join(args.work, arch)
        try:
            model = make_hf_model(arch, folder, tok_path)
        except ImportError as e:  # an older transformers there: said, not hidden
            print(f"SKIP parity {arch}: {e}", flush=True)
            continue
        for device, bf16, limit in (("cpu", False, 1e-4), ("cuda", True, 3e-2)):
            for pooling in (("last", "mean") if arch in ("qwen3", "llama") else ("cls", "mean")):
                npy = os.path.join(args.work, f"{arch}-{pooling}-{device}.npy")
                run([args.lmk, "encode", "--model", folder, "--pooling", pooling,
                     "--no-normalize", "--device", device, "--input", docs, "--out", npy])
                ours = read_npy(npy)
                if np.isnan(ours).any():  # a padded row attending to nothing (masked SDPA)
                    failed += 1
                    result(f"parity {arch} {pooling} {device}: NaN in lmk's embeddings FAIL")
                    continue
                want = reference(model, tok, texts, pooling, device, bf16)
                diff = np.abs(ours - want).max()
                value = diff if not bf16 else diff / np.abs(want).max()
                ok = value <= limit
                failed += not ok
                kind = "max abs diff" if not bf16 else "max abs diff / max abs value"
                result(f"parity {arch} {pooling} {device}{' bf16' if bf16 else ' fp32'}: "
                       f"{kind} {value:.2e} (limit {limit:g}) {'ok' if ok else 'FAIL'}")
    # lmk's own export read by transformers.
    from transformers import AutoModelForMaskedLM
    folder = os.path.join(args.work, "lmk-export")
    run([args.lmk, "model", "init", "--preset", "tiny", "--tokenizer", tok_path, "--out", folder,
         "--layers", "5", "--seed", "3"])
    model = AutoModelForMaskedLM.from_pretrained(folder, attn_implementation="eager").eval()
    npy = os.path.join(args.work, "export-cls.npy")
    run([args.lmk, "encode", "--model", folder, "--pooling", "cls", "--no-normalize",
         "--input", docs, "--out", npy])
    diff = np.abs(read_npy(npy) - reference(model, tok, texts, "cls", "cpu", False)).max()
    failed += not diff <= 1e-4
    result(f"parity lmk export (5 layers) read by transformers: max abs diff {diff:.2e} "
           f"{'ok' if diff <= 1e-4 else 'FAIL'}")
    return 1 if failed else 0


# ---- training --------------------------------------------------------------------------------

def losses_of(out_dir):
    with open(os.path.join(out_dir, "last", "train_state.json")) as f:
        return json.load(f)["losses"]


def safetensors_of(folder, name):
    """The tensors of a safetensors file of `folder`, as float32 numpy arrays."""
    from safetensors.numpy import load_file
    return {k: v.astype(np.float32) for k, v in load_file(os.path.join(folder, name)).items()}


def lora_run(args, steps, out):
    """`steps` LoRA steps (rank 4, no weight decay: an adapter moves only by its gradients)."""
    config = os.path.join(args.work, f"lora-{steps}.toml")
    with open(config, "w") as f:
        f.write('[model]\ninit = "init"\n[data]\ntrain = "pairs.jsonl"\n[train]\n'
                'pooling = "mean"\nbatch_size = 16\nnegatives = 1\nlearning_rate = 3e-3\n'
                f'weight_decay = 0\nmax_steps = {steps}\nseed = 5\ndevice = "cuda"\n'
                f'[lora]\nrank = 4\nalpha = 8\n[output]\ndir = "{out}"\n')
    run([args.lmk, "train", "--config", config, "--overwrite"], cwd=args.work)
    return safetensors_of(os.path.join(args.work, out, "last-adapter"),
                          "adapter_model.safetensors")


def train(args):
    os.makedirs(args.work, exist_ok=True)
    tok_path = os.path.join(args.work, "tokenizer.json")
    word_tokenizer(tok_path)
    init = os.path.join(args.work, "init")
    run([args.lmk, "model", "init", "--preset", "tiny", "--tokenizer", tok_path, "--out", init,
         "--seed", "1"])
    rng = random.Random(2)
    with open(os.path.join(args.work, "pairs.jsonl"), "w") as f:
        for _ in range(2000):
            topic = [f"w{rng.randrange(1000)}" for _ in range(3)]
            pos = " ".join(topic + words(rng, 60).split())
            f.write(json.dumps({"query": " ".join(topic), "pos": [pos],
                                "neg": [words(rng, 63)]}) + "\n")
    config = os.path.join(args.work, "train.toml")
    with open(config, "w") as f:
        f.write('[model]\ninit = "init"\n[data]\ntrain = "pairs.jsonl"\n[train]\n'
                'pooling = "lmk"\ntrain_landmarks = "variable:8,16"\neval_landmarks = "fixed:16"\n'
                "batch_size = 16\nnegatives = 1\nlearning_rate = 3e-3\nwarmup_ratio = 0.1\n"
                'temperature = 0.05\nmax_steps = 100\nlog_every = 1\ndevice = "cuda"\n'
                'recompute_layers = true\ncheckpoint_every = 1000\n[output]\ndir = "out"\n')
    proc = run([args.lmk, "train", "--config", config, "--progress-json", "--overwrite"],
               cwd=args.work, capture_output=True)
    rates = [json.loads(line).get("tokens_per_s", 0) for line in proc.stdout.splitlines()
             if line.startswith("{") and '"step"' in line]
    losses = losses_of(os.path.join(args.work, "out"))
    first, last = np.mean(losses[:10]), np.mean(losses[-10:])
    ok = len(losses) == 100 and last < first
    result(f"train cuda bf16, recompute_layers: {len(losses)} steps, loss {first:.3f} -> "
           f"{last:.3f}, {rates[-1] if rates else 0:.0f} tokens/s at the end "
           f"{'ok' if ok else 'FAIL'}")
    failed = not ok
    # The linear layers learned, not only embeddings and norms: every attention / MLP weight of
    # the saved model moved from its initialization.
    start = safetensors_of(init, "model.safetensors")
    end = safetensors_of(os.path.join(args.work, "out", "last"), "model.safetensors")
    linear = [k for k in start if k.endswith(".weight") and start[k].ndim == 2
              and "layers." in k and "norm" not in k]
    still = [k for k in linear if np.array_equal(start[k], end.get(k, start[k]))]
    ok = bool(linear) and not still
    failed += not ok
    result(f"train cuda bf16: {len(linear) - len(still)} of {len(linear)} linear weights moved "
           f"{'ok' if ok else 'FAIL (unchanged: ' + ', '.join(still[:4]) + ')'}")
    # LoRA: B is 0 at the start, so A gets a gradient only once a forward sees the updated B.
    # With autocast's cache kept across steps every forward saw step 1's B = 0: A never moved.
    one, many = lora_run(args, 1, "lora-1"), lora_run(args, 20, "lora-20")
    a_keys = [k for k in many if "lora_A" in k]
    b_keys = [k for k in many if "lora_B" in k]
    a_moved = sum(not np.array_equal(one[k], many[k]) for k in a_keys)
    b_nonzero = sum(bool(np.any(many[k] != 0)) for k in b_keys)
    ok = a_keys and a_moved == len(a_keys) and b_nonzero == len(b_keys)
    failed += not ok
    result(f"train cuda bf16 LoRA r4, 20 steps: {b_nonzero} of {len(b_keys)} B non-zero, "
           f"{a_moved} of {len(a_keys)} A moved after step 1 {'ok' if ok else 'FAIL'}")
    return 1 if failed else 0


def pretrain(args):
    os.makedirs(os.path.join(args.work, "texts"), exist_ok=True)
    tok_path = os.path.join(args.work, "tokenizer.json")
    word_tokenizer(tok_path)
    run([args.lmk, "model", "init", "--preset", "tiny", "--tokenizer", tok_path, "--out",
         os.path.join(args.work, "init"), "--seed", "1"])
    rng = random.Random(3)
    for d in range(30):
        text = []
        for _ in range(60):
            a = rng.randrange(10, 50)
            text += [f"w{a}", f"w{a + 40}", f"w{(a * 3) % 90 + 10}", "w5"]
        with open(os.path.join(args.work, "texts", f"doc{d}.txt"), "w") as f:
            f.write(" ".join(text))
    config = os.path.join(args.work, "p.toml")
    with open(config, "w") as f:
        f.write('[model]\ninit = "init"\n[data]\ntrain = "texts"\n[train]\nmax_length = 64\n'
                'batch_size = 8\nlearning_rate = 3e-3\nmax_steps = 30\nseed = 3\n'
                'device = "cuda"\n[output]\ndir = "out"\n')
    run([args.lmk, "pretrain", "--config", config, "--overwrite"], cwd=args.work)
    losses = losses_of(os.path.join(args.work, "out"))
    ok = len(losses) == 30 and np.mean(losses[-5:]) < losses[0] - 0.5
    result(f"pretrain cuda bf16: loss {losses[0]:.3f} -> {np.mean(losses[-5:]):.3f} "
           f"{'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


# ---- speed -----------------------------------------------------------------------------------

class GpuMemory:
    """The largest used GPU memory nvidia-smi reports while it runs (MiB)."""

    def __init__(self):
        self.peak, self.running = 0, True
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()

    def poll(self):
        while self.running:
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used",
                                  "--format=csv,noheader,nounits"], capture_output=True,
                                 text=True).stdout.split()
            if out:
                self.peak = max(self.peak, int(out[0]))
            time.sleep(0.1)

    def stop(self):
        self.running = False
        self.thread.join()
        return self.peak


def timed_encode(args, folder, texts, path):
    docs = path + ".jsonl"
    with open(docs, "w") as f:
        for t in texts:
            f.write(json.dumps({"text": t}) + "\n")
    memory = GpuMemory()
    t0 = time.time()
    run([args.lmk, "encode", "--model", folder, "--pooling", "cls", "--device", "cuda",
         "--input", docs, "--out", path + ".npy", "--batch-size", "32"])
    return time.time() - t0, memory.stop()


def encode_rate(args, folder, texts, tag):
    """lmk's marginal forward rate on `texts` (tokens/s), between one text and all of them, so
    that model loading cancels out; and the peak GPU memory nvidia-smi saw."""
    t1, _ = timed_encode(args, folder, texts[:1], os.path.join(args.work, f"one-{tag}"))
    tn, peak = timed_encode(args, folder, texts, os.path.join(args.work, f"all-{tag}"))
    tokens = sum(len(t.split()) + 2 for t in texts[1:])
    return tokens / max(tn - t1, 1e-9), peak


def hf_rate(hf, lengths, batch):
    """transformers' forward (SDPA, bf16 autocast) on padded batches of `lengths`, after a
    warm-up: real tokens per second, and the peak memory allocated."""
    import torch
    torch.cuda.reset_peak_memory_stats()
    batches = [lengths[i:i + batch] for i in range(0, len(lengths), batch)]
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for warm in (True, False):
            torch.cuda.synchronize()
            t0 = time.time()
            for group in batches[:1] if warm else batches:
                width = max(group)
                ids = torch.randint(5, 1005, (len(group), width), device="cuda")
                mask = (torch.arange(width, device="cuda")[None, :] <
                        torch.tensor(group, device="cuda")[:, None]).long()
                hf(input_ids=ids, attention_mask=mask)
            torch.cuda.synchronize()
    return sum(lengths) / (time.time() - t0), torch.cuda.max_memory_allocated() / 2**20


def speed(args):
    import torch
    from transformers import ModernBertConfig, ModernBertModel
    os.makedirs(args.work, exist_ok=True)
    tok_path = os.path.join(args.work, "tokenizer.json")
    word_tokenizer(tok_path)
    folder = os.path.join(args.work, "base")
    run([args.lmk, "model", "init", "--preset", "base", "--tokenizer", tok_path, "--out", folder])
    rng = random.Random(4)
    config = ModernBertConfig(vocab_size=1005, hidden_size=768, intermediate_size=1152,
                              num_hidden_layers=22, num_attention_heads=12,
                              global_attn_every_n_layers=3, local_attention=128,
                              max_position_embeddings=8192, pad_token_id=0,
                              attn_implementation="sdpa")
    hf = ModernBertModel(config).cuda().eval()
    # Fixed lengths, then variable ones (as the ModernBERT paper measures: lengths drawn from a
    # normal distribution around half the maximum, cut to [16, maximum]).
    for length, count, batch in ((512, 256, 32), (8192, 16, 2)):
        for kind in ("fixed", "variable"):
            if kind == "fixed":
                lengths = [length] * count
            else:
                lengths = [int(min(length, max(16, rng.gauss(length / 2, length / 4))))
                           for _ in range(count)]
            texts = [words(rng, n - 2) for n in lengths]  # + [CLS] and [SEP]
            ours, peak = encode_rate(args, folder, texts, f"{kind}-{length}")
            theirs, hf_peak = hf_rate(hf, lengths, batch)
            result(f"speed forward, base shape, {kind} lengths up to {length}: lmk {ours:.0f} "
                   f"tokens/s (peak GPU {peak} MiB, nvidia-smi), transformers SDPA bf16 "
                   f"{theirs:.0f} tokens/s (peak {hf_peak:.0f} MiB allocated): "
                   f"{ours / max(theirs, 1e-9):.2f}x")
    # Training at 512 tokens: tokens/s of a contrastive fine-tune of the base shape, and MFU
    # against the GPU's dense bf16 peak (H100 / H200 SXM: 989 TFLOP/s).
    rng = random.Random(5)
    with open(os.path.join(args.work, "pairs.jsonl"), "w") as f:
        for _ in range(32 * 24):
            f.write(json.dumps({"query": words(rng, 30), "pos": [words(rng, 510)]}) + "\n")
    with open(os.path.join(args.work, "train.toml"), "w") as f:
        f.write('[model]\ninit = "base"\n[data]\ntrain = "pairs.jsonl"\n[train]\n'
                'pooling = "lmk"\neval_landmarks = "fixed:32"\ntrain_landmarks = "fixed:32"\n'
                "query_max_length = 32\npassage_max_length = 512\nbatch_size = 32\n"
                'negatives = 0\nmax_steps = 24\nlog_every = 1\ndevice = "cuda"\n'
                '[output]\ndir = "train-out"\n')
    memory = GpuMemory()
    proc = run([args.lmk, "train", "--config", "train.toml", "--progress-json", "--overwrite"],
               cwd=args.work, capture_output=True)
    peak = memory.stop()
    rates = [json.loads(line).get("tokens_per_s", 0) for line in proc.stdout.splitlines()
             if line.startswith("{") and '"step"' in line]
    rate = float(np.median(rates[4:])) if len(rates) > 4 else 0.0
    params = sum(p.numel() for p in hf.parameters())
    mfu = 6 * params * rate / 989e12
    result(f"speed training, base shape, 512-token passages, batch 32, bf16: {rate:.0f} "
           f"tokens/s (median of steps 5-24), {params / 1e6:.0f} M parameters, MFU "
           f"{100 * mfu:.1f} % of 989 TFLOP/s, peak GPU {peak} MiB (nvidia-smi)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("check",
                        choices=["imports", "facts", "parity", "train", "pretrain", "speed"])
    parser.add_argument("--lmk")
    parser.add_argument("--bundle", default="")
    parser.add_argument("--work", default="device-check-work")
    args = parser.parse_args()
    return globals()[args.check](args)


if __name__ == "__main__":
    sys.exit(main())
