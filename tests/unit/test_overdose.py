"""A-30: an overdose said in other words is glossed as one (``pipeline.overdose``)."""

import pytest

from pipeline.lay_names import glossed_lay_names
from pipeline.overdose import glossed_overdoses, overdose_glosses

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("question", "glossed", "drug"),
    [
        (
            "My son has taken too many paracetamol tablets, what's the antidote?",
            "My son has taken too many paracetamol tablets (paracetamol overdose), what's"
            " the antidote?",
            "acetaminophen",
        ),
        (
            "Gran doubled up on her apixaban and is bleeding",
            "Gran doubled up on her apixaban (apixaban overdose) and is bleeding",
            "apixaban",
        ),
        (
            "swallowed a whole packet of grandma\u2019s warfarin",
            "swallowed a whole packet of grandma\u2019s warfarin (warfarin overdose)",
            "warfarin",
        ),
        (
            "took several extra Pradaxa capsules",
            "took several extra Pradaxa capsules (Pradaxa overdose)",
            "dabigatran",
        ),
        ("he ODed on fentanyl", "he ODed on fentanyl (fentanyl overdose)", "fentanyl"),
        (
            "she's had way too much morphine",
            "she's had way too much morphine (morphine overdose)",
            "morphine",
        ),
        # "extra", "necked", "a week's worth of", "a load of", "doubled", a weekly
        # dose taken daily
        (
            "dad took extra oxycodone on top of his patches",
            "dad took extra oxycodone (oxycodone overdose) on top of his patches",
            "oxycodone",
        ),
        (
            "sister necked a full box of panadol",
            "sister necked a full box of panadol (panadol overdose)",
            "acetaminophen",
        ),
        (
            "swallowed a whole weeks worth of her dabigatran capsules in one go",
            "swallowed a whole weeks worth of her dabigatran capsules (dabigatran overdose)"
            " in one go",
            "dabigatran",
        ),
        (
            "teenager took a load of tapentadol at a party",
            "teenager took a load of tapentadol (tapentadol overdose) at a party",
            "tapentadol",
        ),
        (
            "INR 9 after i doubled my warfarin by accident",
            "INR 9 after i doubled my warfarin (warfarin overdose) by accident",
            "warfarin",
        ),
        (
            "gran took her methotrexate every day instead of once a week",
            "gran took her methotrexate (methotrexate overdose) every day instead of once a"
            " week",
            "methotrexate",
        ),
        # a child "got into" a medicine
        (
            "toddler got into the calpol and drank half the bottle",
            "toddler got into the calpol (calpol overdose) and drank half the bottle",
            "acetaminophen",
        ),
        # the gloss follows the strength and the rest of the product's name
        (
            "took too many Nurofen Plus 200mg tablets last night",
            "took too many Nurofen Plus 200mg tablets (Nurofen overdose) last night",
            "ibuprofen",
        ),
    ],
)
def test_a_drug_taken_beyond_its_dose_is_glossed_with_its_overdose(
    vocabulary, question, glossed, drug
):
    assert glossed_overdoses(question, vocabulary) == glossed
    # the drug stays an entity: the antidote's label names it
    assert drug in vocabulary.match_drug_entities(glossed)


def test_an_overdose_the_vocabulary_names_as_a_condition_reads_as_that_condition(vocabulary):
    # "heroin overdose" is the lay name of "opioid overdose": the naloxone labels name the
    # condition, not heroin, so heroin is no entity of the question any more
    question = "friend overdosed on heroin, what reverses it"
    assert vocabulary.match_drug_entities(question) == ["heroin"]
    glossed = glossed_overdoses(question, vocabulary)
    assert glossed == "friend overdosed on heroin overdose, what reverses it"
    assert [m.entity.canonical for m in vocabulary.find(glossed)] == ["opioid overdose"]
    assert "(opioid overdose)" in glossed_lay_names(glossed, vocabulary)


