"""Scores of one query's response: its metrics (``hit@k``, ``recall@k``, ``mrr@10``,
``ndcg@10`` ...), where the recorded candidate pool recalled relevant items, the time per
stage and the pool size. The runner builds each ``QueryRow`` from these."""

from __future__ import annotations

from pipeline.evaluation.judging import JudgedRanking, grade
from pipeline.evaluation.metrics import (
    hit_at_k,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
    term_coverage,
)
from pipeline.evaluation.querysets import EvalQuery, Judgement
from pipeline.evaluation.recording import PoolRecording
from pipeline.schema import SearchResponse

__all__ = ["query_metrics", "recalled_places", "recorded_pool_size", "stage_ms_totals"]


def query_metrics(
    query: EvalQuery,
    ranking: JudgedRanking,
    judgement: Judgement,
    relevant_count: int | None,
    mrr_k: int = 10,
    ndcg_k: int = 10,
) -> dict[str, float | None]:
    """Metrics of one query (keys carry their cut-off, e.g. ``hit@5``).

    ``qrels`` sets: ``hit@k``, ``recall@k`` (judged-relevant documents), ``mrr@10``,
    ``ndcg@10``. ``name`` sets: ``hit@k`` (name and section), ``hit@k_name`` (name
    only), ``recall@k`` (distinct relevant documents in the top k over
    ``min(relevant_count, k)``; None when ``relevant_count`` is unknown), ``mrr@10``,
    ``section_hit`` (queries with ``expected_section`` only) and ``term_coverage``
    (queries with ``must_include_terms`` only).
    """
    k = query.k
    gains = list(ranking.gains)
    metrics: dict[str, float | None] = {f"hit@{k}": hit_at_k(gains, k)}
    if judgement == "qrels":
        metrics[f"recall@{k}"] = recall_at_k(gains, len(query.relevant_ids), k)
        metrics[f"mrr@{mrr_k}"] = reciprocal_rank(gains, mrr_k)
        metrics[f"ndcg@{ndcg_k}"] = ndcg_at_k(gains, query.judgements.values(), ndcg_k)
        return metrics
    metrics[f"hit@{k}_name"] = hit_at_k(list(ranking.name_gains), k)
    seen: set[str] = set()
    document_gains = []
    for item, gain in zip(ranking.items, gains, strict=True):
        new = gain > 0 and item.document_id not in seen
        if new:
            seen.add(item.document_id)
        document_gains.append(1 if new else 0)
    metrics[f"recall@{k}"] = (
        recall_at_k(document_gains, relevant_count, k, capped=True)
        if relevant_count is not None
        else None
    )
    metrics[f"mrr@{mrr_k}"] = reciprocal_rank(gains, mrr_k)
    metrics["section_hit"] = hit_at_k(gains, k) if query.expected_section else None
    metrics["term_coverage"] = term_coverage(
        [item.text for item in ranking.items[:k]], query.must_include_terms
    )
    return metrics


def recalled_places(query: EvalQuery, recording: PoolRecording, judgement: Judgement) -> list[str]:
    """Where the recorded candidate pool held a relevant item, as ``origin:collection@rank``
    (origin ``supplement`` for a search scoped to documents, else the search kind, with
    ``/indications_and_usage`` for A-28's search within that section: its rank counts
    within the section)."""
    places = []
    for call, rank, item in recording.items():
        if grade(query, item, judgement) > 0:
            origin = "supplement" if call.scoped_to_documents else call.kind
            within = "".join(f"/{section}" for section in call.within_sections)
            places.append(f"{origin}{within}:{call.collection}@{rank}")
    return places


def stage_ms_totals(response: SearchResponse) -> dict[str, float]:
    """Milliseconds per stage of the response's trace, the plans counted as one ``plans``."""
    totals: dict[str, float] = {}
    for stage in response.trace:
        name = "plans" if stage.name.startswith("plan:") else stage.name
        # Plans run concurrently: their wall time is the slowest one, not the sum.
        if name == "plans":
            totals[name] = max(totals.get(name, 0.0), stage.ms)
        else:
            totals[name] = totals.get(name, 0.0) + stage.ms
    return totals


def recorded_pool_size(recording: PoolRecording | None) -> int | None:
    """Distinct chunks the recorded searches returned; None without a recording."""
    if recording is None:
        return None
    return len({item.chunk_id for _, _, item in recording.items()})
