#!/usr/bin/env bash
# The GPU issue's device check: ONE command of at most 8 minutes on a machine with one NVIDIA
# GPU and its own PyTorch 2.11.0+cu130 and transformers (no network, no build tools needed),
# from the repository root, with the bundle made here by tests/gpu/make_bundle.sh carried along:
#   tests/gpu/device_check.sh [--plan] [--bundle DIR] [OUT_DIR]
#       (bundle default build/gpu-bundle; OUT_DIR default $OUT, else ./device-check)
# e.g. through the device tool: run(command="tests/gpu/device_check.sh", carry=["build/gpu-bundle"],
# timeout_s=540). Nothing is configured or built there: the GPU machine has none of the
# project's other build dependencies.
#
# First the C / C++ runtimes: the newest GLIBC_ / GLIBCXX_ versions the bundle needs (its
# MANIFEST says them too) against this machine's libc.so.6 and libstdc++.so.6. Then steps, each
# with its own time limit (480 s in all), each logged to OUT_DIR/NAME.log, never stopping the
# others:
#   1. facts     GPU, driver, PyTorch / CUDA / transformers versions; the bundle's MANIFEST
#   2. parity    random ModernBERT / BERT / GTE and Qwen3 / Llama decoders (head 32, grouped-
#                query attention) made there by transformers, read by lmk: CLS (decoders: last)
#                and mean embeddings against transformers' last hidden states, fp32 on the CPU
#                (max abs diff <= 1e-4) and on CUDA under bf16 autocast (relative <= 3e-2; lmk
#                runs unpadded, FlashAttention); then lmk's own export read by transformers
#   3. train     a 100-step bf16 contrastive fine-tune on CUDA with recompute_layers: the loss of
#                the last 10 steps below that of the first 10, and every layer's linear weights
#                moved; LoRA (rank 4, 20 steps, no weight decay): every B non-zero and every A
#                moved after step 1 (with autocast's cache kept across steps they stayed put)
#   4. pretrain  30 MLM steps on CUDA: the loss falls
#   5. speed     the ModernBERT-base shape: forward tokens/s at 512 and 8192 tokens, fixed and
#                variable lengths, lmk (unpadded) next to transformers' SDPA in the same run,
#                peak memory; training tokens/s at 512 tokens and its MFU
# and one summary (also OUT_DIR/summary.txt). Exit status: 0 when every step passed.
# Record what it prints in docs/BENCHMARKS.md ("GPU device check").
#
# --plan: the dry run, here, without a GPU: the bundle is complete, at most 40 MiB, and with
# LD_LIBRARY_PATH=BUNDLE:TORCH_LIB every library it loads is the bundle's, LibTorch's, the CUDA
# runtime's or the base system's; lmk starts from it and encodes on the CPU; the Python half
# compiles and imports what it needs; the step limits fit the 8 minutes.
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PLAN=0
BUNDLE=$ROOT/build/gpu-bundle
OUT_ARG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --plan) PLAN=1 ;;
    --bundle)
      BUNDLE=$2
      shift
      ;;
    *) OUT_ARG=$1 ;;
  esac
  shift
done
OUT=${OUT_ARG:-${OUT:-$PWD/device-check}}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
[ $PLAN -eq 1 ] && [ -x "$ROOT/.venv/bin/python" ] && PY=${PYTHON:-$ROOT/.venv/bin/python}
HELPER=$ROOT/tests/gpu/device_check.py
source "$ROOT/tests/gpu/bundle_rules.sh"
# Parity now reads five architectures (the decoders too) and training adds two LoRA runs: the
# budgets moved from parity 120 / train 90 / speed 180 (never measured on a GPU: none lent yet).
LIMITS=(facts:30 parity:150 train:130 pretrain:50 speed:120)
MAX_BUNDLE=$((40 * 1024 * 1024))
declare -a SUMMARY=()
FAILED=0
START=$(date +%s)

limit_of() {
  local entry
  for entry in "${LIMITS[@]}"; do
    [ "${entry%%:*}" = "$1" ] && echo "${entry#*:}"
  done
}

