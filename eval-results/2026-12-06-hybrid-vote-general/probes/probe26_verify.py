#!/usr/bin/env python3
"""Re-check probe26.jsonl: every expected substring must match >=1 document name.

Document names: EMA `drug` field (ema_leaflet_sections.jsonl, one document per product)
and FDA `product_names` joined with "; " (fda_indications.jsonl, one document per row).
Matching is case-insensitive substring matching. Exit 1 if any substring matches nothing
or the file is malformed.
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("DRUG_LABELS_DIR", "/work/shared/data/drug_labels")

def load_names():
    names = []
    seen = set()
    with open(os.path.join(DATA, "ema_leaflet_sections.jsonl")) as f:
        for line in f:
            d = json.loads(line)["drug"]
            if d not in seen:
                seen.add(d); names.append(("EMA", d))
    with open(os.path.join(DATA, "fda_indications.jsonl")) as f:
        for line in f:
            names.append(("FDA", "; ".join(json.loads(line)["product_names"])))
    return names

def main():
    names = load_names()
    lower = [(s, n, n.lower()) for s, n in names]
    bad = 0
    rows = [json.loads(l) for l in open(os.path.join(HERE, "probe26.jsonl")) if l.strip()]
    ids = [r["id"] for r in rows]
    if ids != [f"h26-{i:02d}" for i in range(1, len(rows) + 1)] or len(rows) != 40:
        print("ERROR: ids must be h26-01..h26-40 in order"); bad += 1
    for r in rows:
        if set(r) != {"id", "query", "expected_doc_name_substrings", "k"} or r["k"] != 5:
            print(f"ERROR {r.get('id')}: unexpected fields or k"); bad += 1
        total = set()
        parts = []
        for sub in r["expected_doc_name_substrings"]:
            m = [(s, n) for s, n, nl in lower if sub.lower() in nl]
            total.update(m)
            parts.append(f"{sub!r}={len(m)}")
            if not m:
                print(f"ERROR {r['id']}: substring {sub!r} matches no document"); bad += 1
        print(f"{r['id']}: {len(total)} docs [{', '.join(parts)}]  {r['query']}")
        if os.environ.get("VERBOSE"):
            for s, n in sorted(total):
                print(f"      [{s}] {n}")
    print(f"{len(rows)} questions, {'FAIL' if bad else 'OK'}")
    sys.exit(1 if bad else 0)

if __name__ == "__main__":
    main()
