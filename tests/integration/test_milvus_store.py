"""MilvusVectorStore against a real Milvus Lite server process (session fixture)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from deployments.runtime import MilvusLiteServer
from pipeline.errors import BackendUnavailable
from pipeline.lexical import lexical_document_text, lexical_query_text
from pipeline.ports import VectorStore
from pipeline.schema import CHUNK_METADATA_KEYS, Node, ScopeFilter
from pipeline.settings import LexicalSettings
from pipeline.stores.milvus import MilvusVectorStore

pytestmark = pytest.mark.integration

DIMENSION = 12
HOSTILE = ['" or 1==1 or "', 'a"b', "a'b", "[x]", "back\\slash", "ünï 中文", "x') or true --"]


def _name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _unit(rows: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(rows, DIMENSION)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _node(index: int, text: str = "", **metadata: Any) -> Node:
    base: dict[str, Any] = {
        "document_id": f"doc-{index % 5}",
        "kb_name": "kb-a" if index % 2 else "kb-b",
        "tags": ["even"] if index % 2 == 0 else ["odd"],
        "biomed_section": "warnings",
    }
    base.update(metadata)
    text = text or f"chunk number {index} about aspirin"
    return Node(node_id=f"n{index}", text=text, metadata=base)


async def _filled(store: MilvusVectorStore, rows: int = 40, hybrid: bool = True) -> str:
    name = _name("c")
    await store.ensure_collection(name, DIMENSION, hybrid=hybrid)
    await store.upsert(name, [_node(i) for i in range(rows)], _unit(rows, seed=1))
    return name


async def test_store_satisfies_the_port(milvus_store: MilvusVectorStore) -> None:
    assert isinstance(milvus_store, VectorStore)


async def test_upsert_twice_gives_one_copy(milvus_store: MilvusVectorStore) -> None:
    name = _name("idem")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    nodes = [_node(i) for i in range(25)]
    vectors = _unit(25, seed=2)
    assert await milvus_store.upsert(name, nodes, vectors) == 25
    assert await milvus_store.upsert(name, nodes, vectors) == 25
    assert await milvus_store.count(name) == 25
    changed = [nodes[0].model_copy(update={"text": "replaced text"})]
    await milvus_store.upsert(name, changed, vectors[:1])
    assert await milvus_store.count(name) == 25
    (fetched,) = await milvus_store.fetch(name, ["n0"])
    assert fetched.text == "replaced text"


async def test_upsert_keeps_last_of_duplicate_ids_in_one_call(
    milvus_store: MilvusVectorStore,
) -> None:
    name = _name("dup")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=False)
    nodes = [_node(1, text="first"), _node(1, text="second")]
    assert await milvus_store.upsert(name, nodes, _unit(2, seed=3)) == 1
    assert [node.text for node in await milvus_store.fetch(name, ["n1"])] == ["second"]


async def test_upsert_batches_large_inputs(milvus_server: MilvusLiteServer) -> None:
    store = MilvusVectorStore(milvus_server.uri, collection_prefix="it_", upsert_batch_rows=7)
    name = _name("batch")
    await store.ensure_collection(name, DIMENSION, hybrid=True)
    assert await store.upsert(name, [_node(i) for i in range(50)], _unit(50, seed=4)) == 50
    assert await store.count(name) == 50
    await store.compact(name)
    assert await store.count(name) == 50
    await store.close()


async def test_upsert_rejects_wrong_vector_shape(milvus_store: MilvusVectorStore) -> None:
    name = _name("shape")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=False)
    nodes = [_node(i) for i in range(3)]
    with pytest.raises(ValueError, match=r"shape \(3, 12\)"):
        await milvus_store.upsert(name, nodes, np.zeros((3, DIMENSION - 1), np.float32))
    with pytest.raises(ValueError, match=r"shape \(3, 12\)"):
        await milvus_store.upsert(name, nodes, np.zeros((2, DIMENSION), np.float32))
    bad = _unit(3, seed=5)
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        await milvus_store.upsert(name, nodes, bad)
    assert await milvus_store.upsert(name, [], np.zeros((0, DIMENSION), np.float32)) == 0
    with pytest.raises(ValueError, match="lexical_texts"):
        await milvus_store.upsert(name, nodes, _unit(3, seed=5), lexical_texts=["a"])
    assert await milvus_store.count(name) == 0


async def test_upsert_into_missing_collection_raises(milvus_store: MilvusVectorStore) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        await milvus_store.upsert(_name("none"), [_node(0)], _unit(1, seed=6))


async def test_ensure_collection_rejects_other_dimension(milvus_store: MilvusVectorStore) -> None:
    name = _name("dim")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    again = await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    assert again.dimension == DIMENSION
    with pytest.raises(ValueError, match="dimension"):
        await milvus_store.ensure_collection(name, DIMENSION + 4, hybrid=True)
    assert name in await milvus_store.list_collections()
    assert await milvus_store.drop_collection(name) is True
    assert not await milvus_store.has_collection(name)
    assert await milvus_store.drop_collection(name) is False


def _norm_spread(rows: int, seed: int) -> np.ndarray:
    """Unnormalised vectors whose norms differ (0.5 to 5), as MedCPT's raw [CLS] rows."""
    scales = np.linspace(0.5, 5.0, rows, dtype=np.float32)[:, None]
    return _unit(rows, seed) * np.random.default_rng(seed + 1).permutation(scales)


