#!/usr/bin/env python3
"""Second half of make_corpus.sh: turns the rendered documents into the parity corpus.

    make_corpus.py WORK OUT EMOJI_TEST

WORK holds what make_corpus.sh rendered (docs/<category>/NNNNN.{txt,origin}, iso/*.po); OUT gets
corpus.jsonl, corpus.sources.tsv and invalid_utf8.txt. Standard library only.

The corpus was first written by a JavaScript version of this script, and the parity test compares
ids on exactly that text, so this port keeps JavaScript's string semantics where the output
depends on them: lengths and slices in UTF-16 code units (`u16len`, `u16slice`; a slice may cut a
surrogate pair, and a lone surrogate becomes EF BF BD in UTF-8), JavaScript's \\s and trim()
character set (`JS_WS`), split() dropping the empty piece after a final separator, the
mulberry32 generator with 32-bit wrap-around, and JSON.stringify's escaping.
"""
import base64
import json
import math
import os
import re
import sys
import unicodedata

WORK, OUT, EMOJI_TEST = sys.argv[1:4]

# ---- JavaScript string semantics --------------------------------------------------------------
JS_WS = ('\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008'
         '\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff')  # \s, and what trim() removes
JS_S = '[' + re.escape(JS_WS) + ']'
JS_LINE_END = '\n\r\u2028\u2029'  # where a multiline ^ / $ matches, what . does not match


def js_utf8(s):
    """Buffer.from(s, 'utf8'): UTF-8, a lone surrogate as U+FFFD."""
    return s.encode('utf-16-le', 'surrogatepass').decode('utf-16-le', 'replace').encode('utf-8')


def nbytes(s):
    return len(js_utf8(s))


def u16len(s):
    return len(s.encode('utf-16-le', 'surrogatepass')) // 2


def u16slice(s, start, end=None):
    units = s.encode('utf-16-le', 'surrogatepass')
    return units[2 * start:None if end is None else 2 * end].decode('utf-16-le', 'surrogatepass')


def js_trim(s):
    return s.strip(JS_WS)


def split_after(s, chars):
    """s.split(/(?<=[chars])/): pieces ending in one of chars; no empty piece at the end."""
    pieces, start = [], 0
    for i, ch in enumerate(s):
        if ch in chars and i + 1 < len(s):
            pieces.append(s[start:i + 1])
            start = i + 1
    pieces.append(s[start:])
    return pieces


def js_json(text):
    return json.dumps({'text': text}, ensure_ascii=False, separators=(',', ':'))


# ---- deterministic helpers ----------------------------------------------------------------------
seed = 0x5eed1234


def rnd():  # mulberry32
    global seed
    seed = (seed + 0x6D2B79F5) & 0xFFFFFFFF
    t = seed
    t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
    t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
    return (t ^ (t >> 14)) / 4294967296


def ri(n):
    return math.floor(rnd() * n)


def pick(a):
    return a[ri(len(a))]


MIN, MAX = 200, 4000
TARGETS = [400, 900, 1600, 2600, 3600]
tgt = 0
records = []  # (text, cat, origin)


def emit(text, cat, origin):
    b = nbytes(text)
    if b < MIN or b > MAX:
        raise ValueError(f'chunk of {b} bytes ({cat} {origin})')
    records.append((text, cat, origin))


def emit_fit(text, cat, origin):
    """Derived texts: cut to MAX bytes, skipped if shorter than MIN."""
    if nbytes(text) > MAX:
        text = hard_split(text, MAX)[0]
    if nbytes(text) >= MIN:
        emit(text, cat, origin)


def hard_split(s, limit):
    """Pieces of at most `limit` bytes, whole code points."""
    out, cur, cb = [], '', 0
    for ch in s:
        b = nbytes(ch)
        if cb + b > limit:
            out.append(cur)
            cur, cb = '', 0
        cur += ch
        cb += b
    if cur:
        out.append(cur)
    return out


def chunk_doc(text):
    """A document cut at line ends into pieces of about TARGETS bytes (200..4000)."""
    global tgt
    pieces = []
    for line in split_after(text, '\n'):
        pieces.extend(hard_split(line, 3000) if nbytes(line) > MAX else [line])
    chunks, cur, cb = [], '', 0
    target = TARGETS[tgt % len(TARGETS)]
    tgt += 1
    for p in pieces:
        pb = nbytes(p)
        if cb > 0 and (cb + pb > MAX or cb >= target):
            chunks.append(cur)
            cur, cb = '', 0
            target = TARGETS[tgt % len(TARGETS)]
            tgt += 1
        cur += p
        cb += pb
    if cb > 0:
        chunks.append(cur)
    res = []  # too-small chunks join their predecessor where they fit, else are dropped
    for c in chunks:
        if nbytes(c) >= MIN:
            res.append(c)
        elif res and nbytes(res[-1]) + nbytes(c) <= MAX:
            res[-1] += c
    return [c for c in res if nbytes(c) >= MIN and len(js_trim(c)) > 0]


