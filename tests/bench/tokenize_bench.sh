#!/usr/bin/env bash
# Tokenizer throughput: Hugging Face tokenizers (PyPI `tokenizers`, Rust, through
# tests/parity/oracle.py in the project's .venv) vs our C++ tokenizers, single-threaded, on the
# parity corpus (tests/parity/make_corpus.sh), for gemma3, llama3, bert-base-uncased and gpt2
# (the reference files of ../shared/tokenizers). Prints a Markdown table.
#
#   tests/bench/tokenize_bench.sh LMK_BENCH_BINARY WORK_DIR
#
# LMK_BENCH_BINARY --tokenizer FILE --input corpus.jsonl must print one JSON line
#   {"texts":N,"tokens":T,"bytes":B,"seconds":S,"tokens_per_s":...}
# (same as `oracle.py --bench`). If LMK_BENCH_BINARY is not an executable the lmk column shows
# n/a. WORK_DIR is shared with tests/parity/run_parity.sh (tokenizers/, corpus/).
# Env: LMK_BENCH_ONLY="gpt2 bert-base-uncased" restricts the tokenizers; LMK_BENCH_BATCH=1
# compares batch against batch: HF's encode_batch (oracle.py --bench-batch) against lmk on every
# core (LMK_BENCH_BINARY --threads $(nproc)); LMK_PYTHON as in run_parity.sh.
set -euo pipefail

die() { echo "tokenize_bench: error: $*" >&2; exit 2; }
[ $# -eq 2 ] || die "usage: $0 LMK_BENCH_BINARY WORK_DIR"
BENCH="$1"
WORK="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PARITY="$(cd "$HERE/../parity" && pwd)"
PYTHON="${LMK_PYTHON:-$HERE/../../.venv/bin/python}"
[ -x "$PYTHON" ] || die "no Python at $PYTHON (scripts/setup makes the project's .venv; or set LMK_PYTHON)"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
TOKENIZERS="$WORK/tokenizers"
CORPUS="$WORK/corpus"

"$PARITY/reference_tokenizers.sh" "$TOKENIZERS" >&2 || exit 2
corpus_key="$(cat "$PARITY/make_corpus.sh" "$PARITY/make_corpus.py" | sha256sum | cut -c1-64)"
if [ ! -s "$CORPUS/corpus.jsonl" ] || [ "$(cat "$CORPUS/.stamp" 2>/dev/null)" != "$corpus_key" ]; then
  rm -f "$CORPUS/.stamp"
  LMK_PYTHON="$PYTHON" "$PARITY/make_corpus.sh" "$CORPUS" >&2 || die "make_corpus.sh failed"
  echo "$corpus_key" >"$CORPUS/.stamp"
fi

have_lmk=1
if [ ! -x "$BENCH" ]; then
  echo "tokenize_bench: warning: '$BENCH' is not an executable; lmk column will be n/a" >&2
  have_lmk=0
fi

hf_mode=--bench
lmk_threads=1
if [ "${LMK_BENCH_BATCH:-0}" = 1 ]; then
  hf_mode=--bench-batch
  lmk_threads="$(nproc)"
fi
export LMK_BENCH_THREADS="$lmk_threads"

names=(gemma3 llama3 bert-base-uncased gpt2)
if [ -n "${LMK_BENCH_ONLY:-}" ]; then read -r -a names <<<"$LMK_BENCH_ONLY"; fi

rows=()
for name in "${names[@]}"; do
  tok="$TOKENIZERS/$name.json"
  [ -f "$tok" ] || die "no tokenizer file $tok"
  echo "tokenize_bench: $name: HF" >&2
  hf="$("$PYTHON" "$PARITY/oracle.py" --tokenizer "$tok" --input "$CORPUS/corpus.jsonl" --jsonl \
         "$hf_mode")" || die "oracle $hf_mode failed for $name"
  lmk="{}"
  if [ "$have_lmk" -eq 1 ]; then
    echo "tokenize_bench: $name: lmk" >&2
    if ! lmk="$("$BENCH" --tokenizer "$tok" --input "$CORPUS/corpus.jsonl" --threads "$lmk_threads" | tail -n 1)"; then
      echo "tokenize_bench: warning: $BENCH failed for $name" >&2
      lmk="{}"
    fi
  fi
  rows+=("$name" "$hf" "$lmk")
done

version="$("$PYTHON" -c 'import tokenizers; print(tokenizers.__version__)')"
"$PYTHON" - "$version" "${rows[@]}" <<'EOF'
import json, os, sys
version, a = sys.argv[1], sys.argv[2:]


def parse(s):
    try:
        return json.loads(s)
    except ValueError:
        return {}


def fmt(x):
    return f'{round(x):,}' if isinstance(x, (int, float)) else 'n/a'


def ratio(x, hf):
    return f'{x / hf["tokens_per_s"]:.2f}×' if hf.get('tokens_per_s', 0) > 0 and (x or 0) > 0 else 'n/a'


print('| tokenizer | HF tokens/s (warm) | lmk tokens/s (cold) | lmk tokens/s (warm) | ratio cold/HF | ratio warm/HF |')
print('|---|---:|---:|---:|---:|---:|')
notes, corpus = [], None
for i in range(0, len(a), 3):
    name, hf, lmk = a[i], parse(a[i + 1]), parse(a[i + 2])
    corpus = corpus or hf
    print(f'| {name} | {fmt(hf.get("tokens_per_s"))} | {fmt(lmk.get("cold_tokens_per_s"))} | '
          f'{fmt(lmk.get("tokens_per_s"))} | {ratio(lmk.get("cold_tokens_per_s"), hf)} | '
          f'{ratio(lmk.get("tokens_per_s"), hf)} |')
    if 'tokens' in lmk and lmk['tokens'] != hf.get('tokens'):
        notes.append(f'{name}: token counts differ (HF {hf.get("tokens")}, lmk {lmk["tokens"]}): '
                     'run tests/parity/run_parity.sh')
threads = int(os.environ.get('LMK_BENCH_THREADS', '1'))
if corpus and corpus.get('texts'):
    oracle = f'HF = PyPI tokenizers {version} (Rust, Python binding)'
    mode = (f'batch: {oracle}, one encode_batch() over every text, lmk on {threads} threads'
            if threads > 1 else f'single thread; {oracle}, encode() one text at a time')
    print(f'\nCorpus: {corpus["texts"]} texts, {corpus["bytes"] / 1e6:.2f} MB; {mode}; timed after a '
          'warm-up pass; lmk cold = first pass (empty word cache), warm = second pass.')
for n in notes:
    print(f'\nNote: {n}')
EOF
