#!/usr/bin/env node
// Hugging Face tokenizers oracle: encodes texts with the npm package `tokenizers` (HF's Rust
// library through its Node binding) and prints one line of space-separated ids per text.
//
//   node oracle.mjs --tokenizer FILE --input FILE [--jsonl] [--out FILE] [--bench | --bench-batch]
//                   [--oracle-dir DIR]
//
// Input: with --jsonl each line is a JSON object whose "text" field is the text; otherwise the
// file is decoded as UTF-8 with invalid bytes replaced by U+FFFD (Node's Buffer#toString, i.e.
// one U+FFFD per maximal ill-formed subpart, as WHATWG / Rust's from_utf8_lossy) and split on
// "\n" only ("\r" stays in the text); a final "\n" does not start another text.
// Output: encode(text) with add_special_tokens=true (post-processor applied); an empty text
// gives an empty line without being encoded.
// --bench: encode every text once (warm-up), then time the encode calls of a second pass
// (one text at a time, awaited in sequence) and print one JSON line
// {"texts":N,"tokens":T,"bytes":B,"seconds":S,"tokens_per_s":...}.
// --bench-batch: the same, the second pass one encodeBatch call over every non-empty text (the
// Rust library spreads it over the cores).
// The `tokenizers` package is looked up in --oracle-dir, $LMK_ORACLE_DIR, the directory above
// the tokenizer file (setup_oracle.sh's layout: OUT/tokenizers/x.json, OUT/node_modules), then
// $NODE_PATH and next to this script.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

function die(msg) {
  process.stderr.write(`oracle: error: ${msg}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const a = { jsonl: false, bench: false, out: null, tokenizer: null, input: null, oracleDir: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) die(`${k} needs a value`);
      return argv[++i];
    };
    if (k === '--tokenizer') a.tokenizer = val();
    else if (k === '--input') a.input = val();
    else if (k === '--out') a.out = val();
    else if (k === '--oracle-dir') a.oracleDir = val();
    else if (k === '--jsonl') a.jsonl = true;
    else if (k === '--bench') a.bench = true;
    else if (k === '--bench-batch') a.bench = a.batch = true;
    else if (k === '-h' || k === '--help') {
      process.stdout.write('usage: node oracle.mjs --tokenizer FILE --input FILE [--jsonl] [--out FILE] [--bench | --bench-batch] [--oracle-dir DIR]\n');
      process.exit(0);
    } else die(`unknown argument ${k}`);
  }
  if (!a.tokenizer) die('--tokenizer FILE is required');
  if (!a.input) die('--input FILE is required');
  return a;
}

function loadTokenizers(args) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dirs = [args.oracleDir, process.env.LMK_ORACLE_DIR,
                path.dirname(path.dirname(path.resolve(args.tokenizer))),
                ...(process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean).map((d) => path.dirname(d)),
                here].filter(Boolean);
  for (const d of dirs) {
    try {
      return createRequire(path.join(path.resolve(d), 'noop.js'))('tokenizers');
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') die(`loading tokenizers from ${d}: ${e.message}`);
    }
  }
  die(`npm package 'tokenizers' not found (looked in ${dirs.join(', ')}); run tests/parity/setup_oracle.sh DIR`);
}

function readTexts(file, jsonl) {
  let buf;
  try { buf = fs.readFileSync(file); } catch (e) { die(`cannot read ${file}: ${e.message}`); }
  const lines = buf.toString('utf8').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  if (!jsonl) return lines;
  return lines.map((l, i) => {
    let obj;
    try { obj = JSON.parse(l); } catch (e) { die(`${file}:${i + 1}: bad JSON: ${e.message}`); }
    if (obj === null || typeof obj !== 'object' || typeof obj.text !== 'string')
      die(`${file}:${i + 1}: no string field "text"`);
    return obj.text;
  });
}

const args = parseArgs(process.argv.slice(2));
const { Tokenizer } = loadTokenizers(args);
let tok;
try { tok = Tokenizer.fromFile(path.resolve(args.tokenizer)); }
catch (e) { die(`cannot load tokenizer ${args.tokenizer}: ${e.message}`); }
const texts = readTexts(args.input, args.jsonl);
const opts = { addSpecialTokens: true };

async function ids(text) {
  return (await tok.encode(text, null, opts)).getIds();
}

if (args.bench) {
  for (const t of texts) if (t.length) await ids(t);            // warm-up
  let ns = 0n, tokens = 0, bytes = 0;
  if (args.batch) {
    const nonEmpty = texts.filter((t) => t.length);
    const t0 = process.hrtime.bigint();
    const encodings = await tok.encodeBatch(nonEmpty, opts);
    ns = process.hrtime.bigint() - t0;
    for (const enc of encodings) tokens += enc.getLength();
    for (const t of nonEmpty) bytes += Buffer.byteLength(t, 'utf8');
  }
  for (const t of args.batch ? [] : texts) {
    if (!t.length) continue;
    const t0 = process.hrtime.bigint();
    const enc = await tok.encode(t, null, opts);
    ns += process.hrtime.bigint() - t0;
    tokens += enc.getLength();
    bytes += Buffer.byteLength(t, 'utf8');
  }
  const seconds = Number(ns) / 1e9;
  const line = JSON.stringify({ texts: texts.length, tokens, bytes, seconds: +seconds.toFixed(6),
                                tokens_per_s: Math.round(tokens / seconds) }) + '\n';
  if (args.out) fs.writeFileSync(args.out, line); else process.stdout.write(line);
} else {
  const out = new Array(texts.length);
  for (let i = 0; i < texts.length; i++) out[i] = texts[i].length ? (await ids(texts[i])).join(' ') : '';
  const text = out.length ? out.join('\n') + '\n' : '';
  if (args.out) {
    fs.writeFileSync(args.out + '.tmp', text);
    fs.renameSync(args.out + '.tmp', args.out);
  } else {
    process.stdout.write(text);
  }
}