def read_text(path):
    with open(path, 'rb') as f:
        return f.read().decode('utf-8', 'replace')


# ---- 1. real documents ---------------------------------------------------------------------------
CATS = ['en-man', 'en-dev', 'code', 'de', 'fr', 'pl', 'vi', 'el', 'ru', 'ja', 'zh_CN', 'zh_TW']
by_cat = {}
for cat in CATS:
    d = os.path.join(WORK, 'docs', cat)
    by_cat[cat] = []
    if not os.path.isdir(d):
        continue
    for name in sorted(x for x in os.listdir(d) if x.endswith('.txt')):
        text = read_text(os.path.join(d, name))
        origin = js_trim(read_text(os.path.join(d, name[:-4] + '.origin')))
        for c in chunk_doc(text):
            emit(c, cat, origin)
            by_cat[cat].append(c)

# ---- 2. iso-codes names (Arabic, Hebrew, Indic, Thai, Korean, ...) -------------------------------
NOT_END = f'[^{JS_LINE_END}]'
PO_PAIR = re.compile(f'(?:\\A|(?<=[{JS_LINE_END}]))msgid "({NOT_END}*)"\nmsgstr "({NOT_END}*)"'
                     f'(?=[{JS_LINE_END}]|\\Z)')
PO_ESCAPE = re.compile(f'\\\\({NOT_END})')


def unescape_po(s):
    return PO_ESCAPE.sub(lambda m: {'n': '\n', 't': '\t', '"': '"', '\\': '\\'}.get(m[1], m[1]), s)


by_cat['iso'] = []
iso_dir = os.path.join(WORK, 'iso')
for name in sorted(os.listdir(iso_dir)):
    pairs = [(unescape_po(m[1]), unescape_po(m[2]))
             for m in PO_PAIR.finditer(read_text(os.path.join(iso_dir, name))) if m[1] and m[2]]
    doc = ''
    for en, tr in pairs:  # at most ~4.5 KB per language and domain
        line = f'{en}: {tr}\n'
        if nbytes(doc) + nbytes(line) > 4500:
            break
        doc += line
    for c in chunk_doc(doc):
        emit(c, 'iso', name[:-3] if name.endswith('.po') else name)
        by_cat['iso'].append(c)

# ---- 3. emoji ------------------------------------------------------------------------------------
raw = read_text(EMOJI_TEST)
lines = raw.split('\n')
# (a) the file itself, every 6th line (keeps all groups, skin tones, ZWJ, flags, keycaps)
sampled = '\n'.join(l for i, l in enumerate(lines) if i % 6 == 0 or l.startswith('# group'))
for c in chunk_doc(sampled):
    emit(c, 'emoji-file', 'emoji-test.txt')
# (b) emoji text: sequences written the way people write them
ENTRY = re.compile(f'^([0-9A-F ]+?){JS_S}*;{JS_S}*'
                   f'(fully-qualified|minimally-qualified|unqualified|component){JS_S}*#{JS_S}*'
                   f'([^{re.escape(JS_WS)}]+){JS_S}+E[0-9.]+{JS_S}+({NOT_END}*)$')
entries = []
for l in lines:
    m = ENTRY.match(l)
    if m and m.end() == len(l):
        entries.append({'cps': [int(h, 16) for h in re.split(JS_S + '+', js_trim(m[1]))],
                        'status': m[2], 'name': m[4]})


def seq(e):
    return ''.join(chr(c) for c in e['cps'])


zwj = [e for e in entries if 0x200D in e['cps']]
tones = [e for e in entries if any(0x1F3FB <= c <= 0x1F3FF for c in e['cps'])]
flags = [e for e in entries if len(e['cps']) == 2 and 0x1F1E6 <= e['cps'][0] <= 0x1F1FF]
other = [e for e in entries
         if e['status'] != 'fully-qualified' or 0x20E3 in e['cps'] or 0xE007F in e['cps']]
words = re.findall('[A-Za-z]{3,}', ' '.join(by_cat['en-man']))[:5000]
pools = [('zwj', zwj), ('skin-tone', tones), ('flags', flags), ('qualification', other),
         ('all', entries)]
