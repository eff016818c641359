#!/usr/bin/env bash
# Start-up of lmk processes: wall time and peak RSS of short commands, and what each maps (the
# dynamic loader's own list, LD_DEBUG=files): `lmk --version`, `lmk tokenize` of one line,
# `lmk inspect` and `lmk encode` of one short text with a `tiny` model on the CPU (these two run
# in lmk-engine, with LibTorch), and `lmk encode --device cuda` where a CUDA module was built
# (on a machine without a GPU it stops at "no CUDA device": the cost of loading the module).
# RUNS runs each (default 7), median and range. Prints Markdown.
#
#   tests/bench/startup_bench.sh BUILD_DIR WORK_DIR [RUNS]
set -euo pipefail
die() { echo "startup_bench: error: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: $0 BUILD_DIR WORK_DIR [RUNS]"
build="$(cd "$1" && pwd)"
mkdir -p "$2"
work="$(cd "$2" && pwd)"
runs="${3:-7}"
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || die "RUNS must be a positive number, not '$runs'"
lmk="$build/app/lmk"
[ -x "$lmk" ] || die "$lmk is not built"
export LMK_THREADS="${LMK_THREADS:-$(nproc)}"

# A word-level tokenizer of 100 words and a tiny model: what the tests use.
python3 - "$work/tokenizer.json" <<'PY'
import json, sys
vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(100)])}
json.dump({"version": "1.0", "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False,
           "rstrip": False, "normalized": False, "special": True} for t, i in list(vocab.items())[:5]],
           "normalizer": None, "pre_tokenizer": {"type": "Whitespace"},
           "post_processor": {"type": "TemplateProcessing",
                              "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                         {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                              "pair": [], "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                                                             "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
           "decoder": None, "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}},
          open(sys.argv[1], "w"))
PY
[ -s "$work/model/config.json" ] ||
  "$lmk" model init --preset tiny --tokenizer "$work/tokenizer.json" --out "$work/model" >/dev/null
printf '{"id": "a", "text": "w1 w2 w3 w4"}\n' >"$work/docs.jsonl"
printf 'w1 w2 w3\n' >"$work/line.txt"

labels=("--version" "tokenize (one line)" "inspect (tiny model)" "encode (tiny model, CPU)")
commands=(
  "--version"
  "tokenize --tokenizer $work/tokenizer.json --input $work/line.txt"
  "inspect $work/model"
  "encode --model $work/model --pooling cls --input $work/docs.jsonl --out $work/emb.npy"
)
if [ -e "$build/app/liblmk_cuda.so" ]; then
  labels+=("encode --device cuda (tiny model)")
  commands+=("encode --device cuda --model $work/model --pooling cls --input $work/docs.jsonl --out $work/emb.npy")
fi

torch_dir="$(sed -n 's/^Torch_DIR:PATH=//p' "$build/CMakeCache.txt")"
echo "lmk start-up, $runs runs each, LMK_THREADS=$LMK_THREADS, $(nproc) cores, LibTorch of $torch_dir"
echo
echo "| lmk command | wall s | peak RSS MB | exit | libraries mapped | LibTorch / CUDA libraries among them |"
echo "|---|---:|---:|---:|---:|---|"
for n in "${!commands[@]}"; do
  command="${commands[$n]}"
  times=()
  rss=()
  code=0
  for ((i = 0; i < runs; i++)); do
    started="$EPOCHREALTIME"
    # shellcheck disable=SC2086
    /usr/bin/time -o "$work/time.txt" -f '%M' "$lmk" $command >/dev/null 2>&1 || code=$?
    times+=("$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')")
    rss+=("$(tail -n 1 "$work/time.txt")")
  done
  # shellcheck disable=SC2086
  libs="$(LD_DEBUG=files "$lmk" $command 2>&1 >/dev/null | sed -n 's/.*[[:space:]]file=\([^ ]*\) \[[0-9]*\];  generating link map.*/\1/p' |
          xargs -n1 basename 2>/dev/null | sort -u)" || true
  count="$(grep -c . <<<"$libs" || true)"
  heavy="$(grep -E '^lib(torch|c10|cudart|cupti|cublas|cudnn|nccl|lmk_cuda|cuda\.)' <<<"$libs" | tr '\n' ' ' || true)"
  python3 - "${labels[$n]}" "$code" "$count" "${heavy:-none}" "${times[*]}" "${rss[*]}" <<'PY'
import statistics, sys
name, code, count, heavy, times, rss = sys.argv[1:7]
t = [float(x) for x in times.split()]
r = [int(x) / 1024 for x in rss.split()]
print(f"| {name} | {statistics.median(t):.3f} ({min(t):.3f}–{max(t):.3f}) | "
      f"{statistics.median(r):.0f} | {code} | {count} | {heavy.strip()} |")
PY
done
