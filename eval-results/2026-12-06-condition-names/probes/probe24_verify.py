#!/usr/bin/env python3
"""Re-check probe24.jsonl against the data files.

For every expected_doc_name_substring, count the documents whose name contains it (case-insensitive):
  - EMA documents: name = product name read from the leaflet ("What <Product> is and what it is used for");
    the `drug` slug is checked too, and the substring must match under both conventions, so the check holds
    whichever of the two the index uses as the EMA document name.
  - FDA documents: name = product_names joined with "; ".
Exit status 1 if any substring matches no document (or matches an EMA doc under only one naming convention).
Usage: python3 probe24_verify.py [--verbose]
"""
import json, re, sys

D = '/work/shared/data/drug_labels/'
PROBE = '/work/probe24/probe24.jsonl'
verbose = '--verbose' in sys.argv or '-v' in sys.argv

ema_rows = [json.loads(l) for l in open(D + 'ema_leaflet_sections.jsonl')]
slugs = sorted({r['drug'] for r in ema_rows})
product = {}
for r in ema_rows:
    if r['drug'] in product:
        continue
    t = re.sub(r'^What is in (this|the) leaflet:?\s*', '', r['text'])
    m = re.search(r'What (?:is )?(.{2,70}?) (?:is|are) and what (?:it|they) (?:is|are) used for', t)
    if m:
        product[r['drug']] = m.group(1).strip()
fda_names = ['; '.join(json.loads(l)['product_names']) for l in open(D + 'fda_indications.jsonl')]

questions = [json.loads(l) for l in open(PROBE)]
bad = 0
print(f"{len(questions)} questions; {len(slugs)} EMA documents; {len(fda_names)} FDA documents\n")
print(f"{'id':7} {'substring':26} {'EMA(product)':>12} {'EMA(slug)':>9} {'FDA':>4} {'total':>5}")
for q in questions:
    assert set(q) == {"id", "query", "expected_doc_name_substrings", "k"} and q["k"] == 5, q
    for sub in q['expected_doc_name_substrings']:
        s = sub.lower()
        ema_p = [d for d in slugs if s in product.get(d, d).lower()]
        ema_s = [d for d in slugs if s in d.lower()]
        fda = [n for n in fda_names if s in n.lower()]
        total = len(set(ema_p) | set(ema_s)) + len(fda)
        flag = ''
        if total == 0:
            flag = '  <-- NO MATCH'; bad += 1
        elif set(ema_p) != set(ema_s):
            flag = '  <-- EMA match depends on naming convention'; bad += 1
        print(f"{q['id']:7} {sub[:26]:26} {len(ema_p):>12} {len(ema_s):>9} {len(fda):>4} {total:>5}{flag}")
        if verbose:
            for d in sorted(set(ema_p) | set(ema_s)):
                print(f"            EMA: {product.get(d, d)} [slug {d}]")
            for n in fda:
                print(f"            FDA: {n[:110]}")
print(f"\n{'OK' if not bad else str(bad) + ' problem(s)'}: every expected substring checked.")
sys.exit(1 if bad else 0)
