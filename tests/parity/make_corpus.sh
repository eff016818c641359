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
for t in man col msgunfmt; do command -v "$t" >/dev/null || die "$t not found"; done
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${LMK_PYTHON:-$HERE/../../.venv/bin/python}"
[ -x "$PYTHON" ] || die "no Python at $PYTHON (scripts/setup makes the project's .venv; or set LMK_PYTHON)"
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

"$PYTHON" "$HERE/make_corpus.py" "$WORK" "$OUT" "$EMOJI_TEST"
