#!/usr/bin/env python3
"""Check probe39.jsonl against the drug-label data and probe39_evidence.md (stdlib only).

usage: python3 probe39_verify.py [--list] [--data DIR]
  DIR defaults to /work/shared/data/drug_labels
Prints OK when every check passes; otherwise prints each failure and exits 1.
"""
import json, os, re, sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/work/shared/data/drug_labels"
REQUIRED = ["antidote", "reverse", "reverses", "reversal", "reversing", "undo the effects"]
MAX_PER_DOC = 3


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def load_docs(data):
    docs = []  # (doc_id, [names lower], normalised text)
    ema = defaultdict(list)
    with open(os.path.join(data, "ema_leaflet_sections.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            ema[r["drug"]].append(r.get("text", ""))
    for drug, texts in ema.items():
        docs.append(("ema:" + drug, [drug.lower()], [norm(t) for t in texts] + [norm(" ".join(texts))]))
    with open(os.path.join(data, "fda_indications.jsonl"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            r = json.loads(line)
            names = [p.lower() for p in r.get("product_names", [])]
            docs.append(("fda:%d:%s" % (i, " / ".join(r.get("product_names", []))), names,
                         [norm(r.get("indications", ""))]))
    return docs


def load_evidence(path):
    ev, cur = defaultdict(list), None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^##\s+(\S+)\s*$", line)
            if m:
                cur = m.group(1)
                ev.setdefault(cur, [])
            elif line.startswith("> ") and cur:
                ev[cur].append(line[2:].strip())
    return ev


def main():
    args = sys.argv[1:]
    data = DATA
    if "--data" in args:
        data = args[args.index("--data") + 1]
    docs = load_docs(data)
    qs = [json.loads(l) for l in open(os.path.join(HERE, "probe39.jsonl"), encoding="utf-8") if l.strip()]
    ev = load_evidence(os.path.join(HERE, "probe39_evidence.md"))
    fails = []

    def matches(sub):
        return [d for d in docs if any(sub in n for n in d[1])]

    # (iv) ids, shape, required words
    ids = [q.get("id") for q in qs]
    if len(qs) != 20 or len(set(ids)) != 20:
        fails.append("expected 20 unique ids, got %d lines / %d unique" % (len(qs), len(set(ids))))
    for q in qs:
        if set(q) != {"id", "query", "expected_doc_name_substrings", "k"}:
            fails.append("%s: keys %s" % (q.get("id"), sorted(q)))
        if q.get("k") != 5:
            fails.append("%s: k is not 5" % q["id"])
        ql = q["query"].lower()
        if not any(re.search(r"\b" + re.escape(w) + r"\b", ql) for w in REQUIRED):
            fails.append("%s: query has none of %s" % (q["id"], REQUIRED))
        subs = q["expected_doc_name_substrings"]
        if not subs or any(s != s.lower() or not s.strip() for s in subs):
            fails.append("%s: substrings must be non-empty lower-case" % q["id"])

    per_doc = Counter()
    for q in qs:
        qid, subs = q["id"], q["expected_doc_name_substrings"]
        matched = {}
        for s in subs:
            m = matches(s)
            if not m:  # (i)
                fails.append("%s: substring %r matches no document" % (qid, s))
            for d in m:
                matched[d[0]] = d
            if "--list" in args:
                print("%s  %-20r -> %s" % (qid, s, "; ".join(d[0] for d in m) or "(none)"))
        for did in matched:
            per_doc[did] += 1
        # (iii) every quote is verbatim in some matched document
        quotes = ev.get(qid)
        if not quotes:
            fails.append("%s: no evidence quotes in probe39_evidence.md" % qid)
            continue
        covered = set()
        for qt in quotes:
            nq = norm(qt)
            hit = [did for did, d in matched.items() if any(nq in t for t in d[2])]
            if not hit:
                fails.append("%s: quote not found in a matched document: %r" % (qid, qt[:80]))
            covered.update(hit)
        # every matched document must be backed by at least one quote (no stray matches)
        for did in matched:
            if did not in covered:
                fails.append("%s: matched document without evidence quote: %s" % (qid, did))
    for did, n in per_doc.items():
        if n > MAX_PER_DOC:
            fails.append("document %s is the answer to %d questions (max %d)" % (did, n, MAX_PER_DOC))
    extra = set(ev) - set(ids)
    if extra:
        fails.append("evidence sections without a question: %s" % sorted(extra))

    if "--list" in args:
        print("answer documents and question counts:")
        for did, n in sorted(per_doc.items()):
            print("  %d  %s" % (n, did))
    if fails:
        for f in fails:
            print("FAIL", f)
        sys.exit(1)
    print("OK: %d questions, %d answer documents, %d evidence quotes checked" %
          (len(qs), len(per_doc), sum(len(v) for v in ev.values())))


if __name__ == "__main__":
    main()
