"""R-REQ-6: domain dictionary, synonyms, title weight, minimum should match."""

import pytest

from pipeline.lexical import (
    greek_variants,
    lexical_document_text,
    lexical_query_text,
    meets_minimum_should_match,
    word_forms,
)
from pipeline.settings import LexicalSettings
from pipeline.text import tokens

pytestmark = pytest.mark.unit


def test_r_req_6_multi_word_terms_kept_whole(vocabulary):
    text = lexical_document_text(
        "See the prescribing information for insulin glargine.", vocabulary=vocabulary
    )
    assert "prescribinginformation" in tokens(text)
    assert "insulinglargine" in tokens(text)


def test_r_req_6_synonyms_meet_on_the_canonical_name(vocabulary):
    document = tokens(
        lexical_document_text("TAGRISSO is a kinase inhibitor.", vocabulary=vocabulary)
    )
    query = tokens(lexical_query_text("osimertinib kinase", vocabulary))
    assert "osimertinib" in document and "osimertinib" in query


def test_r_req_6_a_synonym_weighs_as_often_as_its_name_is_found(vocabulary):
    # BM25 term frequency: a leaflet that names Lynparza three times (once in its title,
    # which weighs twice) answers "olaparib" as strongly as one naming olaparib does.
    text = lexical_document_text(
        "Swallow Lynparza tablets whole. Take Lynparza twice a day.",
        "How to take Lynparza",
        vocabulary=vocabulary,
        settings=LexicalSettings(title_weight=2),
    )
    assert tokens(text).count("lynparza") == tokens(text).count("olaparib") == 4
    query = tokens(lexical_query_text("Lynparza or Lynparza tablets", vocabulary))
    assert query.count("olaparib") == 1  # a query asks for each name once


def test_r_req_6_section_title_weighs_twice_the_body(vocabulary):
    text = lexical_document_text(
        "Take one tablet.",
        "Dosage",
        vocabulary=vocabulary,
        settings=LexicalSettings(title_weight=2),
    )
    assert tokens(text).count("dosage") == 2


def test_r_req_6_minimum_should_match():
    assert meets_minimum_should_match("osimertinib rash diarrhoea", "osimertinib rash", 0.6)
    assert not meets_minimum_should_match("osimertinib rash diarrhoea", "osimertinib", 0.6)
    assert meets_minimum_should_match("anything", "", 0.0)


@pytest.mark.parametrize("text", ["5 µg once daily", "µ-opioid agonist", "ΜΑΠ kinase"])
def test_greek_look_alikes_read_as_their_letter_not_an_error(text):
    # re.I makes the micro sign match the Greek mu; a request with it answered 500 once.
    assert "mu" in greek_variants(text)
    assert lexical_query_text(text, None, LexicalSettings())


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("lemma", "dose: 2 dose, cyp3a4 inhibitor; tnf-α; effective effect"),
        ("snowball", "dose: 2 dose, cyp3a4 inhibitor; tnf-α; effect effect"),
        ("as_written", "Dosing: 2 doses, CYP3A4 inhibitors; TNF-α; effective effects"),
    ],
)
def test_a8_word_forms_read_each_word_and_leave_the_rest(form, expected):
    assert word_forms("Dosing: 2 doses, CYP3A4 inhibitors; TNF-α; effective effects", form) == (
        expected
    )


@pytest.mark.parametrize("form", ["lemma", "snowball"])
def test_a8_word_forms_apply_to_document_and_query_alike(vocabulary, form):
    settings = LexicalSettings(word_form=form)
    document = tokens(
        lexical_document_text("Take Lynparza doses twice daily.", "Dosing", vocabulary, settings)
    )
    query = tokens(lexical_query_text("olaparib dosing", vocabulary, settings))
    assert {"dose", "olaparib"} <= set(document) & set(query)
    assert "dosing" not in document and "doses" not in document
    # the word as written follows its form once: it meets a store written as written
    assert query.count("dosing") == 1 and query.count("olaparib") == 1
    # the seed's BM25 keeps each word as written
    seed = LexicalSettings(word_form="as_written")
    assert tokens(lexical_query_text("olaparib dosing", vocabulary, seed)) == ["olaparib", "dosing"]


def test_a6_a_short_chunk_is_read_as_written_not_typo_corrected(vocabulary):
    # "Stcrin" is a misspelt Stocrin in a question; in a document it is what it says
    assert vocabulary.find("Stcrin tablets")[0].correction == "Stocrin"
    assert "efavirenz" not in tokens(lexical_document_text("Stcrin tablets", vocabulary=vocabulary))
    assert "efavirenz" in tokens(lexical_query_text("Stcrin tablets", vocabulary))
