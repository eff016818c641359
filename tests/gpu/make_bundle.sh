#!/usr/bin/env bash
# The GPU device bundle: lmk as built here (CI's environment, against the project's torch
# 2.11.0+cu130, the version the GPU machines run), in one folder that travels to a GPU machine
# with the working tree (`run`'s carry) and runs there as it is:
#   tests/gpu/make_bundle.sh [BUILD_DIR [OUT_DIR]]     (default build, BUILD_DIR/gpu-bundle)
# The folder holds lmk, lmk-engine, liblmk_cuda.so and every library they need that is neither
#   - LibTorch's (torch/lib: the GPU machine's own torch brings it, and the CUDA libraries
#     behind it through its nvidia-* packages: cuDNN, cuBLAS, NCCL, cudart, cupti, ...), nor
#   - the base system's (glibc, libstdc++, libgcc_s: the GPU machine's are newer, x86-64 too),
# copied under their sonames, and MANIFEST (each file's size and sha256, where it came from,
# the torch it was built against). lmk finds lmk-engine and the CUDA module beside itself; the
# device check (tests/gpu/device_check.sh) runs it with LD_LIBRARY_PATH=BUNDLE:TORCH_LIB, and
# its --plan mode checks here that nothing else is needed. At most 40 MiB (checked there).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
OUT=${2:-$BUILD/gpu-bundle}
PY=${LMK_PYTHON:-$ROOT/.venv/bin/python}
source "$ROOT/tests/gpu/bundle_rules.sh"
TORCH_LIB=$(torch_lib "$PY")

for f in lmk lmk-engine liblmk_cuda.so; do
  [ -f "$BUILD/app/$f" ] || {
    echo "make_bundle: $BUILD/app/$f is missing (build lmk with CUDA first)" >&2
    exit 2
  }
done
rm -rf "$OUT"
mkdir -p "$OUT"
cp "$BUILD/app/lmk" "$BUILD/app/lmk-engine" "$BUILD/app/liblmk_cuda.so" "$OUT/"
declare -A ORIGIN=()
for elf in "$OUT/lmk" "$OUT/lmk-engine" "$OUT/liblmk_cuda.so"; do
  while read -r name path; do
    case "$(library_kind "$name" "$path" "$TORCH_LIB" "$OUT")" in
      carried)
        if [ -z "${ORIGIN[$name]:-}" ]; then
          cp -L "$path" "$OUT/$name"
          ORIGIN[$name]=$path
        fi
        ;;
      missing)
        echo "make_bundle: $elf needs $name, which this machine cannot find" >&2
        exit 1
        ;;
    esac
  done < <(needed_libraries "$elf")
done

{
  echo "# GPU device bundle, made $(date -u +%Y-%m-%dT%H:%M:%SZ) by tests/gpu/make_bundle.sh"
  echo "# source $(git -C "$ROOT" rev-parse --short HEAD 2> /dev/null || echo unknown)," \
    "torch $("$PY" -c 'import torch; print(torch.__version__)')"
  # The GPU machine's C and C++ runtimes must be at least this new (device_check.sh compares).
  echo "# needs $(abi_needed "$OUT")"
  echo "# file  bytes  sha256  from"
  for f in "$OUT"/*; do
    name=$(basename "$f")
    [ "$name" = MANIFEST ] && continue
    echo "$name $(stat -c %s "$f") $(sha256sum "$f" | cut -d' ' -f1) ${ORIGIN[$name]:-$BUILD/app/$name}"
  done
} > "$OUT/MANIFEST"
echo "make_bundle: $OUT ($(du -sb "$OUT" | cut -f1) bytes, $(($(ls "$OUT" | wc -l) - 1)) files)"
