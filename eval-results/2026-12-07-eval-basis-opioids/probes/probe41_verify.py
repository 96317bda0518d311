#!/usr/bin/env python3
"""Verify probe41.jsonl + probe41_evidence.md against the drug-label data (stdlib only).

Checks:
  * ids unique, well formed, fields present, k == 5
  * every expected substring is lowercase and matches >= 1 product name in the data
    (EMA "drug" field or any FDA "product_names" entry)
  * every evidence id has a "kind:" line; counts per kind are 14 / 6 / 10
  * every "> " quote occurs (whitespace-normalised, case-insensitive) in the named
    source product's text (FDA: indications of that UNII; EMA: all sections of that drug)
  * every expected substring is backed by >= 1 quote whose source product has a name
    containing that substring
Prints OK on success, otherwise the problems and exits 1.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("DRUG_LABELS", "/work/shared/data/drug_labels")
EXPECTED_COUNTS = {"opioid": 14, "other-poisoning": 6, "control": 10}


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def load():
    ema_text, ema_names = {}, {}
    with open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            d = r["drug"]
            ema_text[d] = ema_text.get(d, "") + " " + r["text"]
            ema_names[d] = {d.lower()}
    fda_text, fda_names = {}, {}
    with open(os.path.join(DATA, "fda_indications.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            fda_text[r["unii"]] = r["indications"]
            fda_names[r["unii"]] = {n.strip().lower() for n in r["product_names"]}
    return ema_text, ema_names, fda_text, fda_names


def main():
    errs = []
    ema_text, ema_names, fda_text, fda_names = load()
    all_names = set()
    for v in list(ema_names.values()) + list(fda_names.values()):
        all_names |= v

    # questions
    qs = []
    with open(os.path.join(HERE, "probe41.jsonl"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                qs.append(json.loads(line))
    ids = [q.get("id") for q in qs]
    if len(ids) != len(set(ids)):
        errs.append("duplicate ids")
    if len(qs) != 30:
        errs.append(f"expected 30 questions, got {len(qs)}")
    for q in qs:
        if not re.fullmatch(r"h41-\d\d", str(q.get("id"))):
            errs.append(f"bad id {q.get('id')}")
        if not isinstance(q.get("query"), str) or not q["query"].strip():
            errs.append(f"{q.get('id')}: empty query")
        if q.get("k") != 5:
            errs.append(f"{q.get('id')}: k != 5")
        subs = q.get("expected_doc_name_substrings")
        if not subs or not isinstance(subs, list):
            errs.append(f"{q.get('id')}: no expected substrings")
            continue
        for s in subs:
            if s != s.lower():
                errs.append(f"{q['id']}: substring not lowercase: {s!r}")
            if not any(s in n for n in all_names):
                errs.append(f"{q['id']}: substring {s!r} matches no product name")

    # evidence
    ev = {}
    cur = None
    with open(os.path.join(HERE, "probe41_evidence.md"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^## (h41-\d\d)\s*$", line)
            if m:
                cur = m.group(1)
                if cur in ev:
                    errs.append(f"evidence: duplicate heading {cur}")
                ev[cur] = {"kind": None, "quotes": []}
                continue
            if cur is None:
                continue
            m = re.match(r"^kind:\s*(\S+)\s*$", line)
            if m:
                ev[cur]["kind"] = m.group(1)
                continue
            if line.startswith("> "):
                m = re.match(r'^> "(.+)" -- source: (fda unii|ema drug)=(\S+)\s*$', line)
                if not m:
                    errs.append(f"{cur}: unparsable quote line: {line[:80]}")
                    continue
                ev[cur]["quotes"].append((m.group(1), m.group(2), m.group(3)))

    if set(ev) != set(ids):
        errs.append(f"evidence ids differ from question ids: "
                    f"missing={sorted(set(ids) - set(ev))} extra={sorted(set(ev) - set(ids))}")
    counts = {}
    for qid, e in ev.items():
        counts[e["kind"]] = counts.get(e["kind"], 0) + 1
        if e["kind"] not in EXPECTED_COUNTS:
            errs.append(f"{qid}: bad kind {e['kind']!r}")
        if not e["quotes"]:
            errs.append(f"{qid}: no quotes")
    if counts != EXPECTED_COUNTS:
        errs.append(f"kind counts {counts} != {EXPECTED_COUNTS}")

    byid = {q["id"]: q for q in qs}
    for qid, e in ev.items():
        backed_names = set()
        for quote, src, key in e["quotes"]:
            if src == "fda unii":
                text, names = fda_text.get(key), fda_names.get(key)
            else:
                text, names = ema_text.get(key), ema_names.get(key)
            if text is None:
                errs.append(f"{qid}: unknown source {src}={key}")
                continue
            if norm(quote) not in norm(text):
                errs.append(f"{qid}: quote not found in {src}={key}: {quote[:70]!r}")
                continue
            backed_names |= names
        q = byid.get(qid)
        if q:
            for s in q.get("expected_doc_name_substrings", []):
                if not any(s in n for n in backed_names):
                    errs.append(f"{qid}: expected substring {s!r} not backed by any quoted source")

    if errs:
        for x in errs:
            print("FAIL:", x)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
