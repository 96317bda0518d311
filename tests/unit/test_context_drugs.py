"""A-29: a medicine a question names as what failed, is not tolerated or is to be replaced
is its context, not its answer (``pipeline.context_drugs``), read by the shipped
vocabulary's ``find`` in questions only."""

from __future__ import annotations

import pytest

from pipeline.lexical import lexical_query_text
from pipeline.settings import LexicalSettings


def canonicals(vocabulary, text: str, **kwargs) -> list[str]:
    return [entity.canonical.lower() for entity in vocabulary.match_entities(text, **kwargs)]


@pytest.mark.parametrize(
    ("question", "context", "kept"),
    [
        (
            "I've had hives every day for months and the Zyrtec isn't cutting it. What else?",
            "cetirizine",
            "urticaria",
        ),
        (
            "antiplatelet medicine for atrial fibrillation when the patient can't take an "
            "anticoagulant",
            "anticoagulants",
            "atrial fibrillation",
        ),
        ("switching from sildenafil to riociguat for PAH", "sildenafil", "riociguat"),
        ("Onivide for pancreatic cancer after gemcitabine stopped working", "gemcitabine", None),
        (
            "Zyrtec has stopped touching my hay fever. Which other antihistamine could I try?",
            "cetirizine",
            "allergic rhinitis",
        ),
        (
            "Statins give me awful muscle pain. How else can I get my LDL cholesterol down?",
            "hydroxymethylglutaryl-coa reductase inhibitors",
            "cholesterol, ldl",
        ),
        ("advanced basal cell carcinoma progressing on vismodegib", "vismodegib", None),
        (
            "sulphasalazine for rheumatoid arthritis that has not responded to NSAIDs",
            "nsaids",
            "sulfasalazine",
        ),
    ],
)
def test_a_medicine_named_as_what_failed_is_no_entity_of_the_question(
    vocabulary, question: str, context: str, kept: str | None
) -> None:
    found = canonicals(vocabulary, question)
    assert context in canonicals(vocabulary, question, correct_typos=False)  # as written
    assert context not in found
    if kept:
        assert kept in found


@pytest.mark.parametrize(
    "question",
    [
        "why isn't my Ozempic working?",  # the only name: the question is about it
        "switched to Baraclude after previous tx failed, take on an empty stomach?",
        "I'm allergic to soy, anything in Opsumit tablets?",
        "antidote for paracetamol overdose in a child with asthma",  # A-11's subject
        "Tagrisso side effects when the rash is not helping my mood",
        # a side effect, and no question for another medicine: A-21's question
        "Statins give me muscle pain in my legs at night",
    ],
)
def test_names_outside_a_failure_clause_and_sole_names_are_kept(vocabulary, question: str) -> None:
    assert canonicals(vocabulary, question) == canonicals(
        vocabulary, question, correct_typos=False
    )


def test_a_stored_text_is_read_as_written(vocabulary) -> None:
    label = "for patients with urticaria whose symptoms cetirizine has not controlled"
    assert "cetirizine" in canonicals(vocabulary, label, correct_typos=False)
    assert "cetirizine" not in canonicals(vocabulary, label)


def test_the_bm25_query_carries_no_synonym_of_the_failed_medicine(vocabulary) -> None:
    question = "the Zyrtec isn't cutting it any more for my hives, what else is there?"
    text = lexical_query_text(question, vocabulary, LexicalSettings())
    assert "zyrtec" in text.lower()  # the words as written stay
    assert "cetirizine" not in text.lower()
    assert "cetirizine" in lexical_query_text("Zyrtec for hives", vocabulary, LexicalSettings())