@pytest.mark.parametrize(
    "question",
    [
        "what is the antidote for paracetamol overdose",  # already says it
        # a missed dose: the leaflet's "do not take a double dose"
        "should I double up on my apixaban if I missed a dose?",
        "doubled up on my metformin after forgetting yesterday's",
        # nothing was taken: asking, the body's own, a dose to taper
        "can I take a few extra paracetamol if the pain is bad",
        "my body makes too much cortisol",
        "I'm on too much prednisolone, how do I taper",
        "I don't want to take too much ibuprofen",
        "took too many side effects from paracetamol",  # the cue is about other words
        # a course, not an amount; a dose doubled as advised; a weekly dose asked
        "took a month of metformin before it worked",
        "had a week of amoxicillin for a chest infection",
        "I doubled my sertraline as my GP advised, what side effects",
        "can I take methotrexate daily instead of weekly?",
        "The nurse gave extra morphine after surgery, what do they give for the itching?",
        "My mum takes extra vitamin D in winter",
        "I've had a week's worth of amoxicillin, do I need more?",
        "I took my whole week of amoxicillin like the GP said",
        "My doctor doubled my sertraline, what side effects",
        "I take methotrexate every day instead of once a week as prescribed",
        "Can I take alendronic acid daily instead of once a week?",
        "How do I reverse insulin resistance?",  # insulin only where overdosed
        "Is there an antidote for insulin allergy?",
        "I got into the habit of taking ibuprofen daily, is it safe",  # no amount
        "I got into trouble with codeine, what helps withdrawal",
    ],
)
def test_no_gloss_without_an_overdose_taken(vocabulary, question):
    assert overdose_glosses(question, vocabulary) == []
    assert glossed_overdoses(question, vocabulary) == question


@pytest.mark.parametrize(
    ("question", "glossed"),
    [
        # A-30's cue and a reversal question: the drug's overdose and its class's
        (
            "took too many of her oxycodone tablets, is there an antidote?",
            "took too many of her oxycodone tablets (oxycodone overdose, opioid overdose),"
            " is there an antidote?",
        ),
        # the overdose said after the name: the class's condition only
        (
            "is there an injection that reverses hydromorphone toxicity",
            "is there an injection that reverses hydromorphone toxicity (opioid overdose)",
        ),
        # a multiple of the dose is A-30's cue too (A-34)
        (
            "husband took 3 times his tramadol dose, breathing slow, what do paramedics give",
            "husband took 3 times his tramadol dose (tramadol overdose, opioid overdose),"
            " breathing slow, what do paramedics give",
        ),
        # a product form or a fixed combination whose substance is an opioid
        (
            "child chewed a fentanyl patch, what treatment is there for the overdose",
            "child chewed a fentanyl patch (opioid overdose), what treatment is there for"
            " the overdose",
        ),
    ],
)
def test_a34_an_opioid_overdose_to_treat_also_names_the_class_overdose(
    vocabulary, question, glossed
):
    assert glossed_overdoses(question, vocabulary) == glossed
    drugs = vocabulary.match_drug_entities(glossed)
    assert drugs and drugs == vocabulary.match_drug_entities(question)  # the drug stays
    assert "opioid overdose" in [m.entity.canonical for m in vocabulary.find(glossed)]
    # the seed's reading (A-30 only) adds no class
    assert "opioid overdose" not in glossed_overdoses(question, vocabulary, False)


@pytest.mark.parametrize(
    "question",
    [
        # the drug's own leaflet answers these: no treatment asked
        "what are the signs of a morphine overdose",
        "took too much of my oxycodone, what should I do",
        "is it dangerous to take double my tramadol dose",
        "I took 2x tramadol as prescribed, what treats the itching",  # tablets, no dose
        # a treatment asked, no overdose said: the opioid's own indications
        "what does oxycodone treat",
        "what do doctors use fentanyl patches for",
        # an overdose to treat, no opioid: no class names its overdose
        "took too many paracetamol tablets, also on codeine daily, what treatment is there",
    ],
)
def test_a34_no_class_overdose_without_an_opioid_overdose_to_treat(vocabulary, question):
    glossed = glossed_overdoses(question, vocabulary)
    assert "opioid overdose" not in glossed
