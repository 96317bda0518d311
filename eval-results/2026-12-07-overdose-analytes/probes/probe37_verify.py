#!/usr/bin/env python3
"""Check probe37.jsonl and probe37_evidence.md against the raw drug-label data (stdlib only).

Checks:
  (i)   every expected substring matches at least one document name
        (EMA "drug" field, or any FDA product name; case-insensitive);
  (ii)  with --list, prints the documents each substring matches;
  (iii) every evidence quote ('> ' lines under '## <id>' in probe37_evidence.md) appears
        verbatim (whitespace-normalised, case-insensitive) in the text of a document
        that the question's substrings match; every question has at least one quote;
  (iv)  24 questions, unique ids, exact shape {id, query, expected_doc_name_substrings, k}.
Extra checks: each substring matches only the documents listed as correct in ALLOWED;
6 queries use overdose/poisoning, 18 do not; at most 3 questions per antidote;
no query repeats the questions already used elsewhere.
Prints OK at the end when everything passes.
"""
import json
import os
import re
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/work/shared/data/drug_labels"
EMA_PATH = os.path.join(DATA, "ema_leaflet_sections.jsonl")
FDA_PATH = os.path.join(DATA, "fda_indications.jsonl")
PROBE = os.path.join(HERE, "probe37.jsonl")
EVID = os.path.join(HERE, "probe37_evidence.md")

# Documents that are correct answers, by a name that identifies them
# (EMA: the drug field; FDA: the set of product names of the record).
ALLOWED = {
    "acetadote": [("fda", "ACETADOTE")],
    "acetylcysteine": [("fda", "ACETADOTE")],
    "narcan": [("fda", "Narcan")],
    "zimhi": [("fda", "Narcan")],
    "nalmefene": [("fda", "Zurnai")],
    "zurnai": [("fda", "Zurnai")],
    "glucagon": [("fda", "Baqsimi"), ("fda", "Zegalogue")],
    "ogluo": [("ema", "ogluo")],
    "baqsimi": [("fda", "Baqsimi")],
    "zegalogue": [("fda", "Zegalogue")],
    "praxbind": [("ema", "praxbind")],
    "ondexxya": [("ema", "ondexxya")],
    "leucovorin calcium": [("fda", "leucovorin calcium")],
    "phytonadione": [("fda", "Phytonadione")],
    "methylene blue": [("fda", "METHYLENE BLUE")],
    "cyanokit": [("ema", "cyanokit")],
    "fomepizole": [("fda", "Fomepizole")],
    "bridion": [("ema", "bridion")],
    "sugammadex": [("ema", "sugammadex")],
}

# question id -> antidote label (for the per-antidote cap) and group
GROUP_NO_WORD = {f"h37-{i:02d}" for i in range(1, 13)}
GROUP_WORD = {f"h37-{i:02d}" for i in range(13, 19)}
GROUP_REVERSAL = {f"h37-{i:02d}" for i in range(19, 25)}

ANTIDOTE_OF_SUBSTRING = {
    "acetadote": "acetylcysteine", "acetylcysteine": "acetylcysteine",
    "narcan": "naloxone", "zimhi": "naloxone",
    "nalmefene": "nalmefene", "zurnai": "nalmefene",
    "glucagon": "glucagon", "ogluo": "glucagon", "baqsimi": "glucagon", "zegalogue": "glucagon",
    "praxbind": "idarucizumab", "ondexxya": "andexanet alfa",
    "leucovorin calcium": "leucovorin", "phytonadione": "phytonadione (vitamin K1)",
    "methylene blue": "methylene blue", "cyanokit": "hydroxocobalamin",
    "fomepizole": "fomepizole", "bridion": "sugammadex", "sugammadex": "sugammadex",
}

USED_ELSEWHERE = [
    "My teenager has taken too many paracetamol tablets. What's the antidote they give in hospital?",
    "friend overdosed on heroin, barely breathing, what reverses it",
    "mate overdosed on fentanyl and is barely breathing, what reverses it",
    "took about 30 paracetamol last night, whats the antidote",
    "Gran accidentally doubled up on her apixaban and the bleeding won't stop, is there a reversal injection?",
    "toddler may have overdosed on grandma's warfarin tablets, what fixes the clotting",
]

