"""R-EXP-1..2: dense suffix for PubMedBERT only; sparse terms."""

import pytest

from pipeline.expansion import expand, expand_query_for_dense_retrieval, expansion_terms
from pipeline.intent import detect_retrieval_intent
from pipeline.vocabulary import Entity, Vocabulary

pytestmark = pytest.mark.unit


@pytest.fixture
def small_vocabulary():
    return Vocabulary(
        [
            Entity(
                "EGFR", "gene", aliases=("ERBB1", "HER1", "ERBB"), pathways=("MAPK", "PI3K-AKT")
            ),
            Entity(
                "osimertinib",
                "drug",
                aliases=("Tagrisso", "AZD9291", "mereletinib"),
                pathways=("EGFR",),
            ),
            Entity("lung cancer", "disease", aliases=("NSCLC",), pathways=("EGFR", "ALK")),
        ]
        + [
            Entity(f"gene{i}x", "gene", aliases=(f"g{i}a", f"g{i}b"), pathways=(f"p{i}",))
            for i in range(6)
        ]
    )


def test_r_exp_1_two_aliases_one_pathway_per_entity_in_order(small_vocabulary):
    query = "osimertinib for EGFR lung cancer"
    assert expansion_terms(query, small_vocabulary) == [
        "Tagrisso",
        "AZD9291",
        "EGFR",
        "ERBB1",
        "HER1",
        "MAPK",
        "NSCLC",
    ]
    assert expand_query_for_dense_retrieval(query, small_vocabulary) == (
        f"{query} [biomed entities: Tagrisso, AZD9291, EGFR, ERBB1, HER1, MAPK, NSCLC]"
    )


def test_r_exp_1_at_most_twelve_terms(small_vocabulary):
    query = " ".join(f"gene{i}x" for i in range(6))
    assert len(expansion_terms(query, small_vocabulary)) == 12


def test_r_exp_1_only_pubmedbert_gets_the_suffix(small_vocabulary):
    query = "osimertinib resistance"
    assert "[biomed entities:" in expand(query, "pubmedbert", small_vocabulary).dense_query
    for encoder in (None, "medcpt-query", "molformer", "general-text"):
        assert expand(query, encoder, small_vocabulary).dense_query == query


def test_r_exp_1_no_entity_no_suffix(small_vocabulary):
    assert expand_query_for_dense_retrieval("sleep quality", small_vocabulary) == "sleep quality"


def test_r_exp_2_sparse_terms_are_drugs_and_cues_with_spaces(vocabulary):
    expanded = expand("Tagrisso indications and warnings", "pubmedbert", vocabulary)
    assert expanded.sparse_terms == ("osimertinib", "indications and usage", "warnings")
    assert expanded.intent.workflow == "drug_entity"


def test_a27_an_inferred_cue_adds_no_sparse_words(vocabulary):
    # "indications and usage" is no word of the question; a named cue is (R-EXP-2)
    assert expand("acid reflux and heartburn", "pubmedbert", vocabulary).sparse_terms == ()
    named = expand("what is it used for, acid reflux", "pubmedbert", vocabulary)
    assert named.sparse_terms == ("indications and usage",)
    assert named.intent.section_cues == ("indications_and_usage",)


def test_a27_off_gives_a26_its_words_back(vocabulary):
    # general_section_cue false is A-26 as it was: its cue adds its words (R-EXP-2)
    query = "antibiotic for Delhi belly"
    a26 = detect_retrieval_intent(query, vocabulary, general_cue=False)
    assert expand(query, "pubmedbert", vocabulary, a26).sparse_terms == ("indications and usage",)
    a27 = detect_retrieval_intent(query, vocabulary)
    assert a27.section_cues == a26.section_cues
    assert expand(query, "pubmedbert", vocabulary, a27).sparse_terms == ()
