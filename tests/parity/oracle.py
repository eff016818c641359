#!/usr/bin/env python3
"""Hugging Face tokenizers oracle: encodes texts with Hugging Face's own `tokenizers` library (the
Rust crate through its Python binding, pinned in scripts/requirements.txt) and prints one line of
space-separated ids per text.

    oracle.py --tokenizer FILE --input FILE [--jsonl] [--out FILE] [--bench | --bench-batch]
    oracle.py --tokenizer FILE --input FILE [--jsonl] --explain EXPECTED ACTUAL [--sources TSV]

Input: with --jsonl each line is a JSON object whose "text" field is the text; otherwise the file
is decoded as UTF-8 with one U+FFFD per maximal ill-formed subpart (Python's errors='replace', as
WHATWG and Rust's from_utf8_lossy) and split on "\\n" only ("\\r" stays in the text); a final "\\n"
does not start another text.
Output: encode(text) with add_special_tokens=True (post-processor applied); an empty text gives an
empty line without being encoded.
--bench: encode every text once (warm-up), then time the encode calls of a second pass, one text
at a time, and print one JSON line {"texts":N,"tokens":T,"bytes":B,"seconds":S,"tokens_per_s":...}.
--bench-batch: the same, the second pass one encode_batch call over every non-empty text (the
Rust library spreads it over the cores).
--explain: the parity test's report of the first differing lines between the oracle's ids
(EXPECTED) and lmk's (ACTUAL): the text, where they part, the ids and tokens around it.
Exit 2 on bad arguments or input.
"""
import argparse
import json
import os
import sys
import time


def die(message):
    sys.stderr.write(f'oracle: error: {message}\n')
    sys.exit(2)


def read_texts(path, jsonl):
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as e:
        die(f'cannot read {path}: {e.strerror}')
    lines = data.decode('utf-8', 'replace').split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    if not jsonl:
        return lines
    texts = []
    for number, line in enumerate(lines, 1):
        try:
            obj = json.loads(line)
        except ValueError as e:
            die(f'{path}:{number}: bad JSON: {e}')
        if not isinstance(obj, dict) or not isinstance(obj.get('text'), str):
            die(f'{path}:{number}: no string field "text"')
        texts.append(obj['text'])
    return texts


def bench(tok, texts, batch):
    non_empty = [t for t in texts if t]
    for t in non_empty:  # warm-up
        tok.encode(t, add_special_tokens=True)
    tokens = 0
    if batch:
        started = time.perf_counter_ns()
        encodings = tok.encode_batch(non_empty, add_special_tokens=True)
        ns = time.perf_counter_ns() - started
        tokens = sum(len(e.ids) for e in encodings)
    else:
        ns = 0
        for t in non_empty:
            started = time.perf_counter_ns()
            encoding = tok.encode(t, add_special_tokens=True)
            ns += time.perf_counter_ns() - started
            tokens += len(encoding.ids)
    seconds = ns / 1e9
    return {'texts': len(texts), 'tokens': tokens,
            'bytes': sum(len(t.encode('utf-8', 'surrogatepass')) for t in non_empty),
            'seconds': round(seconds, 6), 'tokens_per_s': round(tokens / seconds)}


def explain(tok, input_path, inputs, expected_path, actual_path, sources_path, name):
    def lines(path):
        with open(path, encoding='utf-8') as f:
            return f.read().split('\n')[:-1] if os.path.getsize(path) else []

    expected, actual = lines(expected_path), lines(actual_path)
    sources = []
    if sources_path and os.path.exists(sources_path):
        sources = [' '.join(l.split('\t')[1:]) for l in lines(sources_path)]
    n = len(expected)
    bad = [i for i in range(n) if i >= len(actual) or expected[i] != actual[i]]
    print(f'parity {name}: {n - len(bad)}/{n} identical sequences ({os.path.basename(input_path)})')
    if len(actual) != n:
        print(f'    lmk printed {len(actual)} lines for {n} texts')

    def show(ids):
        shown = []
        for i in ids:
            token = tok.id_to_token(int(i)) if i.isdigit() else None
            shown.append(i if token is None else f'{i}:{json.dumps(token, ensure_ascii=False)}')
        return ' '.join(shown)

    for i in bad[:3]:
        e = expected[i].split() if expected[i] else []
        a = actual[i].split() if i < len(actual) and actual[i] else []
        p = 0
        while p < len(e) and p < len(a) and e[p] == a[p]:
            p += 1
        text = inputs[i] if i < len(inputs) else ''
        where = f' [{sources[i]}]' if i < len(sources) and sources[i] else ''
        more = '…' if len(text) > 100 else ''
        print(f'  line {i + 1}{where}: {json.dumps(text[:100], ensure_ascii=False)}{more}')
        got = 'no line' if i >= len(actual) else f'{len(a)} ids'
        print(f'    {len(e)} ids expected, {got} from lmk; first difference at position {p}')
        lo = max(0, p - 3)
        print(f'    HF : …{show(e[lo:p + 6])}')
        print(f'    lmk: …{show(a[lo:p + 6])}')
        offsets = tok.encode(text, add_special_tokens=True).offsets
        q = min(p, len(offsets) - 1)
        while q > 0 and offsets[q][0] == offsets[q][1]:  # special tokens have empty spans
            q -= 1
        if q >= 0:
            start, end = offsets[q]
            cut = lambda s: json.dumps(s, ensure_ascii=False)[1:-1]
            print(f'    text at HF token {p}: "{cut(text[max(0, start - 30):start])}⟦{cut(text[start:end])}⟧'
                  f'{cut(text[end:end + 30])}"')
    if len(bad) > 3:
        print(f'  … and {len(bad) - 3} more mismatching lines (diff {expected_path} {actual_path})')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--tokenizer', required=True)
    parser.add_argument('--input', required=True)
    parser.add_argument('--jsonl', action='store_true')
    parser.add_argument('--out')
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument('--bench', action='store_true')
    mode.add_argument('--bench-batch', action='store_true')
    mode.add_argument('--explain', nargs=2, metavar=('EXPECTED', 'ACTUAL'))
    parser.add_argument('--sources')
    parser.add_argument('--name', default='')
    args = parser.parse_args()

    try:
        from tokenizers import Tokenizer
    except ImportError:
        die(f"Python package 'tokenizers' not found by {sys.executable} (scripts/setup makes .venv)")
    try:
        tok = Tokenizer.from_file(args.tokenizer)
    except Exception as e:  # the binding raises its own exception type
        die(f'cannot load tokenizer {args.tokenizer}: {e}')
    texts = read_texts(args.input, args.jsonl)

    if args.explain:
        explain(tok, args.input, texts, *args.explain, args.sources,
                args.name or os.path.basename(args.tokenizer))
        return
    if args.bench or args.bench_batch:
        text = json.dumps(bench(tok, texts, args.bench_batch), separators=(',', ':')) + '\n'
    else:
        out = []
        for t in texts:
            out.append(' '.join(map(str, tok.encode(t, add_special_tokens=True).ids)) if t else '')
        text = ''.join(line + '\n' for line in out)
    if args.out:
        with open(args.out + '.tmp', 'w', encoding='utf-8') as f:
            f.write(text)
        os.replace(args.out + '.tmp', args.out)
    else:
        sys.stdout.write(text)


if __name__ == '__main__':
    main()
