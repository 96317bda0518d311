#!/usr/bin/env python3
"""Verify probe30.jsonl and probe30_evidence.md against the drug-label data.

Stdlib only. Usage:
    python3 probe30_verify.py [--data DIR]

Checks
  * probe30.jsonl: 40 lines of JSON, ids h30-01..h30-40 in order, exactly the
    fields id/query/expected_doc_name_substrings/k, k == 5, 1-5 distinct
    non-empty substrings, each substring occurs (case-insensitively) in at
    least one document name (EMA `drug` value or an FDA `product_names`
    entry), no duplicate queries.
  * queries do not contain a document name as a whole word (brand/product
    leak), apart from a short allow-list of ordinary words.
  * probe30_evidence.md: one section per question, headed "## <id>: <query>"
    with the query identical to the jsonl; lines
    `SUBSTRING | FDA or EMA | DOCUMENT NAME | "quote"`; every expected
    substring has at least one evidence line and every evidence line belongs
    to an expected substring; DOCUMENT NAME contains SUBSTRING and exists in
    the named source; the quote is < 200 characters and occurs
    (whitespace-normalised, case-insensitive) in that product's indication
    text (FDA: `indications` of a record listing the name in
    `product_names`; EMA: the "1. What ... is and what it is used for"
    section of that `drug`).
Exit status 0 when everything passes, 1 otherwise.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = "/work/shared/data/drug_labels"
FIELDS = {"id", "query", "expected_doc_name_substrings", "k"}
N = 40
# ordinary words that happen to be FDA product names; allowed inside queries
QUERY_WORD_ALLOW = {"urea"}


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def load_data(data_dir):
    fda = []
    with open(os.path.join(data_dir, "fda_indications.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                fda.append(json.loads(line))
    ema_used_for = {}
    ema_names = set()
    with open(os.path.join(data_dir, "ema_leaflet_sections.jsonl"), encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            ema_names.add(r["drug"])
            sec = r["section"].lower()
            if sec.startswith("1.") and "used for" in sec:
                ema_used_for.setdefault(r["drug"].lower(), []).append(r["text"])
    return fda, ema_names, ema_used_for


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--probe", default=os.path.join(HERE, "probe30.jsonl"))
    ap.add_argument("--evidence", default=os.path.join(HERE, "probe30_evidence.md"))
    args = ap.parse_args()

    errors = []
    fda, ema_names, ema_used_for = load_data(args.data)
    all_names = sorted(ema_names) + sorted({n for r in fda for n in r["product_names"]})
    all_names_l = [n.lower() for n in all_names]
    fda_by_name = {}
    for r in fda:
        for n in r["product_names"]:
            fda_by_name.setdefault(n.strip().lower(), []).append(r["indications"])

    # ---------------- probe30.jsonl
    with open(args.probe, encoding="utf-8") as f:
        raw = f.read()
    lines = raw.splitlines()
    if len(lines) != N:
        errors.append(f"expected {N} lines, found {len(lines)}")
    items = []
    for i, line in enumerate(lines, 1):
        try:
            obj = json.loads(line)
        except Exception as e:  # noqa
            errors.append(f"line {i}: invalid JSON ({e})")
            continue
        items.append(obj)
        want_id = f"h30-{i:02d}"
        if set(obj) != FIELDS:
            errors.append(f"line {i}: fields {sorted(obj)} != {sorted(FIELDS)}")
        if obj.get("id") != want_id:
            errors.append(f"line {i}: id {obj.get('id')!r} != {want_id!r}")
        if obj.get("k") != 5 or isinstance(obj.get("k"), bool):
            errors.append(f"{want_id}: k must be 5, got {obj.get('k')!r}")
        q = obj.get("query")
        if not isinstance(q, str) or not q.strip():
            errors.append(f"{want_id}: empty query")
        subs = obj.get("expected_doc_name_substrings")
        if not isinstance(subs, list) or not (1 <= len(subs) <= 5):
            errors.append(f"{want_id}: need 1-5 substrings, got {subs!r}")
            continue
        if len({s.lower() for s in subs if isinstance(s, str)}) != len(subs):
            errors.append(f"{want_id}: substrings not distinct: {subs}")
        for s in subs:
            if not isinstance(s, str) or not s.strip():
                errors.append(f"{want_id}: bad substring {s!r}")
                continue
            if not any(s.lower() in n for n in all_names_l):
                errors.append(f"{want_id}: substring {s!r} matches no document name")
        # brand / product name leak into the query
        if isinstance(q, str):
            ql = q.lower()
            for n in all_names_l:
                if len(n) >= 4 and n not in QUERY_WORD_ALLOW and re.search(r"(?<![a-z0-9])" + re.escape(n) + r"(?![a-z0-9])", ql):
                    errors.append(f"{want_id}: query mentions document name {n!r}")
    qs = [norm(o.get("query", "")) for o in items]
    dups = {q for q in qs if qs.count(q) > 1}
    if dups:
        errors.append(f"duplicate queries: {sorted(dups)}")

    # ---------------- evidence
    with open(args.evidence, encoding="utf-8") as f:
        ev_lines = f.read().splitlines()
    sections = {}
    order = []
    cur = None
    line_re = re.compile(r'^(.+?) \| (FDA|EMA) \| (.+?) \| "(.*)"\s*$')
    for ln, line in enumerate(ev_lines, 1):
        m = re.match(r"^##\s+(h30-\d{2}):\s*(.*)$", line)
        if m:
            cur = m.group(1)
            if cur in sections:
                errors.append(f"evidence line {ln}: duplicate section {cur}")
            sections[cur] = {"query": m.group(2).strip(), "rows": []}
            order.append(cur)
            continue
        if " | " in line and not line.startswith("#") and not line.startswith("One line"):
            m = line_re.match(line)
            if not m:
                errors.append(f"evidence line {ln}: cannot parse: {line[:80]}")
                continue
            if cur is None:
                errors.append(f"evidence line {ln}: row outside a section")
                continue
            sections[cur]["rows"].append((ln,) + m.groups())
    if order != [o.get("id") for o in items]:
        errors.append("evidence sections are not the 40 ids in order")
    for obj in items:
        qid = obj.get("id")
        sec = sections.get(qid)
        if sec is None:
            errors.append(f"{qid}: no evidence section")
            continue
        if sec["query"] != obj.get("query"):
            errors.append(f"{qid}: evidence heading query differs from jsonl query")
        subs = obj.get("expected_doc_name_substrings") or []
        covered = set()
        for ln, sub, src, doc, quote in sec["rows"]:
            where = f"{qid} (evidence line {ln})"
            if sub not in subs:
                errors.append(f"{where}: substring {sub!r} not in expected list")
            covered.add(sub)
            if sub.lower() not in doc.lower():
                errors.append(f"{where}: document name {doc!r} does not contain {sub!r}")
            if len(quote) >= 200:
                errors.append(f"{where}: quote is {len(quote)} chars (must be < 200)")
            if not quote.strip():
                errors.append(f"{where}: empty quote")
                continue
            if src == "FDA":
                texts = fda_by_name.get(doc.strip().lower())
            else:
                texts = ema_used_for.get(doc.strip().lower())
            if not texts:
                errors.append(f"{where}: {src} document {doc!r} not found")
                continue
            nq = norm(quote)
            if not any(nq in norm(t) for t in texts):
                errors.append(f"{where}: quote not found in {src} {doc!r}: {quote[:70]}...")
        missing = [s for s in subs if s not in covered]
        if missing:
            errors.append(f"{qid}: no evidence for {missing}")

    if errors:
        print(f"FAIL: {len(errors)} problem(s)")
        for e in errors:
            print("  -", e)
        return 1
    n_ev = sum(len(s["rows"]) for s in sections.values())
    print(f"PASS: {len(items)} questions, {n_ev} evidence lines verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