# step NAME COMMAND...: runs it within its limit with its output in OUT/NAME.log.
step() {
  local name=$1 limit
  limit=$(limit_of "$name")
  shift
  local t0 rc
  t0=$(date +%s)
  echo "== $name (at most ${limit}s) =="
  timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  local took=$(($(date +%s) - t0))
  local last
  last=$(grep -E '^(RESULT|FAIL|ERROR|SKIP)' "$OUT/$name.log" | tail -4 | tr '\n' ' ')
  if [ $rc -eq 0 ]; then
    SUMMARY+=("PASS  $name (${took}s) $last")
  else
    FAILED=1
    [ $rc -eq 124 ] && last="timed out after ${limit}s; $last"
    SUMMARY+=("FAIL  $name (${took}s, exit $rc) $last -- see $OUT/$name.log")
  fi
  tail -6 "$OUT/$name.log"
}

check() {  # check OK TEXT: one line of the plan
  if [ "$1" = 0 ]; then
    SUMMARY+=("PASS  $2")
  else
    FAILED=1
    SUMMARY+=("FAIL  $2")
  fi
}

TORCH_LIB=$(torch_lib "$PY" 2> /dev/null)
export LD_LIBRARY_PATH="$BUNDLE${TORCH_LIB:+:$TORCH_LIB}"
LMK=$BUNDLE/lmk

# Before anything runs: the machine's C and C++ runtimes hold the symbol versions the bundle
# was linked against (it was built on Debian 12; an older system would fail at the first start).
if [ -d "$BUNDLE" ]; then
  needed=$(abi_needed "$BUNDLE")
  abi=$(abi_provided "$needed")
  check "$([ "${abi%%:*}" = ok ] && echo 0 || echo 1)" "C / C++ runtimes: the bundle needs $needed; here $abi"
fi

