"""Prometheus metrics of the service through Ray Serve's metrics API
(``ray.serve.metrics``): Ray's metrics agent exports them on each node's metrics export
port with a ``ray_`` prefix (``biomed_search_requests`` -> ``ray_biomed_search_requests_total``),
next to Ray Serve's own ``ray_serve_*`` series. Ray adds the tags ``deployment``,
``replica`` and ``application`` itself; the tags below are ours.

| metric (as defined here)            | type      | tags                          |
|-------------------------------------|-----------|-------------------------------|
| ``biomed_search_requests``          | counter   | endpoint, workflow, status    |
| ``biomed_search_stage_latency_ms``  | histogram | stage                         |
| ``biomed_search_stage_degraded``    | counter   | stage                         |
| ``biomed_search_stage_fallbacks``   | counter   | stage, decision               |
| ``biomed_search_query_cache_hits``  | counter   | (none)                        |
| ``biomed_search_query_cache_misses``| counter   | (none)                        |
| ``biomed_search_batch_items``       | histogram | (none: ``deployment`` by Ray) |
| ``biomed_search_batch_requests``    | histogram | (none: ``deployment`` by Ray) |

Metric objects are built on first use in the process that records them, so inside a
Serve replica they carry the replica's tags; outside Ray they record nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import cache
from typing import Any

from ray.serve import metrics

from pipeline.schema import SearchResponse, StageTrace

__all__ = [
    "BATCH_BOUNDARIES",
    "LATENCY_BOUNDARIES_MS",
    "NO_WORKFLOW",
    "RequestMetricsMiddleware",
    "SearchMetrics",
    "fallback_decisions",
    "observe_batch",
    "search_metrics",
]

#: Bucket upper bounds of the stage latency histogram, in ms.
LATENCY_BOUNDARIES_MS: list[float] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000,
]  # fmt: skip
#: Bucket upper bounds of the batch-size histograms (items or requests per batch).
BATCH_BOUNDARIES: list[float] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
#: ``workflow`` tag of a request that produced no search response (an error, or not a
#: search endpoint).
NO_WORKFLOW = "none"
#: the status recorded for a request whose client went away first (nginx's convention)
CLIENT_CLOSED = 499
#: Decision suffixes that name the fallback a degraded stage took.
_FALLBACK_SUFFIXES = ("_failed", "_timeout", "_skipped")


def fallback_decisions(entry: StageTrace) -> list[str]:
    """The fallbacks a trace entry records: for a degraded entry, each decision naming
    the path taken instead (``rerank_t2_fallback_existing_scores``, ``plan_failed``,
    ``plan_timeout``, ``plan_skipped``, ``supplement_failed``); none for an entry that
    ran normally (``supplement_skipped_no_entity_intent`` there is a normal skip)."""
    if not entry.degraded:
        return []
    return [
        decision
        for decision in entry.decisions
        if "fallback" in decision or decision.endswith(_FALLBACK_SUFFIXES)
    ]


class SearchMetrics:
    """The metric objects of one process (build them through :func:`search_metrics`)."""

    def __init__(self) -> None:
        self.requests = metrics.Counter(
            "biomed_search_requests",
            description="HTTP requests answered by the ingress, by endpoint (route "
            "template), workflow of the query intent ('none' without a search response) "
            "and HTTP status code.",
            tag_keys=("endpoint", "workflow", "status"),
        )
        self.stage_latency = metrics.Histogram(
            "biomed_search_stage_latency_ms",
            description="Wall time of each pipeline stage of a search (the response "
            "trace's ms), by stage name.",
            boundaries=LATENCY_BOUNDARIES_MS,
            tag_keys=("stage",),
        )
        self.degraded = metrics.Counter(
            "biomed_search_stage_degraded",
            description="Pipeline stages that ran only in part or failed and were "
            "skipped (trace entries with degraded=true), by stage name.",
            tag_keys=("stage",),
        )
        self.fallbacks = metrics.Counter(
            "biomed_search_stage_fallbacks",
            description="Fallbacks taken by degraded stages, by stage and the trace "
            "decision naming the fallback.",
            tag_keys=("stage", "decision"),
        )
        self.cache_hits = metrics.Counter(
            "biomed_search_query_cache_hits",
            description="Query embeddings served from the ingress's (role, text) cache or "
            "shared within one request.",
        )
        self.cache_misses = metrics.Counter(
            "biomed_search_query_cache_misses",
            description="Query embeddings that needed an encoder call.",
        )
        self.batch_items = metrics.Histogram(
            "biomed_search_batch_items",
            description="Items (texts, pairs, images) per model forward call, per model "
            "deployment (dynamic batching).",
            boundaries=BATCH_BOUNDARIES,
        )
        self.batch_requests = metrics.Histogram(
            "biomed_search_batch_requests",
            description="Caller requests combined into one model forward call, per model "
            "deployment.",
            boundaries=BATCH_BOUNDARIES,
        )

    def record_response(self, response: SearchResponse) -> None:
        """Stage latencies, degraded stages and fallbacks of one search's trace."""
        for entry in response.trace:
            tags = {"stage": entry.name}
            self.stage_latency.observe(max(entry.ms, 0.0), tags=tags)
            if entry.degraded:
                self.degraded.inc(tags=tags)
            for decision in fallback_decisions(entry):
                self.fallbacks.inc(tags={"stage": entry.name, "decision": decision})

    def record_request(self, endpoint: str, workflow: str, status: int) -> None:
        """One answered HTTP request."""
        self.requests.inc(tags={"endpoint": endpoint, "workflow": workflow, "status": str(status)})


