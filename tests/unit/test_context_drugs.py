"""A-29: a medicine a question names as what failed, is not tolerated or is to be replaced
is its context, not its answer (``pipeline.context_drugs``), read by the shipped
vocabulary's ``find`` in questions only."""

from __future__ import annotations

import pytest

from pipeline.lexical import lexical_query_text
from pipeline.settings import LexicalSettings
from pipeline.spelling import default_speller


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
        ("I can't take ibuprofen because of my asthma, what else for pain?", "ibuprofen", None),
        # an add-on is another medicine, and a list shares its first name's clause
        (
            "Still having asthma attacks despite high dose Symbicort plus montelukast. What "
            "add-on injections are there for severe asthma?",
            "budesonide/formoterol",
            "asthma",
        ),
        (
            "Still having asthma attacks despite high dose Symbicort plus montelukast. What "
            "add-on injections are there for severe asthma?",
            "montelukast",
            "asthma",
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
        # each names a condition too, so only the patterns keep the medicine
        "switched to Baraclude after previous tx failed for hepatitis B, empty stomach?",
        "I'm allergic to soy, anything in Opsumit tablets for pulmonary hypertension?",
        "antidote for paracetamol overdose in a child with asthma",  # A-11's subject
        "heroin overdose not responding to naloxone in a man with asthma, what next?",
        "Is it true you can't take ibuprofen with lisinopril for high blood pressure?",
        "What if I can't take metformin with food in diabetes?",
        "Can I drink alcohol despite taking metformin for diabetes?",
        "Will Ozempic give me nausea with my diabetes? Any other side effects?",
        "Sertraline makes me sleepy with migraine, should I switch to taking it at night?",
        "Is Ozempic no longer covered by insurance for diabetes?",
        "Ozempic nausea isn't stopping, what helps?",  # the nausea is what does not stop
        # a side effect, and no question for another medicine: A-21's question
        "Statins give me muscle pain in my legs at night",
        # a list after a name that stays is no failure clause either
        "Can I take metformin plus gliclazide for my diabetes?",
        # "added to" asks about the medicine added too
        "Does sitagliptin give me stomach pain when added to metformin for diabetes?",
    ],
)
def test_names_outside_a_failure_clause_are_kept(vocabulary, question: str) -> None:
    as_written = canonicals(vocabulary, question, correct_typos=False)
    assert len(as_written) >= 2  # a second name: the sole-name guard does not decide
    assert canonicals(vocabulary, question) == as_written


@pytest.mark.parametrize(
    "question",
    [
        "metformin and gliclazide haven't worked for my diabetes, what next",
        "after metformin and gliclazide failed, what next for diabetes",
    ],
)
def test_a41_a_list_shares_its_failure_clause_either_way(vocabulary, question: str) -> None:
    assert canonicals(vocabulary, question) == ["diabetes"]


def test_a41_the_options_after_a_failed_name_are_the_answer(vocabulary) -> None:
    # "or" and a comma offer the options asked about: no list of the failed one
    question = "Instead of warfarin, apixaban or rivaroxaban for atrial fibrillation?"
    assert canonicals(vocabulary, question) == ["apixaban", "rivaroxaban", "atrial fibrillation"]


def test_a_question_whose_only_names_failed_keeps_them(vocabulary) -> None:
    question = "my Ozempic has stopped working, why?"
    assert canonicals(vocabulary, question) == ["semaglutide"]
    # the same clause beside a condition drops it: the guard is what kept it above
    assert "semaglutide" not in canonicals(vocabulary, question + " I have diabetes")


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


@pytest.mark.parametrize("name", ["Sutent", "Relpax"])
def test_a_failed_medicine_is_not_read_as_a_misspelt_word(vocabulary, name: str) -> None:
    # one edit from "stent" / "relax": no longer an entity, still a name (A-19 skips it)
    question = f"{name} isn't helping my migraine, what else can I take?"
    assert name.lower() not in [m.surface.lower() for m in vocabulary.find(question)]
    searched, fixes = default_speller().corrected(question, vocabulary)
    assert searched == question and not fixes
