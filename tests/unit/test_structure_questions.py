"""A-3: a question that holds a structure and only filler words is ordered by structure."""

import pytest

from pipeline.tier2_stage import is_structure_only

pytestmark = pytest.mark.unit

LORLATINIB = "C[C@H]1Oc2cc(cnc2N)-c2c(nn(C)c2C#N)CN(C)C(=O)c2ccc(F)cc21"


@pytest.mark.parametrize(
    "query",
    [
        LORLATINIB,
        f"structure similar to {LORLATINIB}",
        f"which drug has the structure {LORLATINIB}",
        f"what is this compound {LORLATINIB}",
        f"identify the drug with SMILES {LORLATINIB}",
    ],
)
def test_a3_structure_with_filler_words_only(query):
    assert is_structure_only(query)


@pytest.mark.parametrize(
    "query",
    [
        f"side effects of the drug with structure {LORLATINIB}",
        f"{LORLATINIB} dose in lung cancer",
        "which drug treats ALK-positive lung cancer",
    ],
)
def test_a3_a_structure_with_a_question_about_it_is_not_structure_only(query):
    assert not is_structure_only(query)


def test_a_drug_named_for_the_chemical_leg_is_embedded_as_its_parent_structure():
    # the vocabulary lists lapatinib as its ditosylate: its tosylate matched every stored
    # tosylate salt in the dense SMILES leg ("SMILES of lapatinib": Sorafenib Tosylate)
    from pipeline.embeddings import chemical_query_text
    from pipeline.structure import standardize
    from pipeline.vocabulary import default_vocabulary

    vocabulary = default_vocabulary()
    salt = vocabulary.get("lapatinib").smiles
    assert "." in salt  # a salt in the vocabulary
    text = chemical_query_text("SMILES of lapatinib", vocabulary)
    assert "." not in text and text == standardize(salt).canonical_smiles
    aspirin = "CC(=O)Oc1ccccc1C(=O)O"
    assert chemical_query_text(f"is {aspirin} approved", vocabulary) == aspirin  # as typed
