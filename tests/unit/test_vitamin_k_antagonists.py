"""A-50: a vitamin K antagonist's overdose, which the phytonadione label names only as
"interference with vitamin K activity", and an INR of 5 or more as an overdose's words."""

import pytest

from pipeline.overdose import glossed_overdoses
from pipeline.overdose_classes import class_overdose_of, overdose_told_by_result
from pipeline.reversal import asks_for_reversal, reversal_query
from pipeline.schema import QueryRetrievalIntent
from pipeline.settings import Tier2Settings
from tests.unit.helpers import hit, ids
from tests.unit.test_tier2 import rerank, scores_by_id

pytestmark = pytest.mark.unit

DRUG = QueryRetrievalIntent(workflow="drug_entity")
CONDITION = "acquired coagulation factor deficiency"


@pytest.mark.parametrize(
    ("canonical", "condition"),
    [
        ("warfarin", "Acquired coagulation factor deficiency"),
        ("acenocoumarol", "Acquired coagulation factor deficiency"),
        ("phenprocoumon", "Acquired coagulation factor deficiency"),
        ("phenindione", "Acquired coagulation factor deficiency"),
        ("apixaban", None),  # a factor Xa inhibitor: andexanet, not vitamin K
        ("dabigatran etexilate", None),
        ("phytonadione", None),  # the antidote
    ],
)
def test_a50_class_overdose_of_a_vitamin_k_antagonist(canonical, condition):
    assert class_overdose_of(canonical) == condition


@pytest.mark.parametrize(
    "text",
    [
        "INR came back 9",
        "her INR came back at 9, gums bleeding",
        "INR is 12 today",
        "my inr 7",
        "INR 5.5.",
        "INR: 6.2",
        "INR=9",
        "INR >10",
        "INR above 9",
        "her INR has risen to 7",
        "supratherapeutic INR",
    ],
)
def test_a50_an_inr_of_5_or_more_says_a_warfarin_overdose(text):
    assert overdose_told_by_result("warfarin", text)
    assert not overdose_told_by_result("apixaban", text)  # no such result for its class


@pytest.mark.parametrize(
    "text",
    [
        "INR 2.5 target on warfarin",
        "INR of 4.8",
        "INR between 2 and 3",
        "INR 5% higher with the new brand",
        "an INR test every 4 weeks",
        "recheck INR 7 days after a dose change",
        "INR of 10 days",
        "INR at 9am",
        "INR 12/05",
        "INR 5 minutes",
        "INR 5,000",
    ],
)
def test_a50_an_inr_in_range_a_time_or_a_date_says_none(text):
    assert not overdose_told_by_result("warfarin", text)


@pytest.mark.parametrize(
    "question",
    [
        "toddler may have overdosed on grandma's warfarin tablets, what fixes the clotting",
        "mum is on warfarin and her INR came back at 9, gums bleeding. what will the dr give her",
        "too many sintrom tablets, what is the antidote",
        # the result after a capitalised word stays the result, not the name's tail
        "warfarin INR 9, what do paramedics give",
        "Coumadin INR came back 9, how is it treated",
    ],
)
def test_a50_the_overdose_gets_its_class_and_the_labels_words(vocabulary, question):
    glossed = glossed_overdoses(question, vocabulary)
    assert CONDITION in glossed and asks_for_reversal(glossed)
    short = reversal_query(glossed, vocabulary)
    assert short is not None and "interference with vitamin k activity" in short


@pytest.mark.parametrize(
    "question",
    [
        "warfarin dose for atrial fibrillation",
        "my INR was 2.4, can I keep taking warfarin with cranberry juice",
        "what reverses apixaban after too many tablets",
        "INR 5 days after starting warfarin for DVT treatment",
        "warfarin treatment: recheck INR 7 days after a dose change",
    ],
)
def test_a50_no_class_where_no_vitamin_k_antagonist_overdose(vocabulary, question):
    assert CONDITION not in glossed_overdoses(question, vocabulary)


@pytest.mark.parametrize(
    "question",
    [
        "cirrhosis with INR of 6, what treatment",
        "INR 6 in a child with rat poison, treatment",
    ],
)
def test_a50_a_high_inr_with_no_vitamin_k_antagonist_asks_no_reversal(vocabulary, question):
    assert not asks_for_reversal(glossed_overdoses(question, vocabulary))


async def test_a50_phytonadione_answers_a_warfarin_overdose(vocabulary):
    question = "INR came back 9 after i doubled my warfarin by accident, what do they give"
    glossed = glossed_overdoses(question, vocabulary)
    nodes = [
        hit(
            "warfarin-s3",
            text="If you take more warfarin than you should, you may bleed; your INR "
            "will be checked.",
            primary_drugs=["warfarin"],
        ),
        hit(
            "phytonadione-s1",
            text="Phytonadione is indicated in coagulation disorders due to faulty "
            "formation of factors II, VII, IX and X when caused by vitamin K deficiency "
            "or interference with vitamin K activity.",
            primary_drugs=["phytonadione"],
        ),
        hit("filler", text="Store below 25 C.", primary_drugs=["ritonavir"]),
    ]
    scores = scores_by_id({"warfarin-s3": 0.9, "phytonadione-s1": 0.5, "filler": 0.1})
    tuned = Tier2Settings(preset="tuned")
    after = await rerank(nodes, glossed, DRUG, vocabulary, scores, tier2=tuned)
    assert ids(after.nodes)[0] == "phytonadione-s1"
    # without A-50's class the label names nothing the question does
    plain = glossed_overdoses(question, vocabulary, class_overdoses=False)
    before = await rerank(nodes, plain, DRUG, vocabulary, scores, tier2=tuned)
    assert ids(before.nodes)[0] != "phytonadione-s1"


@pytest.mark.parametrize("name", ["Konakion", "phylloquinone", "phytomenadione", "vitamin K1"])
def test_a50_vitamin_k1_is_one_drug_row(vocabulary, name):
    # the synonym table's DrugBank row of vitamin K1 merges into the FDA label's drug
    (match,) = vocabulary.find(f"{name} after a warfarin overdose")[:1]
    assert match.entity.canonical == "phytonadione" and match.surface == name
