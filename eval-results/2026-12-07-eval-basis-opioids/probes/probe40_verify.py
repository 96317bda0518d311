#!/usr/bin/env python3
"""Check the probe40 held-out question set against the raw data (stdlib only).

Checks
  1. probe40.jsonl parses; ids are unique and match h40-NN; k == 5; substrings are
     non-empty lowercase strings; expected_section (if any) is a known section name.
  2. every expected substring matches at least one product name in the data
     (EMA "drug", any FDA "product_names" entry, or a ChEMBL pref_name), case-insensitive.
  3. probe40_evidence.md has exactly one "## h40-NN" heading per question, each with at
     least one "> " quote line; every quote occurs (whitespace-normalised,
     case-insensitive) in the data, and in the source row the line names where that
     row can be parsed (EMA drug+section, FDA unii, ChEMBL id).
  4. 4 questions of each of the 12 kinds (kind read from the evidence "kind:" line).
  5. no expected substring overlaps a drug/product named in the dev sets.
Prints OK on success, otherwise the problems and exit status 1.

Usage: python3 probe40_verify.py [DATA_DIR]   (default /work/shared/data)
"""
import csv
import json
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data"
KINDS = ["reg", "drg", "chm", "cmb", "gen", "typo", "salt", "lay", "noise",
         "greek", "class", "rel"]
SECTIONS = {"indications_and_usage", "warnings", "dosage_and_administration",
            "adverse_reactions", "storage", "description"}
problems = []


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def canon(section):
    s = section.strip().lower()
    return {"1": "indications_and_usage", "2": "warnings",
            "3": "dosage_and_administration", "4": "adverse_reactions",
            "5": "storage", "6": "description"}.get(s[:1], s)


# ---------------------------------------------------------------- data
ema = [json.loads(l) for l in open(os.path.join(DATA, "drug_labels/ema_leaflet_sections.jsonl"), encoding="utf-8")]
fda = [json.loads(l) for l in open(os.path.join(DATA, "drug_labels/fda_indications.jsonl"), encoding="utf-8")]
chembl = list(csv.DictReader(open(os.path.join(DATA, "compounds/chembl_approved_drugs.csv"), encoding="utf-8")))

names = set(r["drug"].lower() for r in ema)
for r in fda:
    names.update(n.lower() for n in r["product_names"])
names.update(r["pref_name"].lower() for r in chembl if r["pref_name"])

ema_rows = {}
for r in ema:
    ema_rows.setdefault((r["drug"].lower(), canon(r["section"])), []).append(norm(r["text"]))
fda_rows = {}
for r in fda:
    fda_rows.setdefault(r["unii"], []).append(norm(r["indications"] + " " + " ".join(r["product_names"])))
ch_rows = {r["molecule_chembl_id"]: norm(r["smiles"] + " " + r["pref_name"]) for r in chembl}
corpus = "\n".join(
    [norm(r["text"]) for r in ema]
    + [norm(r["indications"]) for r in fda]
    + [norm(r["smiles"]) for r in chembl]
)

# ---------------------------------------------------------------- questions
qs = []
with open(os.path.join(HERE, "probe40.jsonl"), encoding="utf-8") as fh:
    for n, line in enumerate(fh, 1):
        if not line.strip():
            continue
        try:
            qs.append(json.loads(line))
        except ValueError as e:
            problems.append(f"probe40.jsonl line {n}: bad JSON ({e})")

ids = [q.get("id") for q in qs]
for i, c in Counter(ids).items():
    if c > 1:
        problems.append(f"duplicate id {i}")
