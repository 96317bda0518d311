"""A-34: an overdose the labels name by the drug's class ("opioid overdose"), and a
question that says an overdose and asks what treats it read as a reversal question."""

import pytest

from pipeline.overdose import glossed_overdoses
from pipeline.overdose_classes import CLASS_OVERDOSES, class_overdose_of, class_overdose_terms
from pipeline.reversal import asks_for_reversal, reversal_query
from pipeline.schema import QueryRetrievalIntent
from pipeline.settings import Tier2Settings
from tests.unit.helpers import hit, ids
from tests.unit.test_tier2 import rerank, scores_by_id

pytestmark = pytest.mark.unit

DRUG = QueryRetrievalIntent(workflow="drug_entity")


@pytest.mark.parametrize(
    "query",
    [
        # an overdose said in words, and any treatment cue
        "dihydrocodeine overdose treatment",
        "methanol intoxication treatment",
        "what medicine counteracts codeine poisoning",
        "he had an OD on heroin, treatment?",
        # "toxicity" only beside a strong treatment cue
        "fentanyl patch toxicity, what do paramedics give",
    ],
)
def test_a34_an_overdose_to_treat_asks_for_its_antidote(query):
    assert asks_for_reversal(query)


@pytest.mark.parametrize(
    "query",
    [
        "took a handful of her oxycodone, what do paramedics give",
        "husband took 3 times his oxycodone dose, what do they give",
        "took double his dose of pradaxa, is there a treatment",
        # more ways to say the amount, the treatment asked
        "sister necked a full box of panadol, what drip do they put you on in a&e",
        "took a load of tapentadol at a party, is there a rescue spray",
        "after i doubled my warfarin by accident, is vitamin k the thing that fixes it",
        "swallowed his whole week of methadone, is there a shot I can give",
        "she necked a full box of paracetamol, what IV drip do they put you on",
    ],
)
def test_a34_an_amount_says_an_overdose_through_a30s_gloss(vocabulary, query):
    # an amount taken says an overdose only before a drug's name, as A-30 reads it
    assert not asks_for_reversal(query)
    assert asks_for_reversal(glossed_overdoses(query, vocabulary))


@pytest.mark.parametrize(
    "query",
    [
        # the drug's own leaflet answers these
        "what are the signs of a morphine overdose",
        "took too much of my oxycodone, what should I do",
        "how much paracetamol is an overdose when treating a fever",
        # a treatment asked, no overdose said
        "what does tramadol treat",
        "taking methadone twice a day, is it a treatment for pain",
        "given twice daily, what does buprenorphine treat",
        "an antipsychotic injection given only twice a year for maintenance treatment",
        "can I take extra codeine to treat my cough",
        "take 1 x 500mg tablet, does it treat infection",
        "I had surgery twice, what treatment now",
        # the body's own, no drug taken; food, drink, an inhaler, a schedule
        "bone marrow makes too many red cells, how is it treated",
        "I took a handful of almonds, what can I use for indigestion",
        "had too much coffee, what can I use to calm down",
        "I took it 3x/day, what treats the side effects",
        # A-45's treatment cues with no overdose, or with a weak one, or a rescue inhaler
        "what drip do they put you on for dehydration",
        "is there a shot I can give for her migraine",
        "how do I fix my inhaler technique",
        "What pain medicines I can use without risking lithium toxicity?",
        "I think I overdosed on my salbutamol rescue inhaler, is my heart rate dangerous?",
        "I took my rescue inhaler twice, is that ok",
        # a count of tablets, not a multiple of the dose
        "took 2 x oxycodone 5mg as prescribed, what treats the itching",
        "I took 2x paracetamol, what treats a hangover",
        "took double my zopiclone and couldn't wake up this morning, is that normal",
        "I was intoxicated last night, what do doctors give for a hangover",
        "sun poisoning treatment",
        # no overdose in these words: a symptom, a strength, sepsis, food, a plant, a nut
        "I had double vision, what treats it",
        "taking extra strength tylenol to treat a headache",
        "how is blood-poisoning treated",
        "food poisoning treatment",
        "what treats poison ivy rash",
        "does eating a handful of almonds treat high cholesterol",
        # OD as once a day, the right eye, an optometrist; ODT a tablet
        "take 20mg o.d., what does it treat",
        "amlodipine 5mg OD for treatment of hypertension",
        "my OD said to use these drops to treat dry eye",
        "is an ODT tablet a treatment for nausea",
        # "toxicity" with a weak treatment cue: a side effect as often as an overdose
        "treatment of renal toxicity from NSAIDs",
        "do antioxidants counteract chemotherapy toxicity",
        "can antioxidant-rich spices counteract the effects of a high-fat meal",
    ],
)
def test_a34_no_antidote_asked(vocabulary, query):
    # the later stages read the question with A-30's gloss
    assert not asks_for_reversal(glossed_overdoses(query, vocabulary))