for k in range(40):
    pname, pool = pools[k % len(pools)]
    t = ''
    while nbytes(t) < 300 + ri(2500):
        mode = ri(4)
        n = 1 + ri(6)
        s = ''
        for _ in range(n):
            s += seq(pick(pool))
        if mode == 0:
            t += s  # glued to the previous text
        elif mode == 1:
            t += ' ' + s + ' '
        elif mode == 2:
            left = pick(words)
            t += left + s + pick(words) + ' '
        else:
            t += '\n' + pick(pool)['name'] + ': ' + s + '\n'
    emit_fit(t, 'emoji-text', pname)

# ---- 4. derived: NFC / NFD accented text ---------------------------------------------------------
src = [c for cat in ('fr', 'de', 'vi', 'pl', 'el', 'ru') for c in by_cat[cat]
       if unicodedata.normalize('NFD', c) != unicodedata.normalize('NFC', c)]
for k in range(60):
    if not src:
        break
    c = src[(k * 7919) % len(src)]
    form = ['NFD', 'NFC', 'NFKD', 'mixed'][k % 4]
    if form == 'mixed':
        h = u16len(c) // 2
        t = unicodedata.normalize('NFD', u16slice(c, 0, h)) + unicodedata.normalize('NFC', u16slice(c, h))
    else:
        t = unicodedata.normalize(form, c)
    emit_fit(t, 'accents-' + form, 'derived')

# ---- 5. derived: whitespace ----------------------------------------------------------------------
USPACES = ['\u00A0', '\u1680', '\u2000', '\u2002', '\u2003', '\u2007', '\u2009', '\u200A', '\u202F',
           '\u205F', '\u3000', '\u2028', '\u2029', '\u0085', '\u000B', '\u000C', '\u200B', '\uFEFF']


def space_run():
    return ' ' * pick([2, 3, 4, 8, 16, 17, 31, 32, 33, 64, 100, 257])


def ws_tabs(t):
    t = re.sub(f'(?:\\A|(?<=[{JS_LINE_END}]))( {{2,}})', lambda m: '\t' * (1 + ri(12)), t)
    return re.sub(' {2,}', lambda m: '\t' * (1 + ri(3)), t)


def ws_edges(t):
    left = pick(['  ', '\n\n', '\t', ' \r\n', '\u3000'])
    return left + t + pick(['   ', '\n\n\n', '\t\t', ' '])


WS = {
    'crlf': lambda t: t.replace('\n', '\r\n'),
    'cr': lambda t: t.replace('\n', '\r'),
    'tabs': ws_tabs,
    'spaces': lambda t: re.sub(' ', lambda m: space_run() if ri(12) == 0 else ' ', t),
    'blanklines': lambda t: re.sub('\n\n+', lambda m: '\n' * pick([2, 3, 5, 8, 16, 31, 32, 33, 40, 64]), t),
    'unicode': lambda t: re.sub(' ', lambda m: pick(USPACES) if ri(4) == 0 else ' ', t),
    'trailing': lambda t: re.sub('\n', lambda m: pick([' ', '  ', '\t', ' \t ', '   \t\t']) + '\n', t),
    'edges': ws_edges,
    'mixed': lambda t: re.sub(JS_S + '+', lambda m: pick([' ', '  ', '\t', '\n', '\r\n', ' \n ', '\n\n\n',
                                                          space_run(), m[0]]), t),
}
src = by_cat['en-man'] + by_cat['code'] + by_cat['ja'] + by_cat['de']
names = list(WS)
for k in range(72):
    name = names[k % len(names)]
    emit_fit(WS[name](src[(k * 104729 + 13) % len(src)]), 'ws-' + name, 'derived')

# ---- 6. derived: control and odd characters ------------------------------------------------------
ODD = [chr(c) for c in range(0x20) if c != 0x0A] + ['\u007F'] + [chr(c) for c in range(0x80, 0xA0)]
ODD += ['\u001B[1m', '\u001B[0m', '\u001B[31;1m', '\u00AD', '\u200B', '\u200C', '\u200D', '\u2060',
        '\uFEFF', '\u202E', '\u202C', '\u2066', '\u2069', '\u200E', '\u200F', '\uFE0F', '\u0301',
        '\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308\u0309\u030A\u030B\u030C', '\uE000', '\uF8FF',
        '\uFFFE', '\uFFFF', '\uFFFD', '\u0378', '\U0001D400\U0001D401', '\U000E0041', '\U0010FFFD',
        '\U0001F600', '\u0000', '\u0000\u0000',
        # Unicode-version-sensitive: Mn/Cf/Po assigned after Unicode 8.0 (HF's BertNormalizer
        # tables are 8.0), CJK Ext. E start (outside HF's is_chinese_char), newer emoji
        '\u08D4', '\u0D00', '\u1ABF', '\u08E2', '\u0890', '\u2E4F', '\U0002B820', '\U0002B920',
        '\U0001F937', '\U0001FAE0']
