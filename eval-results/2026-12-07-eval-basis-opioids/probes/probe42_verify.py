#!/usr/bin/env python3
"""Verify probe42.jsonl against probe42_evidence.md and the drug label data (stdlib only)."""
import json, os, re, sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("DRUG_LABELS", "/work/shared/data/drug_labels")
errors = []

def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()

# --- data
ema_text = defaultdict(list)
for line in open(os.path.join(DATA, "ema_leaflet_sections.jsonl"), encoding="utf-8"):
    r = json.loads(line)
    ema_text[r["drug"]].append(r["text"])
ema_text = {d: norm(" ".join(t)) for d, t in ema_text.items()}
fda = {}
for line in open(os.path.join(DATA, "fda_indications.jsonl"), encoding="utf-8"):
    r = json.loads(line)
    fda[r["unii"]] = r
# all product names: (source key, lowercase name)
names = [("ema:" + d, d.lower()) for d in ema_text]
for u, r in fda.items():
    for p in r["product_names"]:
        names.append(("fda:" + u, p.lower()))

def row_names(key):
    src, ident = key.split(":", 1)
    if src == "ema":
        return [ident.lower()] if ident in ema_text else None
    r = fda.get(ident)
    return [p.lower() for p in r["product_names"]] if r else None

def row_text(key):
    src, ident = key.split(":", 1)
    return ema_text.get(ident) if src == "ema" else (norm(fda[ident]["indications"]) if ident in fda else None)

# --- questions
qs = [json.loads(l) for l in open(os.path.join(HERE, "probe42.jsonl"), encoding="utf-8") if l.strip()]
ids = [q["id"] for q in qs]
if len(ids) != len(set(ids)):
    errors.append("duplicate ids: %s" % [i for i, c in Counter(ids).items() if c > 1])
if len(qs) != 24:
    errors.append("expected 24 questions, got %d" % len(qs))
for q in qs:
    for f in ("id", "query", "expected_doc_name_substrings", "k"):
        if f not in q:
            errors.append("%s: missing field %s" % (q.get("id"), f))
    subs = q.get("expected_doc_name_substrings", [])
    if not subs:
        errors.append("%s: no expected substrings" % q["id"])
    for s in subs:
        if s != s.lower():
            errors.append("%s: substring not lowercase: %r" % (q["id"], s))
        if not any(s in n for _, n in names):
            errors.append("%s: substring %r matches no product name" % (q["id"], s))

# --- evidence
ev = defaultdict(lambda: {"kind": None, "quotes": []})
cur = None
qre = re.compile(r'^> \[(fda|ema):([^\]]+)\] "(.+)"\s*$')
for line in open(os.path.join(HERE, "probe42_evidence.md"), encoding="utf-8"):
    line = line.rstrip("\n")
    m = re.match(r"^## (h42-\d\d)\s*$", line)
    if m:
        cur = m.group(1)
        if cur in ev:
            errors.append("evidence: duplicate heading %s" % cur)
        ev[cur]
        continue
    if cur is None:
        continue
    m = re.match(r"^kind:\s*(\w+)\s*$", line)
    if m:
        ev[cur]["kind"] = m.group(1)
        continue
    if line.startswith("> "):
        m = qre.match(line)
        if not m:
            errors.append("%s: malformed quote line: %s" % (cur, line))
            continue
        ev[cur]["quotes"].append((m.group(1) + ":" + m.group(2), m.group(3)))

kinds = Counter()
for q in qs:
    e = ev.get(q["id"])
    if e is None:
        errors.append("%s: no evidence section" % q["id"])
        continue
    if e["kind"] not in ("antidote", "control"):
        errors.append("%s: bad kind %r" % (q["id"], e["kind"]))
    kinds[e["kind"]] += 1
    if not e["quotes"]:
        errors.append("%s: no quotes" % q["id"])
    covered = set()
    for key, quote in e["quotes"]:
        rn = row_names(key)
        if rn is None:
            errors.append("%s: unknown source row %s" % (q["id"], key))
            continue
        txt = row_text(key)
        if norm(quote) not in txt:
            errors.append("%s: quote not found in %s: %r" % (q["id"], key, quote[:80]))
        hits = [s for s in q["expected_doc_name_substrings"] if any(s in n for n in rn)]
        if not hits:
            errors.append("%s: quoted row %s is not matched by any expected substring" % (q["id"], key))
        covered.update(hits)
    for s in q["expected_doc_name_substrings"]:
        if s not in covered:
            errors.append("%s: expected substring %r has no quoted supporting row" % (q["id"], s))
extra = set(ev) - set(ids)
if extra:
    errors.append("evidence sections without question: %s" % sorted(extra))
if kinds.get("antidote") != 16 or kinds.get("control") != 8:
    errors.append("kind counts %s, want antidote 16 / control 8" % dict(kinds))

# --- informational: every row each substring matches
if "-v" in sys.argv:
    for q in qs:
        for s in q["expected_doc_name_substrings"]:
            rows = sorted({k for k, n in names if s in n})
            print(q["id"], repr(s), rows)

if errors:
    print("FAIL")
    for e in errors:
        print(" -", e)
    sys.exit(1)
print("OK")