async def test_ip_collection_ranks_by_raw_inner_product_cosine_by_cosine(
    milvus_store: MilvusVectorStore,
) -> None:
    """MedCPT's model card scores by the raw inner product: an ``ip`` collection gets an
    IP index, returns hits in inner-product order with the raw IP as score, and its
    ``vector_similarity`` is the cosine; a ``cosine`` collection keeps the cosine."""
    vectors = _norm_spread(30, seed=21)
    query = _norm_spread(1, seed=22)[0] * 3.0
    nodes = [_node(i) for i in range(30)]
    ip_name, cos_name = _name("ip"), _name("cos")
    info = await milvus_store.ensure_collection(ip_name, DIMENSION, hybrid=False, metric="ip")
    assert info.metric == "ip"
    cos_info = await milvus_store.ensure_collection(cos_name, DIMENSION, hybrid=False)
    assert cos_info.metric == "cosine"
    await milvus_store.upsert(ip_name, nodes, vectors)
    await milvus_store.upsert(cos_name, nodes, vectors)
    milvus_store._infos.clear()  # read the metric back from the server's index
    assert (await milvus_store.describe(ip_name)).metric == "ip"  # type: ignore[union-attr]
    assert (await milvus_store.describe(cos_name)).metric == "cosine"  # type: ignore[union-attr]

    inner = vectors @ query
    cosine = inner / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    by_ip = [f"n{i}" for i in np.argsort(-inner, kind="stable")[:10]]
    by_cosine = [f"n{i}" for i in np.argsort(-cosine, kind="stable")[:10]]
    assert by_ip != by_cosine  # the norms change the order

    ip_hits = await milvus_store.search_dense(ip_name, query, top_k=10)
    assert [h.node.node_id for h in ip_hits] == by_ip
    expected = {f"n{i}": float(inner[i]) for i in range(30)}
    for hit in ip_hits:
        assert hit.score == pytest.approx(expected[hit.node.node_id], rel=1e-4)
        cos_value = float(cosine[int(hit.node.node_id[1:])])
        assert hit.vector_similarity == pytest.approx(max(0.0, cos_value), abs=1e-5)
        assert hit.node.embedding is None  # read for the cosine, not returned unasked
    assert max(h.score for h in ip_hits) > 1.0  # raw, not clipped to [0, 1]

    cos_hits = await milvus_store.search_dense(cos_name, query, top_k=10)
    assert [h.node.node_id for h in cos_hits] == by_cosine
    for hit in cos_hits:
        cos_value = float(cosine[int(hit.node.node_id[1:])])
        assert hit.score == pytest.approx(max(0.0, cos_value), abs=1e-5)
        assert hit.vector_similarity == hit.score
    with_vectors = await milvus_store.search_dense(ip_name, query, top_k=3, with_vectors=True)
    assert with_vectors[0].node.embedding is not None


