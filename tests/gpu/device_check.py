#!/usr/bin/env python3
"""The Python half of tests/gpu/device_check.sh (read that file first): facts, Hugging Face
parity, CUDA fine-tuning and pretraining, and speed against transformers' SDPA. Every check
prints `RESULT ...` lines and exits non-zero when it fails. Needs torch (CUDA), transformers,
tokenizers and numpy; no network (models are random, made here)."""
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

def facts(_):
    import torch
    import transformers
    result(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cxx11 ABI "
           f"{torch._C._GLIBCXX_USE_CXX11_ABI}, transformers {transformers.__version__}")
    if not torch.cuda.is_available():
        print("FAIL torch sees no CUDA device")
        return 1
    p = torch.cuda.get_device_properties(0)
    result(f"GPU {p.name}, {p.total_memory / 2**30:.0f} GiB, {torch.cuda.device_count()} device(s)")
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
    if arch == "modernbert":
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
    """transformers' last hidden states pooled as lmk pools (CLS: position 0; mean: every
    position of the input, special tokens included)."""
    import torch
    base = model.base_model.to(device)
    out = []
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
        for text in texts:
            ids = torch.tensor([tok.encode(text).ids], device=device)
            h = base(input_ids=ids).last_hidden_state[0].float()
            out.append((h[0] if pooling == "cls" else h.mean(0)).cpu().numpy())
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
    for arch in ("modernbert", "bert"):
        folder = os.path.join(args.work, arch)
        model = make_hf_model(arch, folder, tok_path)
        for device, bf16, limit in (("cpu", False, 1e-4), ("cuda", True, 3e-2)):
            for pooling in ("cls", "mean"):
                npy = os.path.join(args.work, f"{arch}-{pooling}-{device}.npy")
                run([args.lmk, "encode", "--model", folder, "--pooling", pooling,
                     "--no-normalize", "--device", device, "--input", docs, "--out", npy])
                ours = read_npy(npy)
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
                '[output]\ndir = "out"\n')
    proc = run([args.lmk, "train", "--config", config, "--progress-json", "--overwrite"],
               cwd=args.work, capture_output=True)
    rates = [json.loads(line).get("tokens_per_s", 0) for line in proc.stdout.splitlines()
             if line.startswith("{") and '"step"' in line]
    losses = losses_of(os.path.join(args.work, "out"))
    first, last = np.mean(losses[:10]), np.mean(losses[-10:])
    ok = len(losses) == 100 and last < first
    result(f"train cuda bf16: {len(losses)} steps, loss {first:.3f} -> {last:.3f}, "
           f"{rates[-1] if rates else 0:.0f} tokens/s at the end {'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


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
                              max_position_embeddings=8192, attn_implementation="sdpa")
    hf = ModernBertModel(config).cuda().eval()
    for length, count in ((512, 64), (8192, 4)):
        text = words(rng, length - 2)  # + [CLS] and [SEP]
        # lmk: the marginal rate between 1 and `count` documents (model loading cancels out).
        t1, _ = timed_encode(args, folder, [text], os.path.join(args.work, f"one-{length}"))
        tn, peak = timed_encode(args, folder, [text] * count,
                                os.path.join(args.work, f"many-{length}"))
        lmk_rate = (count - 1) * length / max(tn - t1, 1e-9)
        # transformers: SDPA under bf16 autocast, batches of the same shape, after a warm-up.
        batch = 32 if length == 512 else 1
        ids = torch.randint(5, 1005, (batch, length), device="cuda")
        torch.cuda.reset_peak_memory_stats()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            hf(input_ids=ids)
            torch.cuda.synchronize()
            t0 = time.time()
            repeats = max(1, count // batch)
            for _ in range(repeats):
                hf(input_ids=ids)
            torch.cuda.synchronize()
        hf_rate = repeats * batch * length / (time.time() - t0)
        hf_peak = torch.cuda.max_memory_allocated() / 2**20
        result(f"speed base shape {length} tokens: lmk {lmk_rate:.0f} tokens/s (peak GPU "
               f"{peak} MiB, nvidia-smi), transformers SDPA bf16 {hf_rate:.0f} tokens/s "
               f"(peak {hf_peak:.0f} MiB allocated)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("check", choices=["facts", "parity", "train", "pretrain", "speed"])
    parser.add_argument("--lmk")
    parser.add_argument("--work", default="device-check-work")
    args = parser.parse_args()
    return globals()[args.check](args)


if __name__ == "__main__":
    sys.exit(main())
