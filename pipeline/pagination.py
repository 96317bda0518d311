"""Candidate pool, rerank window, threshold, pages and result assembly (SPEC.md
section 12, R-REQ-2..5, amendments A-1 and A-2; RAGFlow ``retrieval()``).

Invariants (tested):
- the scorer sees at most ``min(pool_size, tier2.max_candidates)`` candidates, the first
  ones of the first-stage order;
- one request's order is ``reranked window + rest of the first-stage order`` on every
  page (A-1: R-REQ-3's switch to the first-stage order after page 3 made pages repeat and
  skip chunks); recall depth does not depend on the page;
- every item carries ``score_parts["similarity"]`` in [0, 1], non-increasing along that
  order (A-2), and the threshold filters that same number, so the kept items are a
  prefix: pages are contiguous slices of it, never repeat or skip, and ``total`` is the
  same on every page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.context import SearchContext, Stage
from pipeline.hybrid import sparse_score
from pipeline.schema import (
    Chunk,
    DocAgg,
    NodeWithScore,
    QueryRouteDecision,
    ScoreParts,
    SearchResponse,
    StageTrace,
)
from pipeline.settings import PipelineSettings, RequestSettings
from pipeline.text import highlight

__all__ = [
    "Page",
    "assemble_chunks",
    "assemble_response",
    "candidate_pool_size",
    "doc_aggs",
    "paginate",
    "plan_depth",
    "relevance",
    "rerank_window",
    "rerank_window_size",
    "threshold_warnings",
]


def candidate_pool_size(page_size: int, top_k: int, settings: RequestSettings) -> int:
    """R-REQ-2: ``max(page_size * RERANK_PAGE_LIMIT, candidate_min)`` capped by ``top_k``."""
    return min(max(page_size * max(settings.rerank_page_limit, 1), settings.candidate_min), top_k)


def rerank_window(page_size: int, top_k: int, settings: PipelineSettings) -> int:
    """The Tier-2 window of a request: its candidate pool (R-REQ-2) capped by
    ``tier2.max_candidates``. Plans recall at least this many hits (``plan_depth``)."""
    pool = candidate_pool_size(page_size, top_k, settings.request)
    return rerank_window_size(pool, settings.tier2.max_candidates)


def rerank_window_size(pool_size: int, max_candidates: int) -> int:
    """How many first-stage candidates the cross-encoder scores: the pool, capped."""
    return max(0, min(pool_size, max_candidates))


def plan_depth(plan_top_k: int, window_size: int, top_k: int) -> int:
    """Hits each plan leg fetches: its routed ``top_k`` (R-RT-2), raised to the rerank
    window so that Tier-2 sees a full window, capped by the request's ``top_k``.
    Independent of the page (A-1): every page of one query pages the same list, and a
    page past what was recalled is empty (``total`` says how many there are)."""
    return max(1, min(top_k, max(plan_top_k, window_size)))


def relevance(item: NodeWithScore, query: str, vector_weight: float) -> NodeWithScore:
    """Fill ``vector_similarity`` / ``term_similarity`` where missing and return a copy
    whose ``score_parts["relevance"]`` is ``w * vector + (1 - w) * term`` (R-REQ-1): the
    hybrid evidence reported beside the similarity (R-REQ-5)."""
    vector = item.vector_similarity if item.vector_similarity is not None else 0.0
    term = item.term_similarity
    if term is None:
        term = sparse_score(query, item.node.text)
    value = vector_weight * vector + (1.0 - vector_weight) * term
    return item.model_copy(
        update={
            "vector_similarity": vector,
            "term_similarity": term,
            "score_parts": {**item.score_parts, "relevance": value},
        }
    )


@dataclass(frozen=True)
class Page:
    """One page of results and the count that can be paged."""

    items: list[NodeWithScore]
    total: int
    dropped_by_threshold: int


def paginate(ordered: Sequence[NodeWithScore], page: int, page_size: int, threshold: float) -> Page:
    """Drop items whose ``score_parts["similarity"]`` is below ``threshold`` (R-REQ-4,
    A-2), then take the contiguous slice of ``page`` (1-based)."""
    kept = [item for item in ordered if item.score_parts.get("similarity", 0.0) >= threshold]
    start = (page - 1) * page_size
    return Page(
        items=kept[start : start + page_size],
        total=len(kept),
        dropped_by_threshold=len(ordered) - len(kept),
    )


def _positions(value: object) -> list[int]:
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value if isinstance(v, (int, float))]
    if isinstance(value, (int, float)):
        return [int(value)]
    return []


def assemble_chunks(
    items: Sequence[NodeWithScore], highlight_query: str | None = None
) -> list[Chunk]:
    """R-REQ-5: one ``Chunk`` per item, in order."""
    chunks = []
    for item in items:
        metadata = item.node.metadata
        parts = item.score_parts
        chunks.append(
            Chunk(
                chunk_id=item.node.node_id,
                content=item.node.text,
                document_id=str(metadata.get("document_id") or ""),
                document_name=str(metadata.get("document_name") or ""),
                kb_id=str(metadata.get("kb_name") or ""),
                collection=item.collection or str(metadata.get("collection") or ""),
                biomed_section=str(metadata.get("biomed_section") or ""),
                similarity=float(parts.get("similarity", 0.0)),
                vector_similarity=float(item.vector_similarity or 0.0),
                term_similarity=float(item.term_similarity or 0.0),
                relevance=float(parts.get("relevance", 0.0)),
                score_parts=ScoreParts(
                    ce=parts.get("ce"),
                    entity=parts.get("entity"),
                    section=parts.get("section"),
                    topic=parts.get("topic"),
                    xdrug=parts.get("xdrug"),
                    rrf=parts.get("rrf"),
                    first=parts.get("first"),
                    structure=parts.get("structure"),
                ),
                positions=_positions(metadata.get("positions") or metadata.get("page")),
                highlight=highlight(item.node.text, highlight_query) if highlight_query else None,
            )
        )
    return chunks


def doc_aggs(chunks: Sequence[Chunk]) -> list[DocAgg]:
    """R-REQ-5: per document, how many of the returned chunks belong to it, in order of
    first appearance."""
    counts: dict[str, DocAgg] = {}
    for chunk in chunks:
        key = chunk.document_id or chunk.document_name
        if key in counts:
            counts[key] = counts[key].model_copy(update={"count": counts[key].count + 1})
        else:
            counts[key] = DocAgg(
                document_id=chunk.document_id, document_name=chunk.document_name, count=1
            )
    return list(counts.values())


def assemble_response(
    context: SearchContext,
    decision: QueryRouteDecision,
    ordered: list[NodeWithScore],
    trace: list[StageTrace],
    settings: PipelineSettings,
) -> SearchResponse:
    """Threshold, page and chunks (R-REQ-4, R-REQ-5, A-1, A-2)."""
    request = context.request
    stage = Stage("assembly", items_in=len(ordered))
    threshold = (
        request.similarity_threshold
        if request.similarity_threshold is not None
        else settings.request.similarity_threshold
    )
    page = paginate(ordered, request.page, context.page_size, threshold)
    # R-REQ-5 evidence, for the returned chunks only (it orders nothing).
    shown = [relevance(item, context.query, context.alpha) for item in page.items]
    # the user's own words stay marked beside the names they were read as.
    marked = context.query if context.query == request.query else f"{request.query} {context.query}"
    chunks = assemble_chunks(shown, marked if request.highlight else None)
    dropped = f"dropped_below_threshold:{page.dropped_by_threshold}"
    trace.append(stage.done(len(chunks), [f"threshold:{threshold}", dropped]))
    return SearchResponse(
        chunks=chunks,
        doc_aggs=doc_aggs(chunks),
        total=page.total,
        page=request.page,
        page_size=context.page_size,
        intent=context.intent,
        route=list(decision.plans),
        trace=trace,
        warnings=threshold_warnings(page.total, page.dropped_by_threshold, threshold),
    )


def threshold_warnings(total: int, dropped: int, threshold: float) -> list[str]:
    """A warning naming ``similarity_threshold`` when it left nothing: ``dropped``
    candidates scored below ``threshold`` and ``total`` is 0 ("c1ccccc1" on the demo
    corpus: 45 compounds, none within Tanimoto 0.2 of benzene, and an empty answer that
    said nothing). None when something passed or nothing was found (R-REQ-4's threshold,
    A-1)."""
    if total or not dropped:
        return []
    return [
        f"similarity_threshold: all {dropped} candidates scored below {threshold:g}; "
        "a lower threshold returns them"
    ]