async def test_metric_mismatch_is_a_clear_error(milvus_server: MilvusLiteServer) -> None:
    """A collection made with one metric is never silently used with the other."""
    name = _name("mix")
    store = MilvusVectorStore(milvus_server.uri, collection_prefix="it_")
    await store.ensure_collection(name, DIMENSION, hybrid=False)
    with pytest.raises(ValueError, match=r"COSINE dense index; asked for metric 'ip'.*drop it"):
        await store.ensure_collection(name, DIMENSION, hybrid=False, metric="ip")
    with pytest.raises(ValueError, match="unknown dense metric"):
        await store.ensure_collection(name, DIMENSION, hybrid=False, metric="l2")
    await store.upsert(name, [_node(0)], _unit(1, seed=23))
    configured = MilvusVectorStore(milvus_server.uri, collection_prefix="it_", metrics={name: "ip"})
    with pytest.raises(ValueError, match="configured with metric 'ip'"):
        await configured.search_dense(name, _unit(1, seed=24)[0], top_k=1)
    assert await store.drop_collection(name) is True
    await store.close()
    await configured.close()


async def test_r_hyb_2_dense_scores_in_unit_interval_best_first(
    milvus_store: MilvusVectorStore,
) -> None:
    name = _name("dense")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=False)
    vectors = _unit(30, seed=7)
    vectors[29] = -vectors[0]  # cosine -1 to the query: clipped to 0
    await milvus_store.upsert(name, [_node(i) for i in range(30)], vectors)
    hits = await milvus_store.search_dense(name, vectors[0], top_k=30)
    assert len(hits) == 30
    assert hits[0].node_id == "n0" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert all(hit.vector_similarity == hit.score and hit.collection == name for hit in hits)
    expected = np.clip(vectors @ vectors[0], 0, 1)  # negative cosines (n29: -1) become 0
    by_id = {hit.node_id: hit.score for hit in hits}
    assert by_id["n29"] == 0.0
    for index in range(30):
        assert by_id[f"n{index}"] == pytest.approx(float(expected[index]), abs=1e-5)


async def test_with_vectors_returns_the_stored_vectors(milvus_store: MilvusVectorStore) -> None:
    name = await _filled(milvus_store)
    stored = _unit(40, seed=1)
    hits = await milvus_store.search_dense(name, stored[3], top_k=5, with_vectors=True)
    for hit in hits:
        index = int(hit.node_id[1:])
        assert hit.node.embedding is not None
        np.testing.assert_allclose(hit.node.embedding, stored[index], rtol=1e-6)
    plain = await milvus_store.search_dense(name, stored[3], top_k=5)
    assert all(hit.node.embedding is None for hit in plain)
    lexical = await milvus_store.search_lexical(name, "aspirin", top_k=3, with_vectors=True)
    assert lexical and all(hit.node.embedding is not None for hit in lexical)
    fetched = await milvus_store.fetch(name, ["n7", "missing", "n2"], with_vectors=True)
    assert [node.node_id for node in fetched] == ["n7", "n2"]
    np.testing.assert_allclose(fetched[0].embedding, stored[7], rtol=1e-6)


async def test_metadata_round_trips_every_ing_1_key(milvus_store: MilvusVectorStore) -> None:
    name = _name("meta")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    metadata: dict[str, Any] = {
        "node_id": "chunk-1",
        "source_chunk_id": "src-1",
        "document_id": "doc-x",
        "path": "labels/tagrisso.md#warnings",
        "file_name": "tagrisso.md",
        "document_name": "Tagrisso (osimertinib) — EMA package leaflet",
        "source_uri": "file:///data/tagrisso.md",
        "kb_name": "oncology",
        "tags": ["ema", "lung"],
        "primary_drugs": ["osimertinib"],
        "biomed_section": "warnings",
        "content_summary": "Warnings for osimertinib",
        "title": "Tagrisso",
        "modality": "text",
        "smiles": "C=CC(=O)Nc1cc",
        "positions": [3, 4],
    }
    assert set(CHUNK_METADATA_KEYS) <= set(metadata)
    node = Node(node_id="chunk-1", text="QT prolongation was reported.", metadata=metadata)
    vector = _unit(1, seed=8)
    await milvus_store.upsert(name, [node], vector)
    (hit,) = await milvus_store.search_dense(name, vector[0], top_k=1)
    assert hit.node.text == node.text
    assert hit.node.metadata == metadata
    (lexical,) = await milvus_store.search_lexical(name, "prolongation", top_k=1)
    assert lexical.node.metadata == metadata