src = by_cat['en-man'] + by_cat['ru'] + by_cat['zh_CN'] + by_cat['iso']
for k in range(40):
    c = src[(k * 6007 + 5) % len(src)]
    out = pick(['\u0301', '\u0000', '\uFEFF', '\u200D', '\u001B[1m']) if k % 5 == 0 else ''
    for ch in c:
        out += ch
        if ri(40) == 0:
            out += pick(ODD)
    emit_fit(out, 'control', 'derived')

# ---- 7. derived: special-token strings inside text -----------------------------------------------
SPECIAL = ['[CLS]', '[SEP]', '[MASK]', '[PAD]', '[UNK]', '[cls]', '[Sep]', '[ SEP ]', '[CLS][SEP]',
           '<|endoftext|>', '<|endoftext|><|endoftext|>', '<|endoftext|', '<|begin_of_text|>',
           '<|end_of_text|>', '<|eot_id|>', '<|start_header_id|>', '<|reserved_special_token_0|>',
           '<bos>', '<eos>', '<pad>', '<unk>', '<mask>', '<start_of_turn>', '<end_of_turn>', '<unused0>',
           '<unused99>', '<start_of_image>', '<image_soft_token>', '[multimodal]', '<table>',
           '</table>', '<tr>', '<td>', '<b>', '</b>', '<i>', '<s>', '</s>', '<code>', '</code>', '<h1>',
           '<a>', '<div>', '\u2581', '\u2581\u2581', '\u2581\u2581\u2581\u2581', '\u0120', '\u010A',
           '##ing', '##']
src = by_cat['en-man'] + by_cat['en-dev'] + by_cat['de'] + by_cat['ja']
for k in range(30):
    c = src[(k * 3571 + 11) % len(src)]
    out = ''
    for w in split_after(c, JS_WS):
        out += w
        if ri(12) == 0:
            s = pick(SPECIAL)
            left = pick(['', ' ', '  ', '\n'])
            out += left + s + pick(['', ' ', '  ', '\n'])
    if k % 3 == 0:
        left = pick(SPECIAL)
        out = left + out + pick(SPECIAL)
    emit_fit(out, 'special-tokens', 'derived')

# ---- 8. derived: very long words, digit and punctuation runs -------------------------------------
words = re.findall('[A-Za-z]{2,}', ' '.join(by_cat['en-man']))


def run_of(n):
    s = ''
    while len(s) < n:
        s += pick(words).lower()
    return s[:n]


wi = 0
for k in range(20):
    out = ''
    while nbytes(out) < 600 + ri(2400):
        kind = ri(8)
        if kind == 0:
            out += run_of(pick([99, 100, 101, 102, 150, 200, 500])) + ' '
        elif kind == 1:
            digits = '9876543210' * (1 + ri(20))
            out += digits[:pick([1, 2, 3, 4, 7, 10, 33, 101, 150])] + ' '
        elif kind == 2:
            out += pick(['=', '-', '.', '*', '#', '_', '~', '/', '!']) * pick([3, 50, 99, 100, 101, 300]) + '\n'
        elif kind == 3:
            host = run_of(20)
            path1 = run_of(40)
            path2 = run_of(60)
            query = run_of(30)
            out += f'https://{host}.example.org/{path1}/{path2}?q={query}&n={ri(1e6)} '
        elif kind == 4:
            out += base64.b64encode(run_of(120).encode()).decode() + '\n'
        elif kind == 5:
            accents = 'é' * pick([100, 101])
            out += accents + ' ' + '日本語' * pick([10, 40]) + ' '
        else:
            out += ' '.join(words[wi:wi + 12]) + ' '
        wi = (wi + 12) % max(1, len(words) - 12)
    emit_fit(out, 'long-words', 'derived')

