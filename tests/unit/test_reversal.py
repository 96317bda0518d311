"""A-11: reversal questions, and fixed combinations' parts in the entity scores."""

import pytest

from pipeline.lexical import lexical_query_text
from pipeline.reversal import asks_for_reversal, reversal_entity_score
from pipeline.schema import QueryRetrievalIntent
from pipeline.scoring import (
    combination_parts,
    cross_drug_penalty,
    entity_match_score,
    primary_drug_names,
)
from pipeline.settings import LexicalSettings, Tier2Settings
from tests.unit.helpers import hit, ids
from tests.unit.test_tier2 import rerank, scores_by_id

pytestmark = pytest.mark.unit

DRUG = QueryRetrievalIntent(workflow="drug_entity")


@pytest.mark.parametrize(
    "query",
    [
        "antidote for dabigatran",
        "how to reverse dabigatran before emergency surgery",
        "reversal of rocuronium neuromuscular blockade",
        "Reversing apixaban in a bleeding patient",
        "what can undo the effects of heparin",
        # undo, inactivate, cancel out, switch ... off beside an overdose, a bleed
        # or an emergency
        "my mum overdosed on her dabigatran capsules, can the hospital undo it",
        "dabigatran toxicity needing emergency surgery, how to inactivate it",
        "she is bleeding badly, is there something that cancels out the blood thinner?",
        "dad on pradaxa has a brain bleed, what switches dabigatran off",
        "What switches off the effect of rocuronium in an emergency?",
        "Can a heparin overdose be undone?",
        # neutralise, stop the blood thinner working
        "on Eliquis with a major GI bleed: which medicine neutralises the anticoagulant?",
        "bleeding in his head, can the hospital stop the blood thinner working?",
    ],
)
def test_a11_reversal_cues(query):
    assert asks_for_reversal(query)


@pytest.mark.parametrize(
    "query",
    [
        "non-nucleoside reverse transcriptase inhibitor for HIV",
        "reversible cardiac myosin inhibitor",
        "dabigatran dose after hip replacement",
        "irreversible EGFR inhibitor",
        "can antioxidant-rich spices counteract the effects of a high-fat meal",
        "inactivated influenza vaccine for adults over 65",  # a vaccine's kind
        "switched to rivaroxaban off label, is that safe?",  # no switch ... off
        "switch from warfarin to apixaban, when to stop it off",
        # A-45's verbs with no overdose, bleed or emergency
        "Does ibuprofen cancel out the effect of my aspirin?",
        "Does grapefruit inactivate my simvastatin?",
        "Can I switch warfarin off before surgery?",
        "How do I undo the damage of years of ibuprofen on my stomach?",
        "can antacids neutralise stomach acid while on omeprazole",
        "I'm bleeding a lot on my period, will the pill stop it working",
    ],
)
def test_a11_not_reversal_cues(query):
    assert not asks_for_reversal(query)


def test_a11_entity_score_puts_the_agent_above_the_named_drug():
    drugs = ["dabigatran"]
    agent = hit("praxbind", text="Idarucizumab is a reversal agent for dabigatran.",
                primary_drugs=["idarucizumab"])
    own = hit("pradaxa", text="Pradaxa contains dabigatran.", primary_drugs=["dabigatran"])
    listed = hit("ondexxya", text="It reverses the effects of factor Xa inhibitors.",
                 primary_drugs=["andexanet alfa", "dabigatran"])
    other = hit("norvir", text="Norvir contains ritonavir.", primary_drugs=["ritonavir"])
    assert reversal_entity_score(agent.node, drugs) == 1.0
    assert reversal_entity_score(listed.node, drugs) == 1.0  # a substance besides the named
    assert reversal_entity_score(own.node, drugs) == 0.5
    assert reversal_entity_score(other.node, drugs) == 0.0
    assert reversal_entity_score(agent.node, []) == 0.0
    # a product named both by its substance and by its combination is on the subject
    zubsolv = hit("zubsolv", text="Zubsolv contains buprenorphine and naloxone.",
                  primary_drugs=["buprenorphine", "buprenorphine/naloxone"])
    assert reversal_entity_score(zubsolv.node, ["buprenorphine"]) == 0.5
    # R-T2-5 as for any question: the drug's own leaflet first
    assert entity_match_score(own.node, drugs) == 1.0
    assert entity_match_score(agent.node, drugs) == 0.75


