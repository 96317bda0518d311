#!/usr/bin/env python3
"""Re-check probe25.jsonl against the data files.

For every question and every expected_doc_name_substring, count the documents
whose name contains the substring (case-insensitive):
  * EMA leaflet documents are named by the `drug` field of
    ema_leaflet_sections.jsonl (one document per product);
  * FDA documents are named by product_names joined with "; ".
Prints the count (and, with -v, the matching names).  Exits 1 if any
substring matches no document.  ChEMBL compound cards are not in these files
and are not counted.
Usage: python3 probe25_verify.py [-v]
"""
import json, os, sys

D = "/work/shared/data/drug_labels"
HERE = os.path.dirname(os.path.abspath(__file__))
verbose = "-v" in sys.argv

names = []  # (source, name)
seen = set()
for line in open(os.path.join(D, "ema_leaflet_sections.jsonl")):
    r = json.loads(line)
    if r["drug"] not in seen:
        seen.add(r["drug"]); names.append(("EMA", r["drug"]))
for line in open(os.path.join(D, "fda_indications.jsonl")):
    r = json.loads(line)
    names.append(("FDA", "; ".join(r["product_names"])))
print(f"{sum(s == 'EMA' for s, _ in names)} EMA documents, {sum(s == 'FDA' for s, _ in names)} FDA documents")

bad = 0
qs = [json.loads(l) for l in open(os.path.join(HERE, "probe25.jsonl")) if l.strip()]
ids = [q["id"] for q in qs]
assert len(ids) == len(set(ids)) == 40, "expected 40 unique ids"
for q in qs:
    assert set(q) == {"id", "query", "expected_doc_name_substrings", "k"} and q["k"] == 5, q["id"]
    total = set()
    parts = []
    for sub in q["expected_doc_name_substrings"]:
        m = [(s, n) for s, n in names if sub.lower() in n.lower()]
        total.update(m)
        parts.append(f"{sub}={len(m)}")
        if not m:
            bad += 1
            print(f"  !! {q['id']}: '{sub}' matches no document")
        if verbose:
            for s, n in m:
                print(f"      {q['id']} {sub!r} -> {s}: {n[:110]}")
    print(f"{q['id']}: {len(total)} docs | " + ", ".join(parts))
print("OK: every substring matches at least one document" if not bad else f"FAIL: {bad} substring(s) match nothing")
sys.exit(1 if bad else 0)
