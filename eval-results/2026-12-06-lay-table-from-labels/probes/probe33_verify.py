#!/usr/bin/env python3
"""Re-check probe33.jsonl + probe33_evidence.md against the drug-label data (stdlib only).

Checks: 40 lines; fields id/query/expected_doc_name_substrings/k; ids h33-01..h33-40; k == 5;
1-6 distinct substrings per question, each occurring in a real document name; every expected
substring has an evidence line whose quote (<200 chars) is a substring of that document's
indication text (EMA section 1 / FDA indications, whitespace- and case-normalised); no query
contains an expected substring or any document name (medicine or brand) as a whole word; no
query uses a drug-class word; each evidence section states its kind, and the per-kind counts
are 14 (a) / 12 (b) / 8 (c) / 6 (d).
"""
import json, re, sys, os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = '/work/shared/data/drug_labels'
PREFIX = 'h33'
QFILE = os.path.join(HERE, 'probe33.jsonl')
EFILE = os.path.join(HERE, 'probe33_evidence.md')
KIND_COUNTS = {'a': 14, 'b': 12, 'c': 8, 'd': 6}
# drug-class / therapy-type words a lay question must not use
CLASS_WORDS = [
    'antibiotic', 'antibacterial', 'antifungal', 'anti-fungal', 'antiviral', 'anti-viral',
    'antihistamine', 'steroid', 'corticosteroid', 'nsaid', 'ssri', 'snri', 'antidepressant',
    'stimulant', 'vaccine', 'immunoglobulin', 'gene therapy', 'alpha blocker', 'alpha-blocker',
    'bisphosphonate', 'triptan', 'statin', 'opioid', 'benzodiazepine', 'anticoagulant',
    'blood thinner', 'painkiller', 'antibody', 'antibodies', 'inhibitor', 'antimalarial',
    'pde5', 'gnrh', 'hormone', 'retinoid', 'decongestant', 'laxative', 'diuretic', 'sedative',
    'antipsychotic', 'beta blocker', 'beta-blocker', 'insulin', 'interferon', 'chemotherapy',
    'clotting factor', 'factor ix', 'anticonvulsant', 'antiepileptic', 'anti-inflammatory',
]

errors = []
def err(msg):
    errors.append(msg)

def norm(s):
    return re.sub(r'\s+', ' ', s).strip().casefold()

# ---- load data
ema_sec1 = {}          # drug(lower) -> [section-1 texts]
ema_drugs = set()
for line in open(os.path.join(DATA, 'ema_leaflet_sections.jsonl'), encoding='utf-8'):
    r = json.loads(line)
    ema_drugs.add(r['drug'])
    if r['section'].strip().startswith('1.'):
        ema_sec1.setdefault(r['drug'].lower(), []).append(r['text'])
fda = []               # (list of stripped names, indications)
for line in open(os.path.join(DATA, 'fda_indications.jsonl'), encoding='utf-8'):
    r = json.loads(line)
    fda.append(([n.strip() for n in r['product_names']], r['indications']))

all_names = set(ema_drugs) | set(n for names, _ in fda for n in names)
all_names = {n for n in all_names if n}
all_names_lower = [n.lower() for n in all_names]

# ---- questions
lines = [l for l in open(QFILE, encoding='utf-8').read().split('\n') if l.strip()]
if len(lines) != 40:
    err(f'expected 40 lines, got {len(lines)}')
qs = []
for i, l in enumerate(lines, 1):
    try:
        o = json.loads(l)
    except Exception as ex:
        err(f'line {i}: invalid JSON ({ex})'); continue
    qs.append(o)
    exp_id = f'{PREFIX}-{i:02d}'
    if set(o.keys()) != {'id', 'query', 'expected_doc_name_substrings', 'k'}:
        err(f'line {i}: fields are {sorted(o.keys())}')
    if o.get('id') != exp_id:
        err(f'line {i}: id {o.get("id")!r} != {exp_id}')
    if o.get('k') != 5 or type(o.get('k')) is not int:
        err(f'{exp_id}: k must be 5')
    q = o.get('query')
    if not isinstance(q, str) or not q.strip():
        err(f'{exp_id}: empty query')
        q = ''
    subs = o.get('expected_doc_name_substrings')
    if not isinstance(subs, list) or not (1 <= len(subs) <= 6) or not all(isinstance(s, str) and s.strip() for s in subs):
        err(f'{exp_id}: expected_doc_name_substrings must be 1-6 non-empty strings')
        subs = [s for s in (subs or []) if isinstance(s, str) and s.strip()]
    if len(set(s.lower() for s in subs)) != len(subs):
        err(f'{exp_id}: duplicate substrings')
    for s in subs:
        if s != s.lower():
            err(f'{exp_id}: substring {s!r} is not lower-case')
        if not any(s.lower() in n for n in all_names_lower):
            err(f'{exp_id}: substring {s!r} occurs in no document name')
        if s.lower() in q.lower():
            err(f'{exp_id}: query contains expected substring {s!r}')
    ql = q.lower()
    # no document name (medicine / brand) as a whole word
    for n in all_names:
        nl = n.lower()
        if nl in ql and re.search(r'(?<!\w)' + re.escape(nl) + r'(?!\w)', ql):
            err(f'{exp_id}: query contains document name {n!r} as a whole word')
    # no drug-class words
    for w in CLASS_WORDS:
        if re.search(r'(?<!\w)' + re.escape(w) + r's?(?!\w)', ql):
            err(f'{exp_id}: query uses drug-class word {w!r}')