async def test_bm25_finds_an_exact_rare_term(milvus_store: MilvusVectorStore) -> None:
    name = _name("bm25")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    rng = np.random.default_rng(9)
    words = [f"word{i}" for i in range(200)]
    nodes = [_node(i, text=" ".join(rng.choice(words, 25))) for i in range(200)]
    nodes[137] = _node(137, text=" ".join(rng.choice(words, 25)) + " tepotinib")
    await milvus_store.upsert(name, nodes, _unit(200, seed=10))
    hits = await milvus_store.search_lexical(name, "tepotinib", top_k=10)
    assert [hit.node_id for hit in hits] == ["n137"]
    assert hits[0].score > 0 and hits[0].vector_similarity is None
    common = await milvus_store.search_lexical(name, "word1 word2 word3", top_k=20)
    scores = [hit.score for hit in common]
    assert len(common) == 20 and all(score > 0 for score in scores)
    assert scores == sorted(scores, reverse=True)


async def test_lexical_texts_feed_bm25_and_text_is_returned(
    milvus_store: MilvusVectorStore,
) -> None:
    name = _name("lex")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    nodes = [_node(0, text="Display text only."), _node(1, text="Another chunk.")]
    lexical = ["warnings warnings osimertinib tagrisso", "dosage"]
    await milvus_store.upsert(name, nodes, _unit(2, seed=11), lexical_texts=lexical)
    hits = await milvus_store.search_lexical(name, "tagrisso", top_k=5)
    assert [hit.node_id for hit in hits] == ["n0"]
    assert hits[0].node.text == "Display text only."
    assert await milvus_store.search_lexical(name, "display", top_k=5) == []


@pytest.mark.parametrize("form", ["lemma", "snowball", "as_written"])
async def test_a8_word_forms_let_another_form_of_a_word_match(
    milvus_store: MilvusVectorStore, form: str
) -> None:
    # Milvus Lite's analyser does not stem; with A-8 the texts sent to it are normalised
    settings = LexicalSettings(word_form=form)
    name = _name("stem")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    texts = ["Take one dose of rivaroxaban with food.", "Rivaroxaban is an anticoagulant."]
    nodes = [_node(i, text=text) for i, text in enumerate(texts)]
    lexical = [lexical_document_text(text, "", None, settings) for text in texts]
    await milvus_store.upsert(name, nodes, _unit(2, seed=13), lexical_texts=lexical)
    query = lexical_query_text("rivaroxaban dosing", None, settings)
    hits = await milvus_store.search_lexical(name, query, top_k=5)
    # as written "dosing" meets nothing, both score on rivaroxaban alone and the shorter
    # text wins (BM25 length normalisation)
    expected = ["n1", "n0"] if form == "as_written" else ["n0", "n1"]
    assert [hit.node_id for hit in hits] == expected


async def test_a20_an_american_spelling_finds_the_british_one(
    milvus_store: MilvusVectorStore,
) -> None:
    name = _name("spelling")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    texts = ["Very common: diarrhoea, nausea.", "Store below 25 degrees in the original pack."]
    nodes = [_node(i, text=text) for i, text in enumerate(texts)]
    lexical = [lexical_document_text(text, "", None, LexicalSettings()) for text in texts]
    await milvus_store.upsert(name, nodes, _unit(2, seed=17), lexical_texts=lexical)
    for on, expected in ((True, ["n0"]), (False, [])):
        query = lexical_query_text("diarrhea", None, LexicalSettings(spelling_variants=on))
        hits = await milvus_store.search_lexical(name, query, top_k=5)
        assert [hit.node_id for hit in hits] == expected


