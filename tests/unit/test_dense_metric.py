"""Per-collection dense metric: inner product (MedCPT's model card) versus cosine.

The vectors are built so that the two metrics disagree: a long document vector at a wide
angle wins by inner product and loses by cosine. Each test runs the real ranking code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from deployments.config import load_config
from pipeline.embeddings import EmbeddingService
from pipeline.hybrid import with_vector_similarity
from pipeline.schema import Node, NodeWithScore
from pipeline.settings import PipelineSettings
from pipeline.stores.dense_metric import dense_scores, metric_from_index
from pipeline.stores.milvus_schema import DENSE_FIELD, DenseIndex, build_index_params
from pipeline.stores.milvus_search import MilvusSearchMixin
from pipeline.tier1 import cosine_rerank
from pipeline.tier2_stage import Tier2Stage
from tests.support.fakes import InMemoryVectorStore
from tests.unit.helpers import ids

pytestmark = pytest.mark.unit

QUERY = np.array([1.0, 0.0, 0.0], dtype=np.float32)
#: Long, at 45 degrees: inner product 3.0, cosine 0.707.
LONG = np.array([3.0, 3.0, 0.0], dtype=np.float32)
#: Short, nearly parallel: inner product 1.0, cosine 0.995.
SHORT = np.array([1.0, 0.1, 0.0], dtype=np.float32)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _entity(node_id: str, vector: np.ndarray) -> dict[str, Any]:
    return {"node_id": node_id, "text": node_id, DENSE_FIELD: vector.tolist()}


def test_the_vectors_disagree_between_metrics() -> None:
    assert float(LONG @ QUERY) > float(SHORT @ QUERY)
    assert _cosine(LONG, QUERY) < _cosine(SHORT, QUERY)


def test_ip_hits_are_ordered_by_raw_inner_product_not_cosine() -> None:
    # What Milvus returns for each index: IP distances, or cosine distances.
    ip_hits = [(float(v @ QUERY), _entity(n, v)) for n, v in (("short", SHORT), ("long", LONG))]
    cos_hits = [(_cosine(v, QUERY), _entity(n, v)) for n, v in (("short", SHORT), ("long", LONG))]
    by_ip = MilvusSearchMixin._ranked(
        "medcpt_text", ip_hits, 10, False, dense=True, metric="ip", query_norm=1.0
    )
    by_cosine = MilvusSearchMixin._ranked("biomed_text", cos_hits, 10, False, dense=True)
    assert ids(by_ip) == ["long", "short"]
    assert ids(by_cosine) == ["short", "long"]
    # ip: score = the raw inner product; vector_similarity = the cosine in [0, 1].
    assert [item.score for item in by_ip] == pytest.approx([3.0, 1.0])
    assert [item.vector_similarity for item in by_ip] == pytest.approx(
        [_cosine(LONG, QUERY), _cosine(SHORT, QUERY)], abs=1e-6
    )
    assert all(item.node.embedding is None for item in by_ip)  # not asked for
    # cosine: unchanged, score = vector_similarity = max(0, cos).
    assert [item.score for item in by_cosine] == pytest.approx(
        [_cosine(SHORT, QUERY), _cosine(LONG, QUERY)]
    )
    assert [item.vector_similarity for item in by_cosine] == [item.score for item in by_cosine]


def test_dense_scores_ip_uses_the_query_norm_and_survives_zero_vectors() -> None:
    query = 2.0 * QUERY
    score, similarity = dense_scores(float(LONG @ query), "ip", 2.0, LONG.tolist())
    assert score == pytest.approx(6.0)
    assert similarity == pytest.approx(_cosine(LONG, QUERY), abs=1e-6)
    assert dense_scores(0.0, "ip", 1.0, [0.0, 0.0, 0.0]) == (0.0, 0.0)
    assert dense_scores(5.0, "ip", 1.0, None) == (5.0, 0.0)
    assert dense_scores(1.7, "cosine") == (1.0, 1.0)


def test_index_and_search_params_follow_the_metric() -> None:
    def dense_metric(metric: str) -> str:
        params = build_index_params(DenseIndex.flat(), hybrid=False, metric=metric)
        (index,) = [i for i in params if i.field_name == DENSE_FIELD]
        return index.get_index_configs()["metric_type"]

    assert dense_metric("cosine") == "COSINE"
    assert dense_metric("ip") == "IP"
    assert DenseIndex.hnsw().search_params_for(10, "ip")["metric_type"] == "IP"
    assert DenseIndex.flat().search_params_for(10)["metric_type"] == "COSINE"
    with pytest.raises(ValueError, match="unknown dense metric"):
        DenseIndex.flat().search_params_for(10, "l2")
    assert metric_from_index({"metric_type": "IP"}) == "ip"
    assert metric_from_index({"metric_type": "COSINE"}) == "cosine"
    assert metric_from_index(None) == "cosine"
    with pytest.raises(ValueError, match="L2"):
        metric_from_index({"metric_type": "L2"})


def _node(node_id: str, vector: np.ndarray, collection: str) -> NodeWithScore:
    node = Node(node_id=node_id, text=node_id, embedding=tuple(vector.tolist()))
    return NodeWithScore(node=node, score=0.0, collection=collection)


def test_lexical_hit_of_an_ip_collection_gets_the_cosine_not_the_clipped_inner_product() -> None:
    item = _node("long", LONG, "medcpt_text")
    as_ip = with_vector_similarity(item, QUERY, "medcpt_text", "ip")
    as_cosine = with_vector_similarity(item, QUERY / 1.0, "biomed_text")
    assert as_ip.vector_similarity == pytest.approx(_cosine(LONG, QUERY), abs=1e-6)
    assert as_cosine.vector_similarity == 1.0  # raw dot 3.0, clipped: unit vectors assumed


async def test_tier1_dot_product_of_raw_vectors_ranks_by_inner_product() -> None:
    nodes = [_node("short", SHORT, "medcpt_text"), _node("long", LONG, "medcpt_text")]

    async def stored(_role: str, items: Any) -> np.ndarray:
        return np.asarray([item.node.embedding for item in items], dtype=np.float32)

    ranked = await cosine_rerank(nodes, QUERY, "medcpt-article", stored)
    assert ids(ranked) == ["long", "short"]
    assert [item.score for item in ranked] == pytest.approx([3.0, 1.0])


class _QueryEncoder:
    dimension = 3

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def encode(self, texts: Any, titles: Any = None) -> np.ndarray:
        self.calls.extend(texts)
        return np.asarray([QUERY] * len(texts), dtype=np.float32)


async def test_tier2_stored_vector_scores_use_the_raw_inner_product_on_ip() -> None:
    settings = PipelineSettings.model_validate(
        {
            "collections": {"medcpt_text": {"enabled": True, "metric": "ip"}},
            "tier2": {"scorer": "stored_vectors", "stored_vector_role": "medcpt-article"},
        }
    )
    query_encoder = _QueryEncoder()
    embeddings = EmbeddingService({"medcpt-query": query_encoder}, settings)
    stage = Tier2Stage(settings, embeddings, None, None, None, None)  # type: ignore[arg-type]
    nodes = [
        # vector_similarity is the cosine the dense leg set: not what ip scores by.
        _node("short", SHORT, "medcpt_text").model_copy(
            update={"vector_similarity": _cosine(SHORT, QUERY)}
        ),
        _node("long", LONG, "medcpt_text").model_copy(
            update={"vector_similarity": _cosine(LONG, QUERY)}
        ),
    ]
    scores = await stage._stored_vector_scores("egfr", nodes)
    assert scores.tolist() == pytest.approx([1.0, 3.0])
    assert query_encoder.calls == ["egfr"]  # encoded by the collection's query encoder


async def test_in_memory_store_honours_the_collection_metric() -> None:
    store = InMemoryVectorStore()
    for name, metric in (("ip", "ip"), ("cos", "cosine")):
        await store.ensure_collection(name, 3, hybrid=False, metric=metric)
        nodes = [Node(node_id="short", text="s"), Node(node_id="long", text="l")]
        await store.upsert(name, nodes, np.stack([SHORT, LONG]))
    hits = await store.search_dense("ip", QUERY, 2)
    assert ids(hits) == ["long", "short"]
    assert [h.score for h in hits] == pytest.approx([3.0, 1.0])
    assert [h.vector_similarity for h in hits] == pytest.approx(
        [_cosine(LONG, QUERY), _cosine(SHORT, QUERY)], abs=1e-6
    )
    # A cosine collection holds unit vectors, so the fake scores the plain dot product.
    assert all(h.score == h.vector_similarity for h in await store.search_dense("cos", QUERY, 2))


def test_production_profile_compares_medcpt_by_inner_product() -> None:
    config = load_config("production")
    assert config.pipeline.collections["medcpt_text"].metric == "ip"
    for role in ("medcpt-query", "medcpt-article"):
        spec = config.models.roles[role]
        assert spec.metric.value == "ip" and spec.normalize is False
    assert config.models.roles["pubmedbert"].metric.value == "cosine"
    assert config.pipeline.collections["biomed_text"].metric == "cosine"
    default = load_config("default")
    assert {spec.metric for spec in default.pipeline.collections.values()} == {"cosine"}


def test_collection_and_encoder_metrics_must_agree() -> None:
    with pytest.raises(ValueError, match="collection 'medcpt_text' has metric 'cosine'"):
        load_config(
            "production",
            overrides={"pipeline": {"collections": {"medcpt_text": {"metric": "cosine"}}}},
        )
