"""R-T1-1..3: per-plan cosine rerank with entity filter."""

import numpy as np
import pytest

from pipeline.rerank import entity_filter, tier1_encoder_for, tier1_rerank
from pipeline.schema import QueryRetrievalIntent
from pipeline.settings import Tier1Settings
from tests.unit.helpers import hit, ids

pytestmark = pytest.mark.unit

ENTITY = QueryRetrievalIntent(workflow="drug_entity", require_entity_match=True)
GENERAL = QueryRetrievalIntent(workflow="general", require_entity_match=False)


def test_r_t1_1_encoder_per_collection():
    settings = Tier1Settings()
    assert tier1_encoder_for("biomed_text", settings) == "pubmedbert"
    assert tier1_encoder_for("chemical", settings) == "molformer"
    assert tier1_encoder_for("medcpt_text", settings) is None


async def test_r_t1_1_other_collections_abstain_unchanged():
    nodes = [hit("b", score=0.1), hit("a", score=0.9)]

    async def never(*_):
        raise AssertionError("no encoder call for an abstaining collection")

    ranked, decision = await tier1_rerank(
        nodes, "medcpt_text", ENTITY, ["x"], Tier1Settings(), never, never
    )
    assert ranked == nodes and decision == "tier1_abstain"


def test_r_t1_2_entity_filter_keeps_entity_or_term_hits():
    nodes = [
        hit("meta", primary_drugs=["olaparib"]),
        hit("text", text="olaparib tablets"),
        hit("path", path="leaflets/olaparib.pdf"),
        hit("late", text="x" * 600 + " olaparib"),
        hit("none", text="nothing relevant"),
    ]
    assert ids(entity_filter(nodes, ENTITY, ["olaparib"])) == ["meta", "text", "path"]


@pytest.mark.parametrize(
    ("keeps_rest", "order"),
    [(True, ["text", "path", "none", "late"]), (False, ["text", "path"])],
)
async def test_a33_r_t1_2_puts_the_entity_hits_first_and_keeps_the_rest(keeps_rest, order):
    # "topiramate knocks me out ... what other preventive treatments": the answer's label
    # need not name topiramate; the seed drops it, A-33 ranks it after the named ones
    nodes = [
        hit("none", text="migraine prevention injection"),
        hit("text", text="olaparib tablets"),
        hit("late", text="x" * 600 + " olaparib"),
        hit("path", path="leaflets/olaparib.pdf"),
    ]
    settings = Tier1Settings(cosine_sort=False, entity_filter_keeps_rest=keeps_rest)

    async def never(*_):
        raise AssertionError("no encoder call without the cosine sort")

    ranked, decision = await tier1_rerank(
        nodes, "biomed_text", ENTITY, ["olaparib"], settings, never, never
    )
    assert ids(ranked) == order
    assert decision == "tier1_entity_filter"
    assert Tier1Settings().entity_filter_keeps_rest  # A-33 is the default


@pytest.mark.parametrize(
    ("keeps_rest", "order"), [(True, ["path", "text", "none"]), (False, ["path", "text"])]
)
async def test_a33_with_the_cosine_sort_the_named_group_still_comes_first(keeps_rest, order):
    # "none" has the best cosine: sorting the joined list would undo R-T1-2
    vectors = {"none": [1.0, 0.0], "text": [0.0, 1.0], "path": [0.6, 0.8]}
    nodes = [
        hit("text", text="olaparib tablets"),
        hit("none", text="nothing relevant"),
        hit("path", path="leaflets/olaparib.pdf"),
    ]
    settings = Tier1Settings(cosine_sort=True, entity_filter_keeps_rest=keeps_rest)

    async def query_vector(role):
        return np.array([1.0, 0.0], dtype=np.float32)

    async def node_vectors(role, items):
        return np.array([vectors[item.node.node_id] for item in items], dtype=np.float32)

    ranked, decision = await tier1_rerank(
        nodes, "biomed_text", ENTITY, ["olaparib"], settings, query_vector, node_vectors
    )
    # each group sorted by its own cosine: "path" (0.6) before "text" (0.0)
    assert ids(ranked) == order
    assert decision == "tier1_cosine:pubmedbert"


def test_r_t1_2_filter_only_when_required_and_terms_and_non_empty():
    nodes = [hit("none", text="nothing")]
    assert entity_filter(nodes, GENERAL, ["olaparib"]) == nodes
    assert entity_filter(nodes, ENTITY, []) == nodes
    assert entity_filter(nodes, ENTITY, ["olaparib"]) == nodes  # empty result: not applied


async def test_r_t1_2_runs_only_for_the_kbs_that_chose_it():
    nodes = [hit("none", text="nothing relevant"), hit("text", text="olaparib tablets")]
    settings = Tier1Settings(
        cosine_sort=False,
        entity_filter=False,
        entity_filter_by_kb={"labels": True},
        entity_filter_keeps_rest=False,
    )

    async def never(*_):
        raise AssertionError("no encoder call without the cosine sort")

    async def rerank(kb_names):
        ranked, decision = await tier1_rerank(
            nodes, "biomed_text", ENTITY, ["olaparib"], settings, never, never, kb_names
        )
        return ids(ranked), decision

    assert await rerank(("labels",)) == (["text"], "tier1_entity_filter")
    # unscoped: the profile's default (off), and the trace says no filter ran
    assert await rerank(()) == (["none", "text"], "tier1_fused_order")
    assert await rerank(("labels", "papers")) == (["none", "text"], "tier1_fused_order")


async def test_r_t1_3_cosine_rerank_by_dot_product():
    vectors = {"a": [1.0, 0.0], "b": [0.6, 0.8], "c": [0.0, 1.0]}
    nodes = [hit("c", score=0.9), hit("a", score=0.1), hit("b", score=0.5)]

    async def query_vector(role):
        assert role == "pubmedbert"
        return np.array([0.0, 1.0], dtype=np.float32)

    async def node_vectors(role, items):
        return np.array([vectors[item.node.node_id] for item in items], dtype=np.float32)

    ranked, decision = await tier1_rerank(
        nodes, "biomed_text", GENERAL, [], Tier1Settings(), query_vector, node_vectors
    )
    assert ids(ranked) == ["c", "b", "a"]
    assert [round(item.score, 3) for item in ranked] == [1.0, 0.8, 0.0]
    assert decision == "tier1_cosine:pubmedbert"


@pytest.mark.parametrize(("on_reversal", "kept"), [(False, ["none", "text"]), (True, ["text"])])
async def test_a31_a_reversal_question_skips_r_t1_2_unless_set(on_reversal, kept):
    # naloxone's label names "opioid overdose", not the fentanyl the question names: the
    # filter on "fentanyl" would drop it
    nodes = [hit("none", text="opioid overdose reversal"), hit("text", text="fentanyl patch")]
    settings = Tier1Settings(
        cosine_sort=False, entity_filter_on_reversal=on_reversal, entity_filter_keeps_rest=False
    )

    async def never(*_):
        raise AssertionError("no encoder call without the cosine sort")

    ranked, decision = await tier1_rerank(
        nodes,
        "biomed_text",
        ENTITY,
        ["fentanyl"],
        settings,
        never,
        never,
        query="overdosed on fentanyl, what reverses it",
    )
    assert ids(ranked) == kept
    assert decision == ("tier1_entity_filter" if on_reversal else "tier1_fused_order")
