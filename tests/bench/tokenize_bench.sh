#!/usr/bin/env bash
# Tokenizer throughput: Hugging Face tokenizers (npm `tokenizers`, Rust) vs our C++ tokenizers,
# single-threaded, on the parity corpus (tests/parity/make_corpus.sh), for gemma3, llama3,
# bert-base-uncased and gpt2. Prints a Markdown table.
#
#   tests/bench/tokenize_bench.sh LMK_BENCH_BINARY WORK_DIR
#
# LMK_BENCH_BINARY --tokenizer FILE --input corpus.jsonl must print one JSON line
#   {"texts":N,"tokens":T,"bytes":B,"seconds":S,"tokens_per_s":...}
# (same as `node tests/parity/oracle.mjs --bench`). If LMK_BENCH_BINARY is not an executable
# the lmk column shows n/a. WORK_DIR is shared with tests/parity/run_parity.sh (oracle/, corpus/).
# Env: LMK_BENCH_ONLY="gpt2 bert-base-uncased" restricts the tokenizers; LMK_BENCH_BATCH=1
# compares batch against batch: HF's encodeBatch (oracle --bench-batch) against lmk on every
# core (LMK_BENCH_BINARY --threads $(nproc)).
set -euo pipefail

die() { echo "tokenize_bench: error: $*" >&2; exit 2; }
[ $# -eq 2 ] || die "usage: $0 LMK_BENCH_BINARY WORK_DIR"
BENCH="$1"
WORK="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PARITY="$(cd "$HERE/../parity" && pwd)"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
ORACLE="$WORK/oracle"
CORPUS="$WORK/corpus"

"$PARITY/setup_oracle.sh" "$ORACLE" >&2 || die "setup_oracle.sh failed"
corpus_key="$(sha256sum "$PARITY/make_corpus.sh" | cut -c1-64)"
if [ ! -s "$CORPUS/corpus.jsonl" ] || [ "$(cat "$CORPUS/.stamp" 2>/dev/null)" != "$corpus_key" ]; then
  rm -f "$CORPUS/.stamp"
  "$PARITY/make_corpus.sh" "$CORPUS" >&2 || die "make_corpus.sh failed"
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
  tok="$ORACLE/tokenizers/$name.json"
  [ -f "$tok" ] || die "no tokenizer file $tok"
  echo "tokenize_bench: $name: HF" >&2
  hf="$(node "$PARITY/oracle.mjs" --oracle-dir "$ORACLE" --tokenizer "$tok" \
             --input "$CORPUS/corpus.jsonl" --jsonl "$hf_mode")" || die "oracle $hf_mode failed for $name"
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

node - "${rows[@]}" <<'EOF'
'use strict';
const a = process.argv.slice(2);
const parse = (s) => { try { return JSON.parse(s); } catch { return {}; } };
const fmt = (x) => (typeof x === 'number' && isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'n/a');
console.log('| tokenizer | HF tokens/s (warm) | lmk tokens/s (cold) | lmk tokens/s (warm) | ratio cold/HF | ratio warm/HF |');
console.log('|---|---:|---:|---:|---:|---:|');
const notes = [];
let corpus = null;
for (let i = 0; i < a.length; i += 3) {
  const [name, hf, lmk] = [a[i], parse(a[i + 1]), parse(a[i + 2])];
  corpus = corpus || hf;
  const ratio = (x) => (hf.tokens_per_s > 0 && x > 0 ? (x / hf.tokens_per_s).toFixed(2) + '×' : 'n/a');
  console.log(`| ${name} | ${fmt(hf.tokens_per_s)} | ${fmt(lmk.cold_tokens_per_s)} | ${fmt(lmk.tokens_per_s)} | ${ratio(lmk.cold_tokens_per_s)} | ${ratio(lmk.tokens_per_s)} |`);
  if (lmk.tokens !== undefined && lmk.tokens !== hf.tokens)
    notes.push(`${name}: token counts differ (HF ${hf.tokens}, lmk ${lmk.tokens}): run tests/parity/run_parity.sh`);
}
if (corpus && corpus.texts)
  console.log(`\nCorpus: ${corpus.texts} texts, ${(corpus.bytes / 1e6).toFixed(2)} MB; ` +
    (process.env.LMK_BENCH_THREADS > 1
      ? `batch: HF = npm tokenizers (Rust), one encodeBatch() over every text, lmk on ${process.env.LMK_BENCH_THREADS} threads`
      : 'single thread; HF = npm tokenizers (Rust), encode() awaited one text at a time') +
    '; timed after a warm-up pass; lmk cold = first pass (empty word cache), warm = second pass.');
for (const n of notes) console.log(`\nNote: ${n}`);
EOF
