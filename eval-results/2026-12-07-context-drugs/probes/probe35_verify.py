#!/usr/bin/env python3
"""Stdlib-only verifier for probe35.jsonl + probe35_evidence.md.
Usage: python3 probe35_verify.py [--list]   (--list prints every document each expected substring matches)
"""
import json, os, re, sys, collections

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = '/work/shared/data/drug_labels/'
QFILE = os.path.join(HERE, 'probe35.jsonl')
EFILE = os.path.join(HERE, 'probe35_evidence.md')
KIND_COUNTS = {'a': 14, 'b': 10, 'c': 8}

def norm(s):
    return re.sub(r'\s+', ' ', s).strip().lower()

# ---- load corpora
ema = {}  # drug -> section-1 text
for line in open(DATA + 'ema_leaflet_sections.jsonl', encoding='utf-8'):
    r = json.loads(line)
    if r['section'].strip().startswith('1.'):
        ema[r['drug']] = ema.get(r['drug'], '') + ' ' + r['text']
fda = [json.loads(l) for l in open(DATA + 'fda_indications.jsonl', encoding='utf-8')]
ema_all_names = set()
for line in open(DATA + 'ema_leaflet_sections.jsonl', encoding='utf-8'):
    ema_all_names.add(json.loads(line)['drug'])

def matches(sub):
    """All documents whose name contains sub: list of (source, display name, all names text, indication text)."""
    sub = sub.lower(); out = []
    for d in sorted(ema_all_names):
        if sub in d.lower():
            out.append(('EMA', d, d, ema.get(d, '')))
    for r in fda:
        if any(sub in n.lower() for n in r['product_names']):
            out.append(('FDA', '|'.join(r['product_names']), ' | '.join(r['product_names']), r['indications']))
    return out

def doc_texts(src, name):
    if src == 'EMA':
        return [ema[name]] if name in ema else []
    return [r['indications'] for r in fda if any(n.lower() == name.lower() for n in r['product_names'])]

errors = []
def err(m): errors.append(m)

# ---- questions
qs = []
with open(QFILE, encoding='utf-8') as f:
    lines = [l for l in f.read().split('\n') if l.strip()]
if len(lines) != 32:
    err(f'expected 32 lines, got {len(lines)}')
for i, l in enumerate(lines, 1):
    try:
        q = json.loads(l)
    except Exception as e:
        err(f'line {i}: bad json {e}'); continue
    qs.append(q)
    want = f'h35-{i:02d}'
    if q.get('id') != want: err(f'line {i}: id {q.get("id")!r} != {want}')
    if set(q) != {'id', 'query', 'expected_doc_name_substrings', 'k'}: err(f'{want}: keys {sorted(q)}')
    if q.get('k') != 5: err(f'{want}: k != 5')
    subs = q.get('expected_doc_name_substrings')
    if not isinstance(subs, list) or not 1 <= len(subs) <= 6: err(f'{want}: need 1-6 substrings'); subs = []
    if not isinstance(q.get('query'), str) or len(q['query'].strip()) < 10: err(f'{want}: bad query')
    for s in subs:
        if not isinstance(s, str) or s != s.lower() or not s.strip(): err(f'{want}: substring {s!r} not lower-case/non-empty'); continue
        if not matches(s): err(f'{want}: substring {s!r} matches no document name')
    if len(set(subs)) != len(subs): err(f'{want}: duplicate substrings')
ids = [q.get('id') for q in qs]
if len(set(ids)) != len(ids): err('duplicate ids')

# ---- evidence
ev = collections.OrderedDict(); cur = None
line_re = re.compile(r'^- `([^`]+)` \| (EMA|FDA) \| ([^|]+?) \| "(.*)"\s*$')
for l in open(EFILE, encoding='utf-8'):
    l = l.rstrip('\n')
    m = re.match(r'^## (h35-\d\d)\s*$', l)
    if m:
        cur = m.group(1); ev[cur] = {'kind': None, 'failed': None, 'query': None, 'quotes': []}; continue
    if cur is None: continue
    if l.startswith('- kind:'): ev[cur]['kind'] = l.split(':', 1)[1].strip()
    elif l.startswith('- failed:'): ev[cur]['failed'] = l.split(':', 1)[1].strip()
    elif l.startswith('- query:'): ev[cur]['query'] = l.split(':', 1)[1].strip()
    elif l.startswith('- `'):
        m = line_re.match(l)
        if not m: err(f'{cur}: unparsable evidence line: {l[:80]}'); continue
        ev[cur]['quotes'].append(m.groups())

kinds = collections.Counter()
for q in qs:
    qid = q['id']; subs = q.get('expected_doc_name_substrings') or []
    e = ev.get(qid)
    if not e: err(f'{qid}: no evidence section'); continue
    kind, failed = e['kind'], e['failed']
    if kind not in KIND_COUNTS: err(f'{qid}: bad kind {kind!r}'); continue
    kinds[kind] += 1
    if e['query'] is not None and norm(e['query']) != norm(q['query']): err(f'{qid}: evidence query differs from jsonl')
    if not failed: err(f'{qid}: no failed name'); continue
    fl = failed.lower()
    if fl not in q['query'].lower(): err(f'{qid}: failed name {failed!r} not in query')
    for s in subs:
        if fl == s or fl in s: err(f'{qid}: failed name {failed!r} among/inside expected substring {s!r}')
        for src, disp, allnames, _ in matches(s):
            if fl in allnames.lower(): err(f'{qid}: substring {s!r} matches document {disp!r} whose name contains failed {failed!r}')
    if kind in ('a', 'b'):
        for s in subs:
            if s in q['query'].lower(): err(f'{qid}: kind {kind} query contains expected substring {s!r}')
    covered = set()
    for s, src, doc, quote in e['quotes']:
        doc = doc.strip()
        if s not in subs: err(f'{qid}: evidence substring {s!r} not in expected'); continue
        covered.add(s)
        if s not in doc.lower(): err(f'{qid}: document {doc!r} does not contain substring {s!r}')
        if len(quote) >= 200: err(f'{qid}: quote for {s!r} is {len(quote)} chars')
        texts = doc_texts(src, doc)
        if not texts: err(f'{qid}: {src} document {doc!r} not found'); continue
        if not any(norm(quote) in norm(t) for t in texts): err(f'{qid}: quote for {s!r} not found in {src} {doc!r}: {quote[:60]}')
    for s in subs:
        if s not in covered: err(f'{qid}: no evidence line for substring {s!r}')
if set(ev) - set(ids): err(f'evidence sections without question: {sorted(set(ev) - set(ids))}')
for k, n in KIND_COUNTS.items():
    if kinds[k] != n: err(f'kind {k}: {kinds[k]} questions, expected {n}')

if '--list' in sys.argv:
    for q in qs:
        print(q['id'], '|', q['query'])
        for s in q.get('expected_doc_name_substrings') or []:
            for src, disp, _, _ in matches(s):
                print(f'    {s:16s} -> {src} {disp[:140]}')

if errors:
    print('ERRORS:'); [print(' -', m) for m in errors]; sys.exit(1)
print('OK')
