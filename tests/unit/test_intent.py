"""R-INT-1..7: the intent table, first matching rule wins."""

import pytest

from pipeline.intent import detect_retrieval_intent, looks_like_smiles, section_cues_for

pytestmark = pytest.mark.unit

ASPIRIN = "CC(=O)Oc1ccccc1C(=O)O"


@pytest.mark.parametrize(
    "query",
    [
        "SMILES of osimertinib",
        "which compound binds the ATP pocket",
        "ligand efficiency of EGFR inhibitors",
        "molecular formula of imatinib",
        "InChI for caffeine",
        f"compounds similar to {ASPIRIN}",
        "c1ccccc1 derivatives",
    ],
)
def test_r_int_1_chemical_cues(vocabulary, query):
    intent = detect_retrieval_intent(query, vocabulary)
    assert intent.workflow == "chemical"
    assert intent.suppress_collections == ()
    assert intent.section_cues == ()
    assert intent.require_entity_match is True


def test_r_int_1_cue_is_word_bounded(vocabulary):
    assert detect_retrieval_intent("compounding pharmacy rules", vocabulary).workflow == "general"


@pytest.mark.parametrize("token", ["COVID-19", "NSCLC", "HER2", "CNS", "PD-1", "osimertinib"])
def test_r_int_1_words_are_not_smiles(token):
    assert not looks_like_smiles(token)


@pytest.mark.parametrize("token", [ASPIRIN, "c1ccccc1", "CN1CCC[C@H]1c1cccnc1", "CCOC(=O)C"])
def test_r_int_1_smiles_are_recognised(token):
    assert looks_like_smiles(token)


@pytest.mark.parametrize(
    ("query", "cues"),
    [
        ("Tagrisso prescribing information warnings", ("warnings",)),
        ("drug label dosage and administration for imatinib", ("dosage",)),
        ("indications and usage of pembrolizumab", ("indications_and_usage",)),
    ],
)
def test_r_int_2_regulatory_label_cues(vocabulary, query, cues):
    # R-INT-6 as the seed wrote it (A-5 off); the A-5 names are in test_section_cues.py.
    intent = detect_retrieval_intent(query, vocabulary, extended_section_cues=False)
    assert intent.workflow == "regulatory"
    assert intent.suppress_collections == ("chemical",)
    assert intent.section_cues == cues
    assert intent.require_entity_match is True


def test_r_int_1_wins_over_r_int_2(vocabulary):
    query = "compound listed in the prescribing information"
    assert detect_retrieval_intent(query, vocabulary).workflow == "chemical"


def test_r_int_3_combination_needs_two_drugs(vocabulary):
    two = detect_retrieval_intent(
        "osimertinib plus savolitinib dosing", vocabulary, extended_section_cues=False
    )
    assert two.workflow == "combination"
    assert two.section_cues == ("dosage",)
    assert two.require_entity_match is True
    one = detect_retrieval_intent("osimertinib in combination with chemotherapy", vocabulary)
    assert one.workflow == "drug_entity"


@pytest.mark.parametrize("cue", ["combination", "combined with", "co-administered", "plus"])
def test_r_int_3_every_combination_cue(vocabulary, cue):
    query = f"nivolumab {cue} ipilimumab"
    assert detect_retrieval_intent(query, vocabulary).workflow == "combination"


def test_r_int_4_drug_entity(vocabulary):
    intent = detect_retrieval_intent("Tagrisso warnings", vocabulary)
    assert intent.workflow == "drug_entity"
    assert intent.section_cues == ("warnings",)
    assert intent.require_entity_match is True


def test_r_int_5_general_fallback(vocabulary):
    intent = detect_retrieval_intent("usage of exercise and heart disease risk", vocabulary)
    assert intent.workflow == "general"
    assert intent.require_entity_match is False
    assert intent.section_cues == ("indications_and_usage",)


@pytest.mark.parametrize(
    ("query", "cues"),
    [
        ("warning about dosing and indications", ("warnings", "dosage", "indications_and_usage")),
        ("indications then warnings, more warnings", ("indications_and_usage", "warnings")),
        ("dosage or dosing usage", ("dosage", "indications_and_usage")),
        ("nothing to see", ()),
    ],
)
def test_r_int_6_section_cues_deduplicated_first_appearance(query, cues):
    assert section_cues_for(query) == cues


def test_r_int_6_seed_cues_without_the_a5_table():
    assert section_cues_for("side effects of lenvatinib") == ()
    assert section_cues_for("side effects of lenvatinib", extended=True) == ("adverse_reactions",)
    assert section_cues_for("how to store Opdivo", extended=True) == ("storage",)


def test_r_int_7_intent_is_a_frozen_value(vocabulary):
    intent = detect_retrieval_intent("Tagrisso warnings", vocabulary)
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen error type
        intent.workflow = "general"