async def test_lexical_search_empty_cases(milvus_store: MilvusVectorStore) -> None:
    dense_only = await _filled(milvus_store, rows=5, hybrid=False)
    hybrid = await _filled(milvus_store, rows=5, hybrid=True)
    assert await milvus_store.search_lexical(dense_only, "aspirin", top_k=5) == []
    assert await milvus_store.search_lexical(hybrid, "   ", top_k=5) == []
    assert await milvus_store.search_lexical(hybrid, "", top_k=5) == []
    assert await milvus_store.search_lexical(_name("missing"), "aspirin", top_k=5) == []
    assert await milvus_store.search_dense(_name("missing"), _unit(1, 0)[0], top_k=5) == []
    assert await milvus_store.count(_name("missing")) == 0


async def test_r_sup_3_scoped_search_returns_only_scoped_ids(
    milvus_server: MilvusLiteServer,
) -> None:
    # Two ids per expression: the three-id scope runs as two searches, merged.
    store = MilvusVectorStore(milvus_server.uri, collection_prefix="it_", max_ids_per_expression=2)
    name = await _filled(store, rows=40)
    query = _unit(40, seed=1)[0]
    scope = ScopeFilter(document_ids=("doc-1", "doc-3", "doc-4"))
    hits = await store.search_dense(name, query, top_k=40, scope=scope)
    assert {hit.node.metadata["document_id"] for hit in hits} == {"doc-1", "doc-3", "doc-4"}
    assert len(hits) == 24
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    top = await store.search_dense(name, query, top_k=5, scope=scope)
    assert [hit.node_id for hit in top] == [hit.node_id for hit in hits[:5]]
    lexical = await store.search_lexical(name, "aspirin chunk", top_k=40, scope=scope)
    assert len(lexical) == 24
    assert {hit.node.metadata["document_id"] for hit in lexical} == {"doc-1", "doc-3", "doc-4"}
    by_kb = await store.search_dense(name, query, top_k=40, scope=ScopeFilter(kb_names=("kb-a",)))
    assert len(by_kb) == 20 and {hit.node.metadata["kb_name"] for hit in by_kb} == {"kb-a"}
    by_tag = await store.search_dense(name, query, top_k=40, scope=ScopeFilter(tags=("even",)))
    assert len(by_tag) == 20 and all(hit.node.metadata["tags"] == ["even"] for hit in by_tag)
    combined = ScopeFilter(kb_names=("kb-a",), document_ids=("doc-1", "doc-2"), tags=("odd",))
    both = await store.search_dense(name, query, top_k=40, scope=combined)
    assert len(both) == 8
    assert {hit.node.metadata["document_id"] for hit in both} == {"doc-1", "doc-2"}
    assert all(hit.node.metadata["kb_name"] == "kb-a" for hit in both)
    disjoint = combined.model_copy(update={"tags": ("even",)})  # parts are ANDed
    assert await store.search_dense(name, query, top_k=40, scope=disjoint) == []
    await store.close()


async def test_a28_section_filter_keeps_the_named_sections_in_both_legs(
    milvus_store: MilvusVectorStore,
) -> None:
    name = _name("c")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    sections = ("indications_and_usage", "warnings", "adverse_reactions")
    nodes = [_node(i, biomed_section=sections[i % 3]) for i in range(30)]
    await milvus_store.upsert(name, nodes, _unit(30, seed=3))
    query = _unit(30, seed=3)[1]  # node n1's own vector: a warnings chunk
    everything = await milvus_store.search_dense(name, query, top_k=30)
    assert everything[0].node_id == "n1" and len(everything) == 30
    wanted = ("indications_and_usage",)
    dense = await milvus_store.search_dense(name, query, top_k=30, sections=wanted)
    lexical = await milvus_store.search_lexical(name, "aspirin", top_k=30, sections=wanted)
    for hits in (dense, lexical):
        assert len(hits) == 10
        assert {hit.node.metadata["biomed_section"] for hit in hits} == set(wanted)
    # with a scope, both restrict
    scope = ScopeFilter(kb_names=("kb-a",))
    scoped = await milvus_store.search_dense(name, query, top_k=30, scope=scope, sections=wanted)
    assert len(scoped) == 5 and all(hit.node.metadata["kb_name"] == "kb-a" for hit in scoped)
    assert await milvus_store.search_dense(name, query, top_k=30, sections=("contacts",)) == []


