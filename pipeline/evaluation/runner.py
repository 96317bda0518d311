"""Run a query set against one search function per ablation and score every query.

The runner knows nothing of Ray, HTTP or stores: an ablation is a name plus an async
``search(SearchRequest) -> SearchResponse`` (an in-process ``Retriever`` with some stages
switched off, or the remote service), optionally with the :class:`RecordingVectorStore`
its retriever searches through (the candidate pool, for recall vs ranking gaps).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pipeline.errors import BiomedSearchError
from pipeline.evaluation.diagnosis import (
    FAILURE_CLASSES,
    CorpusFacts,
    CorpusProbe,
    classify_miss,
)
from pipeline.evaluation.judging import ResultItem, judge
from pipeline.evaluation.metrics import first_relevant_rank
from pipeline.evaluation.query_scores import (
    query_metrics,
    recalled_places,
    recorded_pool_size,
    stage_ms_totals,
)
from pipeline.evaluation.querysets import EvalQuery, QuerySet
from pipeline.evaluation.recording import RecordingVectorStore
from pipeline.schema import SearchRequest, SearchResponse

__all__ = [
    "AblationSummary",
    "AblationTarget",
    "EvalOptions",
    "EvalRun",
    "QueryRow",
    "SearchFunction",
    "evaluate",
    "query_metrics",
]

logger = logging.getLogger(__name__)

SearchFunction = Callable[[SearchRequest], Awaitable[SearchResponse]]


@dataclass(frozen=True)
class EvalOptions:
    """How each query is asked.

    Attributes:
        page_size: results (chunks) requested per query. Up to 20 this leaves the
            candidate pool of the production default (plans fetch
            ``max(collection_recall_top_k, page_size)`` hits), while leaving room for 10
            distinct documents after de-duplication.
        similarity_threshold: 0.0, so that thresholding (R-REQ-4) hides nothing.
        kb: knowledge base the requests are scoped to (``kb_ids``); None = all.
        mrr_k: cut-off of the reciprocal rank (MRR@10).
        ndcg_k: cut-off of nDCG (nDCG@10).
        concurrency: queries in flight at once (1 gives clean per-query latencies).
        keep_top: results per query kept in the report rows.
    """

    page_size: int = 20
    similarity_threshold: float = 0.0
    kb: str | None = None
    mrr_k: int = 10
    ndcg_k: int = 10
    concurrency: int = 1
    keep_top: int = 10


@dataclass
class AblationTarget:
    """One row of the ladder as something to call."""

    name: str
    description: str
    search: SearchFunction
    pool: RecordingVectorStore | None = None


@dataclass
class QueryRow:
    """One query under one ablation: what came back, how it scores, why it missed."""

    ablation: str
    query_id: str
    query: str
    k: int
    metrics: dict[str, float | None]
    first_relevant_rank: int | None
    first_name_rank: int | None
    failure: str
    failure_detail: str
    workflow: str = ""
    route: list[str] = field(default_factory=list)
    searched_collections: list[str] = field(default_factory=list)
    latency_ms: float = 0.0
    stage_ms: dict[str, float] = field(default_factory=dict)
    pool_size: int | None = None
    degraded: list[str] = field(default_factory=list)
    answerable: bool | None = None
    top: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


@dataclass
class AblationSummary:
    """Mean metrics, failure counts and timings of one ablation over the query set."""

    name: str
    description: str
    queries: int
    metrics: dict[str, float]
    failures: dict[str, int]
    latency_ms_mean: float
    latency_ms_p50: float
    latency_ms_p95: float
    wall_s: float
    stage_ms_mean: dict[str, float]
    errors: int
    degraded_queries: int = 0
    answerable: int | None = None
    answerable_metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class EvalRun:
    """Everything one evaluation produced."""

    dataset: str
    query_set: str
    source: str
    judgement: str
    options: dict[str, Any]
    summaries: list[AblationSummary]
    rows: list[QueryRow]
    extra: dict[str, Any] = field(default_factory=dict)

    def rows_of(self, ablation: str) -> list[QueryRow]:
        """The rows of ablation ``ablation``, in run order (``[]`` for an unknown name)."""
        return [row for row in self.rows if row.ablation == ablation]

    def to_dict(self) -> dict[str, Any]:
        """The whole run as plain dicts and lists (``dataclasses.asdict``)."""
        return asdict(self)


async def _run_query(
    query: EvalQuery,
    target: AblationTarget,
    query_set: QuerySet,
    options: EvalOptions,
    facts: CorpusFacts | None,
) -> QueryRow:
    request = SearchRequest(
        query=query.text,
        kb_ids=[options.kb] if options.kb else [],
        page_size=max(options.page_size, query.k),
        similarity_threshold=options.similarity_threshold,
    )
    recording_context = (
        target.pool.recording() if target.pool is not None else contextlib.nullcontext(None)
    )
    started = time.perf_counter()
    with recording_context as recording:
        try:
            response = await target.search(request)
            error = None
        except (BiomedSearchError, OSError, TimeoutError, RuntimeError) as failure:
            response, error = None, f"{type(failure).__name__}: {failure}"
    latency = (time.perf_counter() - started) * 1000.0
    if response is None:
        return QueryRow(
            ablation=target.name,
            query_id=query.query_id,
            query=query.text,
            k=query.k,
            metrics={},
            first_relevant_rank=None,
            first_name_rank=None,
            failure="error",
            failure_detail=error or "",
            latency_ms=latency,
            error=error,
        )
    items = [ResultItem.from_chunk(chunk) for chunk in response.chunks]
    ranking = judge(query, items, query_set.judgement)
    relevant_count = (
        len(facts.relevant_documents)
        if facts is not None and facts.known and facts.relevant_documents is not None
        else None
    )
    metrics = query_metrics(
        query, ranking, query_set.judgement, relevant_count, options.mrr_k, options.ndcg_k
    )
    route = [plan.collection for plan in response.route]
    searched = recording.searched_collections if recording is not None else set(route)
    failure, detail = classify_miss(
        hit=metrics[f"hit@{query.k}"] == 1.0,
        facts=facts,
        searched_collections=searched,
        recalled=recalled_places(query, recording, query_set.judgement) if recording else None,
    )
    top = [
        {
            "rank": rank,
            "document_id": item.document_id,
            "document_name": item.document_name,
            "section": item.section,
            "collection": item.collection,
            "score": round(item.score, 6),
            "grade": gain,
        }
        for rank, (item, gain) in enumerate(
            zip(ranking.items[: options.keep_top], ranking.gains, strict=False), start=1
        )
    ]
    return QueryRow(
        ablation=target.name,
        query_id=query.query_id,
        query=query.text,
        k=query.k,
        metrics=metrics,
        first_relevant_rank=first_relevant_rank(ranking.gains),
        first_name_rank=first_relevant_rank(ranking.name_gains),
        failure=failure,
        failure_detail=detail,
        workflow=response.intent.workflow,
        route=route,
        searched_collections=sorted(searched),
        latency_ms=latency,
        stage_ms=stage_ms_totals(response),
        pool_size=recorded_pool_size(recording),
        degraded=[stage.name for stage in response.trace if stage.degraded],
        answerable=bool(facts.relevant_documents) if facts is not None and facts.known else None,
        top=top,
    )


def _percentile(values: Sequence[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _means(rows: Sequence[QueryRow]) -> dict[str, float]:
    names = list(dict.fromkeys(name for row in rows for name in row.metrics))
    metrics = {}
    for name in names:
        values = [row.metrics[name] for row in rows if row.metrics.get(name) is not None]
        if values:
            metrics[name] = float(statistics.fmean(values))  # type: ignore[arg-type]
    return metrics


def summarise(target: AblationTarget, rows: Sequence[QueryRow], wall_s: float) -> AblationSummary:
    """Means over the queries that carry each metric; the same over the *answerable*
    queries (something relevant is stored; known only with a corpus probe); failure
    counts; timings."""
    metrics = _means(rows)
    probed = [row for row in rows if row.answerable is not None]
    answerable = [row for row in probed if row.answerable]
    failures = dict.fromkeys(FAILURE_CLASSES, 0)
    for row in rows:
        failures[row.failure] = failures.get(row.failure, 0) + 1
    latencies = [row.latency_ms for row in rows if row.error is None]
    stage_names = list(dict.fromkeys(name for row in rows for name in row.stage_ms))
    stage_means = {
        name: float(statistics.fmean(row.stage_ms.get(name, 0.0) for row in rows))
        for name in stage_names
    }
    return AblationSummary(
        name=target.name,
        description=target.description,
        queries=len(rows),
        metrics=metrics,
        failures={name: count for name, count in failures.items() if count},
        latency_ms_mean=float(statistics.fmean(latencies)) if latencies else 0.0,
        latency_ms_p50=_percentile(latencies, 0.5),
        latency_ms_p95=_percentile(latencies, 0.95),
        wall_s=wall_s,
        stage_ms_mean=stage_means,
        errors=sum(1 for row in rows if row.error),
        degraded_queries=sum(1 for row in rows if row.degraded),
        answerable=len(answerable) if probed else None,
        answerable_metrics=_means(answerable) if probed else {},
    )


async def evaluate(
    query_set: QuerySet,
    targets: Sequence[AblationTarget],
    options: EvalOptions,
    probe: CorpusProbe | None = None,
    dataset: str = "",
    progress: Callable[[str, int, int], None] | None = None,
    on_ablation: Callable[[EvalRun], None] | None = None,
) -> EvalRun:
    """Run every query of ``query_set`` under every target, ablation by ablation.

    Args:
        query_set: queries and their judgement.
        targets: the ablation rows, in report order.
        options: request shape (page size, threshold 0.0, kb scope, concurrency).
        probe: what is stored (corpus and route gaps); None skips those classes.
        dataset: the dataset name for the report.
        progress: called as ``(ablation, done, total)`` after each query.
        on_ablation: called with the run so far after each ablation (checkpoints).

    Returns:
        The run: one summary per target and one row per (target, query).
    """
    facts: dict[str, CorpusFacts | None] = {}
    for query in query_set:
        if probe is None:
            facts[query.query_id] = None
            continue
        try:
            facts[query.query_id] = await probe.facts(query, query_set.judgement)
        except (BiomedSearchError, OSError, ValueError) as error:
            logger.warning("corpus probe failed for %s: %s", query.query_id, error)
            facts[query.query_id] = None
    semaphore = asyncio.Semaphore(max(1, options.concurrency))
    run = EvalRun(
        dataset=dataset,
        query_set=query_set.name,
        source=query_set.source,
        judgement=query_set.judgement,
        options=asdict(options),
        summaries=[],
        rows=[],
    )
    for target in targets:
        done = 0

        async def bounded(query: EvalQuery, target: AblationTarget = target) -> QueryRow:
            nonlocal done
            async with semaphore:
                row = await _run_query(query, target, query_set, options, facts[query.query_id])
            done += 1
            if progress is not None:
                progress(target.name, done, len(query_set))
            return row

        started = time.perf_counter()
        target_rows = list(await asyncio.gather(*(bounded(query) for query in query_set)))
        wall = time.perf_counter() - started
        run.rows.extend(target_rows)
        run.summaries.append(summarise(target, target_rows, wall))
        if on_ablation is not None:
            on_ablation(run)
    return run
