#!/usr/bin/env python3
"""Verify /tmp/s38/probe38.jsonl against the drug-label data (stdlib only).

Checks:
 (i)   every expected substring matches >= 1 document name
 (ii)  --list prints which documents each substring matches
 (iii) every evidence quote in probe38_evidence.md appears verbatim (whitespace-normalised,
       case-insensitive) in a document matched by that question's substrings; every id has >= 1 quote
 (iv)  16 unique ids; no forbidden words in any query
A document's name = EMA "drug" field, or any FDA product name (a FDA record is one document).
"""
import json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/work/shared/data/drug_labels"
PROBE = os.path.join(HERE, "probe38.jsonl")
EVID = os.path.join(HERE, "probe38_evidence.md")
FORBIDDEN = [r"overdos", r"poison", r"\bod\b", r"too\s+many", r"too\s+much"]


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def load_docs():
    docs = {}  # key -> {"names": [...], "text": str}
    with open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            k = "EMA:" + r["drug"]
            d = docs.setdefault(k, {"names": [r["drug"]], "texts": []})
            d["texts"].append(r.get("section", "") + " " + r.get("text", ""))
    with open(os.path.join(DATA, "fda_indications.jsonl"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            r = json.loads(line)
            k = "FDA#%d:%s" % (i, " | ".join(r["product_names"]))
            docs[k] = {"names": list(r["product_names"]), "texts": [r.get("indications", "")]}
    for d in docs.values():
        d["text"] = norm(" \n ".join(d["texts"]))
    return docs


def matches(docs, sub):
    sub = sub.lower()
    return [k for k, d in docs.items() if any(sub in n.lower() for n in d["names"])]


def parse_evidence(path):
    ev, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^##\s+(h38-\d+)\s*$", line)
            if m:
                cur = m.group(1); ev.setdefault(cur, []); continue
            if line.startswith("## "):
                cur = None; continue
            if cur and line.startswith("> "):
                ev[cur].append(line[2:].strip())
    return ev


def main():
    errs = []
    docs = load_docs()
    qs = [json.loads(l) for l in open(PROBE, encoding="utf-8") if l.strip()]
    ids = [q["id"] for q in qs]
    # (iv)
    if len(qs) != 16: errs.append("expected 16 questions, got %d" % len(qs))
    if len(set(ids)) != len(ids): errs.append("duplicate ids")
    for q in qs:
        for key in ("id", "query", "expected_doc_name_substrings", "k"):
            if key not in q: errs.append("%s missing field %s" % (q.get("id"), key))
        for p in FORBIDDEN:
            if re.search(p, q["query"], re.I):
                errs.append("%s: forbidden word /%s/ in query" % (q["id"], p))
    # (i) / (ii)
    listing = "--list" in sys.argv
    subdocs = {}
    for q in qs:
        for s in q["expected_doc_name_substrings"]:
            if s != s.lower(): errs.append("%s: substring %r not lower-case" % (q["id"], s))
            if s not in subdocs: subdocs[s] = matches(docs, s)
            if not subdocs[s]: errs.append("%s: substring %r matches no document" % (q["id"], s))
    if listing:
        for s in sorted(subdocs):
            print("%-20s -> %s" % (s, subdocs[s]))
    # (iii)
    ev = parse_evidence(EVID)
    for q in qs:
        quotes = ev.get(q["id"], [])
        if not quotes: errs.append("%s: no evidence quote" % q["id"]); continue
        cand = sorted({k for s in q["expected_doc_name_substrings"] for k in subdocs[s]})
        for qt in quotes:
            hit = [k for k in cand if norm(qt) in docs[k]["text"]]
            if not hit:
                errs.append("%s: quote not found in matched docs: %r" % (q["id"], qt[:80]))
            elif listing:
                print("%s quote found in %s" % (q["id"], hit))
    extra = set(ev) - set(ids)
    if extra: errs.append("evidence for unknown ids: %s" % sorted(extra))
    print("questions: %d, unique ids: %d, substrings: %d, quotes: %d"
          % (len(qs), len(set(ids)), len(subdocs), sum(len(v) for v in ev.values())))
    for e in errs: print("FAIL:", e)
    if errs:
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