async def test_hostile_scope_values_neither_break_nor_widen(
    milvus_store: MilvusVectorStore,
) -> None:
    name = _name("hostile")
    await milvus_store.ensure_collection(name, DIMENSION, hybrid=True)
    nodes = [
        _node(i, document_id=value, kb_name=value, tags=[value]) for i, value in enumerate(HOSTILE)
    ]
    nodes.append(_node(99, document_id="plain", kb_name="plain", tags=["plain"]))
    vectors = _unit(len(nodes), seed=12)
    await milvus_store.upsert(name, nodes, vectors)
    for index, value in enumerate(HOSTILE):
        for scope in (
            ScopeFilter(document_ids=(value,)),
            ScopeFilter(kb_names=(value,)),
            ScopeFilter(tags=(value,)),
        ):
            hits = await milvus_store.search_dense(name, vectors[0], top_k=20, scope=scope)
            assert [hit.node_id for hit in hits] == [f"n{index}"], (value, scope)
            lexical = await milvus_store.search_lexical(name, "aspirin", top_k=20, scope=scope)
            assert [hit.node_id for hit in lexical] == [f"n{index}"], (value, scope)
    absent = ScopeFilter(document_ids=('x" or document_id != "',), kb_names=("] or true or [",))
    assert await milvus_store.search_dense(name, vectors[0], top_k=20, scope=absent) == []
    with pytest.raises(ValueError, match="control character"):
        await milvus_store.search_dense(
            name, vectors[0], top_k=5, scope=ScopeFilter(document_ids=("a\nb",))
        )


async def test_delete_documents_removes_their_nodes(milvus_store: MilvusVectorStore) -> None:
    name = await _filled(milvus_store, rows=20)
    await milvus_store.delete_documents(name, ["doc-0", "doc-1"])
    assert await milvus_store.count(name) == 12
    hits = await milvus_store.search_dense(name, _unit(20, seed=1)[0], top_k=20)
    assert {hit.node.metadata["document_id"] for hit in hits} == {"doc-2", "doc-3", "doc-4"}


async def test_health_and_unreachable_server(milvus_store: MilvusVectorStore) -> None:
    assert (await milvus_store.health())["ok"] is True
    from deployments.runtime import find_free_port

    dead = MilvusVectorStore(f"http://127.0.0.1:{find_free_port()}", timeout_s=2.0)
    health = await dead.health()
    assert health["ok"] is False and health["error"]
    with pytest.raises(BackendUnavailable):
        await dead.search_dense("anything", _unit(1, 0)[0], top_k=3)


def test_server_is_reused_from_its_data_dir(milvus_server: MilvusLiteServer) -> None:
    again = MilvusLiteServer(milvus_server.data_dir).start()
    assert again.started_here is False
    assert (again.port, again.pid) == (milvus_server.port, milvus_server.pid)
    assert milvus_server.is_running()
    with MilvusLiteServer(milvus_server.data_dir) as borrowed:
        assert borrowed.uri == milvus_server.uri
    assert milvus_server.is_running()  # exiting a borrowed handle does not stop it


def test_a_server_that_outlives_its_starter_is_not_its_child(tmp_path: Path) -> None:
    """``stop_at_exit=False`` (``build_app``, run by a Ray worker that kills its child
    processes when it exits): the server is started detached, so it is no child of this
    process; it is reused from its data directory and stops on request."""
    import os

    import psutil

    from deployments.runtime.processes import live_process

    server = MilvusLiteServer(tmp_path, stop_at_exit=False).start()
    try:
        assert server.started_here and server.is_running()
        ours = {child.pid for child in psutil.Process().children(recursive=True)}
        assert server.pid not in ours
        assert psutil.Process(server.pid).ppid() != os.getpid()
        again = MilvusLiteServer(tmp_path).start()
        assert (again.started_here, again.pid) == (False, server.pid)
    finally:
        server.stop()
    assert not server.is_running()
    assert live_process(server.pid) is None