if [ $PLAN -eq 1 ]; then
  missing=""
  for f in lmk lmk-engine liblmk_cuda.so MANIFEST; do [ -f "$BUNDLE/$f" ] || missing+=" $f"; done
  check "$([ -z "$missing" ] && echo 0 || echo 1)" "bundle $BUNDLE holds lmk, lmk-engine, liblmk_cuda.so, MANIFEST${missing:+ (lacks$missing)}"
  size=$(du -sb "$BUNDLE" 2> /dev/null | cut -f1)
  check "$([ "${size:-0}" -gt 0 ] && [ "$size" -le $MAX_BUNDLE ] && echo 0 || echo 1)" \
    "bundle size ${size:-0} bytes (at most $MAX_BUNDLE)"
  check "$([ -n "$TORCH_LIB" ] && [ -d "$TORCH_LIB" ] && echo 0 || echo 1)" "LibTorch from $PY: ${TORCH_LIB:-none}"
  # Every library each ELF loads, with only the bundle and LibTorch on the search path.
  for elf in "$BUNDLE"/lmk "$BUNDLE"/lmk-engine "$BUNDLE"/*.so*; do
    [ -f "$elf" ] || continue
    bad=""
    while read -r name path; do
      kind=$(library_kind "$name" "$path" "$TORCH_LIB" "$BUNDLE")
      case "$kind" in missing | carried) bad+=" $name ($kind: $path)" ;; esac
    done < <(needed_libraries "$elf")
    check "$([ -z "$bad" ] && echo 0 || echo 1)" "$(basename "$elf") loads only the bundle's, LibTorch's, CUDA's and the base system's libraries${bad:+; not:$bad}"
  done
  # It starts, from a clean environment, and computes.
  work=$OUT/plan
  rm -rf "$work"
  mkdir -p "$work"
  clean=(env -i "PATH=/usr/bin:/bin" "HOME=$work" "LD_LIBRARY_PATH=$LD_LIBRARY_PATH")
  version=$("${clean[@]}" "$LMK" --version 2>&1)
  check $? "bundle lmk starts: $version"
  "$PY" -c "import sys; sys.path.insert(0, '$ROOT/tests/parity'); from hf_models import word_tokenizer; word_tokenizer('$work/tokenizer.json')" &&
    printf '{"text": "w1 w2 w3"}\n{"text": "w4 w5"}\n' > "$work/docs.jsonl" &&
    "${clean[@]}" "$LMK" model init --preset tiny --tokenizer "$work/tokenizer.json" \
      --out "$work/model" > "$work/init.log" 2>&1 &&
    "${clean[@]}" "$LMK" encode --model "$work/model" --input "$work/docs.jsonl" \
      --out "$work/emb.npy" > "$work/encode.log" 2>&1
  check $? "bundle lmk-engine runs on the CPU (model init, encode; logs in $work)"
  # On a machine without a GPU the module loads, asks the driver and is told there is none; a
  # library it cannot find would stop it earlier, with the loader's message.
  cuda=$("${clean[@]}" "$LMK" encode --model "$work/model" --input "$work/docs.jsonl" \
    --out "$work/cuda.npy" --device cuda 2>&1)
  status=$?
  grep -q "no CUDA device is visible" <<< "$cuda" && status=0
  check $status "bundle's CUDA module loads and asks the driver (here: $(tail -1 <<< "$cuda"))"
  # Where the module's own CUDA runtime comes from, in the dynamic loader's words: it names
  # libcudart.so.13 itself (DT_NEEDED), found on its search path (the toolkit's, or the wheel's
  # nvidia folders on the GPU machine) or already mapped by LibTorch.
  "${clean[@]}" LD_DEBUG=libs "$LMK" encode --model "$work/model" --input "$work/docs.jsonl" \
    --out "$work/cuda.npy" --device cuda > "$work/ld-debug.log" 2>&1
  needs=$(readelf -d "$BUNDLE/liblmk_cuda.so" | grep -o 'libcudart\.so\.[0-9]*' | head -1)
  cudart=$(grep -E "calling init: .*libcudart\.so" "$work/ld-debug.log" | head -1 | awk '{ print $NF }')
  check "$([ -n "$needs" ] && [ -n "$cudart" ] && echo 0 || echo 1)" \
    "liblmk_cuda.so needs ${needs:-no libcudart}; the loader maps ${cudart:-none} (LD_DEBUG=libs, $work/ld-debug.log)"
  "$PY" -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
    "$HELPER" "$work/helper.pyc" && "$PY" "$HELPER" imports
  check $? "$(basename "$HELPER") compiles and imports torch, transformers, tokenizers, numpy"
  total=0
  for entry in "${LIMITS[@]}"; do total=$((total + ${entry#*:})); done
  check "$([ $total -le 480 ] && echo 0 || echo 1)" "step limits ${LIMITS[*]}: ${total}s of 480"
else
  [ -n "${PYTHON:-}" ] || echo "device check: PYTHON is not set; using $PY (set PYTHON to the interpreter whose torch and transformers to use)"
  step facts "$PY" "$HELPER" facts --bundle "$BUNDLE"
  if [ -x "$LMK" ]; then
    step parity "$PY" "$HELPER" parity --lmk "$LMK" --work "$OUT/parity"
    step train "$PY" "$HELPER" train --lmk "$LMK" --work "$OUT/train"
    step pretrain "$PY" "$HELPER" pretrain --lmk "$LMK" --work "$OUT/pretrain"
    step speed "$PY" "$HELPER" speed --lmk "$LMK" --work "$OUT/speed"
  else
    FAILED=1
    SUMMARY+=("SKIP  parity, train, pretrain, speed: no bundle at $BUNDLE (tests/gpu/make_bundle.sh, carried)")
  fi
fi

{
  echo
  echo "== device check $([ $PLAN -eq 1 ] && echo plan) summary ($(($(date +%s) - START))s, $(date -u +%Y-%m-%dT%H:%M:%SZ)) =="
  grep -h '^RESULT' "$OUT/facts.log" 2> /dev/null
  for line in "${SUMMARY[@]}"; do echo "$line"; done
} | tee "$OUT/summary.txt"
exit $FAILED
