"""R-REQ-1..5: pool size, rerank window, threshold, pages, assembly."""

import pytest

from pipeline.pagination import (
    assemble_chunks,
    candidate_pool_size,
    doc_aggs,
    paginate,
    plan_depth,
    relevance,
    rerank_window_size,
)
from pipeline.schema import SearchRequest
from pipeline.settings import RequestSettings
from tests.unit.helpers import hit, ids

pytestmark = pytest.mark.unit


def test_r_req_1_request_defaults():
    request = SearchRequest(query="  osimertinib \n side\teffects ")
    assert request.query == "osimertinib side effects"
    assert request.page == 1 and request.top_k == 1024 and request.rerank is True
    assert request.page_size is None and request.similarity_threshold is None
    settings = RequestSettings()
    assert (settings.similarity_threshold, settings.vector_similarity_weight) == (0.2, 0.3)
    assert settings.rerank_page_limit == 3 and settings.candidate_min == 128


@pytest.mark.parametrize(
    ("page_size", "top_k", "expected"), [(5, 1024, 128), (50, 1024, 150), (50, 100, 100)]
)
def test_r_req_2_pool_size(page_size, top_k, expected):
    assert candidate_pool_size(page_size, top_k, RequestSettings()) == expected


def test_r_req_2_cross_encoder_cap():
    assert rerank_window_size(150, 128) == 128
    assert rerank_window_size(40, 128) == 40


def test_a1_plan_depth_is_the_window_whatever_the_page():
    assert plan_depth(20, 32, 1024) == 32
    assert plan_depth(200, 32, 1024) == 200
    assert plan_depth(20, 128, 100) == 100


def with_similarity(node_id, value):
    item = hit(node_id)
    return item.model_copy(update={"score_parts": {"similarity": value, "relevance": 1.0}})


def test_a2_threshold_filters_similarity_and_pages_are_contiguous():
    ordered = [
        with_similarity(f"n{i}", value) for i, value in enumerate([0.9, 0.8, 0.7, 0.6, 0.5, 0.1])
    ]
    first = paginate(ordered, page=1, page_size=2, threshold=0.2)
    second = paginate(ordered, page=2, page_size=2, threshold=0.2)
    third = paginate(ordered, page=3, page_size=2, threshold=0.2)
    assert ids(first.items) == ["n0", "n1"]
    assert ids(second.items) == ["n2", "n3"]
    assert ids(third.items) == ["n4"]
    assert first.total == second.total == third.total == 5
    assert first.dropped_by_threshold == 1
    paged = ids(first.items) + ids(second.items) + ids(third.items)
    assert len(paged) == first.total and len(set(paged)) == first.total


def test_a2_relevance_alone_does_not_pass_the_threshold():
    low = hit("low").model_copy(update={"score_parts": {"similarity": 0.1, "relevance": 0.9}})
    assert paginate([low], 1, 5, 0.2).items == []


def test_r_req_4_page_size_one_and_page_beyond_end():
    ordered = [with_similarity(f"n{i}", 1.0) for i in range(3)]
    assert [ids(paginate(ordered, p, 1, 0.0).items) for p in (1, 2, 3, 4)] == [
        ["n0"],
        ["n1"],
        ["n2"],
        [],
    ]


def test_r_req_1_relevance_blends_vector_and_term_weight():
    item = relevance(hit("a", vector=0.8, term=0.5), "q", vector_weight=0.3)
    assert item.score_parts["relevance"] == pytest.approx(0.3 * 0.8 + 0.7 * 0.5)
    computed = relevance(hit("b", vector=None, text="osimertinib dose"), "osimertinib", 0.3)
    assert computed.term_similarity == 1.0 and computed.vector_similarity == 0.0


def test_r_req_5_chunk_fields_and_doc_aggs():
    items = [
        hit(
            "c1",
            score=0.9,
            vector=0.7,
            term=0.5,
            document_id="d1",
            document_name="Doc 1",
            kb_name="kb",
            biomed_section="warnings",
            positions=[3],
        ),
        hit("c2", score=0.8, document_id="d2", document_name="Doc 2"),
        hit("c3", score=0.7, document_id="d1", document_name="Doc 1"),
    ]
    chunks = assemble_chunks(items)
    first = chunks[0]
    assert (first.chunk_id, first.document_id, first.document_name, first.kb_id) == (
        "c1",
        "d1",
        "Doc 1",
        "kb",
    )
    assert (first.vector_similarity, first.term_similarity) == (0.7, 0.5)
    assert first.biomed_section == "warnings" and first.positions == [3]
    aggs = doc_aggs(chunks)
    assert [(a.document_id, a.count) for a in aggs] == [("d1", 2), ("d2", 1)]


def test_r_req_5_highlight_marks_query_terms():
    chunk = assemble_chunks([hit("c", text="Osimertinib dose")], "osimertinib")[0]
    assert chunk.highlight == "<em>Osimertinib</em> dose"
