#!/usr/bin/env python3
"""Standalone check of the probe45 question set against the raw label files (stdlib only).

Checks:
  * probe45.jsonl: 40 well-formed rows, unique ids, valid kind, k == 5, non-empty substrings.
  * every expected substring matches (case-insensitively) at least one document name, built as
      EMA: "<Drug> — EMA package leaflet"        (drug field; the substance part of the real
      FDA: "<product names joined by ', '> — FDA label"   names is not in the data, so substrings
                                                          are restricted to product names)
  * probe45-evidence.jsonl: one row per id; the quote (<= 200 chars) occurs verbatim in the named
    record (EMA: a section of that drug, or the given section; FDA: the indications text of the
    record whose product_names equal `doc`), and that record's document name matches one of the
    id's expected substrings.
Prints OK, or the list of problems.  Use -v to list which documents each substring matches.
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
CANDIDATES = ["/work/shared/data/drug_labels", "/work/main/../shared/data/drug_labels",
              "/work/main/../shared/data"]
DATA = next((p for p in CANDIDATES if os.path.exists(os.path.join(p, "fda_indications.jsonl"))), None)
KINDS = {"insulin", "anticoagulant", "paracetamol", "other-drug", "poison", "control"}
EMA_F, FDA_F = "ema_leaflet_sections.jsonl", "fda_indications.jsonl"


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def main():
    verbose = "-v" in sys.argv
    problems = []
    if DATA is None:
        print("PROBLEM: data files not found"); return 1
    ema = load(os.path.join(DATA, EMA_F))
    fda = load(os.path.join(DATA, FDA_F))

    # document names
    ema_sections, names = {}, {}
    for r in ema:
        ema_sections.setdefault(r["drug"], []).append(r)
    for drug in ema_sections:
        names[("ema", drug)] = drug.capitalize() + " — EMA package leaflet"
    fda_by_names = {}
    for r in fda:
        key = tuple(r["product_names"])
        fda_by_names.setdefault(key, []).append(r)
        names[("fda", key)] = ", ".join(r["product_names"]) + " — FDA label"
    all_names = sorted(set(names.values()))

    qs = load(os.path.join(HERE, "probe45.jsonl"))
    evs = load(os.path.join(HERE, "probe45-evidence.jsonl"))
    if len(qs) != 40:
        problems.append("expected 40 questions, found %d" % len(qs))
    ids = [q.get("id") for q in qs]
    if len(set(ids)) != len(ids):
        problems.append("duplicate ids")
    qmap = {}
    for q in qs:
        qid = q.get("id")
        qmap[qid] = q
        if set(q) != {"id", "query", "expected_doc_name_substrings", "k", "kind"}:
            problems.append("%s: unexpected keys %s" % (qid, sorted(q)))
        if q.get("kind") not in KINDS:
            problems.append("%s: bad kind %r" % (qid, q.get("kind")))
        if q.get("k") != 5:
            problems.append("%s: k != 5" % qid)
        subs = q.get("expected_doc_name_substrings") or []
        if not subs or not q.get("query", "").strip():
            problems.append("%s: empty query or substrings" % qid)
        for s in subs:
            if s != s.lower():
                problems.append("%s: substring not lower case: %r" % (qid, s))
            hits = [n for n in all_names if s.lower() in n.lower()]
            if not hits:
                problems.append("%s: substring %r matches no document name" % (qid, s))
            elif verbose:
                print("%s  %-28r -> %s" % (qid, s, hits))

    emap = {}
    for e in evs:
        eid = e.get("id")
        if eid in emap:
            problems.append("%s: duplicate evidence row" % eid)
        emap[eid] = e
        if eid not in qmap:
            problems.append("%s: evidence for unknown id" % eid); continue
        quote = e.get("quote", "")
        if not quote or len(quote) > 200:
            problems.append("%s: quote empty or longer than 200 chars (%d)" % (eid, len(quote)))
        f = e.get("file")
        if f == EMA_F:
            recs = ema_sections.get(e.get("doc"), [])
            if e.get("section"):
                recs = [r for r in recs if r["section"] == e["section"]]
            if not recs:
                problems.append("%s: no EMA record for %r / %r" % (eid, e.get("doc"), e.get("section"))); continue
            if not any(quote in r["text"] for r in recs):
                problems.append("%s: quote not found verbatim in EMA %r" % (eid, e.get("doc")))
            name = names[("ema", e["doc"])]
        elif f == FDA_F:
            key = tuple(e.get("doc") or [])
            recs = fda_by_names.get(key, [])
            if not recs:
                problems.append("%s: no FDA record with product_names %r" % (eid, e.get("doc"))); continue
            if not any(quote in r["indications"] for r in recs):
                problems.append("%s: quote not found verbatim in FDA %r" % (eid, e.get("doc")))
            name = names[("fda", key)]
        else:
            problems.append("%s: bad file %r" % (eid, f)); continue
        subs = qmap[eid]["expected_doc_name_substrings"]
        if not any(s.lower() in name.lower() for s in subs):
            problems.append("%s: evidence document %r not covered by expected substrings" % (eid, name))
    for qid in qmap:
        if qid not in emap:
            problems.append("%s: no evidence row" % qid)

    if problems:
        print("PROBLEMS (%d):" % len(problems))
        for p in problems:
            print(" -", p)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
