"""A-34: an overdose the labels name by the drug's class ("opioid overdose"), and a
question that says an overdose and asks what treats it read as a reversal question."""

import pytest

from pipeline.overdose import glossed_overdoses
from pipeline.overdose_classes import CLASS_OVERDOSES, class_overdose_of, class_overdose_terms
from pipeline.reversal import asks_for_reversal
from pipeline.schema import QueryRetrievalIntent
from pipeline.settings import Tier2Settings
from tests.unit.helpers import hit, ids
from tests.unit.test_tier2 import rerank, scores_by_id

pytestmark = pytest.mark.unit

DRUG = QueryRetrievalIntent(workflow="drug_entity")


@pytest.mark.parametrize(
    "query",
    [
        "took a handful of her oxycodone, what do paramedics give",
        "dihydrocodeine overdose treatment",
        "methanol intoxication treatment",
        "injected way too much insulin, what emergency medicine brings him round",
        "kid got into the tramadol, 3 times the dose, what counteracts it",
        "what should we keep at home in case he takes too many of his painkillers",
        "fentanyl OD in the ED, treatment?",
        "gave her a double dose of morphine, how is it treated",
        "injected his novorapid twice by mistake, what emergency injection",
    ],
)
def test_a34_an_overdose_to_treat_asks_for_its_antidote(query):
    assert asks_for_reversal(query)


@pytest.mark.parametrize(
    "query",
    [
        # the drug's own leaflet answers these
        "what are the signs of a morphine overdose",
        "took too much of my oxycodone, what should I do",
        # a treatment asked, no overdose said
        "what does tramadol treat",
        "extra-strength paracetamol dose",  # "extra" with no treatment asked
        # the body's own, no drug taken
        "bone marrow makes too many red cells, how is it treated",
        # no overdose in these words: a symptom, a strength, sepsis, once a day
        "what treats double vision",
        "is extra strength tylenol a treatment for migraine",
        "how is blood poisoning treated",
        "take 20mg o.d., what does it treat",
        "can antioxidant-rich spices counteract the effects of a high-fat meal",
    ],
)
def test_a34_no_antidote_asked(query):
    assert not asks_for_reversal(query)


@pytest.mark.parametrize(
    ("canonical", "condition"),
    [
        ("oxycodone", "opioid overdose"),
        ("meperidine", "opioid overdose"),
        ("buprenorphine/naloxone", "opioid overdose"),
        ("fentanyl patch", "opioid overdose"),
        ("acetaminophen and codeine", "opioid overdose"),
        ("naloxone", None),  # the antidote
        ("loperamide", None),  # a peripheral opioid: no opioid overdose to treat
        ("acetaminophen", None),  # its labels name "paracetamol overdose" itself
    ],
)
def test_a34_class_overdose_of(canonical, condition):
    assert class_overdose_of(canonical) == condition


def test_a34_class_overdose_terms_are_the_labels_words(vocabulary):
    glossed = glossed_overdoses("took a handful of his methadone, is there an antidote", vocabulary)
    terms = class_overdose_terms(glossed, vocabulary)
    assert terms == list(CLASS_OVERDOSES["opioid overdose"].label_terms)
    assert class_overdose_terms("methadone dose for pain", vocabulary) == []


async def test_a34_the_antidote_naming_the_class_overdose_comes_first(vocabulary):
    question = "my mum took a handful of her oxycodone tablets and won't wake up, antidote?"
    glossed = glossed_overdoses(question, vocabulary)
    assert "opioid overdose" in glossed
    nodes = [
        hit(
            "oxycodone-s1",
            text="Oxycodone is an opioid agonist for severe pain.",
            primary_drugs=["oxycodone"],
        ),
        hit(
            "naloxone-s1",
            text="Naloxone is indicated for the reversal of opioid "
            "depression and for known or suspected opioid overdose.",
            primary_drugs=["naloxone"],
        ),
        hit(
            "ritonavir-s2",
            text="Tell your doctor if you take oxycodone or fentanyl.",
            primary_drugs=["ritonavir"],
        ),
        hit("filler", text="Store below 25 C.", primary_drugs=["insulin"]),
    ]
    scores = scores_by_id(
        {"oxycodone-s1": 0.9, "naloxone-s1": 0.8, "ritonavir-s2": 0.7, "filler": 0.1}
    )
    tuned = Tier2Settings(preset="tuned")
    after = await rerank(nodes, glossed, DRUG, vocabulary, scores, tier2=tuned)
    assert ids(after.nodes)[0] == "naloxone-s1"
    naloxone = next(item for item in after.nodes if item.node.node_id == "naloxone-s1")
    assert naloxone.score_parts["entity"] > 0 and naloxone.score_parts["xdrug"] == 0.0
    # A-30's gloss alone: the antidote names no oxycodone and takes the cross-drug penalty
    plain = glossed_overdoses(question, vocabulary, class_overdoses=False)
    before = await rerank(nodes, plain, DRUG, vocabulary, scores, tier2=tuned)
    assert ids(before.nodes)[0] != "naloxone-s1"