for q in qs:
    qid = q.get("id", "?")
    if not re.fullmatch(r"h40-\d\d", str(qid)):
        problems.append(f"{qid}: id format")
    if not isinstance(q.get("query"), str) or not q["query"].strip():
        problems.append(f"{qid}: empty query")
    if q.get("k") != 5:
        problems.append(f"{qid}: k != 5")
    if "expected_section" in q and q["expected_section"] not in SECTIONS:
        problems.append(f"{qid}: unknown expected_section {q['expected_section']}")
    subs = q.get("expected_doc_name_substrings")
    if not isinstance(subs, list) or not subs:
        problems.append(f"{qid}: no expected substrings")
        continue
    for s in subs:
        if not isinstance(s, str) or not s or s != s.lower():
            problems.append(f"{qid}: substring {s!r} not a lowercase string")
            continue
        if not any(s in n for n in names):
            problems.append(f"{qid}: substring {s!r} matches no product name in the data")

# ---------------------------------------------------------------- evidence
md = open(os.path.join(HERE, "probe40_evidence.md"), encoding="utf-8").read()
blocks = {}
cur = None
for line in md.splitlines():
    m = re.match(r"^## (h40-\d\d)\s*$", line)
    if m:
        cur = m.group(1)
        if cur in blocks:
            problems.append(f"evidence: duplicate heading {cur}")
        blocks[cur] = {"quotes": [], "kind": None}
        continue
    if cur is None:
        continue
    if line.startswith("kind:"):
        blocks[cur]["kind"] = line.split("|")[0].split(":", 1)[1].strip()
    if line.startswith("> "):
        blocks[cur]["quotes"].append(line[2:])

for qid in ids:
    if qid not in blocks:
        problems.append(f"evidence: no heading for {qid}")
for qid in blocks:
    if qid not in ids:
        problems.append(f"evidence: heading {qid} has no question")

for qid, b in blocks.items():
    if not b["quotes"]:
        problems.append(f"evidence {qid}: no quote lines")
    for raw in b["quotes"]:
        m = re.match(r'^"(.+)" — (.+)$', raw)
        if not m:
            problems.append(f"evidence {qid}: cannot parse quote line: {raw[:80]}")
            continue
        quote, source = norm(m.group(1)), m.group(2)
        if quote not in corpus:
            problems.append(f"evidence {qid}: quote not found in data: {m.group(1)[:80]}")
            continue
        # stronger check: the quote is in the row the line names
        me = re.search(r"EMA \S+ drug=(\S+) .*\((\w+)\)\s*$", source)
        mf = re.search(r"FDA \S+ unii=(\S+)", source)
        mc = re.search(r"ChEMBL \S+ (CHEMBL\d+)", source)
        if me:
            texts = ema_rows.get((me.group(1).lower(), me.group(2)), [])
        elif mf:
            texts = fda_rows.get(mf.group(1), [])
        elif mc:
            texts = [ch_rows.get(mc.group(1), "")]
        else:
            problems.append(f"evidence {qid}: source not named: {source[:80]}")
            continue
        if not any(quote in t for t in texts):
            problems.append(f"evidence {qid}: quote not in named row {source[:80]}: {m.group(1)[:60]}")

kc = Counter(b["kind"] for b in blocks.values())
for k in KINDS:
    if kc.get(k, 0) != 4:
        problems.append(f"kind {k}: {kc.get(k, 0)} questions (want 4)")
for k in kc:
    if k not in KINDS:
        problems.append(f"unknown kind {k}")

# ---------------------------------------------------------------- dev overlap
dev_names = set()
for fn in ("drug_kb_dev.jsonl", "drug_kb_dev_more.jsonl"):
    p = os.path.join(DATA, fn)
    if os.path.exists(p):
        for line in open(p, encoding="utf-8"):
            if line.strip():
                dev_names.update(s.lower() for s in json.loads(line)["expected_doc_name_substrings"])
for q in qs:
    for s in q.get("expected_doc_name_substrings", []):
        for d in dev_names:
            if s in d or d in s:
                problems.append(f"{q['id']}: substring {s!r} overlaps dev name {d!r}")

if problems:
    print("\n".join(problems))
    print(f"FAILED ({len(problems)} problems)")
    sys.exit(1)
print(f"OK ({len(qs)} questions, {sum(len(b['quotes']) for b in blocks.values())} quotes)")
