"""The real offline models mean something: MiniLM on drug sentences, rxnfp on SMILES taken
from the shipped ChEMBL approved-drug list."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.models.helpers import REPOSITORY

pytestmark = pytest.mark.slow

CHEMBL = REPOSITORY.parent / "shared" / "data" / "compounds" / "chembl_approved_drugs.csv"
FALLBACK_SMILES = {
    "GEFITINIB": "COc1cc2ncnc(Nc3ccc(F)c(Cl)c3)c2cc1OCCCN1CCOCC1",
    "ERLOTINIB": "C#Cc1cccc(Nc2ncnc3cc(OCCOC)c(OCCOC)cc23)c1",
    "CAFFEINE": "Cn1c(=O)c2c(ncn2C)n(C)c1=O",
}


def approved_drug_smiles(names: list[str], path: Path = CHEMBL) -> dict[str, str]:
    """SMILES by ChEMBL preferred name from the shared CSV, or the same values hard-coded
    when the shared data is not beside the repository."""
    if not path.is_file():
        return {name: FALLBACK_SMILES[name] for name in names}
    with path.open(encoding="utf-8") as handle:
        rows = {row["pref_name"]: row["smiles"] for row in csv.DictReader(handle)}
    return {name: rows[name] for name in names}


def test_minilm_puts_gefitinib_near_erlotinib_not_insulin(minilm_encoder: Any) -> None:
    query, erlotinib, insulin = minilm_encoder.encode(
        [
            "gefitinib EGFR inhibitor",
            "Erlotinib is an EGFR tyrosine kinase inhibitor used for non-small cell lung cancer.",
            "Insulin glargine is a long-acting insulin that lowers blood glucose in diabetes.",
        ]
    )
    assert float(query @ erlotinib) > float(query @ insulin) + 0.1


def test_rxnfp_puts_gefitinib_near_erlotinib_not_caffeine(rxnfp_encoder: Any) -> None:
    smiles = approved_drug_smiles(["GEFITINIB", "ERLOTINIB", "CAFFEINE"])
    gefitinib, erlotinib, caffeine = rxnfp_encoder.encode(list(smiles.values()))
    assert float(gefitinib @ erlotinib) > float(gefitinib @ caffeine) + 0.1
    np.testing.assert_allclose(np.linalg.norm(gefitinib), 1.0, atol=1e-5)
    assert rxnfp_encoder.dimension == 256


def test_minilm_matches_sentence_transformers(minilm_encoder: Any) -> None:
    from sentence_transformers import SentenceTransformer

    texts = ["gefitinib EGFR inhibitor", "Insulin lowers blood glucose. " * 80]
    folder = minilm_encoder.adapter.tokenizer.name_or_path
    reference = SentenceTransformer(str(folder), device="cpu").encode(
        texts, normalize_embeddings=True
    )
    np.testing.assert_allclose(minilm_encoder.encode(texts), reference, atol=1e-5)
