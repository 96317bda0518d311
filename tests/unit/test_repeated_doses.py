"""A-35: more ways of saying that more than a dose was taken ("injected his novorapid
twice by mistake", "got a double insulin dose", "after taking way too much"), and a
class overdose's other members on the subject of a reversal question, not its answer."""

import pytest

from pipeline.overdose import glossed_overdoses
from pipeline.reversal import asks_for_reversal, reversal_entity_score
from pipeline.schema import QueryRetrievalIntent
from pipeline.settings import Tier2Settings
from tests.unit.helpers import hit, ids
from tests.unit.test_tier2 import rerank, scores_by_id

pytestmark = pytest.mark.unit

DRUG = QueryRetrievalIntent(workflow="drug_entity")


@pytest.mark.parametrize(
    ("question", "glossed"),
    [
        # a dose repeated by mistake, said after the name
        (
            "my husband injected his novorapid twice by mistake, what can i give him",
            "my husband injected his novorapid (novorapid overdose, hypoglycemia) twice by"
            " mistake, what can i give him",  # treated by its effect's antidote
        ),
        (
            "accidently did my lantus shot twice tonight, what now",
            "accidently did my lantus shot (lantus overdose) twice tonight, what now",
        ),
        (
            "took my pradaxa twice this morning by accident and now there is blood in my pee",
            "took my pradaxa (pradaxa overdose) twice this morning by accident and now there"
            " is blood in my pee",
        ),
        # "after taking" too much
        (
            "passed out after taking way too much gliclazide",
            "passed out after taking way too much gliclazide (gliclazide overdose)",
        ),
        # "a double" after a verb of taking, "dose" with it
        (
            "swallowed a double dose of apixaban, nosebleed",
            "swallowed a double dose of apixaban (apixaban overdose), nosebleed",
        ),
        # no schedule after "twice", "had" and "given" with a mistake said
        (
            "I injected my novorapid twice a few minutes apart by mistake",
            "I injected my novorapid (novorapid overdose) twice a few minutes apart by mistake",
        ),
        (
            "he was given his apixaban twice by mistake",
            "he was given his apixaban (apixaban overdose) twice by mistake",
        ),
        (
            "took a double dose of morphine by accident, what reverses it",
            "took a double dose of morphine (morphine overdose, opioid overdose) by"
            " accident, what reverses it",
        ),
        # capitals are no part of the product's name
        (
            "I took my pradaxa TWICE by mistake",
            "I took my pradaxa (pradaxa overdose) TWICE by mistake",
        ),
        (
            "took my Eliquis Twice by mistake",
            "took my Eliquis (Eliquis overdose) Twice by mistake",
        ),
    ],
)
def test_a35_more_ways_to_say_an_overdose(vocabulary, question, glossed):
    assert glossed_overdoses(question, vocabulary) == glossed


@pytest.mark.parametrize(
    "question",
    [
        "I take my metformin twice a day, is that ok",
        "I inject my novorapid twice daily with meals",
        "took my apixaban twice today as my doctor said",  # no mistake said
        "by mistake I bought the wrong inhaler; I use my salbutamol twice per day",
        "was given a double room after my morphine dose",  # "double" is no amount of it
        "is it ok to take a double dose of ibuprofen",  # asks; nothing was taken
        "got a double prescription of apixaban from two doctors",  # no dose
        # a dose a clinician chose, or one's own prescribed double dose
        "I was given a double dose of omeprazole by my GP for my ulcer",
        "My dad took his double dose of furosemide as the GP said",
        "I took a double dose of clopidogrel as a loading dose, is bruising normal",
        "I took a double dose of my vitamin D as my GP said, side effects?",
        "I've got a double dose of levothyroxine on Sundays, is that normal",
        "I took my apixaban twice by mistake? No, as prescribed",
        # "twice" with no verb of taking before the name, a schedule, a negation, or the
        # mistake in another sentence
        "I take my tramadol twice, and accidentally took an extra ibuprofen",
        "I accidentally vomited after my levothyroxine, should I take levothyroxine twice",
        "took my sertraline twice as prescribed, accidentally broke a tablet",
        "took my methotrexate twice weekly, accidentally spilt it",
        "I never took my apixaban twice by mistake",
        "I haven't taken my apixaban twice by mistake, have I?",
        "I took my apixaban twice a day by mistake instead of once",  # a schedule, read
        "took my apixaban twice. Then I accidentally dropped the box",
    ],
)
def test_a35_no_overdose_read(vocabulary, question):
    assert glossed_overdoses(question, vocabulary) == question


