#!/usr/bin/env bash
# Evaluation wall time and where it goes (encode documents / queries, search, metrics) on a
# long-document retrieval task: DOCS documents of LENGTH tokens (LongEmbed passkey protocol,
# `lmk data passkey`), 50 queries, a randomly initialized `small` model, CLS and LMK pooling.
# Also the exact search alone on random embeddings (search throughput), and this machine's
# fp32 matmul in the same run. Prints Markdown.
#
#   [POOLINGS="cls lmk"] tests/bench/eval_bench.sh BUILD_DIR WORK_DIR [DOCS] [LENGTH]   (defaults: 800 8192)
#
# Uses the built-in corpus's tokenizer (scripts/demo makes BUILD_DIR/demo/tokenizer.model).
set -euo pipefail
die() { echo "eval_bench: error: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: $0 BUILD_DIR WORK_DIR [DOCS] [LENGTH]"
build="$(cd "$1" && pwd)"
work="$2"
docs="${3:-800}"
length="${4:-8192}"
lmk="$build/app/lmk"
tokenizer="$build/demo/tokenizer.model"
[ -s "$tokenizer" ] || die "$tokenizer missing: run scripts/demo first"
mkdir -p "$work"
data="$work/passkey-$docs-$length"
[ -s "$data/dataset.json" ] ||
  "$lmk" data passkey --tokenizer "$tokenizer" --out "$data" --lengths "$length" \
    --documents "$docs" --queries 50 >&2
[ -s "$work/small/config.json" ] || "$lmk" model init --preset small --tokenizer "$tokenizer" --out "$work/small" >&2
"$build/tests/lmk_encode_bench" --preset small --lengths 512 --repeats 1 --parts-only | awk "NR == 1"
echo
echo "| pooling | documents × tokens | total s | encode documents s | encode queries s | search s | metrics s | document tokens/s |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for pooling in ${POOLINGS:-cls lmk}; do
  out="$("$lmk" eval --model "$work/small" --dataset "$data" --pooling "$pooling" 2>/dev/null)"
  line="$(echo "$out" | grep '^time:')"
  # time: T s (encode documents A, queries B, search C, metrics D)
  read -r total enc_docs enc_queries search metrics < <(echo "$line" |
    sed -E 's/time: ([0-9.]+) s \(encode documents ([0-9.]+), queries ([0-9.]+), search ([0-9.]+), metrics ([0-9.]+)\)/\1 \2 \3 \4 \5/')
  rate="$(awk -v n="$docs" -v l="$length" -v s="$enc_docs" 'BEGIN { printf "%.0f", n * l / s }')"
  echo "| $pooling | $docs × $length | $total | $enc_docs | $enc_queries | $search | $metrics | $rate |"
done
