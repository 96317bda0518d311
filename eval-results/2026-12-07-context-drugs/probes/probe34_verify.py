#!/usr/bin/env python3
"""Re-check probe34.jsonl and probe34_evidence.md against the raw drug-label data.

stdlib only.  Prints OK (exit 0) or the list of errors (exit 1).

Document names / indication texts:
  EMA: name = record["drug"]; indication text = the section whose title starts with "1"
       ("1. What X is and what it is used for").
  FDA: name = "; ".join(record["product_names"]); indication text = record["indications"].
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "probe34.jsonl")
EVID = os.path.join(HERE, "probe34_evidence.md")
DATA = "/work/shared/data/drug_labels"
EMA_F = os.path.join(DATA, "ema_leaflet_sections.jsonl")
FDA_F = os.path.join(DATA, "fda_indications.jsonl")

KIND_COUNTS = {"a": 16, "b": 10, "c": 8, "d": 6}

errors = []


def err(msg):
    errors.append(msg)


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


# ---------------------------------------------------------------- data
docs = {"EMA": {}, "FDA": {}}  # src -> name -> list of indication texts
for line in open(EMA_F, encoding="utf-8"):
    r = json.loads(line)
    if r["section"].strip().lower().startswith("1"):
        docs["EMA"].setdefault(r["drug"], []).append(r["text"])
for line in open(FDA_F, encoding="utf-8"):
    r = json.loads(line)
    docs["FDA"].setdefault("; ".join(r["product_names"]), []).append(r["indications"])

all_names = [(src, n) for src in docs for n in docs[src]]


def names_matching(sub):
    sub = sub.lower()
    return [(src, n) for src, n in all_names if sub in n.lower()]


# ---------------------------------------------------------------- probe file
items = []
with open(PROBE, encoding="utf-8") as fh:
    raw_lines = fh.read().split("\n")
if raw_lines and raw_lines[-1] == "":
    raw_lines = raw_lines[:-1]
if len(raw_lines) != 40:
    err("probe34.jsonl has %d lines, expected 40" % len(raw_lines))
for i, line in enumerate(raw_lines, 1):
    try:
        obj = json.loads(line)
    except Exception as e:  # noqa
        err("line %d: invalid JSON (%s)" % (i, e))
        continue
    items.append(obj)
    want_id = "h34-%02d" % i
    if set(obj) != {"id", "query", "expected_doc_name_substrings", "k"}:
        err("line %d: keys are %s" % (i, sorted(obj)))
    if obj.get("id") != want_id:
        err("line %d: id %r, expected %r" % (i, obj.get("id"), want_id))
    if obj.get("k") != 5 or isinstance(obj.get("k"), bool):
        err("%s: k must be 5" % want_id)
    q = obj.get("query")
    if not isinstance(q, str) or not q.strip():
        err("%s: empty query" % want_id)
    else:
        nw = len(q.split())
        if not 4 <= nw <= 35:
            err("%s: query has %d words (want 4-35)" % (want_id, nw))
    subs = obj.get("expected_doc_name_substrings")
    if not isinstance(subs, list) or not 1 <= len(subs) <= 6:
        err("%s: expected_doc_name_substrings must be a list of 1-6" % want_id)
        continue
    if len(set(subs)) != len(subs):
        err("%s: duplicate substrings" % want_id)
    for s in subs:
        if not isinstance(s, str) or not s.strip():
            err("%s: bad substring %r" % (want_id, s))
            continue
        if s != s.lower():
            err("%s: substring %r not lower-case" % (want_id, s))
        if not names_matching(s):
            err("%s: substring %r occurs in no document name" % (want_id, s))

ids = [o.get("id") for o in items]
if len(set(ids)) != len(ids):
    err("duplicate ids in probe file")
by_id = {o.get("id"): o for o in items}

# ---------------------------------------------------------------- evidence file
ev = {}  # id -> dict(kind, failed[], answer, lines[])
cur = None
ev_line_re = re.compile(r'^- (?P<sub>[^|]+?) \| (?P<src>EMA|FDA) \| (?P<name>.+?) \| "(?P<quote>.*)"\s*$')
for ln_no, line in enumerate(open(EVID, encoding="utf-8"), 1):
    line = line.rstrip("\n")
    m = re.match(r"^## (h34-\d\d)\s*$", line)
    if m:
        cur = m.group(1)
        if cur in ev:
            err("evidence: %s appears twice" % cur)
        ev[cur] = {"kind": None, "failed": [], "answer": None, "lines": []}
        continue
    if cur is None:
        continue
    if line.startswith("kind:"):
        ev[cur]["kind"] = line.split(":", 1)[1].strip()
    elif line.startswith("failed:"):
        ev[cur]["failed"] = [f.strip().lower() for f in line.split(":", 1)[1].split("|") if f.strip()]
    elif line.startswith("answer:"):
        ev[cur]["answer"] = line.split(":", 1)[1].strip().lower()
    elif line.startswith("- "):
        m = ev_line_re.match(line)
        if not m:
            err("evidence line %d unparsable: %s" % (ln_no, line[:80]))
            continue
        ev[cur]["lines"].append(m.groupdict())

for qid in ["h34-%02d" % i for i in range(1, 41)]:
    if qid not in ev:
        err("evidence: missing section for %s" % qid)
for qid in ev:
    if qid not in by_id:
        err("evidence: section %s has no probe line" % qid)

# ---------------------------------------------------------------- per question checks
kind_counter = {}
for qid, obj in by_id.items():
    e = ev.get(qid)
    if e is None:
        continue
    kind = e["kind"]
    kind_counter[kind] = kind_counter.get(kind, 0) + 1
    if kind not in KIND_COUNTS:
        err("%s: unknown kind %r" % (qid, kind))
    query_l = obj.get("query", "").lower()
    subs = [s.lower() for s in obj.get("expected_doc_name_substrings", [])]

    # evidence lines
    covered = set()
    for d in e["lines"]:
        sub = d["sub"].strip().lower()
        src, name, quote = d["src"], d["name"].strip(), d["quote"]
        if sub not in subs:
            err("%s: evidence substring %r not in expected list" % (qid, sub))
        covered.add(sub)
        if name not in docs[src]:
            err("%s: %s document %r does not exist" % (qid, src, name))
            continue
        if sub not in name.lower():
            err("%s: substring %r not in document name %r" % (qid, sub, name))
        if len(quote) >= 200:
            err("%s: quote for %r is %d chars (must be < 200)" % (qid, sub, len(quote)))
        if not quote.strip():
            err("%s: empty quote for %r" % (qid, sub))
        elif not any(norm(quote) in norm(t) for t in docs[src][name]):
            err("%s: quote for %r not found in %s %r indication text" % (qid, sub, src, name))
    for s in subs:
        if s not in covered:
            err("%s: expected substring %r has no evidence line" % (qid, s))

    # failed-medicine rules
    failed = e["failed"]
    if not failed:
        err("%s: no 'failed:' recorded" % qid)
    if failed and not any(f in query_l for f in failed):
        err("%s: none of the failed names %s occurs in the query" % (qid, failed))
    for f in failed:
        for s in subs:
            if f == s or f in s:
                err("%s: failed name %r is among / a substring of expected %r" % (qid, f, s))
        # no product picked out by an expected substring may contain the failed medicine
        for s in subs:
            for src, n in names_matching(s):
                if f in n.lower():
                    err("%s: expected %r matches %s document %r which contains failed %r" % (qid, s, src, n, f))

    if kind == "c":
        ans = e["answer"]
        if not ans:
            err("%s: kind c needs an 'answer:' line" % qid)
        else:
            if ans not in subs:
                err("%s: answer %r not in expected substrings" % (qid, ans))
            if ans not in query_l:
                err("%s: answer %r not named in the query" % (qid, ans))
    elif kind in ("a", "b", "d"):
        if e["answer"]:
            err("%s: kind %s must not have an answer line" % (qid, kind))
        for s in subs:
            if s in query_l:
                err("%s: kind %s query names the expected medicine %r" % (qid, kind, s))

for k, n in KIND_COUNTS.items():
    if kind_counter.get(k, 0) != n:
        err("kind %s: %d questions, expected %d" % (k, kind_counter.get(k, 0), n))

if errors:
    print("ERRORS (%d):" % len(errors))
    for m in errors:
        print(" -", m)
    sys.exit(1)
print("OK")