def test_a35_a_repeated_dose_asks_no_treatment_by_itself(vocabulary):
    # A-30's gloss only: the drug's own leaflet says what to do after a double dose
    glossed = glossed_overdoses("accidentally took my metformin twice, what now", vocabulary)
    assert glossed == "accidentally took my metformin (metformin overdose) twice, what now"
    assert not asks_for_reversal(glossed)


@pytest.mark.parametrize(
    ("text", "listed", "score"),
    [
        # a chunk that names nothing of the question's stays at 0: a member is no floor
        ("How to store MST Continus: below 25 C.", ["morphine"], 0.0),
        # a combination stored as its substances holds a member
        ("Risk of opioid overdose with Percocet.", ["oxycodone", "acetaminophen"], 0.5),
        ("Targin: risk of opioid overdose.", ["oxycodone", "naloxone"], 0.5),
        # the antidote is no member
        ("Narcan for suspected opioid overdose.", ["naloxone"], 1.0),
    ],
)
def test_a35_the_member_rule_caps_a_named_chunk(text, listed, score):
    terms = ["oxycodone", "opioid overdose", "opioid overdosage"]
    node = hit("chunk", text=text, primary_drugs=listed).node
    assert reversal_entity_score(node, terms) == score


def test_a35_another_member_of_the_class_is_on_the_subject():
    terms = ["oxycodone", "opioid overdose", "opioid overdosage"]
    morphine = hit(
        "morphine-s2",
        text="Morphine can cause an opioid overdose; carry naloxone.",
        primary_drugs=["morphine"],
    ).node
    narcan = hit(
        "narcan-s1",
        text="Narcan is used for the emergency treatment of known or suspected opioid overdose.",
        primary_drugs=["naloxone"],
    ).node
    assert reversal_entity_score(morphine, terms) == 0.5
    assert reversal_entity_score(narcan, terms) == 1.0
    # without the class's terms morphine is no subject of an oxycodone question
    assert reversal_entity_score(morphine, ["oxycodone"]) == 0.0


async def test_a35_another_opioids_storage_chunk_stays_below_the_antidote(vocabulary):
    question = "took too many oxycodone tablets, what reverses it"
    glossed = glossed_overdoses(question, vocabulary)
    nodes = [
        hit(
            "narcan-howto",
            text="Narcan: how to give the nasal spray.",
            primary_drugs=["naloxone"],
        ),
        hit("morphine-store", text="Store below 25 C.", primary_drugs=["morphine"]),
        hit("tramadol-drive", text="Do not drive.", primary_drugs=["tramadol"]),
    ]
    scores = scores_by_id({"narcan-howto": 0.7, "morphine-store": 0.6, "tramadol-drive": 0.55})
    tuned = Tier2Settings(preset="tuned")
    after = await rerank(nodes, glossed, DRUG, vocabulary, scores, tier2=tuned)
    assert ids(after.nodes)[0] == "narcan-howto"
    assert all(item.score_parts["entity"] == 0.0 for item in after.nodes)


async def test_a35_the_antidote_outranks_another_opioids_leaflet(vocabulary):
    question = "husband took 3 times his oxycodone dose, breathing slow, what reverses it"
    glossed = glossed_overdoses(question, vocabulary)
    assert "opioid overdose" in glossed
    nodes = [
        hit(
            "morphine-s2",
            text="Morphine can cause an opioid overdose with slow breathing; carry naloxone.",
            primary_drugs=["morphine"],
        ),
        hit(
            "narcan-s1",
            text="Narcan is used for the emergency treatment of known or suspected opioid"
            " overdose.",
            primary_drugs=["naloxone"],
        ),
        hit("filler", text="Store below 25 C.", primary_drugs=["ritonavir"]),
    ]
    scores = scores_by_id({"morphine-s2": 0.95, "narcan-s1": 0.8, "filler": 0.1})
    tuned = Tier2Settings(preset="tuned")
    after = await rerank(nodes, glossed, DRUG, vocabulary, scores, tier2=tuned)
    assert ids(after.nodes)[0] == "narcan-s1"
    parts = {item.node.node_id: item.score_parts["entity"] for item in after.nodes}
    assert parts["morphine-s2"] == 0.5 and parts["narcan-s1"] == 1.0
