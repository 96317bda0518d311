#!/usr/bin/env python3
"""Verify the h36 probe set against the raw data (stdlib only).

Checks, for every question in probe36.jsonl:
 (i)   each expected substring matches at least one document name
       (EMA "drug" field, or any FDA product name; case-insensitive);
 (ii)  with --list, prints which documents each substring matches;
 (iii) each evidence quote in probe36_evidence.md appears verbatim
       (whitespace-normalised, case-insensitive) in the text of a document
       matched by the question's substrings, and the document the quote is
       attributed to is one of those matched documents;
 (iv)  kind counts are a=18, b=10, c=12 and ids are unique.
Prints OK at the end when everything passes.
"""
import json, os, re, sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("DRUG_DATA", "/work/shared/data/drug_labels")
PROBE = os.path.join(HERE, "probe36.jsonl")
EVID = os.path.join(HERE, "probe36_evidence.md")


def norm(s):
    s = s.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    s = s.replace("\u00a0", " ")
    return re.sub(r"\s+", " ", s).strip().lower()


def load_docs():
    docs = []  # (doc_id, [names], text)
    ema = defaultdict(list)
    with open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            ema[r["drug"]].append(r["text"])
    for drug, texts in ema.items():
        docs.append(("EMA:" + drug, [drug], norm(" \n ".join(texts))))
    with open(os.path.join(DATA, "fda_indications.jsonl"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            r = json.loads(line)
            names = [p.strip() for p in r["product_names"] if p.strip()]
            docs.append((f"FDA#{i}:{r.get('unii','')}", names, norm(r["indications"])))
    return docs


def matches(sub, docs):
    s = sub.lower()
    return [d for d in docs if any(s in n.lower() for n in d[1])]


def parse_evidence(path):
    ev = defaultdict(list)
    cur = None
    pat = re.compile(r'^- quote \(from (.+?)\): "(.*)"\s*$')
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^## (h36-\d+)\b", line)
            if m:
                cur = m.group(1)
                continue
            m = pat.match(line.rstrip("\n"))
            if m and cur:
                ev[cur].append((m.group(1), m.group(2)))
    return ev


def label(d):
    return d[0].split(":")[0] + " " + " | ".join(d[1])


def main():
    show = "--list" in sys.argv
    docs = load_docs()
    qs = [json.loads(l) for l in open(PROBE, encoding="utf-8") if l.strip()]
    ev = parse_evidence(EVID)
    errors = []
    ids = Counter(q["id"] for q in qs)
    for i, n in ids.items():
        if n > 1:
            errors.append(f"duplicate id {i}")
    for q in qs:
        for key in ("id", "query", "expected_doc_name_substrings", "k", "kind"):
            if key not in q:
                errors.append(f"{q.get('id')}: missing field {key}")
        subs = q["expected_doc_name_substrings"]
        if any(s != s.lower() for s in subs):
            errors.append(f"{q['id']}: substrings must be lower-case")
        matched = {}
        if show:
            print(f"{q['id']} [{q['kind']}] {q['query']}")
        for s in subs:
            m = matches(s, docs)
            if not m:
                errors.append(f"{q['id']}: substring {s!r} matches no document")
            for d in m:
                matched[d[0]] = d
            if show:
                print(f"   {s!r}: " + ("; ".join(label(d) for d in m) or "NO MATCH"))
        quotes = ev.get(q["id"], [])
        if not quotes:
            errors.append(f"{q['id']}: no evidence quote")
        for doc_label, quote in quotes:
            nq = norm(quote)
            owners = [d for d in matched.values() if any(doc_label.lower() == n.lower() for n in d[1])]
            if not owners:
                errors.append(f"{q['id']}: quote attributed to {doc_label!r}, which is not a document matched by the substrings")
            hit_owner = [d for d in owners if nq in d[2]]
            hit_any = [d for d in matched.values() if nq in d[2]]
            if not hit_any:
                errors.append(f"{q['id']}: quote not found in any matched document: {quote[:70]!r}")
            elif owners and not hit_owner:
                errors.append(f"{q['id']}: quote found but not in attributed doc {doc_label!r}: {quote[:70]!r}")
            elif show:
                print(f"   evidence ok in {label((hit_owner or hit_any)[0])}: {quote[:80]!r}")
    kinds = Counter(q["kind"] for q in qs)
    want = {"a": 18, "b": 10, "c": 12}
    if dict(kinds) != want:
        errors.append(f"kind counts {dict(kinds)} != {want}")
    extra = set(ev) - set(ids)
    if extra:
        errors.append(f"evidence for unknown ids: {sorted(extra)}")
    print(f"questions: {len(qs)}  kinds: {dict(sorted(kinds.items()))}  evidence quotes: {sum(len(v) for v in ev.values())}")
    if errors:
        for e in errors:
            print("ERROR:", e)
        print(f"FAILED ({len(errors)} errors)")
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
