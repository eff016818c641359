#!/usr/bin/env bash
# The GPU issue's device check: ONE run of at most 10 minutes on a machine with one NVIDIA GPU,
# PyTorch 2.x with CUDA and transformers installed (no network needed), from the repository
# root:
#   tests/gpu/device_check.sh [OUT_DIR]        (default: $OUT, else ./device-check)
# Steps, each with its own time limit, each logged to OUT_DIR/NAME.log, never stopping the
# others:
#   1. facts      GPU, driver, PyTorch / CUDA / transformers versions, the C++ ABI
#   2. configure  cmake against the wheel's LibTorch (-DLMK_WITH_GUI=OFF, ccache when present)
#   3. build      only lmk (the CLI) and lmk_encode_bench
#   4. parity     random tiny ModernBERT and BERT made and saved by transformers, read by lmk:
#                 lmk's CLS and mean embeddings against transformers' last hidden states, in
#                 fp32 on the CPU (max abs diff <= 1e-4) and on CUDA under bf16 autocast
#                 (relative <= 3e-2); then lmk's own export loaded back by transformers
#   5. train      a 100-step contrastive fine-tune with --device cuda (bf16 autocast): the loss
#                 of the last 10 steps below that of the first 10
#   6. pretrain   30 MLM steps with --device cuda: the loss falls
#   7. speed      the ModernBERT-base shape at 512 and 8192 tokens: lmk encode on CUDA
#                 (tokens/s, peak GPU memory from nvidia-smi) next to transformers' SDPA forward
#                 under bf16 autocast on the same GPU (tokens/s, torch.cuda.max_memory_allocated)
# and one summary at the end (also OUT_DIR/summary.txt). Exit status: 0 when every step passed.
# Record what it prints in docs/BENCHMARKS.md ("GPU device check").
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-${OUT:-$PWD/device-check}}
mkdir -p "$OUT"
BUILD=${LMK_GPU_BUILD:-$ROOT/build-gpu}
LMK=$BUILD/app/lmk
PY=${PYTHON:-python3}
HELPER=$ROOT/tests/gpu/device_check.py
declare -a SUMMARY=()
FAILED=0
START=$(date +%s)

# step NAME LIMIT_SECONDS COMMAND...: runs it with its output in OUT/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local t0 rc
  t0=$(date +%s)
  echo "== $name (at most ${limit}s) =="
  timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  local took=$(($(date +%s) - t0))
  local last
  last=$(grep -E '^(RESULT|FAIL|ERROR)' "$OUT/$name.log" | tail -3 | tr '\n' ' ')
  if [ $rc -eq 0 ]; then
    SUMMARY+=("PASS  $name (${took}s) $last")
  else
    FAILED=1
    [ $rc -eq 124 ] && last="timed out after ${limit}s; $last"
    SUMMARY+=("FAIL  $name (${took}s, exit $rc) $last -- see $OUT/$name.log")
  fi
  tail -5 "$OUT/$name.log"
}

step facts 60 "$PY" "$HELPER" facts

# cmake against the wheel's LibTorch (ccache and Ninja when present).
PREFIX=$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2> /dev/null)
CONFIGURE=(cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLMK_WITH_GUI=OFF
  "-DCMAKE_PREFIX_PATH=$PREFIX")
command -v ninja > /dev/null && CONFIGURE+=(-G Ninja)
command -v ccache > /dev/null && CONFIGURE+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
step configure 120 "${CONFIGURE[@]}"
step build 300 cmake --build "$BUILD" --target lmk lmk_encode_bench -j "$(nproc)"

if [ -x "$LMK" ]; then
  step parity 90 "$PY" "$HELPER" parity --lmk "$LMK" --work "$OUT/parity"
  step train 120 "$PY" "$HELPER" train --lmk "$LMK" --work "$OUT/train"
  step pretrain 90 "$PY" "$HELPER" pretrain --lmk "$LMK" --work "$OUT/pretrain"
  step speed 150 "$PY" "$HELPER" speed --lmk "$LMK" --work "$OUT/speed"
else
  FAILED=1
  SUMMARY+=("SKIP  parity, train, pretrain, speed: no lmk binary ($LMK)")
fi

{
  echo
  echo "== device check summary ($(($(date +%s) - START))s, $(date -u +%Y-%m-%dT%H:%M:%SZ)) =="
  grep -h '^RESULT' "$OUT/facts.log" 2> /dev/null
  for line in "${SUMMARY[@]}"; do echo "$line"; done
} | tee "$OUT/summary.txt"
exit $FAILED