@pytest.mark.parametrize("on", [True, False])
async def test_a11_reversal_question_opens_with_the_reversal_agent(vocabulary, on):
    query = "how to reverse dabigatran before emergency surgery"
    assert vocabulary.match_drug_entities(query) == ["dabigatran"]
    nodes = [
        hit("pradaxa-s3", text="Pradaxa: before surgery stop taking it.",
            primary_drugs=["dabigatran"]),
        hit("pradaxa-s1", text="Pradaxa contains dabigatran.", primary_drugs=["dabigatran"]),
        hit("praxbind-s1", text="Praxbind reverses the effect of dabigatran (Pradaxa).",
            primary_drugs=["idarucizumab"]),
        hit("filler", text="Store below 25 C."),
    ]
    outcome = await rerank(
        nodes, query, DRUG, vocabulary,
        scores_by_id({"pradaxa-s3": 0.95, "pradaxa-s1": 0.9, "praxbind-s1": 0.85, "filler": 0.1}),
        tier2=Tier2Settings(preset="tuned", reversal_agents=on),
    )
    order = ids(outcome.nodes)
    if on:
        assert order[0] == "praxbind-s1"
        assert "rerank_reversal_agents" in outcome.decisions
    else:
        assert order.index("praxbind-s1") == 2
        assert "rerank_reversal_agents" not in outcome.decisions
    similarities = [item.score_parts["similarity"] for item in outcome.nodes]
    assert similarities == sorted(similarities, reverse=True)


async def test_a11_skips_a10_the_named_drugs_are_not_the_answer(vocabulary):
    query = "reversal of apixaban or rivaroxaban"
    nodes = [
        hit("ondexxya", text="Ondexxya reverses apixaban or rivaroxaban.",
            primary_drugs=["andexanet alfa"]),
        hit("eliquis", text="Eliquis contains apixaban.", primary_drugs=["apixaban"]),
        hit("xarelto", text="Xarelto contains rivaroxaban.", primary_drugs=["rivaroxaban"]),
    ]
    outcome = await rerank(
        nodes, query, DRUG, vocabulary,
        scores_by_id({"ondexxya": 0.85, "eliquis": 0.9, "xarelto": 0.8}),
        tier2=Tier2Settings(preset="tuned"),
    )
    assert ids(outcome.nodes)[0] == "ondexxya"
    assert not any(d.startswith("rerank_cover") for d in outcome.decisions)


def test_combination_parts_and_primary_names():
    assert combination_parts("Nirmatrelvir and Ritonavir") == {"nirmatrelvir", "ritonavir"}
    assert combination_parts("dapagliflozin/metformin") == {"dapagliflozin", "metformin"}
    assert combination_parts("insulin glargine") == {"insulin glargine"}
    names = primary_drug_names({"primary_drugs": '["nirmatrelvir and ritonavir"]'})
    assert names == {
        "nirmatrelvir and ritonavir",
        "nirmatrelvir / ritonavir",
        "nirmatrelvir",
        "ritonavir",
    }
    assert primary_drug_names({}) == frozenset()


def test_a_combination_product_is_each_of_its_substances():
    paxlovid = hit("paxlovid", text="Paxlovid is used to treat COVID-19.",
                   primary_drugs=["nirmatrelvir and ritonavir"])
    assert entity_match_score(paxlovid.node, ["nirmatrelvir", "ritonavir"]) == 1.0
    assert cross_drug_penalty(paxlovid.node, ["ritonavir"]) == 0.0
    assert cross_drug_penalty(paxlovid.node, ["imatinib"]) == 1.0


@pytest.mark.parametrize("on", [True, False])
def test_a11_reversal_question_looks_for_the_words_labels_use(vocabulary, on):
    settings = LexicalSettings(reversal_words=on, word_form="as_written")
    text = lexical_query_text("antidote for dabigatran", vocabulary, settings)
    assert text.startswith("antidote for dabigatran")
    assert ("reversal" in text.split()) is on
    plain = lexical_query_text("dabigatran dose", vocabulary, settings)
    assert "reversal" not in plain.split() and "antidote" not in plain.split()


def test_a32_a_reversal_question_has_a_short_bm25_query(vocabulary):
    from pipeline.reversal import reversal_query

    long = "My teenager has taken too many paracetamol tablets. What's the antidote they give?"
    assert reversal_query(long, vocabulary) == "paracetamol antidote reversal reverse overdose"
    assert reversal_query("how to reverse Pradaxa and rivaroxaban", vocabulary) == (
        "Pradaxa rivaroxaban antidote reversal reverse overdose"
    )
    assert reversal_query("paracetamol dose for a child", vocabulary) is None  # no reversal
    assert reversal_query("what is the antidote", vocabulary) is None  # nothing named


async def test_a32_the_short_query_is_fused_into_the_leg_by_rrf(vocabulary):
    from pipeline.reversal import fuse_reversal_hits, reversal_hits

    async def with_reversal_leg(hits, query):  # what the BM25 leg does with the two
        return fuse_reversal_hits(hits, await reversal_hits(query, vocabulary, search))

    leg = [hit("own-1"), hit("own-2"), hit("own-3")]
    asked: list[str] = []

    async def search(words):  # the store's BM25 search, at the edge
        asked.append(words)
        return [hit("antidote"), hit("own-3")]

    fused = await with_reversal_leg(leg, "antidote for paracetamol")
    assert asked == ["paracetamol antidote reversal reverse overdose"]
    assert ids(fused)[0] == "own-3"  # in both lists
    # at most as many as the leg returned: the antidote takes the place of its last hit
    assert len(fused) == 3 and "antidote" in ids(fused)
    asked.clear()
    plain = await with_reversal_leg(leg, "paracetamol dose")
    assert ids(plain) == ["own-1", "own-2", "own-3"] and asked == []
