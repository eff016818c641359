#!/usr/bin/env bash
# Runs a benchmark N times and prints its Markdown tables once, every number as the median and
# the range over the runs: "4.98 (4.47–5.83)". The machine's two cores are shared, so a single
# figure moves by ±20 %; docs/BENCHMARKS.md records medians and ranges over >= 5 runs.
#
#   tests/bench/runs.sh N COMMAND [ARGS...]
#   e.g. tests/bench/runs.sh 5 build/tests/lmk_encode_bench --preset small --lengths 2048,8192
#
# Table rows are matched across runs by their first cell (the n-th row of that name with the
# n-th); a cell that is a number (optionally with %) is summarized (just the number when every
# run gave the same), any other cell is taken from the first run. Lines outside tables (the
# header line with the run's matmul figure) are printed from every run, prefixed with the run's
# number, matched by their order. Exit 2 on a bad N, the command's status if a run fails.
set -euo pipefail
die() { echo "runs.sh: error: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: $0 N COMMAND [ARGS...]"
runs="$1"
shift
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] && [ "$runs" -le 100 ] || die "N must be 1..100, not '$runs'"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for ((i = 1; i <= runs; i++)); do
  "$@" >"$work/$i.out" 2>"$work/$i.err" || { cat "$work/$i.err" >&2; exit 1; }
  echo "runs.sh: run $i of $runs done" >&2
done
awk -v runs="$runs" '
  function numeric(cell) { return cell ~ /^ *-?[0-9]+(\.[0-9]+)? *%? *$/ }
  function strip(cell) { gsub(/[ %]/, "", cell); return cell + 0 }
  function fmt(x, like) { return like ~ /\./ ? sprintf("%.*f", decimals(like), x) : sprintf("%.0f", x) }
  function decimals(like,   d) { d = like; sub(/^[^.]*\./, "", d); gsub(/[^0-9]/, "", d); return length(d) }
  FNR == 1 { run++; delete seen; texts = 0 }
  {
    if ($0 !~ /^\|/) {
      ++texts
      if (run == 1) order[++lines] = "text" SUBSEP texts
      other[run, texts] = $0
      next
    }
    n = split($0, cells, "|")
    name = cells[2]; gsub(/^ +| +$/, "", name)
    key = name SUBSEP (++seen[name])  # a row is its first cell (and which one of that name)
    if (run == 1) { order[++lines] = "row" SUBSEP key; width[key] = n }
    for (c = 2; c < n; c++) {
      value[run, key, c] = cells[c]
      if (run == 1) first[key, c] = cells[c]
    }
  }
  END {
    for (l = 1; l <= lines; l++) {
      split(order[l], kind, SUBSEP)
      if (kind[1] == "text") {
        if (other[1, kind[2]] == "") { print ""; continue }
        for (r = 1; r <= runs; r++) printf("run %d: %s\n", r, other[r, kind[2]])
        continue
      }
      key = kind[2] SUBSEP kind[3]
      out = "|"
      for (c = 2; c < width[key]; c++) {
        cell = first[key, c]
        if (!numeric(cell) || cell ~ /^ *$/) { out = out cell "|"; continue }
        m = 0
        for (r = 1; r <= runs; r++) if (numeric(value[r, key, c])) v[++m] = strip(value[r, key, c])
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        median = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
        pct = cell ~ /%/ ? "%" : ""
        like = cell; gsub(/[ %]/, "", like)
        out = out " " fmt(median, like) pct (v[1] != v[m] ? " (" fmt(v[1], like) "–" fmt(v[m], like) pct ")" : "") " |"
      }
      print out
    }
  }' $(for ((i = 1; i <= runs; i++)); do echo "$work/$i.out"; done)