async def test_data_survives_a_restart_and_reopened_collections_are_loaded(
    tmp_path: Path,
) -> None:
    """Lite reopens collections released; FLAT still returns every filtered hit."""
    server = MilvusLiteServer(tmp_path).start()
    store = MilvusVectorStore(server.uri)
    name = await _filled(store, rows=30)
    await store.close()
    server.stop()
    assert not server.is_running()
    server = MilvusLiteServer(tmp_path, port=server.port).start()  # same URI as before
    try:
        for fresh in (MilvusVectorStore(server.uri), store):  # new and cached-info stores
            assert await fresh.count(name) == 30
            scope = ScopeFilter(document_ids=("doc-2",))
            hits = await fresh.search_dense(name, _unit(30, seed=1)[0], top_k=10, scope=scope)
            assert len(hits) == 6
            assert await fresh.search_lexical(name, "aspirin", top_k=50) != []
            await fresh.close()
    finally:
        server.stop()


async def test_partition_key_on_the_knowledge_base(milvus_server: MilvusLiteServer) -> None:
    store = MilvusVectorStore(milvus_server.uri, collection_prefix="pk_", partition_key="kb_name")
    name = await _filled(store, rows=40)
    query = _unit(40, seed=1)[0]
    by_kb = await store.search_dense(name, query, top_k=40, scope=ScopeFilter(kb_names=("kb-b",)))
    assert len(by_kb) == 20 and {hit.node.metadata["kb_name"] for hit in by_kb} == {"kb-b"}
    everything = await store.search_dense(name, query, top_k=40)
    assert len(everything) == 40
    await store.drop_collection(name)
    await store.close()


async def test_concurrent_searches_are_batched_and_answer_as_alone(
    milvus_server: MilvusLiteServer, milvus_store: MilvusVectorStore
) -> None:
    # Dynamic batching: concurrent dense and BM25 searches of one collection go out as
    # multi-query searches and each caller gets exactly what a lone search returns.
    name = await _filled(milvus_store, rows=40)
    queries = _unit(12, seed=9)
    texts = [f"chunk number {i} about aspirin" for i in range(12)]
    scope = ScopeFilter(kb_names=("kb-a",))
    unbatched = MilvusVectorStore(milvus_server.uri, collection_prefix="it_", search_batch=1)
    try:
        alone_dense = [await unbatched.search_dense(name, q, 5, scope) for q in queries]
        alone_lexical = [await unbatched.search_lexical(name, t, 5, scope) for t in texts]
    finally:
        await unbatched.close()
    together = await asyncio.gather(
        *(milvus_store.search_dense(name, q, 5, scope) for q in queries),
        *(milvus_store.search_lexical(name, t, 5, scope) for t in texts),
    )

    def ids(lists):
        return [[hit.node_id for hit in hits] for hits in lists]

    def scores(lists):
        return np.array([[hit.score for hit in hits] for hits in lists])

    assert ids(together[:12]) == ids(alone_dense)
    assert ids(together[12:]) == ids(alone_lexical)
    # a multi-query search sums in another order: equal to float32 rounding
    np.testing.assert_allclose(scores(together[:12]), scores(alone_dense), atol=1e-4)
    np.testing.assert_allclose(scores(together[12:]), scores(alone_lexical), atol=1e-4)
    assert all(hits for hits in together)
    sizes = milvus_store._batcher().batch_sizes
    assert max(sizes) > 1 and sum(size * n for size, n in sizes.items()) >= 24


