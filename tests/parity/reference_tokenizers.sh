#!/usr/bin/env bash
# Unpacks the four reference tokenizer files of the parity test and the tokenizer benchmark
# (gemma3, llama3, bert-base-uncased, gpt2: real Hugging Face tokenizer.json files) from the
# shared folder beside the clone into OUT_DIR, and checks each against the sha256 pinned in
# tests/parity/tokenizers.sha256 (the shared folder's README says where each file came from).
#
#   tests/parity/reference_tokenizers.sh OUT_DIR
#
# The shared folder is $LMK_SHARED_DIR, else ../shared beside the checkout; it is only read.
# A file already unpacked with the right sha256 is kept. Exit 2, naming the file, when one is
# missing, unreadable or not the pinned file.
set -euo pipefail

die() { echo "reference_tokenizers: error: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 OUT_DIR"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SHARED="${LMK_SHARED_DIR:-$HERE/../../../shared}"
SOURCE="$SHARED/tokenizers"
[ -d "$SOURCE" ] || die "no folder $SOURCE: the reference tokenizer files live in the shared folder beside the clone (../shared/tokenizers; or set LMK_SHARED_DIR)"
SOURCE="$(cd "$SOURCE" && pwd)"
mkdir -p "$1"
OUT="$(cd "$1" && pwd)"

while read -r want name; do
  [ -n "$name" ] || continue
  if [ -f "$OUT/$name" ] && [ "$(sha256sum "$OUT/$name" | cut -c1-64)" = "$want" ]; then continue; fi
  packed="$SOURCE/$name.gz"
  [ -f "$packed" ] || die "$packed is missing (expected the gzipped $name with sha256 $want once unpacked)"
  gzip -dc "$packed" >"$OUT/$name.tmp" 2>/dev/null || { rm -f "$OUT/$name.tmp"; die "$packed is not a readable gzip file"; }
  got="$(sha256sum "$OUT/$name.tmp" | cut -c1-64)"
  if [ "$got" != "$want" ]; then
    rm -f "$OUT/$name.tmp"
    die "$packed unpacks to sha256 $got, not the pinned $want (tests/parity/tokenizers.sha256): a different file"
  fi
  mv "$OUT/$name.tmp" "$OUT/$name"
  echo "reference_tokenizers: $name unpacked from $packed (sha256 ok)"
done <"$HERE/tokenizers.sha256"
