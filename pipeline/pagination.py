"""Candidate pool, rerank window, threshold, pages and result assembly (SPEC.md
section 12, R-REQ-2..5; RAGFlow ``retrieval()`` / ``_rerank_window``).

Invariants (tested):
- the cross-encoder sees at most ``min(pool_size, tier2.max_candidates)`` candidates,
  the first ones of the first-stage order, and only for pages 1..``rerank_page_limit``
  (R-REQ-3);
- one request's order is ``reranked window + rest of the first-stage order``; every page
  is a contiguous slice of that order after the threshold, so pages are full (up to
  ``page_size``) and never skip a candidate;
- ``total`` is the length of that thresholded order: exactly what can be paged.
  As in RAGFlow, pages beyond the rerank limit use the first-stage order, which can
  differ from the reranked order of pages 1..3.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.hybrid import sparse_score
from pipeline.schema import Chunk, DocAgg, NodeWithScore, ScoreParts
from pipeline.settings import RequestSettings
from pipeline.text import query_terms

__all__ = [
    "Page",
    "assemble_chunks",
    "candidate_pool_size",
    "doc_aggs",
    "paginate",
    "plan_depth",
    "relevance",
    "rerank_window_size",
    "reranks_page",
]


def candidate_pool_size(page_size: int, top_k: int, settings: RequestSettings) -> int:
    """R-REQ-2: ``max(page_size * RERANK_PAGE_LIMIT, candidate_min)`` capped by ``top_k``."""
    return min(max(page_size * max(settings.rerank_page_limit, 1), settings.candidate_min), top_k)


def rerank_window_size(pool_size: int, max_candidates: int) -> int:
    """How many first-stage candidates the cross-encoder scores: the pool, capped."""
    return max(0, min(pool_size, max_candidates))


def reranks_page(page: int, rerank: bool, settings: RequestSettings) -> bool:
    """R-REQ-3: the cross-encoder runs for pages 1..``rerank_page_limit`` only."""
    return rerank and page <= settings.rerank_page_limit


def plan_depth(plan_top_k: int, page: int, page_size: int, top_k: int) -> int:
    """Hits each plan fetches: its routed ``top_k`` (R-RT-2), raised so the requested page
    can be filled, capped by the request's ``top_k``."""
    return max(1, min(top_k, max(plan_top_k, page * page_size)))


def relevance(item: NodeWithScore, query: str, vector_weight: float) -> NodeWithScore:
    """Fill ``vector_similarity`` / ``term_similarity`` where missing and return a copy
    whose ``score_parts["relevance"]`` is ``w * vector + (1 - w) * term`` (R-REQ-1), the
    value the similarity threshold tests (R-REQ-4)."""
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
    """Drop items whose ``score_parts["relevance"]`` is below ``threshold`` (R-REQ-4), then
    take the contiguous slice of ``page`` (1-based)."""
    kept = [item for item in ordered if item.score_parts.get("relevance", 0.0) >= threshold]
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
                similarity=float(item.score),
                vector_similarity=float(item.vector_similarity or 0.0),
                term_similarity=float(item.term_similarity or 0.0),
                relevance=float(parts.get("relevance", 0.0)),
                score_parts=ScoreParts(
                    ce=parts.get("ce"),
                    entity=parts.get("entity"),
                    section=parts.get("section"),
                    xdrug=parts.get("xdrug"),
                    rrf=parts.get("rrf"),
                ),
                positions=_positions(metadata.get("positions") or metadata.get("page")),
                highlight=_highlight(item.node.text, highlight_query) if highlight_query else None,
            )
        )
    return chunks


def _highlight(text: str, query: str) -> str:
    terms = sorted(query_terms(query), key=len, reverse=True)
    if not terms:
        return text
    pattern = re.compile("|".join(rf"\b{re.escape(term)}\b" for term in terms), re.I)
    return pattern.sub(lambda match: f"<em>{match.group(0)}</em>", text)


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