async def test_encoder_weights_are_recorded_and_never_mixed(milvus_server) -> None:
    """A collection records the encoder weights that wrote it (int8 / float vectors are
    not comparable): another writer is refused, a search configuration that queries it
    with the other weights is reported, and a collection from before the record counts
    as float."""
    name, old = _name("w"), _name("old")
    int8 = MilvusVectorStore(milvus_server.uri, collection_prefix="it_", weights={name: "int8"})
    floats = MilvusVectorStore(
        milvus_server.uri, collection_prefix="it_", weights={name: "float", old: "float"}
    )
    unrecorded = MilvusVectorStore(milvus_server.uri, collection_prefix="it_")
    queried_int8 = MilvusVectorStore(
        milvus_server.uri, collection_prefix="it_", weights={old: "int8"}
    )
    try:
        info = await int8.ensure_collection(name, DIMENSION, hybrid=False)
        assert info.weights == "int8"
        assert (await floats.describe(name)).weights == "int8"  # read back by another client
        with pytest.raises(ValueError, match=r"int8 encoder weights.*writes float"):
            await floats.ensure_collection(name, DIMENSION, hybrid=False)
        with pytest.raises(ValueError, match=r"int8 encoder weights.*writes float"):
            await floats.check_writable()  # before an ingest deletes anything
        await int8.check_writable()
        assert await int8.weights_mismatches() == {}
        [line] = (await floats.weights_mismatches()).values()
        assert name in line and "int8 encoder weights" in line and "float ones" in line

        assert (await unrecorded.ensure_collection(old, DIMENSION, hybrid=False)).weights is None
        assert (await floats.ensure_collection(old, DIMENSION, hybrid=False)).weights is None
        with pytest.raises(ValueError, match="not recorded"):
            await queried_int8.ensure_collection(old, DIMENSION, hybrid=False)
        [line] = (await queried_int8.weights_mismatches()).values()
        assert old in line and "not recorded" in line and "int8 ones" in line
        with pytest.raises(ValueError, match="not recorded"):  # counted as float
            await queried_int8.check_writable()
    finally:
        for collection in (name, old):
            await unrecorded.drop_collection(collection)
        for store in (int8, floats, unrecorded, queried_int8):
            await store.close()


async def test_a_collection_re_created_under_a_serving_store_is_read_again(
    milvus_server: MilvusLiteServer,
) -> None:
    """A collection dropped and created again with another layout (here without BM25)
    while a service's store holds its description: the store's first call may fail on
    the old description, and it forgets it, so the calls after it read the new one. It
    kept the old one until the service restarted, failing every lexical search."""
    serving = MilvusVectorStore(milvus_server.uri, collection_prefix="it_")
    operator = MilvusVectorStore(milvus_server.uri, collection_prefix="it_")
    name = await _filled(serving, rows=10, hybrid=True)
    assert await serving.search_lexical(name, "aspirin", top_k=3)
    assert (await serving.describe(name)).hybrid  # type: ignore[union-attr]

    assert await operator.drop_collection(name) is True
    await operator.ensure_collection(name, DIMENSION, hybrid=False)
    await operator.upsert(name, [_node(i) for i in range(4)], _unit(4, seed=31))

    with contextlib.suppress(BackendUnavailable):  # the first call meets the new layout
        await serving.search_lexical(name, "aspirin", top_k=3)
    assert await serving.search_lexical(name, "aspirin", top_k=3) == []
    assert (await serving.describe(name)).hybrid is False  # type: ignore[union-attr]
    dense = await serving.search_dense(name, _unit(1, seed=31)[0], top_k=2)
    assert dense[0].node_id == "n0"

    # created again by an int8 ingest, no error in between: /readyz's weights check
    # describes it afresh, and the searches after it read the new layout
    checking = MilvusVectorStore(milvus_server.uri, collection_prefix="it_",
                                 weights={name: "float"})
    assert await checking.weights_mismatches() == {}
    int8 = MilvusVectorStore(milvus_server.uri, collection_prefix="it_", weights={name: "int8"})
    assert await operator.drop_collection(name) is True
    await int8.ensure_collection(name, DIMENSION, hybrid=True)
    [line] = (await checking.weights_mismatches()).values()
    assert "int8 encoder weights" in line
    assert (await checking.describe(name)).hybrid  # type: ignore[union-attr]
    await operator.drop_collection(name)
    for store in (serving, operator, checking, int8):
        await store.close()