@cache
def search_metrics() -> SearchMetrics:
    """This process's metrics, built on first use (inside a replica: with its tags)."""
    return SearchMetrics()


def observe_batch(items: int, requests: int) -> None:
    """Record one forward call of a model deployment: ``items`` in it, from ``requests``
    callers (called by ``BatchStats.record``)."""
    recorder = search_metrics()
    recorder.batch_items.observe(float(items))
    recorder.batch_requests.observe(float(requests))


@dataclass
class _CacheCursor:
    """Last (hits, misses) of the query cache reported, so counters get the deltas."""

    hits: int = 0
    misses: int = 0


def _cache_counts(service: Any) -> tuple[int, int] | None:
    retriever = getattr(service, "retriever", None)
    embeddings = getattr(retriever, "embeddings", None)
    if embeddings is None:
        return None
    return int(embeddings.cache_hits), int(embeddings.cache_misses)


class RequestMetricsMiddleware:
    """ASGI middleware of the ingress: after each HTTP request, counts it by endpoint
    (the matched route's path template, ``unmatched`` for none), workflow and status, and
    records the search response a handler left in ``request.state.search_response``
    (stage latencies, degradations, fallbacks) and the query cache's new hits and misses.

    Requests that Ray Serve rejects before the ingress (backpressure 503s) never reach
    it: Ray Serve's own ``ray_serve_num_http_error_requests_total`` counts those.

    Args:
        app: the wrapped ASGI application.
        service: the ``SearchService`` whose query cache is reported (None: not reported).
    """

    def __init__(self, app: Any, service: Any = None) -> None:
        self.app = app
        self.service = service
        self._cursor = _CacheCursor()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # an exception escaping the app becomes a 500 outside this layer

        async def send_status(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        except asyncio.CancelledError:  # the client went away: not a server error
            if status == 500:
                status = CLIENT_CLOSED
            raise
        finally:
            self._record(scope, status)

    def _record(self, scope: dict[str, Any], status: int) -> None:
        recorder = search_metrics()
        route = scope.get("route")
        endpoint = str(getattr(route, "path", "unmatched"))
        response = (scope.get("state") or {}).get("search_response")
        workflow = NO_WORKFLOW
        if isinstance(response, SearchResponse):
            workflow = response.intent.workflow
            recorder.record_response(response)
        recorder.record_request(endpoint, workflow, status)
        self._record_cache(recorder)

    def _record_cache(self, recorder: SearchMetrics) -> None:
        counts = _cache_counts(self.service)
        if counts is None:
            return
        hits, misses = counts
        # no await between reading and moving the cursor: concurrent requests on this
        # event loop cannot report the same delta twice
        if hits < self._cursor.hits or misses < self._cursor.misses:
            self._cursor = _CacheCursor()  # the retriever was rebuilt: counts restarted
        new_hits, new_misses = hits - self._cursor.hits, misses - self._cursor.misses
        self._cursor.hits, self._cursor.misses = hits, misses
        if new_hits > 0:
            recorder.cache_hits.inc(new_hits)
        if new_misses > 0:
            recorder.cache_misses.inc(new_misses)
