"""A-36: a question that names no drug (nor a class or condition with related drugs) has
its conditions for Tier-2's entity terms, so the label that names the condition it asks
about earns the entity score."""

import pytest

from pipeline.schema import QueryRetrievalIntent
from pipeline.scoring import boost_terms_for_query, condition_terms
from pipeline.settings import Tier2Settings
from tests.unit.helpers import hit, ids
from tests.unit.test_tier2 import rerank, scores_by_id

pytestmark = pytest.mark.unit

GENERAL = QueryRetrievalIntent(workflow="general")


def test_a36_condition_terms_as_named_and_as_written(vocabulary):
    terms = condition_terms("dapsone-induced methaemoglobinaemia - treatment", vocabulary)
    assert terms == ["methemoglobinemia", "methaemoglobinaemia"]
    assert condition_terms("Cabometyx dosage", vocabulary) == []


NODES = [
    hit(
        "metoclopramide-s1",
        text="Metoclopramide is indicated for diabetic gastroparesis and nausea.",
        primary_drugs=["metoclopramide"],
    ),
    hit(
        "methylene-blue-s1",
        text="Urelle is indicated for irritative voiding. Methylene blue injection is"
        " indicated for the treatment of acquired methemoglobinemia.",
        primary_drugs=["methylene blue"],
    ),
    hit("filler", text="Store below 25 C.", primary_drugs=["ritonavir"]),
]
SCORES = scores_by_id({"metoclopramide-s1": 0.9, "methylene-blue-s1": 0.6, "filler": 0.1})
QUESTION = "what treats drug-induced methaemoglobinaemia"


async def test_a36_the_label_that_names_the_condition_earns_the_entity_score(vocabulary):
    assert boost_terms_for_query(QUESTION, vocabulary) == []  # nothing else to score
    tuned = Tier2Settings(preset="tuned", condition_entity=True)
    after = await rerank(NODES, QUESTION, GENERAL, vocabulary, SCORES, tier2=tuned)
    assert ids(after.nodes)[0] == "methylene-blue-s1"
    parts = {item.node.node_id: item.score_parts for item in after.nodes}
    assert parts["methylene-blue-s1"]["entity"] > 0 and parts["metoclopramide-s1"]["entity"] == 0
    assert all(part["xdrug"] == 0.0 for part in parts.values())  # no drug to cross
    seed = Tier2Settings(preset="tuned", condition_entity=False)
    before = await rerank(NODES, QUESTION, GENERAL, vocabulary, SCORES, tier2=seed)
    assert ids(before.nodes)[0] == "metoclopramide-s1"


async def test_a36_a_named_drug_keeps_its_own_terms(vocabulary):
    question = "can metoclopramide cause methaemoglobinaemia"
    tuned = Tier2Settings(preset="tuned", condition_entity=True)
    after = await rerank(NODES, question, GENERAL, vocabulary, SCORES, tier2=tuned)
    parts = {item.node.node_id: item.score_parts for item in after.nodes}
    assert parts["metoclopramide-s1"]["entity"] > 0
    assert parts["methylene-blue-s1"]["entity"] == 0  # the condition is no term here


def test_a36_chosen_per_knowledge_base():
    settings = Tier2Settings(condition_entity=False, condition_entity_by_kb={"drug-kb": True})
    assert settings.for_scope(["drug-kb"]).condition_entity
    assert not settings.for_scope(["nfcorpus"]).condition_entity
    assert not settings.for_scope(["drug-kb", "nfcorpus"]).condition_entity  # no one choice
    assert not settings.for_scope(()).condition_entity  # unscoped: the default
    assert settings.for_scope(["nfcorpus"]) is settings