# ---- 9. derived: several scripts in one text -----------------------------------------------------
langs = ['en-man', 'de', 'fr', 'pl', 'vi', 'el', 'ru', 'ja', 'zh_CN', 'zh_TW', 'iso', 'code']
for k in range(20):
    out = ''
    while nbytes(out) < 1500:
        c = pick(by_cat[pick(langs)])
        text_lines = [l for l in c.split('\n') if js_trim(l)]
        if text_lines:
            line = js_trim(pick(text_lines))
            out += line + pick([' ', '\n', '。', ' — '])
    emit_fit(out, 'mixed-scripts', 'derived')


# ---- write corpus.jsonl + sources ----------------------------------------------------------------
def write(name, data):
    with open(os.path.join(OUT, name + '.tmp'), 'wb') as f:
        f.write(data)


jsonl = ''.join(js_json(text) + '\n' for text, _, _ in records)
write('corpus.jsonl', js_utf8(jsonl))
write('corpus.sources.tsv',
      js_utf8(''.join(f'{i + 1}\t{cat}\t{origin}\n' for i, (_, cat, origin) in enumerate(records))))

# ---- invalid_utf8.txt ----------------------------------------------------------------------------
BAD = [
    [0x80], [0xBF], [0x80, 0x80, 0x80], [0xBF, 0x80],                          # lone continuation
    [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xF0, 0x9F], [0xE6, 0x97],      # truncated
    [0xC0, 0xAF], [0xC1, 0xBF], [0xC0, 0x80], [0xE0, 0x80, 0xAF], [0xF0, 0x80, 0x80, 0xAF],  # overlong
    [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80],             # surrogates
    [0xFF], [0xFE], [0xFF, 0xFE], [0xFE, 0xFF], [0xFF, 0xFF, 0xFF],
    [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],      # > U+10FFFF
    [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80], [0xE9], [0xE9, 0x20],                              # Latin-1 é
]
src = []
for cat in ['en-man', 'en-dev', 'code', 'de', 'fr', 'vi', 'el', 'ru', 'ja', 'zh_CN', 'iso']:
    for c in by_cat.get(cat, []):
        for l in c.split('\n'):
            t = js_trim(l.replace('\r', ''))
            if 20 <= nbytes(t) <= 300:
                src.append(t)
emoji_text = [u16slice(re.sub('[\r\n]+', ' ', text), 0, 120)
              for text, cat, _ in records if cat == 'emoji-text']
invalid_lines = []
for k in range(200):
    parts = []
    if k % 50 == 7:  # only invalid bytes
        for _ in range(6):
            parts.append(bytes(pick(BAD)))
    elif k % 50 == 23:  # real text with characters cut in the middle
        multi = [s for s in src if nbytes(s) > u16len(s)]
        t = js_utf8(pick(multi if multi else src))
        parts.append(bytes(b for b in t if not (0x80 <= b <= 0xBF and ri(3) == 0)))
    else:
        base = pick(emoji_text) if k % 10 == 9 and emoji_text else src[(k * 7877 + 3) % len(src)]
        cps = list(base)
        at = set()
        for _ in range(1 + ri(4)):
            at.add(ri(len(cps) + 1))
        cur = ''
        for i in range(len(cps) + 1):
            if i in at:
                parts += [js_utf8(cur), bytes(pick(BAD))]
                cur = ''
            if i < len(cps):
                cur += cps[i]
        parts.append(js_utf8(cur))
        if k % 25 == 4:
            parts += [b'\x00', b'nul byte above']
    line = b''.join(parts)
    if b'\n' in line or b'\r' in line:
        raise ValueError('newline inside invalid line')
    invalid_lines.append(line)
write('invalid_utf8.txt', b''.join(l + b'\n' for l in invalid_lines))

for name in ['corpus.jsonl', 'corpus.sources.tsv', 'invalid_utf8.txt']:
    os.replace(os.path.join(OUT, name + '.tmp'), os.path.join(OUT, name))

# ---- report --------------------------------------------------------------------------------------
per_cat = {}
text_bytes = 0
for text, cat, _ in records:
    key = re.sub('-(NFD|NFC|NFKD|mixed)$', '', re.sub('^ws-.*', 'whitespace', cat))
    n, b = per_cat.get(key, (0, 0))
    per_cat[key] = (n + 1, b + nbytes(text))
    text_bytes += nbytes(text)
print('make_corpus: category         texts     bytes', file=sys.stderr)
for key, (n, b) in per_cat.items():
    print(f'make_corpus: {key:<16} {n:>5} {b:>9}', file=sys.stderr)
print(f'make_corpus: {len(records)} texts, {text_bytes} bytes of text, corpus.jsonl '
      f'{len(js_utf8(jsonl))} bytes; invalid_utf8.txt 200 lines')
