"""A-20: British and American spellings of a word meet in the BM25 query."""

import pytest

from pipeline.lexical import lexical_query_text
from pipeline.settings import LexicalSettings
from pipeline.spelling_variants import (
    SpellingVariants,
    american_key,
    american_phrase,
    default_spelling_variants,
)


@pytest.mark.parametrize(
    ("word", "key"),
    [
        ("diarrhoea", "diarrhea"),
        ("dyspnoea", "dyspnea"),
        ("haemophilia", "hemophilia"),
        ("Paediatric", "pediatric"),
        ("oedema", "edema"),
        ("oesophagus", "esophagus"),
        ("foetus", "fetus"),
        ("hypoglycaemia", "hypoglycemia"),
        ("colour", "color"),
        ("behavioural", "behavioral"),
        ("tumours", "tumors"),
        ("litres", "liters"),
        ("fibre", "fiber"),
        ("hospitalised", "hospitalized"),
        ("paralysed", "paralyzed"),
        ("sulphonylurea", "sulfonylurea"),
        ("analogue", "analog"),
        ("programme", "program"),
        ("labelled", "labeled"),
        ("counselling", "counseling"),
        ("diarrhoeal", "diarrheal"),
        ("seborrhoeic", "seborrheic"),
        ("lymphoedema", "lymphedema"),
        ("angiooedema", "angioedema"),
        ("gastrooesophageal", "gastroesophageal"),
        ("coeliac", "celiac"),
        ("phaeochromocytoma", "pheochromocytoma"),
        ("leucopenia", "leukopenia"),
        ("gonadotrophin", "gonadotropin"),
        ("aluminium", "aluminum"),
        # American already
        ("diarrhea", "diarrhea"),
        ("angioedema", "angioedema"),
        ("gastroesophageal", "gastroesophageal"),
        ("thromboembolism", "thromboembolism"),
    ],
)
def test_a20_american_key(word, key):
    assert american_key(word) == key


@pytest.mark.parametrize(
    "word",
    # each rule's look-alikes that are other words: no rule applies to them
    ["four", "hour", "course", "fourth", "mourning", "filled", "filling", "noise", "boeing",
     "shoes", "poets", "phoenix", "canoe", "bullae", "aerosol", "centre-line"],
)
def test_a20_other_words_stay(word):
    assert american_key(word) == word.lower()


def test_a20_variants_are_the_stored_words_spelled_otherwise():
    variants = SpellingVariants(["diarrhoea", "tumor", "tumour", "colour", "forth", "course"])
    assert variants.variants("diarrhea") == ["diarrhoea"]
    assert variants.variants("Tumor") == ["tumour"]
    assert variants.variants("tumour") == ["tumor"]
    assert variants.variants("color") == ["colour"]
    assert variants.variants("colour") == []  # the stored spelling: nothing to add
    assert variants.variants("anemia") == []  # no stored word reads as it
    assert variants.variants("fourth") == [] and variants.variants("corse") == []
    assert variants.terms("diarrhea with a tumor, or diarrhea") == ["diarrhoea", "tumour"]


def test_a20_the_shipped_stored_words_bridge_leaflets_and_labels():
    variants = default_spelling_variants()
    # the EMA leaflets' British forms and the FDA labels' American ones are both stored
    assert variants.variants("anemia") == ["anaemia"]
    assert variants.variants("anaemia") == ["anemia"]
    assert "hypoglycaemia" in variants.variants("hypoglycemia")
    assert "oedema" in variants.variants("edema")


@pytest.mark.parametrize("on", [True, False])
def test_a20_the_bm25_query_carries_the_other_spelling(vocabulary, on):
    settings = LexicalSettings(spelling_variants=on, word_form="as_written")
    text = lexical_query_text("Xarelto diarrhea", vocabulary, settings)
    assert text.startswith("Xarelto diarrhea")
    assert ("diarrhoea" in text.split()) is on
    assert "diarrhoea" not in lexical_query_text("Xarelto dose", vocabulary, settings).split()


@pytest.mark.parametrize(
    ("phrase", "american"),
    [
        # a word with an apostrophe is still a word: the build's lay-name aliases
        ("Travellers' diarrhoea", "travelers' diarrhea"),
        ("Gastro-oesophageal reflux disease", "gastro-esophageal reflux disease"),
        ("haemorrhoids (piles)", "hemorrhoids (piles)"),
        ("type 2 diabetes", "type 2 diabetes"),
    ],
)
def test_american_phrase_respells_each_word_and_keeps_what_is_between(phrase, american):
    assert american_phrase(phrase) == american
