#!/usr/bin/env python3
"""Checks probe23.jsonl against the data files only.

Document names are modelled as the brief describes them:
  EMA: "<Drug> (<active substance text from section 6>) — EMA package leaflet"  (the real parenthetical may differ;
       expected substrings for EMA are product names from the "drug" field, so this does not affect the check)
  FDA: "<product_names joined with '; '> — FDA label"
Checks:
  1. schema: fields present, ids unique, k == 5, 40 questions, non-empty expected list
  2. every expected substring matches (case-insensitive) at least one document name
  3. every name_in_document occurs (case-insensitive) in the text (+names) of at least one document matched by the
     question's expected substrings
  4. mismatch questions: name_in_query != name_in_document and name_in_document does not occur as a whole word in the query;
     controls: name_in_query == name_in_document
  6. evidence.md has a section per question; every quote is <= 200 chars and occurs verbatim in the data
  5. at most 8 documents matched per question; >= 25 distinct substances (name_in_query); ~8 controls
Prints the matched document names per question for manual review (over-matches are reported, not failed).
"""
import json, os, re, sys
D = '/work/shared/data/drug_labels/'
EMA_ROWS = [json.loads(l) for l in open(D + 'ema_leaflet_sections.jsonl')]
FDA_ROWS = [json.loads(l) for l in open(D + 'fda_indications.jsonl')]

docs = []  # (name, text)
ema = {}
active = {}
for r in EMA_ROWS:
    ema.setdefault(r['drug'], []).append(r['text'])
    if r['section'].startswith('6') and r['drug'] not in active:
        m = re.search(r'[Tt]he active substances? (?:is|are) ([^.]{0,80})', r['text'])
        if m:
            active[r['drug']] = m.group(1).strip()
for d, texts in ema.items():
    par = f" ({active[d]})" if d in active else ''
    docs.append((f"{d.capitalize()}{par} — EMA package leaflet", ' '.join(texts)))
for r in FDA_ROWS:
    n = '; '.join(r['product_names'])
    docs.append((f"{n} — FDA label", n + ' ' + r['indications']))

Q = [json.loads(l) for l in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'probe23.jsonl'))]
errors = []
ids = [q['id'] for q in Q]
if len(Q) != 40: errors.append(f'expected 40 questions, got {len(Q)}')
if len(set(ids)) != len(ids): errors.append('duplicate ids')
controls = 0
for q in Q:
    for f in ('id', 'query', 'expected_doc_name_substrings', 'k', 'name_in_query', 'name_in_document'):
        if f not in q: errors.append(f"{q.get('id')}: missing {f}")
    if q['k'] != 5: errors.append(f"{q['id']}: k != 5")
    if not q['expected_doc_name_substrings']: errors.append(f"{q['id']}: empty expected")
    matched = []
    for s in q['expected_doc_name_substrings']:
        hit = [i for i, (n, _) in enumerate(docs) if s.lower() in n.lower()]
        if not hit:
            errors.append(f"{q['id']}: substring {s!r} matches no document name")
        matched += [i for i in hit if i not in matched]
    nid = q['name_in_document'].lower()
    if not any(nid in docs[i][1].lower() for i in matched):
        errors.append(f"{q['id']}: name_in_document {q['name_in_document']!r} not found in any expected document")
    ctrl = q['name_in_query'].lower() == nid
    controls += ctrl
    if not ctrl and re.search(r'\b' + re.escape(nid) + r'\b', q['query'].lower()):
        errors.append(f"{q['id']}: name_in_document appears in the query of a mismatch question")
    if q['name_in_query'].lower() not in q['query'].lower():
        errors.append(f"{q['id']}: name_in_query not in query")
    if len(matched) > 8:
        errors.append(f"{q['id']}: {len(matched)} documents matched (>8)")
    print(f"{q['id']} {'[control]' if ctrl else '[mismatch]'} {q['name_in_query']} -> {q['name_in_document']}")
    for i in matched:
        print('    ', docs[i][0][:150])
# 6. evidence.md: one section per question, every quote <= 200 chars and verbatim in the data
ev = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'probe23_evidence.md')).read()
alltext = [t for _, t in docs]
for q in Q:
    if f"## {q['id']}" not in ev:
        errors.append(f"{q['id']}: no evidence section")
nq = 0
for line in ev.splitlines():
    m = re.match(r'^- quote — .*?: "(.*)"$', line)
    if m:
        nq += 1
        quote = m.group(1)
        if len(quote) > 200: errors.append(f'quote longer than 200 chars: {quote[:60]}...')
        if not any(quote in t for t in alltext): errors.append(f'quote not verbatim in data: {quote[:60]}...')
print(f'{nq} evidence quotes checked')
subst = {q['name_in_query'].lower() for q in Q}
print(f'\n{len(Q)} questions, {controls} controls, {len(subst)} distinct query names')
if len(subst) < 25: errors.append('fewer than 25 distinct substances')
if not 6 <= controls <= 10: errors.append(f'controls = {controls}, expected about 8')
if errors:
    print('\nFAIL'); [print(' -', e) for e in errors]; sys.exit(1)
print('PASS')
