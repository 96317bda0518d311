#!/usr/bin/env python3
"""Verify probe44.jsonl + probe44_evidence.md against the public drug-label data.

Checks:
  * 36 questions, ids h44-01..h44-36, exact field set, k == 5, non-empty query
  * expected substrings: non-empty list of unique lowercase strings, each matching
    at least one document name (EMA `drug` or an FDA `product_names` entry)
  * evidence file: one `kind:` line per id, kinds/counts as specified
  * every quote occurs (whitespace-normalised, case-insensitive) in its named source
  * every expected substring is backed by a quote from a source whose name contains it
Prints OK on success, otherwise the list of problems (exit code 1).
Python 3 standard library only.
"""
import json
import os
import re
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("DRUG_LABEL_DIR", "/work/shared/data/drug_labels")
QFILE = os.path.join(HERE, "probe44.jsonl")
EFILE = os.path.join(HERE, "probe44_evidence.md")

EXPECTED_KIND_COUNTS = {"switch": 14, "cause": 10, "add-on": 6, "control": 6}
N_QUESTIONS = 36
FIELDS = {"id", "query", "expected_doc_name_substrings", "k"}


def norm(s):
    s = s.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    s = s.replace("\u00a0", " ")
    return re.sub(r"\s+", " ", s).strip().lower()


def load_data():
    ema_text = defaultdict(list)          # drug -> [section texts]
    with open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                ema_text[r["drug"]].append(norm(r.get("text", "")))
    fda = {}                               # unii -> (names, text)
    with open(os.path.join(DATA, "fda_indications.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                fda[r["unii"]] = (list(r["product_names"]), norm(r.get("indications", "")))
    return ema_text, fda


def main():
    errors = []
    ema_text, fda = load_data()
    all_names = [d.lower() for d in ema_text] + [p.lower() for names, _ in fda.values() for p in names]

    # ---------- questions ----------
    questions = []
    with open(QFILE, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                questions.append(json.loads(line))
            except json.JSONDecodeError as e:
                errors.append(f"probe44.jsonl line {n}: bad JSON ({e})")
    if len(questions) != N_QUESTIONS:
        errors.append(f"expected {N_QUESTIONS} questions, found {len(questions)}")
    want_ids = [f"h44-{i:02d}" for i in range(1, N_QUESTIONS + 1)]
    ids = [q.get("id") for q in questions]
    if ids != want_ids:
        errors.append(f"ids are not exactly h44-01..h44-{N_QUESTIONS:02d} in order")
    if len(set(ids)) != len(ids):
        errors.append("duplicate ids")
    qmap = {}
    queries = Counter()
    for q in questions:
        qid = q.get("id")
        qmap[qid] = q
        if set(q) != FIELDS:
            errors.append(f"{qid}: fields {sorted(q)} != {sorted(FIELDS)}")
        if q.get("k") != 5:
            errors.append(f"{qid}: k != 5")
        if not isinstance(q.get("query"), str) or not q["query"].strip():
            errors.append(f"{qid}: empty query")
        else:
            queries[norm(q["query"])] += 1
        subs = q.get("expected_doc_name_substrings")
        if not isinstance(subs, list) or not subs:
            errors.append(f"{qid}: expected_doc_name_substrings must be a non-empty list")
            continue
        if len(set(subs)) != len(subs):
            errors.append(f"{qid}: duplicate expected substrings")
        for s in subs:
            if not isinstance(s, str) or not s.strip():
                errors.append(f"{qid}: bad substring {s!r}")
                continue
            if s != s.lower():
                errors.append(f"{qid}: substring not lowercase: {s!r}")
            if not any(s.lower() in name for name in all_names):
                errors.append(f"{qid}: substring {s!r} matches no product name")
    for text, c in queries.items():
        if c > 1:
            errors.append(f"duplicate query text: {text!r}")

    # ---------- evidence ----------
    kinds = {}
    quotes = defaultdict(list)   # id -> [(src, name, quote)]
    cur = None
    qre = re.compile(r'^>\s*"(.*)"\s*--\s*source:\s*(fda unii=(\S+)|ema drug=(\S+))\s*$')
    with open(EFILE, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            m = re.match(r"^##\s+(h44-\d\d)\s*$", line)
            if m:
                cur = m.group(1)
                if cur in kinds or cur in quotes:
                    errors.append(f"evidence: section {cur} appears twice")
                continue
            if line.startswith("kind:"):
                if cur is None:
                    errors.append(f"evidence line {n}: kind outside a section")
                    continue
                if cur in kinds:
                    errors.append(f"evidence {cur}: more than one kind line")
                kinds[cur] = line.split(":", 1)[1].strip()
                continue
            if line.startswith(">"):
                m = qre.match(line)
                if not m or cur is None:
                    errors.append(f"evidence line {n}: malformed quote line")
                    continue
                if m.group(3):
                    quotes[cur].append(("fda", m.group(3), m.group(1)))
                else:
                    quotes[cur].append(("ema", m.group(4), m.group(1)))

    for qid in want_ids:
        if qid not in kinds:
            errors.append(f"evidence: no kind line for {qid}")
        if not quotes.get(qid):
            errors.append(f"evidence: no quotes for {qid}")
    extra = set(kinds) - set(want_ids)
    if extra:
        errors.append(f"evidence: unknown ids {sorted(extra)}")
    kc = Counter(kinds.values())
    for k, want in EXPECTED_KIND_COUNTS.items():
        if kc.get(k, 0) != want:
            errors.append(f"kind {k!r}: {kc.get(k, 0)} questions, expected {want}")
    for k in kc:
        if k not in EXPECTED_KIND_COUNTS:
            errors.append(f"unknown kind {k!r}")

    # quote presence + backing
    for qid in want_ids:
        backed_names = []
        for src, name, quote in quotes.get(qid, []):
            nq = norm(quote)
            if not nq:
                errors.append(f"{qid}: empty quote")
                continue
            if src == "ema":
                if name not in ema_text:
                    errors.append(f"{qid}: unknown EMA drug {name!r}")
                    continue
                if not any(nq in t for t in ema_text[name]):
                    errors.append(f"{qid}: quote not found in ema drug={name}: {quote[:70]!r}")
                    continue
                backed_names.append([name.lower()])
            else:
                if name not in fda:
                    errors.append(f"{qid}: unknown FDA unii {name!r}")
                    continue
                names, text = fda[name]
                if nq not in text:
                    errors.append(f"{qid}: quote not found in fda unii={name}: {quote[:70]!r}")
                    continue
                backed_names.append([p.lower() for p in names])
        q = qmap.get(qid)
        if not q:
            continue
        for s in q.get("expected_doc_name_substrings") or []:
            if not isinstance(s, str):
                continue
            if not any(s.lower() in n for names in backed_names for n in names):
                errors.append(f"{qid}: substring {s!r} not backed by a quote from a matching product")

    if errors:
        for e in errors:
            print("ERROR:", e)
        print(f"{len(errors)} problem(s)")
        sys.exit(1)
    print("counts per kind:", dict(sorted(kc.items())))
    print("OK")


if __name__ == "__main__":
    main()
