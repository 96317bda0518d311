"""A-25: a question's lay condition names glossed with the clinical name."""

from __future__ import annotations

import pytest

from pipeline.lay_names import glossed_lay_names, lay_name_glosses
from pipeline.vocabulary import Vocabulary
from pipeline.vocabulary_entities import Entity


@pytest.fixture(scope="module")
def small() -> Vocabulary:
    return Vocabulary(
        [
            Entity(
                "Enuresis",
                "disease",
                ("bedwetting", "nocturnal enuresis"),
                lay_names=("bedwetting",),
            ),
            Entity("hypoglycemia", "disease", ("hypoglycaemia", "hypo"), lay_names=("hypo",)),
            Entity("bacterial vaginosis", "disease", ("BV",), lay_names=("BV",)),
            Entity("hepatitis B", "disease", ("hep B",)),  # a short form, not a lay name
            Entity("osimertinib", "drug", ("Tagrisso",)),
        ],
        case_sensitive_names={"bacterial vaginosis": ["BV"]},
        known_words=(),
    )


@pytest.mark.parametrize(
    ("question", "glossed"),
    [
        ("bedwetting in a 7 year old", "bedwetting (enuresis) in a 7 year old"),
        ("a bad hypo at night", "a bad hypo (hypoglycemia) at night"),
        ("my GP thinks it's BV", "my GP thinks it's BV (bacterial vaginosis)"),
        # both lay names, each glossed at its own place
        ("BV or a hypo?", "BV (bacterial vaginosis) or a hypo (hypoglycemia)?"),
        # once per condition, at its first lay name
        ("bedwetting and more bedwetting", "bedwetting (enuresis) and more bedwetting"),
    ],
)
def test_a25_a_lay_name_gets_the_clinical_name_beside_it(small, question, glossed):
    assert glossed_lay_names(question, small) == glossed


@pytest.mark.parametrize(
    "question",
    [
        "bedwetting (nocturnal enuresis) at 7",  # the question names it already
        "hep B vaccine",  # a short form is no lay name
        "Tagrisso and nausea",  # a drug's other name is left as written
        "a hypo-allergenic cream",  # inside a hyphenated word
        "a hypo\u2010allergenic cream",  # whatever the dash
        "inherited bedwetting (primary enuresis)",  # the question glosses it itself
        "bv",  # a capitalised abbreviation only as written
        "no condition here",
    ],
)
def test_a25_a_question_without_a_lay_name_alone_is_unchanged(small, question):
    assert glossed_lay_names(question, small) == question
    assert lay_name_glosses(question, small) == []


def test_a25_the_shipped_vocabulary_glosses_everyday_names(vocabulary):
    # the curated table (pipeline.lay_condition_table); the leaflets' own pairs are no
    # glosses (they pair symptoms, either way round: "feeling sick (nausea)")
    assert glossed_lay_names("my husband has flu", vocabulary) == (
        "my husband has flu (influenza)"
    )
    assert glossed_lay_names("high blood pressure", vocabulary) == "high blood pressure"
    assert glossed_lay_names("feeling sick on Rybelsus", vocabulary) == (
        "feeling sick on Rybelsus"
    )
    # the longer name wins: stomach flu is no influenza, a hypo thyroid no hypo
    assert glossed_lay_names("stomach flu", vocabulary) == "stomach flu (gastroenteritis)"
    assert glossed_lay_names("hypo thyroid", vocabulary) == "hypo thyroid (hypothyroidism)"
    assert glossed_lay_names("something for piles", vocabulary) == (
        "something for piles (haemorrhoids)"
    )
    assert glossed_lay_names("tablet for heroin addiction", vocabulary) == (
        "tablet for heroin addiction (opioid dependence)"
    )
    # names the wider table added (session 19)
    assert glossed_lay_names("tablets for altitude sickness", vocabulary) == (
        "tablets for altitude sickness (acute mountain sickness)"
    )
    # ... but not where the words have another sense (the review of session 19)
    for question in (
        "a heavy period of drinking",  # only "heavy periods" is a condition
        "severe chronic hand eczema",  # no atopic dermatitis
        "low T3 syndrome",  # "low T" is out of the table
        "bird flu vaccine",  # left to "flu vaccine" (influenza vaccines)
    ):
        assert glossed_lay_names(question, vocabulary) == question
    assert glossed_lay_names("sleeping sickness", vocabulary) == (
        "sleeping sickness (african trypanosomiasis)"  # ICD titles are lower-cased
    )


def test_a25_the_shipped_vocabulary_glosses_the_wider_table(vocabulary):
    # names the helpers wrote from the conditions the labels treat (session 22)
    for question, glossed in [
        ("school sores round her mouth", "school sores (impetigo) round her mouth"),
        ("what treats rabbit fever", "what treats rabbit fever (tularemia)"),
        ("a rodent ulcer on his nose", "a rodent ulcer (basal cell carcinoma) on his nose"),
        ("injection for tennis elbow", "injection for tennis elbow (lateral epicondylitis)"),
        # ICD's own "Swimmer's ear" row joined Otitis externa at the build
        ("swimmer's ear drops", "swimmer's ear (otitis externa) drops"),
    ]:
        assert glossed_lay_names(question, vocabulary) == glossed
    for question in (
        "PSA rising after prostate cancer treatment",  # no "PsA" in the table
        "COPD and covid: which antivirals",  # clinicians' abbreviations are out
        "medicine for high blood pressure",  # a side effect in the same words
        "heart attack risk on Xeljanz",  # a side effect more often than a use
        "lupus anticoagulant positive",  # a lab antibody
        "bipolar I disorder",  # "bipolar" alone is out
        "low thyroid stimulating hormone on levothyroxine",  # no "low thyroid"
        "hot flushes since the menopause",  # no "change of life": menopause is no disease
    ):
        assert glossed_lay_names(question, vocabulary) == question
    menopause = vocabulary.get("menopause")
    assert menopause is None or menopause.semantic_type != "disease"
