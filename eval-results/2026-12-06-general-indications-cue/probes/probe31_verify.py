#!/usr/bin/env python3
"""Verify probe31.jsonl and probe31_evidence.md against the drug-label data (stdlib only)."""
import json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/work/shared/data/drug_labels"
PROBE = os.path.join(HERE, "probe31.jsonl")
EVID = os.path.join(HERE, "probe31_evidence.md")
FIELDS = {"id", "query", "expected_doc_name_substrings", "k"}
N = 40

errors = []
def err(msg):
    errors.append(msg)

def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()

# ---------- load data
ema = [json.loads(l) for l in open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8")]
fda = [json.loads(l) for l in open(os.path.join(DATA, "fda_indications.jsonl"), encoding="utf-8")]
names = set(r["drug"] for r in ema)
for r in fda:
    names.update(n for n in r["product_names"] if n)
names_l = [n.lower() for n in names]

# ---------- probe file
lines = [l for l in open(PROBE, encoding="utf-8").read().split("\n") if l.strip()]
if len(lines) != N:
    err(f"expected {N} lines, got {len(lines)}")
probes = []
for i, l in enumerate(lines, 1):
    try:
        o = json.loads(l)
    except Exception as e:
        err(f"line {i}: invalid JSON ({e})"); continue
    probes.append(o)
    exp_id = f"h31-{i:02d}"
    if set(o) != FIELDS:
        err(f"line {i}: fields {sorted(o)} != {sorted(FIELDS)}")
    if o.get("id") != exp_id:
        err(f"line {i}: id {o.get('id')!r} != {exp_id!r}")
    if o.get("k") != 5 or isinstance(o.get("k"), bool):
        err(f"{exp_id}: k must be 5")
    q = o.get("query")
    if not isinstance(q, str) or not q.strip():
        err(f"{exp_id}: empty query")
    subs = o.get("expected_doc_name_substrings")
    if not isinstance(subs, list) or not (1 <= len(subs) <= 5):
        err(f"{exp_id}: need 1-5 substrings"); continue
    if any(not isinstance(s, str) or not s.strip() for s in subs):
        err(f"{exp_id}: substrings must be non-empty strings"); continue
    if len(set(s.lower() for s in subs)) != len(subs):
        err(f"{exp_id}: duplicate substrings")
    for s in subs:
        if not any(s.lower() in n for n in names_l):
            err(f"{exp_id}: substring {s!r} matches no document name")

qs = [norm(p.get("query", "")) for p in probes]
dups = {q for q in qs if qs.count(q) > 1}
if dups:
    err(f"duplicate queries: {sorted(dups)}")

# ---------- evidence file
text = open(EVID, encoding="utf-8").read()
blocks = re.split(r"^## ", text, flags=re.M)[1:]
by_id = {}
for b in blocks:
    head, _, body = b.partition("\n")
    m = re.match(r"(h31-\d\d): (.*)$", head.strip())
    if not m:
        err(f"bad evidence heading: {head!r}"); continue
    by_id[m.group(1)] = (m.group(2), [l for l in body.split("\n") if l.strip()])

ema_idx = {}
for r in ema:
    ema_idx.setdefault((r["drug"], r["section"]), []).append(r["text"])

for p in probes:
    pid = p.get("id")
    if pid not in by_id:
        err(f"{pid}: no evidence section"); continue
    q, evl = by_id[pid]
    if q.strip() != p["query"].strip():
        err(f"{pid}: evidence heading query differs from probe query")
    covered = set()
    for l in evl:
        parts = [x.strip() for x in l.split(" | ", 4)]
        if len(parts) != 5:
            err(f"{pid}: malformed evidence line: {l[:80]!r}"); continue
        sub, src, doc, sec, quote = parts
        if not (quote.startswith('"') and quote.endswith('"')) or len(quote) < 3:
            err(f"{pid}: quote not in double quotes: {l[:80]!r}"); continue
        quote = quote[1:-1]
        if len(quote) >= 200:
            err(f"{pid}: quote too long ({len(quote)} chars)")
        if sub not in p["expected_doc_name_substrings"]:
            err(f"{pid}: evidence substring {sub!r} not in expected list")
        covered.add(sub)
        if sub.lower() not in doc.lower():
            err(f"{pid}: document {doc!r} does not contain substring {sub!r}")
        nq = norm(quote)
        if src == "EMA":
            texts = ema_idx.get((doc, sec))
            if not texts:
                err(f"{pid}: EMA document/section not found: {doc!r} / {sec!r}"); continue
            if not any(nq in norm(t) for t in texts):
                err(f"{pid}: quote not found in EMA {doc} / {sec}: {quote[:60]!r}")
        elif src == "FDA":
            if sec != "indications":
                err(f"{pid}: FDA section must be 'indications'")
            recs = [r for r in fda if any(n.lower() == doc.lower() for n in r["product_names"])]
            if not recs:
                err(f"{pid}: FDA product not found: {doc!r}"); continue
            if not any(nq in norm(r["indications"]) for r in recs):
                err(f"{pid}: quote not found in FDA {doc} indications: {quote[:60]!r}")
        else:
            err(f"{pid}: source must be FDA or EMA, got {src!r}")
    missing = set(p["expected_doc_name_substrings"]) - covered
    if missing:
        err(f"{pid}: no evidence for substrings {sorted(missing)}")
extra = set(by_id) - {p.get("id") for p in probes}
if extra:
    err(f"evidence sections without probe: {sorted(extra)}")

if errors:
    print(f"FAIL: {len(errors)} problem(s)")
    for e in errors:
        print(" -", e)
    sys.exit(1)
print(f"OK: {len(probes)} probes, {sum(len(p['expected_doc_name_substrings']) for p in probes)} substrings, all evidence quotes found")