@pytest.mark.parametrize(
    ("question", "glossed"),
    [
        # where a name is cued or followed by its overdose, only that name gets the class
        (
            "antidote for benzodiazepine overdose in a patient on methadone maintenance",
            "antidote for benzodiazepine overdose in a patient on methadone maintenance",
        ),
        (
            "took a handful of my paracetamol, he is also on tramadol, what treatment",
            "took a handful of my paracetamol (paracetamol overdose), he is also on"
            " tramadol, what treatment",
        ),
        # a reversal cue about something else the opioid did
        (
            "how to reverse constipation caused by oxycodone",
            "how to reverse constipation caused by oxycodone",
        ),
        # the gloss goes after a word joined by a hyphen, a slash or an apostrophe
        (
            "took too much tramadol-paracetamol, antidote?",
            "took too much tramadol-paracetamol (tramadol overdose, opioid overdose), antidote?",
        ),
        (
            "oxycodone/acetaminophen overdose treatment",
            "oxycodone/acetaminophen overdose (opioid overdose) treatment",
        ),
        # no gloss across a sentence's end
        (
            "took too much morphine/codeine. What reverses it?",
            "took too much morphine/codeine (morphine overdose, opioid overdose). What"
            " reverses it?",
        ),
        # the drug reverses something, or the cue's object is something else
        (
            "took morphine OD for years, what reverses the constipation",
            "took morphine OD for years, what reverses the constipation",
        ),
        (
            "what reverses this rash from morphine",
            "what reverses this rash from morphine",
        ),
        (
            "reversal of opioid-induced constipation with oxycodone/naloxone",
            "reversal of opioid-induced constipation with oxycodone/naloxone",
        ),
        (
            "can kidney toxicity from NSAIDs be reversed? I also take tramadol",
            "can kidney toxicity from NSAIDs be reversed? I also take tramadol",
        ),
        # the overdose said is of something else: insulin's, read by its effect
        (
            "overdosed on insulin, also on morphine, antidote",
            "overdosed on insulin (insulin overdose, hypoglycemia), also on morphine, antidote",
        ),
        (
            "injected way too much insulin, what can family give for the severe hypo",
            "injected way too much insulin (insulin overdose, hypoglycemia), what can family"
            " give for the severe hypo",
        ),
        (
            "rubbed too much benzocaine gel on her gums, lips blue, what's the treatment",
            "rubbed too much benzocaine (benzocaine overdose, methemoglobinemia) gel on her"
            " gums, lips blue, what's the treatment",
        ),
        (
            "does morphine reverse breathlessness in COPD",
            "does morphine reverse breathlessness in COPD",
        ),
        (
            "tramadol for pain, what reverses nerve damage",
            "tramadol for pain, what reverses nerve damage",
        ),
        # a cue with no object, or a pronoun for one, reverses what was named
        (
            "child swallowed a buprenorphine tablet and is very sleepy, what's the antidote",
            "child swallowed a buprenorphine tablet (opioid overdose) and is very sleepy,"
            " what's the antidote",
        ),
        (
            "barely breathing after hydrocodone - what drug reverses it?",
            "barely breathing after hydrocodone (opioid overdose) - what drug reverses it?",
        ),
        # the class once per question
        (
            "Morphine OxyContin overdose treatment",
            "Morphine OxyContin overdose (opioid overdose) treatment",
        ),
        # the question names the class, or asks to reverse the name itself
        (
            "pt on morphine PCA, not rousable, what reverses the opioid",
            "pt on morphine PCA (opioid overdose), not rousable, what reverses the opioid",
        ),
        ("antidote for morphine", "antidote for morphine (opioid overdose)"),
        ("fentanyl OD reversal", "fentanyl OD (opioid overdose) reversal"),
        # A-30's gloss makes the overdose that the treatment cue then reads
        (
            "swallowed a whole packet of her oxycodone, what do paramedics give",
            "swallowed a whole packet of her oxycodone (oxycodone overdose, opioid"
            " overdose), what do paramedics give",
        ),
    ],
)
def test_a34_which_names_get_the_class_overdose(vocabulary, question, glossed):
    assert glossed_overdoses(question, vocabulary) == glossed


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
        # A-46: overdoses the antidotes' labels name by their effect
        ("insulin", "hypoglycemia"),
        ("insulin aspart", "hypoglycemia"),
        ("insulin degludec/liraglutide", "hypoglycemia"),
        ("gliclazide", "hypoglycemia"),
        ("sitagliptin", None),  # no hypoglycaemia of its own
        ("glucagon", None),  # the antidote
        ("dapsone", "Methemoglobinemia"),
        ("lidocaine/prilocaine", "Methemoglobinemia"),
        ("methylene blue", None),
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


