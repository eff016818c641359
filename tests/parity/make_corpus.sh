#!/usr/bin/env bash
# Builds the tokenizer parity corpus, deterministically, only from files that Debian packages
# install (see the package list below; scripts/setup installs them):
#   OUT_DIR/corpus.jsonl        one {"text": "..."} per line, chunks of ~200-4000 bytes of real text
#   OUT_DIR/corpus.sources.tsv  line number, category and origin of each corpus line
#   OUT_DIR/invalid_utf8.txt    ~200 plain text lines with invalid UTF-8 mixed into real text
#
#   tests/parity/make_corpus.sh OUT_DIR
#
# Content: English man pages (manpages, manpages-dev) rendered with man/groff; C and C++
# headers (libc6-dev, libstdc++); translated man pages (de fr pl vi el ru ja zh_CN zh_TW);
# country/language names in Arabic, Hebrew, Persian, Urdu, Pashto, Devanagari, Bengali, Tamil,
# Telugu, Thai, Korean, Georgian, Armenian, Amharic, Khmer, Burmese, Sinhala (iso-codes);
# emoji incl. ZWJ sequences, skin tones, flags, keycaps, tag sequences (unicode-data's
# emoji-test.txt); derived variants of that real text: NFD/NFC accented text, whitespace runs
# (tabs, long space runs, CRLF, lone CR, many blank lines, Unicode spaces), control characters,
# special-token strings inside text, very long words.
set -euo pipefail