WORD_RE = re.compile(r"overdos|poison", re.I)


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def load_docs():
    docs = {}  # key -> {"names": [...], "text": str, "label": str}
    ema = defaultdict(list)
    with open(EMA_PATH, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ema[d["drug"]].append(d.get("section", "") + " " + d.get("text", ""))
    for drug, parts in ema.items():
        docs[("ema", drug)] = {"names": [drug], "text": norm(" ".join(parts)), "label": f"EMA {drug}"}
    with open(FDA_PATH, encoding="utf-8") as f:
        for i, line in enumerate(f):
            d = json.loads(line)
            names = d.get("product_names") or []
            docs[("fda", i)] = {"names": names, "text": norm(d.get("indications", "")),
                                "label": f"FDA#{i} {names}"}
    return docs


def matches(docs, sub):
    sub = sub.lower()
    return [k for k, d in docs.items() if any(sub in n.lower() for n in d["names"])]


def allowed_keys(docs, sub):
    keys = set()
    for src, ident in ALLOWED.get(sub, []):
        for k, d in docs.items():
            if k[0] == src and ident in d["names"]:
                keys.add(k)
    return keys


def load_evidence():
    quotes = defaultdict(list)
    cur = None
    with open(EVID, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^## (h37-\d\d)\s*$", line)
            if m:
                cur = m.group(1)
                continue
            if line.startswith("> ") and cur:
                quotes[cur].append(line[2:])
    return quotes


def main():
    listing = "--list" in sys.argv
    errors = []
    docs = load_docs()
    print(f"loaded {sum(1 for k in docs if k[0]=='ema')} EMA documents, "
          f"{sum(1 for k in docs if k[0]=='fda')} FDA documents")

    qs = []
    with open(PROBE, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                qs.append(json.loads(line))

    # (iv) count, unique ids, shape
    ids = [q.get("id") for q in qs]
    if len(qs) != 24:
        errors.append(f"expected 24 questions, found {len(qs)}")
    dup = [i for i, c in Counter(ids).items() if c > 1]
    if dup:
        errors.append(f"duplicate ids: {dup}")
    for q in qs:
        if set(q) != {"id", "query", "expected_doc_name_substrings", "k"}:
            errors.append(f"{q.get('id')}: keys {sorted(q)}")
        if q.get("k") != 5:
            errors.append(f"{q['id']}: k is {q.get('k')}")
        subs = q.get("expected_doc_name_substrings") or []
        if not subs or any(s != s.lower() for s in subs):
            errors.append(f"{q['id']}: substrings must be non-empty and lower-case: {subs}")
        if norm(q["query"]) in {norm(u) for u in USED_ELSEWHERE}:
            errors.append(f"{q['id']}: query already used elsewhere")

    quotes = load_evidence()
    antidote_count = Counter()
    word_count = 0
    for q in qs:
        qid = q["id"]
        subs = q["expected_doc_name_substrings"]
        matched = set()
        for s in subs:
            m = matches(docs, s)
            # (i)
            if not m:
                errors.append(f"{qid}: substring '{s}' matches no document")
            # only correct documents
            if s not in ALLOWED:
                errors.append(f"{qid}: substring '{s}' has no ALLOWED entry")
            else:
                extra = set(m) - allowed_keys(docs, s)
                if extra:
                    errors.append(f"{qid}: substring '{s}' also matches "
                                  + "; ".join(docs[k]["label"] for k in extra))
            matched.update(m)
            # (ii)
            if listing:
                print(f"{qid}  '{s}' -> " + " | ".join(docs[k]["label"] for k in m))
        # (iii)
        qq = quotes.get(qid, [])
        if not qq:
            errors.append(f"{qid}: no evidence quote")
        for quote in qq:
            nq = norm(quote)
            where = [k for k in matched if nq in docs[k]["text"]]
            if not where:
                errors.append(f"{qid}: quote not found in a matched document: {quote[:80]}...")
            elif listing:
                print(f"{qid}  quote ok in " + ", ".join(docs[k]["label"] for k in where))
        for a in {ANTIDOTE_OF_SUBSTRING.get(s, s) for s in subs}:
            antidote_count[a] += 1
        has_word = bool(WORD_RE.search(q["query"]))
        word_count += has_word
        if qid in GROUP_WORD and not has_word:
            errors.append(f"{qid}: should use overdose/poisoning")
        if qid in (GROUP_NO_WORD | GROUP_REVERSAL) and has_word:
            errors.append(f"{qid}: must not use overdose/poisoning")
        if re.search(r"\bOD\b", q["query"]) and qid not in GROUP_WORD:
            errors.append(f"{qid}: uses 'OD'")

    for a, c in sorted(antidote_count.items()):
        if c > 3:
            errors.append(f"antidote {a} used {c} times (max 3)")
    extra_quotes = set(quotes) - set(ids)
    if extra_quotes:
        errors.append(f"evidence for unknown ids: {sorted(extra_quotes)}")

    print(f"questions: {len(qs)}; using overdose/poisoning: {word_count}; "
          f"reversal group: {len(GROUP_REVERSAL)}")
    print("antidotes: " + ", ".join(f"{a} x{c}" for a, c in sorted(antidote_count.items())))
    if errors:
        for e in errors:
            print("FAIL", e)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
