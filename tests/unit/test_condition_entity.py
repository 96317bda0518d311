"""A-36: a question that names no drug (nor a class or condition with related drugs) has
its conditions for Tier-2's entity terms, so the label that names the condition it asks
about earns the entity score."""

import time
from pathlib import Path

import numpy as np
import pytest

from pipeline.schema import QueryRetrievalIntent
from pipeline.scoring import boost_terms_for_query, condition_terms
from pipeline.settings import PipelineSettings, Tier2Settings, load_yaml
from tests.unit.helpers import hit, ids
from tests.unit.test_tier2 import rerank, scores_by_id

pytestmark = pytest.mark.unit

GENERAL = QueryRetrievalIntent(workflow="general")
PROFILE = Path(__file__).resolve().parents[2] / "configs" / "profiles" / "default.yaml"


def test_a36_condition_terms_as_named_and_as_written(vocabulary):
    terms = condition_terms("drug-induced methaemoglobinaemia - treatment", vocabulary)
    assert terms == ["methemoglobinemia", "methaemoglobinaemia"]
    assert condition_terms("Cabometyx dosage", vocabulary) == []
    # a gene target may stand beside the condition; the gene is no condition term
    terms = condition_terms("CD123-directed therapy for a rare neoplasm", vocabulary)
    assert terms == ["neoplasm"]


@pytest.mark.parametrize(
    "question",
    [
        "dapsone-induced methaemoglobinaemia - treatment",  # a drug
        "is co-codamol safe if I have asthma",  # a medicine the vocabulary types other
        "insulin for type 1 diabetes",
    ],
)
def test_a36_no_condition_terms_beside_another_entity(vocabulary, question):
    assert condition_terms(question, vocabulary) == []


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
SCORES = {"metoclopramide-s1": 0.9, "methylene-blue-s1": 0.6, "filler": 0.1}
QUESTION = "what treats drug-induced methaemoglobinaemia"


async def test_a36_the_label_that_names_the_condition_earns_the_entity_score(vocabulary):
    assert boost_terms_for_query(QUESTION, vocabulary) == []  # nothing else to score
    tuned = Tier2Settings(preset="tuned", condition_entity=True)
    after = await rerank(NODES, QUESTION, GENERAL, vocabulary, scores_by_id(SCORES), tier2=tuned)
    assert ids(after.nodes)[0] == "methylene-blue-s1"
    parts = {item.node.node_id: item.score_parts for item in after.nodes}
    assert parts["methylene-blue-s1"]["entity"] > 0 and parts["metoclopramide-s1"]["entity"] == 0
    assert all(part["xdrug"] == 0.0 for part in parts.values())  # no drug to cross
    seed = Tier2Settings(preset="tuned", condition_entity=False)
    before = await rerank(NODES, QUESTION, GENERAL, vocabulary, scores_by_id(SCORES), tier2=seed)
    assert ids(before.nodes)[0] == "metoclopramide-s1"


async def test_a36_a_named_drug_keeps_its_own_terms(vocabulary):
    question = "can metoclopramide cause methaemoglobinaemia"
    tuned = Tier2Settings(preset="tuned", condition_entity=True)
    after = await rerank(NODES, question, GENERAL, vocabulary, scores_by_id(SCORES), tier2=tuned)
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


async def test_a36_no_chunk_naming_the_condition_changes_nothing(vocabulary):
    # the entity part joins the reachable score only where a chunk can earn it
    question = "what treats hereditary angioedema attacks"
    scores = scores_by_id(SCORES)
    on = Tier2Settings(preset="tuned", condition_entity=True)
    off = Tier2Settings(preset="tuned", condition_entity=False)
    with_it = await rerank(NODES, question, GENERAL, vocabulary, scores, tier2=on)
    without = await rerank(NODES, question, GENERAL, vocabulary, scores, tier2=off)
    assert [i.score_parts["similarity"] for i in with_it.nodes] == [
        i.score_parts["similarity"] for i in without.nodes
    ]
    assert "rerank_condition_entity" not in with_it.decisions


async def test_a36_not_in_the_chemical_workflow(vocabulary):
    # R-T2-9 picks its nodes by entity score: a condition must not put them there
    chemical = QueryRetrievalIntent(workflow="chemical")
    on = Tier2Settings(preset="tuned", condition_entity=True)
    after = await rerank(NODES, QUESTION, chemical, vocabulary, scores_by_id(SCORES), tier2=on)
    assert all(item.score_parts["entity"] == 0 for item in after.nodes)


def test_a36_the_default_profile_chooses_it_for_the_drug_kb_only():
    settings = PipelineSettings(**load_yaml(PROFILE)["pipeline"]).tier2
    assert settings.for_scope(["drug-kb"]).condition_entity
    assert not settings.for_scope(["nfcorpus"]).condition_entity


async def test_a36_the_tier2_stage_chooses_it_for_the_request_scope(vocabulary):
    from pipeline.context import SearchContext
    from pipeline.embeddings import EmbeddingService
    from pipeline.schema import ScopeFilter, SearchRequest
    from pipeline.tier2_stage import Tier2Stage

    class FixedScores:  # the cross-encoder replica, at the edge: scores by text
        async def score(self, query, texts, titles):
            by_text = {item.node.text: SCORES[item.node.node_id] for item in NODES}
            return np.array([by_text[text] for text in texts], dtype=np.float32)

    settings = PipelineSettings(
        tier2={"preset": "tuned", "condition_entity_by_kb": {"drug-kb": True}}
    )
    stage = Tier2Stage(
        settings, EmbeddingService({}, settings), vocabulary, FixedScores(), None, None
    )

    async def first(kb_names):
        context = SearchContext(
            SearchRequest(query=QUESTION),
            QUESTION,
            GENERAL,
            ScopeFilter(kb_names=kb_names),
            0.3,
            5,
            None,
            time.monotonic() + 60,
        )
        return ids(await stage.rank(context, list(NODES), []))[0]

    assert await first(("drug-kb",)) == "methylene-blue-s1"
    assert await first(("nfcorpus",)) == "metoclopramide-s1"