die() { echo "make_corpus: error: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: $0 OUT_DIR"
OUT="$1"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

PKGS=(man-db groff-base manpages manpages-dev manpages-de manpages-fr manpages-pl manpages-vi
      manpages-el manpages-ru manpages-ja manpages-zh unicode-data iso-codes gettext libc6-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] || die "missing Debian packages: ${missing[*]} (run scripts/setup --deps)"
for t in man col msgunfmt node; do command -v "$t" >/dev/null || die "$t not found"; done
EMOJI_TEST=/usr/share/unicode/emoji/emoji-test.txt
[ -f "$EMOJI_TEST" ] || die "$EMOJI_TEST not found (package unicode-data)"
CXX_DIR="$(ls -d /usr/include/c++/[0-9]* 2>/dev/null | sort -V | tail -1 || true)"
[ -n "$CXX_DIR" ] || die "no /usr/include/c++/N (package libstdc++-N-dev, from build-essential)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/lmk-corpus.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export LC_ALL=C.UTF-8 MANWIDTH=80 MANPAGER=cat PAGER=cat
unset MAN_KEEP_FORMATTING MANOPT MANPATH GROFF_SGR 2>/dev/null || true

# render_pages CATEGORY PACKAGE PATH_REGEX STRIDE BUDGET_BYTES
# Renders every STRIDE-th page (sorted by path) of PACKAGE whose path matches PATH_REGEX,
# until BUDGET_BYTES of text are collected; .so link pages are skipped.
render_pages() {
  local cat="$1" pkg="$2" re="$3" stride="$4" budget="$5"
  local dir="$WORK/docs/$cat" i=0 total=0 f n
  mkdir -p "$dir"
  while IFS= read -r f; do
    i=$((i + 1))
    [ $(( (i - 1) % stride )) -eq 0 ] || continue
    if [ "$(zcat -f "$f" 2>/dev/null | head -c 4)" = ".so " ]; then continue; fi
    n="$(printf '%05d' "$i")"
    man -l -P cat "$f" 2>/dev/null | col -bx >"$dir/$n.txt" || true
    if [ "$(wc -c <"$dir/$n.txt")" -lt 300 ]; then rm -f "$dir/$n.txt"; continue; fi
    printf '%s\n' "${f#/usr/share/man/}" >"$dir/$n.origin"
    total=$((total + $(wc -c <"$dir/$n.txt")))
    [ "$total" -lt "$budget" ] || break
  done < <(dpkg -L "$pkg" | grep -E "$re" | LC_ALL=C sort)
  echo "make_corpus: $cat: $total bytes from $pkg" >&2
}

echo "make_corpus: rendering man pages (takes a minute)" >&2
render_pages en-man  manpages       '^/usr/share/man/man[1578]/.*\.gz$'   3 330000
render_pages en-dev  manpages-dev   '^/usr/share/man/man[23]/.*\.gz$'    23 200000
render_pages de      manpages-de    '^/usr/share/man/de/man[1-8]/.*\.gz$' 17  70000
render_pages fr      manpages-fr    '^/usr/share/man/fr/man[1-8]/.*\.gz$' 11  70000
render_pages pl      manpages-pl    '^/usr/share/man/pl/man[1-8]/.*\.gz$' 11  45000
render_pages vi      manpages-vi    '^/usr/share/man/vi/man[1-8]/.*\.gz$'  5  45000
render_pages el      manpages-el    '^/usr/share/man/el/man[1-8]/.*\.gz$'  1  45000
render_pages ru      manpages-ru    '^/usr/share/man/ru/man[1-8]/.*\.gz$'  7  70000
render_pages ja      manpages-ja    '^/usr/share/man/ja/man[1-8]/.*\.gz$' 13  80000
render_pages zh_CN   manpages-zh    '^/usr/share/man/zh_CN/man[1-8]/.*\.gz$' 19 60000
render_pages zh_TW   manpages-zh    '^/usr/share/man/zh_TW/man[1-8]/.*\.gz$' 19 40000

# C and C++ headers (first ~25 KB of each)
mkdir -p "$WORK/docs/code"
i=0
for f in /usr/include/stdio.h /usr/include/unistd.h /usr/include/pthread.h /usr/include/regex.h \
         /usr/include/argp.h /usr/include/elf.h \
         "$CXX_DIR/bits/stl_vector.h" "$CXX_DIR/optional" "$CXX_DIR/string_view" \
         "$CXX_DIR/variant" "$CXX_DIR/bits/unordered_map.h" "$CXX_DIR/bits/stl_algo.h"; do
  i=$((i + 1))
  if [ ! -f "$f" ]; then echo "make_corpus: warning: $f missing, skipped" >&2; continue; fi
  n="$(printf '%05d' "$i")"
  head -c 25000 "$f" >"$WORK/docs/code/$n.txt"
  printf '%s\n' "$f" >"$WORK/docs/code/$n.origin"
done

# iso-codes translations: "English name: translated name" lines
mkdir -p "$WORK/iso"
for lang in ar he fa ur ps hi bn ta te th ko ka hy am km my si; do
  for dom in iso_3166-1 iso_639-2 iso_15924; do
    mo="/usr/share/locale/$lang/LC_MESSAGES/$dom.mo"
    [ -f "$mo" ] || continue
    msgunfmt --no-wrap "$mo" >"$WORK/iso/$lang.$dom.po"
  done
done

mkdir -p "$OUT"
NODE_OPTIONS='' node - "$WORK" "$OUT" "$EMOJI_TEST" <<'EOF'
'use strict';
const fs = require('fs');
const path = require('path');
const [WORK, OUT, EMOJI_TEST] = process.argv.slice(2);

// ---- deterministic helpers ---------------------------------------------------------------
let seed = 0x5eed1234;
function rnd() {               // mulberry32
  seed = (seed + 0x6D2B79F5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const ri = (n) => Math.floor(rnd() * n);
const pick = (a) => a[ri(a.length)];
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const MIN = 200, MAX = 4000;
const TARGETS = [400, 900, 1600, 2600, 3600];
let tgt = 0;

const records = [];            // {text, cat, origin}
function emit(text, cat, origin) {
  const b = bytes(text);
  if (b < MIN || b > MAX) throw new Error(`chunk of ${b} bytes (${cat} ${origin})`);
  records.push({ text, cat, origin });
}

// Derived texts: cut to MAX bytes, skip if shorter than MIN.
function emitFit(text, cat, origin) {
  if (bytes(text) > MAX) text = hardSplit(text, MAX)[0];
  if (bytes(text) >= MIN) emit(text, cat, origin);
}

// Split a string into pieces of at most `max` bytes without breaking code points.
function hardSplit(s, max) {
  const out = [];
  let cur = '', cb = 0;
  for (const ch of s) {
    const b = bytes(ch);
    if (cb + b > max) { out.push(cur); cur = ''; cb = 0; }
    cur += ch; cb += b;
  }
  if (cur) out.push(cur);
  return out;
}

// Chunk a document at line boundaries into ~TARGETS-sized pieces (200..4000 bytes).
function chunkDoc(text) {
  const lines = text.split(/(?<=\n)/);
  const pieces = [];
  for (const l of lines) {
    if (bytes(l) > MAX) pieces.push(...hardSplit(l, 3000)); else pieces.push(l);
  }
  const chunks = [];
  let cur = '', cb = 0, target = TARGETS[tgt++ % TARGETS.length];
  for (const p of pieces) {
    const pb = bytes(p);
    if (cb > 0 && (cb + pb > MAX || cb >= target)) {
      chunks.push(cur); cur = ''; cb = 0; target = TARGETS[tgt++ % TARGETS.length];
    }
    cur += p; cb += pb;
  }
  if (cb > 0) chunks.push(cur);
  // merge too-small chunks into their predecessor where possible, drop the rest
  const res = [];
  for (const c of chunks) {
    if (bytes(c) >= MIN) { res.push(c); continue; }
    if (res.length && bytes(res[res.length - 1]) + bytes(c) <= MAX) res[res.length - 1] += c;
  }
  return res.filter((c) => bytes(c) >= MIN && c.trim().length > 0);
}

// ---- 1. real documents -------------------------------------------------------------------
const CATS = ['en-man', 'en-dev', 'code', 'de', 'fr', 'pl', 'vi', 'el', 'ru', 'ja', 'zh_CN', 'zh_TW'];
const byCat = {};
for (const cat of CATS) {
  const dir = path.join(WORK, 'docs', cat);
  byCat[cat] = [];
  if (!fs.existsSync(dir)) continue;
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.txt')).sort()) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    const origin = fs.readFileSync(path.join(dir, f.replace(/\.txt$/, '.origin')), 'utf8').trim();
    for (const c of chunkDoc(text)) { emit(c, cat, origin); byCat[cat].push(c); }
  }
}

// ---- 2. iso-codes names (Arabic, Hebrew, Indic, Thai, Korean, ...) ------------------------
function parsePo(text) {
  const un = (s) => s.replace(/\\(.)/g, (m, c) => ({ n: '\n', t: '\t', '"': '"', '\\': '\\' }[c] ?? c));
  const pairs = [];
  const re = /^msgid "(.*)"\nmsgstr "(.*)"$/gm;
  let m;
  while ((m = re.exec(text))) if (m[1] && m[2]) pairs.push([un(m[1]), un(m[2])]);
  return pairs;
}
byCat.iso = [];
{
  const dir = path.join(WORK, 'iso');
  for (const f of fs.readdirSync(dir).sort()) {
    const pairs = parsePo(fs.readFileSync(path.join(dir, f), 'utf8'));
    let doc = '';
    for (const [en, tr] of pairs) {              // at most ~4.5 KB per language and domain
      const line = `${en}: ${tr}\n`;
      if (bytes(doc) + bytes(line) > 4500) break;
      doc += line;
    }
    for (const c of chunkDoc(doc)) { emit(c, 'iso', f.replace(/\.po$/, '')); byCat.iso.push(c); }
  }
}

// ---- 3. emoji ----------------------------------------------------------------------------
{
  const raw = fs.readFileSync(EMOJI_TEST, 'utf8');
  const lines = raw.split('\n');
  // (a) the file itself, every 6th line (keeps all groups, skin tones, ZWJ, flags, keycaps)
  const sampled = lines.filter((l, i) => i % 6 === 0 || l.startsWith('# group')).join('\n');
  for (const c of chunkDoc(sampled)) emit(c, 'emoji-file', 'emoji-test.txt');
  // (b) emoji text: sequences written the way people write them
  const entries = [];
  for (const l of lines) {
    const m = /^([0-9A-F ]+?)\s*;\s*(fully-qualified|minimally-qualified|unqualified|component)\s*#\s*(\S+)\s+E[0-9.]+\s+(.*)$/.exec(l);
    if (m) entries.push({ cps: m[1].trim().split(/\s+/).map((h) => parseInt(h, 16)), status: m[2], name: m[4] });
  }
  const seq = (e) => String.fromCodePoint(...e.cps);
  const zwj = entries.filter((e) => e.cps.includes(0x200D));
  const tones = entries.filter((e) => e.cps.some((c) => c >= 0x1F3FB && c <= 0x1F3FF));
  const flags = entries.filter((e) => e.cps.length === 2 && e.cps[0] >= 0x1F1E6 && e.cps[0] <= 0x1F1FF);
  const other = entries.filter((e) => e.status !== 'fully-qualified' || e.cps.includes(0x20E3) || e.cps.includes(0xE007F));
  const words = (byCat['en-man'].join(' ').match(/[A-Za-z]{3,}/g) || []).slice(0, 5000);
  const pools = [['zwj', zwj], ['skin-tone', tones], ['flags', flags], ['qualification', other], ['all', entries]];
  for (let k = 0; k < 40; k++) {
    const [pname, pool] = pools[k % pools.length];
    let t = '';
    while (bytes(t) < 300 + ri(2500)) {
      const mode = ri(4);
      const n = 1 + ri(6);
      let s = '';
      for (let j = 0; j < n; j++) s += seq(pick(pool));
      if (mode === 0) t += s;                                   // glued to previous text
      else if (mode === 1) t += ' ' + s + ' ';
      else if (mode === 2) t += pick(words) + s + pick(words) + ' ';
      else t += '\n' + pick(pool).name + ': ' + s + '\n';
    }
    emitFit(t, 'emoji-text', pname);
  }
}

// ---- 4. derived: NFC / NFD accented text ------------------------------------------------
{
  const src = [...byCat.fr, ...byCat.de, ...byCat.vi, ...byCat.pl, ...byCat.el, ...byCat.ru]
    .filter((c) => c.normalize('NFD') !== c.normalize('NFC'));
  for (let k = 0; k < 60 && src.length; k++) {
    const c = src[(k * 7919) % src.length];
    const form = ['NFD', 'NFC', 'NFKD', 'mixed'][k % 4];
    let t;
    if (form === 'mixed') {
      const h = Math.floor(c.length / 2);
      t = c.slice(0, h).normalize('NFD') + c.slice(h).normalize('NFC');
    } else t = c.normalize(form);
    emitFit(t, 'accents-' + form, 'derived');
  }
}

// ---- 5. derived: whitespace -------------------------------------------------------------
const USPACES = ['\u00A0', '\u1680', '\u2000', '\u2002', '\u2003', '\u2007', '\u2009', '\u200A', '\u202F',
                 '\u205F', '\u3000', '\u2028', '\u2029', '\u0085', '\u000B', '\u000C', '\u200B', '\uFEFF'];
function spaceRun() { return ' '.repeat(pick([2, 3, 4, 8, 16, 17, 31, 32, 33, 64, 100, 257])); }
const WS = {
  crlf: (t) => t.replace(/\n/g, '\r\n'),
  cr: (t) => t.replace(/\n/g, '\r'),
  tabs: (t) => t.replace(/^( {2,})/gm, (m) => '\t'.repeat(1 + ri(12))).replace(/ {2,}/g, () => '\t'.repeat(1 + ri(3))),
  spaces: (t) => t.replace(/ /g, () => (ri(12) === 0 ? spaceRun() : ' ')),
  blanklines: (t) => t.replace(/\n\n+/g, () => '\n'.repeat(pick([2, 3, 5, 8, 16, 31, 32, 33, 40, 64]))),
  unicode: (t) => t.replace(/ /g, () => (ri(4) === 0 ? pick(USPACES) : ' ')),
  trailing: (t) => t.replace(/\n/g, () => pick([' ', '  ', '\t', ' \t ', '   \t\t']) + '\n'),
  edges: (t) => pick(['  ', '\n\n', '\t', ' \r\n', '\u3000']) + t + pick(['   ', '\n\n\n', '\t\t', ' ']),
  mixed: (t) => t.replace(/\s+/g, (m) => pick([' ', '  ', '\t', '\n', '\r\n', ' \n ', '\n\n\n', spaceRun(), m])),
};
{
  const src = [...byCat['en-man'], ...byCat.code, ...byCat.ja, ...byCat.de];
  const names = Object.keys(WS);
  for (let k = 0; k < 72; k++) {
    const name = names[k % names.length];
    let t = WS[name](src[(k * 104729 + 13) % src.length]);
    emitFit(t, 'ws-' + name, 'derived');
  }
}

// ---- 6. derived: control and odd characters --------------------------------------------
{
  const ODD = [];
  for (let c = 0; c < 0x20; c++) if (c !== 0x0A) ODD.push(String.fromCharCode(c));
  ODD.push('\u007F');
  for (let c = 0x80; c < 0xA0; c++) ODD.push(String.fromCharCode(c));
  ODD.push('\u001B[1m', '\u001B[0m', '\u001B[31;1m', '\u00AD', '\u200B', '\u200C', '\u200D', '\u2060',
           '\uFEFF', '\u202E', '\u202C', '\u2066', '\u2069', '\u200E', '\u200F', '\uFE0F', '\u0301',
           '\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308\u0309\u030A\u030B\u030C', '\uE000', '\uF8FF',
           '\uFFFE', '\uFFFF', '\uFFFD', '\u0378', '\u{1D400}\u{1D401}', '\u{E0041}', '\u{10FFFD}', '\u{1F600}',
           '\u0000', '\u0000\u0000',
           // Unicode-version-sensitive: Mn/Cf/Po assigned after Unicode 8.0 (HF's BertNormalizer
           // tables are 8.0), CJK Ext. E start (outside HF's is_chinese_char), newer emoji
           '\u08D4', '\u0D00', '\u1ABF', '\u08E2', '\u0890', '\u2E4F', '\u{2B820}', '\u{2B920}',
           '\u{1F937}', '\u{1FAE0}');
  const src = [...byCat['en-man'], ...byCat.ru, ...byCat.zh_CN, ...byCat.iso];
  for (let k = 0; k < 40; k++) {
    const c = src[(k * 6007 + 5) % src.length];
    const cps = [...c];
    let out = k % 5 === 0 ? pick(['\u0301', '\u0000', '\uFEFF', '\u200D', '\u001B[1m']) : '';
    for (const ch of cps) { out += ch; if (ri(40) === 0) out += pick(ODD); }
    emitFit(out, 'control', 'derived');
  }
}

// ---- 7. derived: special-token strings inside text ---------------------------------------
{
  const SPECIAL = ['[CLS]', '[SEP]', '[MASK]', '[PAD]', '[UNK]', '[cls]', '[Sep]', '[ SEP ]', '[CLS][SEP]',
    '<|endoftext|>', '<|endoftext|><|endoftext|>', '<|endoftext|', '<|begin_of_text|>', '<|end_of_text|>',
    '<|eot_id|>', '<|start_header_id|>', '<|reserved_special_token_0|>', '<bos>', '<eos>', '<pad>', '<unk>',
    '<mask>', '<start_of_turn>', '<end_of_turn>', '<unused0>', '<unused99>', '<start_of_image>',
    '<image_soft_token>', '[multimodal]', '<table>', '</table>', '<tr>', '<td>', '<b>', '</b>', '<i>', '<s>',
    '</s>', '<code>', '</code>', '<h1>', '<a>', '<div>', '\u2581', '\u2581\u2581', '\u2581\u2581\u2581\u2581',
    '\u0120', '\u010A', '##ing', '##'];
  const src = [...byCat['en-man'], ...byCat['en-dev'], ...byCat.de, ...byCat.ja];
  for (let k = 0; k < 30; k++) {
    const c = src[(k * 3571 + 11) % src.length];
    let out = '';
    for (const w of c.split(/(?<=\s)/)) {
      out += w;
      if (ri(12) === 0) {
        const s = pick(SPECIAL);
        out += pick(['', ' ', '  ', '\n']) + s + pick(['', ' ', '  ', '\n']);
      }
    }
    if (k % 3 === 0) out = pick(SPECIAL) + out + pick(SPECIAL);
    emitFit(out, 'special-tokens', 'derived');
  }
}

// ---- 8. derived: very long words, digit and punctuation runs ---------------------------
{
  const words = (byCat['en-man'].join(' ').match(/[A-Za-z]{2,}/g) || []);
  const runOf = (n) => { let s = ''; while (s.length < n) s += pick(words).toLowerCase(); return s.slice(0, n); };
  let wi = 0;
  for (let k = 0; k < 20; k++) {
    let out = '';
    while (bytes(out) < 600 + ri(2400)) {
      const kind = ri(8);
      if (kind === 0) out += runOf(pick([99, 100, 101, 102, 150, 200, 500])) + ' ';
      else if (kind === 1) out += '9876543210'.repeat(1 + ri(20)).slice(0, pick([1, 2, 3, 4, 7, 10, 33, 101, 150])) + ' ';
      else if (kind === 2) out += pick(['=', '-', '.', '*', '#', '_', '~', '/', '!']).repeat(pick([3, 50, 99, 100, 101, 300])) + '\n';
      else if (kind === 3) out += 'https://' + runOf(20) + '.example.org/' + runOf(40) + '/' + runOf(60) + '?q=' + runOf(30) + '&n=' + ri(1e6) + ' ';
      else if (kind === 4) out += Buffer.from(runOf(120)).toString('base64') + '\n';
      else if (kind === 5) out += 'é'.repeat(pick([100, 101])) + ' ' + '日本語'.repeat(pick([10, 40])) + ' ';
      else out += words.slice(wi, wi + 12).join(' ') + ' ';
      wi = (wi + 12) % Math.max(1, words.length - 12);
    }
    emitFit(out, 'long-words', 'derived');
  }
}

// ---- 9. derived: several scripts in one text --------------------------------------------
{
  const langs = ['en-man', 'de', 'fr', 'pl', 'vi', 'el', 'ru', 'ja', 'zh_CN', 'zh_TW', 'iso', 'code'];
  for (let k = 0; k < 20; k++) {
    let out = '';
    while (bytes(out) < 1500) {
      const c = pick(byCat[pick(langs)] || ['']);
      const lines = c.split('\n').filter((l) => l.trim());
      if (lines.length) out += pick(lines).trim() + pick([' ', '\n', '。', ' — ']);
    }
    emitFit(out, 'mixed-scripts', 'derived');
  }
}

// ---- write corpus.jsonl + sources --------------------------------------------------------
const jsonl = records.map((r) => JSON.stringify({ text: r.text })).join('\n') + '\n';
const tsv = records.map((r, i) => `${i + 1}\t${r.cat}\t${r.origin}`).join('\n') + '\n';
fs.writeFileSync(path.join(OUT, 'corpus.jsonl.tmp'), jsonl);
fs.writeFileSync(path.join(OUT, 'corpus.sources.tsv.tmp'), tsv);

// ---- invalid_utf8.txt -----------------------------------------------------------------------
{
  const BAD = [
    [0x80], [0xBF], [0x80, 0x80, 0x80], [0xBF, 0x80],                          // lone continuation
    [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xF0, 0x9F], [0xE6, 0x97],      // truncated
    [0xC0, 0xAF], [0xC1, 0xBF], [0xC0, 0x80], [0xE0, 0x80, 0xAF], [0xF0, 0x80, 0x80, 0xAF], // overlong
    [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80],             // surrogates
    [0xFF], [0xFE], [0xFF, 0xFE], [0xFE, 0xFF], [0xFF, 0xFF, 0xFF],
    [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],      // > U+10FFFF
    [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80], [0xE9], [0xE9, 0x20],                              // Latin-1 é
  ];
  const src = [];
  for (const cat of ['en-man', 'en-dev', 'code', 'de', 'fr', 'vi', 'el', 'ru', 'ja', 'zh_CN', 'iso']) {
    for (const c of byCat[cat] || []) {
      for (const l of c.split('\n')) {
        const t = l.replace(/\r/g, '').trim();
        if (bytes(t) >= 20 && bytes(t) <= 300) src.push(t);
      }
    }
  }
  const emojiText = records.filter((r) => r.cat === 'emoji-text').map((r) => r.text.replace(/[\r\n]+/g, ' ').slice(0, 120));
  const out = [];
  for (let k = 0; k < 200; k++) {
    let parts = [];
    if (k % 50 === 7) {                                  // only invalid bytes
      for (let j = 0; j < 6; j++) parts.push(Buffer.from(pick(BAD)));
    } else if (k % 50 === 23) {                          // real text with chars cut in the middle
      const multi = src.filter((s) => bytes(s) > s.length);
      const t = Buffer.from(pick(multi.length ? multi : src), 'utf8');
      const arr = [];
      for (let i = 0; i < t.length; i++) if (!(t[i] >= 0x80 && t[i] <= 0xBF && ri(3) === 0)) arr.push(t[i]);
      parts.push(Buffer.from(arr));
    } else {
      const base = k % 10 === 9 && emojiText.length ? pick(emojiText) : src[(k * 7877 + 3) % src.length];
      const cps = [...base];
      const nbad = 1 + ri(4);
      const at = new Set();
      for (let j = 0; j < nbad; j++) at.add(ri(cps.length + 1));
      let cur = '';
      for (let i = 0; i <= cps.length; i++) {
        if (at.has(i)) { parts.push(Buffer.from(cur, 'utf8'), Buffer.from(pick(BAD))); cur = ''; }
        if (i < cps.length) cur += cps[i];
      }
      parts.push(Buffer.from(cur, 'utf8'));
      if (k % 25 === 4) parts.push(Buffer.from([0x00]), Buffer.from('nul byte above'));
    }
    const line = Buffer.concat(parts);
    if (line.includes(0x0A) || line.includes(0x0D)) throw new Error('newline inside invalid line');
    out.push(line);
  }
  const buf = Buffer.concat(out.flatMap((l) => [l, Buffer.from('\n')]));
  fs.writeFileSync(path.join(OUT, 'invalid_utf8.txt.tmp'), buf);
}

for (const f of ['corpus.jsonl', 'corpus.sources.tsv', 'invalid_utf8.txt'])
  fs.renameSync(path.join(OUT, f + '.tmp'), path.join(OUT, f));

// ---- report ------------------------------------------------------------------------------
const perCat = {};
let textBytes = 0;
for (const r of records) {
  const k = r.cat.replace(/^ws-.*/, 'whitespace').replace(/-(NFD|NFC|NFKD|mixed)$/, '');
  perCat[k] = perCat[k] || { n: 0, b: 0 };
  perCat[k].n++; perCat[k].b += bytes(r.text); textBytes += bytes(r.text);
}
console.error('make_corpus: category         texts     bytes');
for (const [k, v] of Object.entries(perCat))
  console.error(`make_corpus: ${k.padEnd(16)} ${String(v.n).padStart(5)} ${String(v.b).padStart(9)}`);
console.log(`make_corpus: ${records.length} texts, ${textBytes} bytes of text, corpus.jsonl ${bytes(jsonl)} bytes; invalid_utf8.txt 200 lines`);
EOF
