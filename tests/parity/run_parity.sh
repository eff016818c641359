#!/usr/bin/env bash
# Tokenizer parity test (CTest entry point): compares the ids of our `lmk tokenize` with those of
# Hugging Face's own tokenizers library (PyPI `tokenizers`, oracle.py, in the project's .venv) on
# the corpus built by make_corpus.sh, for the four reference tokenizer files gemma3, llama3,
# bert-base-uncased and gpt2 (reference_tokenizers.sh unpacks them from ../shared/tokenizers).
#
#   tests/parity/run_parity.sh LMK_BINARY WORK_DIR
#
# WORK_DIR/tokenizers  the reference tokenizer files, sha256-checked (kept when up to date)
# WORK_DIR/corpus      corpus.jsonl, invalid_utf8.txt (make_corpus.sh; skipped when present and
#                      built by the current make_corpus.sh / make_corpus.py)
# WORK_DIR/cache       the oracle's ids, keyed by tokenizer file + input + oracle + library version
# WORK_DIR/lmk         our ids and stderr
# Env: LMK_PARITY_ONLY="gpt2 bert-base-uncased" restricts the tokenizers; LMK_PYTHON the Python
# with `tokenizers` (default: the checkout's .venv); LMK_SHARED_DIR the shared folder.
# Exit 0 only if every sequence is identical; 1 on any mismatch or lmk failure; 2 on setup errors.
set -euo pipefail

die() { echo "run_parity: error: $*" >&2; exit 2; }
[ $# -eq 2 ] || die "usage: $0 LMK_BINARY WORK_DIR"
LMK="$1"
WORK="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${LMK_PYTHON:-$HERE/../../.venv/bin/python}"
[ -x "$LMK" ] || die "LMK_BINARY '$LMK' is not an executable file"
[ -x "$PYTHON" ] || die "no Python at $PYTHON (scripts/setup makes the project's .venv; or set LMK_PYTHON)"
LMK="$(cd "$(dirname "$LMK")" && pwd)/$(basename "$LMK")"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
TOKENIZERS="$WORK/tokenizers"
CORPUS="$WORK/corpus"
CACHE="$WORK/cache"
OUTD="$WORK/lmk"
mkdir -p "$CACHE" "$OUTD"

# 1. the reference tokenizer files and the oracle's version
"$HERE/reference_tokenizers.sh" "$TOKENIZERS" || exit 2
tokenizers_version="$("$PYTHON" -c 'import tokenizers; print(tokenizers.__version__)')" ||
  die "$PYTHON cannot import tokenizers (run scripts/setup)"

# 2. corpus
corpus_key="$(cat "$HERE/make_corpus.sh" "$HERE/make_corpus.py" | sha256sum | cut -c1-64)"
if [ -s "$CORPUS/corpus.jsonl" ] && [ -s "$CORPUS/invalid_utf8.txt" ] &&
   [ "$(cat "$CORPUS/.stamp" 2>/dev/null)" = "$corpus_key" ]; then
  echo "run_parity: corpus up to date in $CORPUS"
else
  rm -f "$CORPUS/.stamp"
  LMK_PYTHON="$PYTHON" "$HERE/make_corpus.sh" "$CORPUS" || die "make_corpus.sh failed"
  echo "$corpus_key" >"$CORPUS/.stamp"
fi

sum() { sha256sum "$1" | cut -c1-64; }
oracle_sum="$(sum "$HERE/oracle.py")"
echo "run_parity: oracle: Hugging Face tokenizers $tokenizers_version ($PYTHON)"

names=(bert-base-uncased gpt2 llama3 gemma3)
if [ -n "${LMK_PARITY_ONLY:-}" ]; then read -r -a names <<<"$LMK_PARITY_ONLY"; fi

passed=0
failed=0
for name in "${names[@]}"; do
  tok="$TOKENIZERS/$name.json"
  [ -f "$tok" ] || die "no tokenizer file $tok (LMK_PARITY_ONLY names one of: bert-base-uncased gpt2 llama3 gemma3)"
  tok_sum="$(sum "$tok")"
  for kind in corpus invalid; do
    if [ "$kind" = corpus ]; then
      input="$CORPUS/corpus.jsonl"; oracle_flags=(--jsonl); lmk_flags=(--jsonl)
    else
      input="$CORPUS/invalid_utf8.txt"; oracle_flags=(); lmk_flags=(--invalid-utf8 replace)
    fi
    key="$(printf '%s %s %s %s' "$tok_sum" "$(sum "$input")" "$oracle_sum" "$tokenizers_version" |
           sha256sum | cut -c1-16)"
    expected="$CACHE/$name.$kind.$key.ids"
    if [ ! -f "$expected" ]; then
      rm -f "$CACHE/$name.$kind".*.ids
      "$PYTHON" "$HERE/oracle.py" --tokenizer "$tok" --input "$input" "${oracle_flags[@]}" \
        --out "$expected" || die "oracle failed for $name on $input"
    fi
    actual="$OUTD/$name.$kind.ids"
    errlog="$OUTD/$name.$kind.stderr"
    rc=0
    "$LMK" tokenize --tokenizer "$tok" --landmark none --format ids "${lmk_flags[@]}" \
           --input "$input" >"$actual" 2>"$errlog" || rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "parity $name: lmk failed on $(basename "$input") (exit $rc); stderr:"
      tail -n 5 "$errlog" | sed 's/^/    /'
      failed=$((failed + 1))
      continue
    fi
    if cmp -s "$expected" "$actual"; then
      n="$(wc -l <"$expected")"
      echo "parity $name: $n/$n identical sequences ($(basename "$input"))"
      passed=$((passed + 1))
      continue
    fi
    sources=()
    [ "$kind" = corpus ] && sources=(--sources "$CORPUS/corpus.sources.tsv")
    "$PYTHON" "$HERE/oracle.py" --tokenizer "$tok" --input "$input" "${oracle_flags[@]}" --name "$name" \
      --explain "$expected" "$actual" "${sources[@]}" || true
    failed=$((failed + 1))
  done
done

echo "parity: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
