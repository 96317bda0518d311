#!/usr/bin/env python3
"""Verify probe43.jsonl + probe43_evidence.md against the public drug-label data (stdlib only)."""
import json, os, re, sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/work/shared/data/drug_labels"
EXPECTED_KINDS = {"opioid-treat": 14, "other-treat": 10, "own-leaflet": 10, "control": 6}

errors = []
def err(msg):
    errors.append(msg)

def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()

# ---- load data
ema_text = defaultdict(list)
for line in open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8"):
    r = json.loads(line)
    ema_text[r["drug"]].append(norm(r.get("section", "") + " " + r["text"]))
    ema_text[r["drug"]].append(norm(r["text"]))
fda = {}
for line in open(os.path.join(DATA, "fda_indications.jsonl"), encoding="utf-8"):
    r = json.loads(line)
    fda[r["unii"]] = (r["product_names"], norm(r["indications"]))
all_names = [d.lower() for d in ema_text] + [n.lower() for names, _ in fda.values() for n in names]

# ---- questions
questions = []
with open(os.path.join(HERE, "probe43.jsonl"), encoding="utf-8") as f:
    for ln, line in enumerate(f, 1):
        if not line.strip():
            continue
        try:
            questions.append(json.loads(line))
        except Exception as e:
            err(f"line {ln}: bad json {e}")
if len(questions) != 40:
    err(f"expected 40 questions, got {len(questions)}")
ids = [q.get("id") for q in questions]
if ids != [f"h43-{i:02d}" for i in range(1, 41)]:
    err(f"ids not h43-01..h43-40 in order: {ids}")
if len(set(ids)) != len(ids):
    err("duplicate ids")
queries = [norm(q.get("query", "")) for q in questions]
if len(set(queries)) != len(queries):
    err("duplicate queries")
for q in questions:
    qid = q.get("id")
    if set(q) != {"id", "query", "expected_doc_name_substrings", "k"}:
        err(f"{qid}: unexpected fields {sorted(q)}")
    if not isinstance(q.get("query"), str) or not q["query"].strip():
        err(f"{qid}: empty query")
    if q.get("k") != 5:
        err(f"{qid}: k != 5")
    subs = q.get("expected_doc_name_substrings")
    if not isinstance(subs, list) or not subs:
        err(f"{qid}: expected_doc_name_substrings must be a non-empty list")
        continue
    for s in subs:
        if not isinstance(s, str) or not s or s != s.lower():
            err(f"{qid}: substring not lowercase/non-empty: {s!r}")
        elif not any(s in n for n in all_names):
            err(f"{qid}: substring {s!r} matches no product name")

# ---- evidence
ev = {}
cur = None
qre = re.compile(r'^>\s*"(.*)"\s*--\s*source:\s*(fda\s+unii=(\S+)|ema\s+drug=(\S+))\s*$')
with open(os.path.join(HERE, "probe43_evidence.md"), encoding="utf-8") as f:
    for ln, line in enumerate(f, 1):
        line = line.rstrip("\n")
        m = re.match(r"^##\s+(h43-\d\d)\s*$", line)
        if m:
            cur = m.group(1)
            if cur in ev:
                err(f"evidence: duplicate section {cur}")
            ev[cur] = {"kind": None, "quotes": []}
            continue
        if cur is None:
            continue
        m = re.match(r"^kind:\s*(\S+)\s*$", line)
        if m:
            ev[cur]["kind"] = m.group(1)
            continue
        if line.startswith(">"):
            m = qre.match(line)
            if not m:
                err(f"evidence line {ln}: malformed quote line")
                continue
            text = m.group(1)
            if m.group(3):
                ev[cur]["quotes"].append(("fda", m.group(3), text))
            else:
                ev[cur]["quotes"].append(("ema", m.group(4), text))

kinds = Counter()
for q in questions:
    qid = q.get("id")
    e = ev.get(qid)
    if not e:
        err(f"{qid}: no evidence section")
        continue
    if e["kind"] not in EXPECTED_KINDS:
        err(f"{qid}: bad/missing kind {e['kind']!r}")
    kinds[e["kind"]] += 1
    if not e["quotes"]:
        err(f"{qid}: no quotes")
    backed_names = []
    for src, key, text in e["quotes"]:
        nt = norm(text)
        if len(nt) < 15:
            err(f"{qid}: quote too short: {text!r}")
        if src == "fda":
            if key not in fda:
                err(f"{qid}: unknown unii {key}")
                continue
            names, body = fda[key]
            if nt not in body:
                err(f"{qid}: quote not found in fda {key}: {text!r}")
                continue
            backed_names.extend(n.lower() for n in names)
        else:
            if key not in ema_text:
                err(f"{qid}: unknown ema drug {key}")
                continue
            if not any(nt in t for t in ema_text[key]):
                err(f"{qid}: quote not found in ema {key}: {text!r}")
                continue
            backed_names.append(key.lower())
    for s in q.get("expected_doc_name_substrings") or []:
        if not any(s in n for n in backed_names):
            err(f"{qid}: substring {s!r} not backed by a quote from a product whose name contains it")
extra = set(ev) - set(ids)
if extra:
    err(f"evidence sections without questions: {sorted(extra)}")
for k, n in EXPECTED_KINDS.items():
    if kinds[k] != n:
        err(f"kind {k}: expected {n}, got {kinds[k]}")

print("counts per kind:", dict(kinds))
if errors:
    for e in errors:
        print("ERROR:", e)
    sys.exit(1)
print("OK")