async def test_a46_glucagon_answers_an_insulin_overdose_over_the_insulins_own_leaflet(
    vocabulary,
):
    question = "husband injected his novorapid twice by mistake, what emergency injection"
    glossed = glossed_overdoses(question, vocabulary)
    assert "(novorapid overdose, hypoglycemia)" in glossed and asks_for_reversal(glossed)
    nodes = [
        hit(
            "novorapid-s3",
            text="If you take more NovoRapid than you should, you may get severe "
            "hypoglycaemia; someone can give you glucagon.",
            primary_drugs=["insulin aspart"],
        ),
        hit(
            "ogluo-s1",
            text="Ogluo is used to treat severe hypoglycaemia in people with diabetes.",
            primary_drugs=["glucagon"],
        ),
        hit("filler", text="Store below 25 C.", primary_drugs=["ritonavir"]),
    ]
    scores = scores_by_id({"novorapid-s3": 0.9, "ogluo-s1": 0.6, "filler": 0.1})
    tuned = Tier2Settings(preset="tuned")
    after = await rerank(nodes, glossed, DRUG, vocabulary, scores, tier2=tuned)
    assert ids(after.nodes)[0] == "ogluo-s1"
    parts = {item.node.node_id: item.score_parts["entity"] for item in after.nodes}
    # the insulin's own leaflet names the effect too: on the subject, not the answer
    assert parts["ogluo-s1"] == 1.0 and parts["novorapid-s3"] == 0.5


def test_a46_the_short_bm25_query_carries_the_labels_words(vocabulary):
    # the glucagon labels say neither insulin nor antidote: their words join A-32's query
    glossed = glossed_overdoses(
        "injected far too much insulin, which emergency injection", vocabulary
    )
    short = reversal_query(glossed, vocabulary)
    assert short is not None and "severe hypoglycaemia" in short
    plain = reversal_query("antidote for paracetamol", vocabulary)
    assert plain == "paracetamol antidote reversal reverse overdose"  # no class: as A-32
