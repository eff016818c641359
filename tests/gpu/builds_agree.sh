#!/usr/bin/env bash
# The CPU build and the CUDA build compute alike on the CPU (the GPU issue's "a CPU build and
# the CUDA build give the same results on the CPU"): the same model encoded by both, and the
# same short contrastive fine-tune run by both, give byte-identical embeddings and weights; the
# CPU build says it has no CUDA code when asked for a GPU (exit 2).
#   tests/gpu/builds_agree.sh CUDA_BUILD CPU_BUILD WORK
# CPU_BUILD: configured with -DLMK_WITH_CUDA=OFF (scripts/test builds it in build-cpu).
set -euo pipefail
CUDA=$(realpath "$1")/app/lmk CPU=$(realpath "$2")/app/lmk WORK=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${LMK_PYTHON:-$ROOT/.venv/bin/python}
for bin in "$CUDA" "$CPU"; do
  [ -x "$bin" ] || {
    echo "builds_agree: $bin is missing; build it (CPU: cmake -S . -B build-cpu -G Ninja" \
      "-DCMAKE_BUILD_TYPE=Release -DLMK_WITH_GUI=OFF -DLMK_WITH_CUDA=OFF &&" \
      "cmake --build build-cpu --target lmk lmk-engine)" >&2
    exit 2
  }
done
[ ! -e "$2/app/liblmk_cuda.so" ] || {
  echo "builds_agree: $2 has a CUDA module: configure it with -DLMK_WITH_CUDA=OFF" >&2
  exit 2
}
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
"$PY" -c "import sys; sys.path.insert(0, '$ROOT/tests/parity'); from hf_models import word_tokenizer, random_texts, write_jsonl; word_tokenizer('tokenizer.json'); write_jsonl('docs.jsonl', random_texts(1, [3, 40, 300, 900]))"
"$PY" - << 'PY'
import json, random
rng = random.Random(2)
with open("pairs.jsonl", "w") as f:
    for _ in range(64):
        q = [f"w{rng.randrange(1000)}" for _ in range(4)]
        f.write(json.dumps({"query": " ".join(q), "pos": [" ".join(q + [f"w{rng.randrange(1000)}" for _ in range(60)])]}) + "\n")
PY
"$CUDA" model init --preset tiny --tokenizer tokenizer.json --out init --seed 4 2> /dev/null
for build in cuda cpu; do
  bin=$CUDA
  [ $build = cpu ] && bin=$CPU
  for pooling in cls lmk; do
    "$bin" encode --model init --pooling $pooling --input docs.jsonl --out "$build-$pooling.npy" 2> /dev/null
  done
  cat > "$build.toml" << TOML
[model]
init = "init"
[data]
train = "pairs.jsonl"
[train]
pooling = "lmk"
train_landmarks = "fixed:16"
eval_landmarks = "fixed:16"
batch_size = 8
max_steps = 6
seed = 3
[output]
dir = "$build-train"
TOML
  "$bin" train --config "$build.toml" 2> "$build-train.log"
done
status=0
for pair in cls.npy lmk.npy train/last/model.safetensors; do
  a=cuda-$pair b=cpu-$pair
  if cmp -s "$a" "$b"; then
    echo "RESULT $pair: the CPU build's and the CUDA build's are byte-identical ok"
  else
    echo "RESULT $pair: the CPU build's and the CUDA build's differ FAIL"
    status=1
  fi
done
if "$CPU" encode --model init --input docs.jsonl --out gpu.npy --device cuda 2> gpu.log; then
  echo "RESULT the CPU build ran --device cuda FAIL"
  status=1
elif [ $? -eq 2 ] && grep -q "no CUDA code" gpu.log; then
  echo "RESULT the CPU build refuses --device cuda: $(tail -1 gpu.log) ok"
else
  echo "RESULT the CPU build's --device cuda: $(tail -1 gpu.log) FAIL"
  status=1
fi
exit $status