# ---- evidence
ev = {}       # id -> (query, [(sub, src, doc, quote)], kind)
cur = None
for ln, line in enumerate(open(EFILE, encoding='utf-8').read().split('\n'), 1):
    m = re.match(r'^## (' + PREFIX + r'-\d\d): (.*)$', line)
    if m:
        cur = m.group(1)
        if cur in ev:
            err(f'evidence: duplicate header {cur}')
        ev[cur] = [m.group(2), [], None]
        continue
    mk = re.match(r'^Kind: \(([abcd])\)\s*$', line)
    if cur and mk:
        ev[cur][2] = mk.group(1)
        continue
    if cur and line.count(' | ') >= 3 and not line.startswith('#'):
        parts = line.split(' | ', 3)
        sub, src, doc, quote = [p.strip() for p in parts]
        if not (len(quote) >= 2 and quote[0] == '"' and quote[-1] == '"'):
            err(f'evidence line {ln}: quote not in double quotes'); continue
        ev[cur][1].append((sub, src, doc, quote[1:-1]))

kinds = {}
for o in qs:
    qid = o.get('id')
    if qid not in ev:
        err(f'{qid}: no evidence section'); continue
    eq, items, kind = ev[qid]
    if kind is None:
        err(f'{qid}: no "Kind: (x)" line')
    else:
        kinds[kind] = kinds.get(kind, 0) + 1
    if eq.strip() != o.get('query', '').strip():
        err(f'{qid}: evidence header query differs from jsonl query')
    subs = [s.lower() for s in o.get('expected_doc_name_substrings', [])]
    have = set()
    for sub, src, doc, quote in items:
        if sub.lower() not in subs:
            err(f'{qid}: evidence for unexpected substring {sub!r}')
        if sub.lower() not in doc.lower():
            err(f'{qid}: substring {sub!r} not contained in document name {doc!r}')
        if len(quote) >= 200:
            err(f'{qid}: quote for {sub!r} is {len(quote)} chars (>=200)')
        if not quote.strip():
            err(f'{qid}: empty quote for {sub!r}')
        nq = norm(quote)
        if src == 'EMA':
            texts = ema_sec1.get(doc.lower())
            if texts is None:
                err(f'{qid}: EMA document {doc!r} not found (no section 1)'); continue
        elif src == 'FDA':
            texts = [ind for names, ind in fda if any(doc.lower() == n.lower() for n in names)]
            if not texts:
                err(f'{qid}: FDA product name {doc!r} not found'); continue
        else:
            err(f'{qid}: source {src!r} must be EMA or FDA'); continue
        if not any(nq in norm(t) for t in texts):
            err(f'{qid}: quote for {sub!r} not found in {src} {doc!r} indication text')
            continue
        have.add(sub.lower())
    for s in subs:
        if s not in have:
            err(f'{qid}: substring {s!r} has no (valid) evidence')
extra = set(ev) - {o.get('id') for o in qs}
if extra:
    err(f'evidence sections without question: {sorted(extra)}')
if kinds != KIND_COUNTS:
    err(f'kind counts {dict(sorted(kinds.items()))} != {KIND_COUNTS}')

if errors:
    print(f'FAIL: {len(errors)} problem(s)')
    for e in errors:
        print(' -', e)
    sys.exit(1)
n_sub = sum(len(o['expected_doc_name_substrings']) for o in qs)
print(f'OK: {len(qs)} questions ({", ".join(f"{k}={v}" for k, v in sorted(kinds.items()))}), '
      f'{n_sub} expected substrings, all with verified evidence quotes; '
      f'no query contains any of {len(all_names)} document names as a whole word or a drug-class word')
sys.exit(0)
