#!/usr/bin/env bash
# Tokenizer parity test (CTest entry point): compares the ids of our `lmk tokenize` with those of
# Hugging Face's own tokenizers library (npm `tokenizers`) on the corpus built by make_corpus.sh,
# for gemma3, llama3, bert-base-uncased and gpt2 (see setup_oracle.sh).
#
#   tests/parity/run_parity.sh LMK_BINARY WORK_DIR
#
# WORK_DIR/oracle   npm packages + tokenizer files (setup_oracle.sh; skipped when up to date)
# WORK_DIR/corpus   corpus.jsonl, invalid_utf8.txt (make_corpus.sh; skipped when present and
#                   built by the current make_corpus.sh)
# WORK_DIR/cache    the oracle's ids, keyed by tokenizer file + input + oracle checksums
# WORK_DIR/lmk      our ids and stderr
# Env: LMK_PARITY_ONLY="gpt2 bert-base-uncased" restricts the tokenizers.
# Exit 0 only if every sequence is identical; 1 on any mismatch or lmk failure; 2 on setup errors.
set -euo pipefail

die() { echo "run_parity: error: $*" >&2; exit 2; }
[ $# -eq 2 ] || die "usage: $0 LMK_BINARY WORK_DIR"
LMK="$1"
WORK="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -x "$LMK" ] || die "LMK_BINARY '$LMK' is not an executable file"
LMK="$(cd "$(dirname "$LMK")" && pwd)/$(basename "$LMK")"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
ORACLE="$WORK/oracle"
CORPUS="$WORK/corpus"
CACHE="$WORK/cache"
OUTD="$WORK/lmk"
mkdir -p "$CACHE" "$OUTD"

# 1. oracle (idempotent; offline once the npm cache has the packages)
"$HERE/setup_oracle.sh" "$ORACLE" || die "setup_oracle.sh failed"

# 2. corpus
corpus_key="$(sha256sum "$HERE/make_corpus.sh" | cut -c1-64)"
if [ -s "$CORPUS/corpus.jsonl" ] && [ -s "$CORPUS/invalid_utf8.txt" ] &&
   [ "$(cat "$CORPUS/.stamp" 2>/dev/null)" = "$corpus_key" ]; then
  echo "run_parity: corpus up to date in $CORPUS"
else
  rm -f "$CORPUS/.stamp"
  "$HERE/make_corpus.sh" "$CORPUS" || die "make_corpus.sh failed"
  echo "$corpus_key" >"$CORPUS/.stamp"
fi

sum() { sha256sum "$1" | cut -c1-64; }
oracle_sum="$(sum "$HERE/oracle.mjs")"
tokenizers_version="$(node -p "require('$ORACLE/node_modules/tokenizers/package.json').version")"

names=(bert-base-uncased gpt2 llama3 gemma3)
if [ -n "${LMK_PARITY_ONLY:-}" ]; then read -r -a names <<<"$LMK_PARITY_ONLY"; fi

passed=0
failed=0
for name in "${names[@]}"; do
  tok="$ORACLE/tokenizers/$name.json"
  [ -f "$tok" ] || die "no tokenizer file $tok"
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
      node "$HERE/oracle.mjs" --oracle-dir "$ORACLE" --tokenizer "$tok" --input "$input" \
           "${oracle_flags[@]}" --out "$expected" || die "oracle failed for $name on $input"
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
    node - "$name" "$tok" "$input" "$kind" "$expected" "$actual" "$ORACLE" \
         "$CORPUS/corpus.sources.tsv" <<'EOF' || true
'use strict';
const fs = require('fs');
const path = require('path');
const [name, tokFile, input, kind, expFile, actFile, oracleDir, sourcesFile] = process.argv.slice(2);
const lines = (f) => { const l = fs.readFileSync(f, 'utf8').split('\n'); if (l[l.length - 1] === '') l.pop(); return l; };
const exp = lines(expFile), act = lines(actFile);
let texts = lines(input);
if (kind === 'corpus') texts = texts.map((l) => JSON.parse(l).text);
const sources = kind === 'corpus' && fs.existsSync(sourcesFile)
  ? lines(sourcesFile).map((l) => l.split('\t').slice(1).join(' ')) : [];
const n = exp.length;
const bad = [];
let same = 0;
for (let i = 0; i < n; i++) { if (exp[i] === act[i]) same++; else bad.push(i); }
console.log(`parity ${name}: ${same}/${n} identical sequences (${path.basename(input)})`);
if (act.length !== n) console.log(`    lmk printed ${act.length} lines for ${n} texts`);
let tok = null;
try {
  const { Tokenizer } = require(path.join(oracleDir, 'node_modules', 'tokenizers'));
  tok = Tokenizer.fromFile(tokFile);
} catch (e) { /* token strings are a nicety */ }
const show = (ids) => ids.map((id) => {
  const t = tok && /^\d+$/.test(id) ? tok.idToToken(Number(id)) : null;
  return t == null ? id : `${id}:${JSON.stringify(t)}`;
}).join(' ');
// Text around HF's token at position p (HF offsets are in code points).
async function context(text, p) {
  if (!tok) return null;
  const enc = await tok.encode(text, null, { addSpecialTokens: true });
  const offs = enc.getOffsets();
  let q = Math.min(p, offs.length - 1);
  while (q > 0 && offs[q][0] === offs[q][1]) q--;          // skip special tokens (empty spans)
  if (q < 0 || !offs[q]) return null;
  const cps = [...text];
  const [a, b] = offs[q];
  const j = (x, y) => JSON.stringify(cps.slice(x, y).join('')).slice(1, -1);
  return `${j(Math.max(0, a - 30), a)}⟦${j(a, b)}⟧${j(b, b + 30)}`;
}
(async () => {
for (const i of bad.slice(0, 3)) {
  const e = exp[i] ? exp[i].split(' ') : [], a = act[i] !== undefined && act[i] !== '' ? act[i].split(' ') : [];
  let p = 0;
  while (p < e.length && p < a.length && e[p] === a[p]) p++;
  const t = texts[i] ?? '';
  console.log(`  line ${i + 1}${sources[i] ? ' [' + sources[i] + ']' : ''}: ${JSON.stringify(t.slice(0, 100))}${t.length > 100 ? '…' : ''}`);
  console.log(`    ${e.length} ids expected, ${act[i] === undefined ? 'no line' : a.length + ' ids'} from lmk; first difference at position ${p}`);
  const lo = Math.max(0, p - 3);
  console.log(`    HF : …${show(e.slice(lo, p + 6))}`);
  console.log(`    lmk: …${show(a.slice(lo, p + 6))}`);
  const ctx = await context(t, p);
  if (ctx) console.log(`    text at HF token ${p}: "${ctx}"`);
}
if (bad.length > 3) console.log(`  … and ${bad.length - 3} more mismatching lines (diff ${expFile} ${actFile})`);
})();
EOF
    failed=$((failed + 1))
  done
done

echo "parity: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
