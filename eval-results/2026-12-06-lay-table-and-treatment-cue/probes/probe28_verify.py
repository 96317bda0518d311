#!/usr/bin/env python3
"""Re-check probe28.jsonl and probe28_evidence.md against the drug-label data (stdlib only).

Usage: python3 probe28_verify.py [DATA_DIR]
DATA_DIR defaults to /work/shared/data/drug_labels.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/drug_labels"
PROBE = os.path.join(HERE, "probe28.jsonl")
EVID = os.path.join(HERE, "probe28_evidence.md")

errors = []


def err(msg):
    errors.append(msg)


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


# ---- load data -------------------------------------------------------------
fda = []  # (names, normalised indication text)
with open(os.path.join(DATA, "fda_indications.jsonl"), encoding="utf-8") as f:
    for line in f:
        d = json.loads(line)
        fda.append(([n for n in d.get("product_names") or []], norm(d.get("indications") or "")))

ema_sec1 = {}  # drug -> list of section-1 texts
with open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8") as f:
    for line in f:
        d = json.loads(line)
        sec = d.get("section") or ""
        if re.match(r"\s*1\.", sec):  # section 1: "What X is and what it is used for"
            ema_sec1.setdefault(d["drug"], []).append(d.get("text") or "")
ema = {k: norm(" ".join(v)) for k, v in ema_sec1.items()}
all_ema_names = set()
with open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8") as f:
    for line in f:
        all_ema_names.add(json.loads(line)["drug"])

all_doc_names = [n.lower() for n in all_ema_names] + [n.lower() for names, _ in fda for n in names]


def name_exists(sub):
    s = sub.lower()
    return any(s in n for n in all_doc_names)


# ---- probe file ------------------------------------------------------------
with open(PROBE, encoding="utf-8") as f:
    raw = [l for l in f.read().split("\n") if l.strip()]
if len(raw) != 40:
    err(f"expected 40 lines, got {len(raw)}")
questions = []
for i, line in enumerate(raw, 1):
    try:
        q = json.loads(line)
    except Exception as e:  # noqa
        err(f"line {i}: invalid JSON: {e}")
        continue
    questions.append(q)
    want_id = f"h28-{i:02d}"
    if set(q) != {"id", "query", "expected_doc_name_substrings", "k"}:
        err(f"line {i}: fields are {sorted(q)}")
    if q.get("id") != want_id:
        err(f"line {i}: id {q.get('id')!r}, expected {want_id}")
    if not isinstance(q.get("query"), str) or not q["query"].strip():
        err(f"{want_id}: empty query")
    if q.get("k") != 5 or isinstance(q.get("k"), bool):
        err(f"{want_id}: k must be 5")
    subs = q.get("expected_doc_name_substrings")
    if not isinstance(subs, list) or not 1 <= len(subs) <= 5:
        err(f"{want_id}: need 1-5 substrings")
        continue
    if len({s.lower() for s in subs}) != len(subs):
        err(f"{want_id}: duplicate substrings")
    for s in subs:
        if not isinstance(s, str) or not s.strip():
            err(f"{want_id}: bad substring {s!r}")
        elif not name_exists(s):
            err(f"{want_id}: substring {s!r} matches no document name")

# ---- evidence file ---------------------------------------------------------
ev = {}  # id -> dict(lay, clinical, lines=[(sub, src, doc, quote)])
cur = None
line_re = re.compile(r'^- `([^`]+)` \| (FDA|EMA) \| (.+?) \| "(.*)"\s*$')
with open(EVID, encoding="utf-8") as f:
    for ln in f:
        ln = ln.rstrip("\n")
        m = re.match(r"^## (h28-\d\d)\s*$", ln)
        if m:
            cur = m.group(1)
            ev[cur] = {"lay": None, "clinical": None, "written": None, "lines": []}
            continue
        if cur is None:
            continue
        if ln.startswith("- lay name used:"):
            ev[cur]["lay"] = ln.split(":", 1)[1].strip()
        elif ln.startswith("- clinical name:"):
            ev[cur]["clinical"] = ln.split(":", 1)[1].strip()
        elif ln.startswith("- label itself uses the lay name:"):
            ev[cur]["written"] = ln.split(":", 1)[1].strip()
        elif ln.startswith("- `"):
            m = line_re.match(ln)
            if not m:
                err(f"{cur}: malformed evidence line: {ln}")
            else:
                ev[cur]["lines"].append(m.groups())

written_yes = 0
for q in questions:
    qid = q.get("id")
    e = ev.get(qid)
    if e is None:
        err(f"{qid}: no evidence section")
        continue
    for key in ("lay", "clinical", "written"):
        if not e[key]:
            err(f"{qid}: evidence lacks '{key}'")
    if e["written"] and re.match(r"(yes|partly)", e["written"], re.I):
        written_yes += 1
    query_l = q["query"].lower()
    # lay name (before any parenthesis) must appear in the query
    if e["lay"]:
        lay_core = e["lay"].split(" (")[0].strip().lower()
        if lay_core not in query_l:
            err(f"{qid}: lay name {lay_core!r} not found in query")
    # clinical name (main phrase and alternatives) must not appear in the query
    if e["clinical"]:
        parts = re.split(r"\s*/\s*|\s*\(|\)", e["clinical"])
        for p in parts:
            p = p.strip().lower()
            if len(p) >= 5 and p in query_l:
                err(f"{qid}: clinical name {p!r} appears in query")
    subs = q["expected_doc_name_substrings"]
    seen = set()
    for sub, src, doc, quote in e["lines"]:
        seen.add(sub)
        if sub not in subs:
            err(f"{qid}: evidence for {sub!r} which is not an expected substring")
        if sub.lower() not in doc.lower():
            err(f"{qid}: document name {doc!r} does not contain {sub!r}")
        if len(quote) >= 200:
            err(f"{qid}: quote for {sub!r} is {len(quote)} chars (must be < 200)")
        nq = norm(quote)
        if src == "EMA":
            if doc not in all_ema_names:
                err(f"{qid}: EMA drug {doc!r} not in data")
            elif nq not in ema.get(doc, ""):
                err(f"{qid}: quote for {sub!r} not found in EMA {doc!r} section 1")
        else:
            recs = [t for names, t in fda if doc in names]
            if not recs:
                err(f"{qid}: FDA product name {doc!r} not in data")
            elif not any(nq in t for t in recs):
                err(f"{qid}: quote for {sub!r} not found in FDA indications of {doc!r}")
    for s in subs:
        if s not in seen:
            err(f"{qid}: no evidence line for substring {s!r}")

extra = set(ev) - {q.get("id") for q in questions}
if extra:
    err(f"evidence sections without questions: {sorted(extra)}")

n_subs = sum(len(q.get("expected_doc_name_substrings", [])) for q in questions)
print(f"questions: {len(questions)}  substrings: {n_subs}  evidence lines: {sum(len(v['lines']) for v in ev.values())}  "
      f"lay name written in label (yes/partly): {written_yes}")
if errors:
    print(f"FAIL: {len(errors)} problem(s)")
    for m in errors:
        print("  -", m)
    sys.exit(1)
print("PASS")
