#!/usr/bin/env python3
"""Re-check probe29.jsonl and probe29_evidence.md against the drug-label data (stdlib only).

Usage: python3 probe29_verify.py [DATA_DIR]
DATA_DIR defaults to /work/shared/data/drug_labels.

Checks:
  * probe29.jsonl: 40 lines, ids h29-01..h29-40 in order, exactly the fields
    id/query/expected_doc_name_substrings/k, k == 5, 1-5 distinct non-empty substrings,
    no duplicate queries;
  * every substring occurs (case-insensitive) in some document name of the data
    (EMA `drug`, or one FDA `product_names` entry);
  * probe29_evidence.md has a section per question whose query matches, with lay name,
    clinical name and "label itself uses the lay name" lines, and one evidence line
    `SUBSTRING` | FDA/EMA | DOCUMENT NAME | "quote" for every expected substring, where
      - the quote is shorter than 200 characters,
      - the document name contains the substring and is a real name of that source,
      - the quote occurs (whitespace-normalised, case-insensitive) in the indication text
        (FDA `indications`; EMA section 1) of that product, and therefore of a product
        whose name contains the substring.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/drug_labels"
PROBE = os.path.join(HERE, "probe29.jsonl")
EVID = os.path.join(HERE, "probe29_evidence.md")
N = 40
PREFIX = "h29"

errors = []


def err(msg):
    errors.append(msg)


def norm(s):
    return re.sub(r"\s+", " ", s or "").strip().lower()


# ---- load data -------------------------------------------------------------
fda = []  # (list of stripped names, normalised indication text)
with open(os.path.join(DATA, "fda_indications.jsonl"), encoding="utf-8") as f:
    for line in f:
        d = json.loads(line)
        names = [n.strip() for n in (d.get("product_names") or []) if n and n.strip()]
        fda.append((names, norm(d.get("indications"))))

ema_sec1 = {}
all_ema_names = set()
with open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8") as f:
    for line in f:
        d = json.loads(line)
        all_ema_names.add(d["drug"])
        if re.match(r"\s*1\.", d.get("section") or ""):  # "1. What X is and what it is used for"
            ema_sec1.setdefault(d["drug"], []).append(d.get("text") or "")
ema = {k: norm(" ".join(v)) for k, v in ema_sec1.items()}

all_doc_names = [n.lower() for n in all_ema_names] + [n.lower() for names, _ in fda for n in names]


def name_exists(sub):
    s = sub.lower()
    return any(s in n for n in all_doc_names)


def quote_ok(src, docname, sub, quote):
    """Quote must be in the indication text of the named product, whose name contains sub."""
    q = norm(quote)
    s = sub.lower()
    if s not in docname.lower():
        return f"document name {docname!r} does not contain substring {sub!r}"
    if src == "EMA":
        if docname not in all_ema_names:
            return f"no EMA product named {docname!r}"
        if q not in ema.get(docname, ""):
            return f"quote not found in EMA section 1 of {docname!r}"
        return None
    if src == "FDA":
        recs = [t for names, t in fda if any(n.lower() == docname.lower() for n in names)]
        if not recs:
            return f"no FDA product_names entry {docname!r}"
        if not any(q in t for t in recs):
            return f"quote not found in FDA indications of a record naming {docname!r}"
        return None
    return f"unknown source {src!r}"


# ---- probe file ------------------------------------------------------------
with open(PROBE, encoding="utf-8") as f:
    raw = [l for l in f.read().split("\n") if l.strip()]
if len(raw) != N:
    err(f"expected {N} lines, got {len(raw)}")
questions = []
seen_queries = set()
for i, line in enumerate(raw, 1):
    want_id = f"{PREFIX}-{i:02d}"
    try:
        q = json.loads(line)
    except Exception as e:  # noqa: BLE001
        err(f"line {i}: invalid JSON: {e}")
        continue
    questions.append(q)
    if not isinstance(q, dict) or set(q) != {"id", "query", "expected_doc_name_substrings", "k"}:
        err(f"line {i}: fields are {sorted(q) if isinstance(q, dict) else type(q)}")
        continue
    if q["id"] != want_id:
        err(f"line {i}: id {q['id']!r}, expected {want_id}")
    if not isinstance(q["query"], str) or not q["query"].strip():
        err(f"{want_id}: empty query")
    elif norm(q["query"]) in seen_queries:
        err(f"{want_id}: duplicate query")
    else:
        seen_queries.add(norm(q["query"]))
    if q["k"] != 5 or isinstance(q["k"], bool) or not isinstance(q["k"], int):
        err(f"{want_id}: k must be the integer 5")
    subs = q["expected_doc_name_substrings"]
    if not isinstance(subs, list) or not 1 <= len(subs) <= 5:
        err(f"{want_id}: need a list of 1-5 substrings")
        continue
    if len({s.lower() for s in subs if isinstance(s, str)}) != len(subs):
        err(f"{want_id}: duplicate substrings")
    for s in subs:
        if not isinstance(s, str) or not s.strip():
            err(f"{want_id}: empty/non-string substring {s!r}")
        elif not name_exists(s):
            err(f"{want_id}: substring {s!r} matches no document name")

# ---- evidence file ---------------------------------------------------------
with open(EVID, encoding="utf-8") as f:
    ev_text = f.read()
sections = {}
for m in re.finditer(r"^## (" + PREFIX + r"-\d\d)\s*$(.*?)(?=^## |\Z)", ev_text, re.M | re.S):
    sections[m.group(1)] = m.group(2)
line_re = re.compile(r'^- `([^`]+)` \| (FDA|EMA) \| (.+?) \| "(.*)"\s*$')
n_quotes = 0
for q in questions:
    if not isinstance(q, dict) or "id" not in q:
        continue
    qid = q["id"]
    body = sections.get(qid)
    if body is None:
        err(f"{qid}: no evidence section")
        continue
    mq = re.search(r"^- query: (.*)$", body, re.M)
    if not mq or mq.group(1).strip() != q.get("query", "").strip():
        err(f"{qid}: evidence query line missing or different from probe query")
    for label in ("lay name used", "clinical name", "label itself uses the lay name"):
        if not re.search(r"^- " + re.escape(label) + r": \S", body, re.M):
            err(f"{qid}: evidence lacks '{label}' line")
    ev = {}
    for line in body.splitlines():
        m = line_re.match(line)
        if m:
            ev.setdefault(m.group(1), []).append((m.group(2), m.group(3).strip(), m.group(4)))
    for s in q.get("expected_doc_name_substrings", []):
        if s not in ev:
            err(f"{qid}: no evidence line for substring {s!r}")
            continue
        for src, doc, quote in ev[s]:
            n_quotes += 1
            if len(quote) >= 200:
                err(f"{qid}: quote for {s!r} is {len(quote)} chars (must be < 200)")
            problem = quote_ok(src, doc, s, quote)
            if problem:
                err(f"{qid}: {s!r}: {problem}")
    extra = set(ev) - set(q.get("expected_doc_name_substrings", []))
    if extra:
        err(f"{qid}: evidence lines for substrings not in the probe: {sorted(extra)}")

if errors:
    print(f"FAIL: {len(errors)} problem(s)")
    for e in errors:
        print(" -", e)
    sys.exit(1)
print(f"OK: {len(questions)} questions, "
      f"{sum(len(q['expected_doc_name_substrings']) for q in questions)} substrings, "
      f"{n_quotes} quotes verified")
