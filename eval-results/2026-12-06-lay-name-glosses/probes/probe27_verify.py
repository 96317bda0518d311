#!/usr/bin/env python3
"""Re-check probe27: format of probe27.jsonl, that every expected substring occurs
(case-insensitive) in some document name field of the data (EMA "drug" field, or an
FDA "product_names" entry / their "; "-joined string), and that every quoted evidence
line in probe27_evidence.md occurs (whitespace-normalised) in the indication text of a
product whose name contains that substring (FDA "indications", or EMA leaflet
section 1 "What X is and what it is used for")."""
import json, re, sys, os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = '/work/shared/data/drug_labels/'

def norm(s):
    return re.sub(r'\s+', ' ', s).strip().lower()

ema_names, ema_sec1 = set(), {}
for l in open(DATA + 'ema_leaflet_sections.jsonl'):
    d = json.loads(l)
    ema_names.add(d['drug'])
    if d['section'].strip().startswith('1.'):
        ema_sec1.setdefault(d['drug'], []).append(norm(d['text']))
fda = []
for l in open(DATA + 'fda_indications.jsonl'):
    d = json.loads(l)
    fda.append(('; '.join(d['product_names']), norm(d['indications'])))

def name_hits(sub):
    s = sub.lower()
    return ([('EMA', n) for n in ema_names if s in n.lower()] +
            [('FDA', n) for n, _ in fda if s in n.lower()])

def quote_found(sub, src, quote):
    s, q = sub.lower(), norm(quote)
    if src == 'EMA':
        return any(q in t for n, ts in ema_sec1.items() if s in n.lower() for t in ts)
    return any(q in t for n, t in fda if s in n.lower())

errors = []
items = [json.loads(l) for l in open(os.path.join(HERE, 'probe27.jsonl')) if l.strip()]
if len(items) != 40:
    errors.append(f'expected 40 questions, got {len(items)}')
for i, it in enumerate(items, 1):
    if it.get('id') != f'h27-{i:02d}':
        errors.append(f'bad id at line {i}: {it.get("id")}')
    if set(it) != {'id', 'query', 'expected_doc_name_substrings', 'k'} or it['k'] != 5:
        errors.append(f'{it.get("id")}: bad fields or k')
    subs = it['expected_doc_name_substrings']
    if not 1 <= len(subs) <= 5:
        errors.append(f'{it["id"]}: {len(subs)} substrings (need 1-5)')
    for s in subs:
        if not name_hits(s):
            errors.append(f'{it["id"]}: substring {s!r} matches no document name')
if len({it['query'].lower() for it in items}) != len(items):
    errors.append('duplicate queries')

# evidence file: sections "## h27-NN", lines "- `SUB` | SRC | NAME | "QUOTE""
ev, cur = {}, None
for line in open(os.path.join(HERE, 'probe27_evidence.md'), encoding='utf-8'):
    m = re.match(r'## (h27-\d\d)', line)
    if m:
        cur = m.group(1); ev[cur] = {'subs': [], 'clinical': None}
        continue
    if cur is None:
        continue
    m = re.match(r'- Clinical name: (.+)', line)
    if m:
        ev[cur]['clinical'] = m.group(1).strip()
    m = re.match(r'- `([^`]+)` \| (EMA|FDA) \| (.*) \| "(.*)"\s*$', line)
    if m:
        ev[cur]['subs'].append((m.group(1), m.group(2), m.group(4)))

n_quotes = 0
for it in items:
    e = ev.get(it['id'])
    if not e:
        errors.append(f'{it["id"]}: no evidence section'); continue
    if not e['clinical']:
        errors.append(f'{it["id"]}: no clinical name in evidence')
    got = [s for s, _, _ in e['subs']]
    if sorted(got) != sorted(it['expected_doc_name_substrings']):
        errors.append(f'{it["id"]}: evidence substrings {got} != expected {it["expected_doc_name_substrings"]}')
    for sub, src, quote in e['subs']:
        n_quotes += 1
        if len(quote) >= 200:
            errors.append(f'{it["id"]}: quote for {sub!r} is {len(quote)} chars')
        if not quote_found(sub, src, quote):
            errors.append(f'{it["id"]}: quote for {sub!r} not found in {src} indication text')

if errors:
    print('FAIL'); [print(' -', e) for e in errors]; sys.exit(1)
print(f'PASS: {len(items)} questions, {sum(len(i["expected_doc_name_substrings"]) for i in items)} expected substrings, '
      f'{n_quotes} quotes verified')
