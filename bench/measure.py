"""Numbers of the benchmarks: latency percentiles, batch-size histograms observed during a
run (the difference of two ``GET /v1/stats`` snapshots), and the stage-time breakdown of
response traces (``SearchResponse.trace``). Pure functions over plain data."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "RECALL_PREFIXES",
    "LatencySummary",
    "batch_histogram_difference",
    "critical_path_ms",
    "percentile",
    "stage_breakdown",
    "stage_times",
    "summarise_latencies",
]

#: Trace stages that run concurrently with each other when plans run in parallel.
RECALL_PREFIXES = ("plan:", "supplement")
#: Trace stages timed inside another stage (``backfill`` is part of ``tier2``).
NESTED_STAGES = frozenset({"backfill"})


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile (0..1) by linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = math.floor(position)
    high = math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class LatencySummary:
    """Latencies (ms) of the successful requests of one load level, with its throughput
    and error rate."""

    requests: int
    errors: int
    seconds: float
    throughput_rps: float
    error_rate: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    mean_ms: float

    def as_dict(self) -> dict[str, float]:
        """Rounded fields for JSON."""
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(self).items()}


def summarise_latencies(
    latencies_ms: Sequence[float], errors: int, seconds: float
) -> LatencySummary:
    """Summary of one level: ``latencies_ms`` of the successful requests, ``errors``
    failed ones, ``seconds`` of wall time. Throughput counts successful requests only."""
    total = len(latencies_ms) + errors
    return LatencySummary(
        requests=total,
        errors=errors,
        seconds=seconds,
        throughput_rps=len(latencies_ms) / seconds if seconds > 0 else math.nan,
        error_rate=errors / total if total else math.nan,
        p50_ms=percentile(latencies_ms, 0.50),
        p90_ms=percentile(latencies_ms, 0.90),
        p99_ms=percentile(latencies_ms, 0.99),
        max_ms=max(latencies_ms, default=math.nan),
        mean_ms=sum(latencies_ms) / len(latencies_ms) if latencies_ms else math.nan,
    )


def _counts(histogram: Mapping[Any, Any] | None) -> dict[int, int]:
    return {int(size): int(count) for size, count in (histogram or {}).items()}


def batch_histogram_difference(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """Per model deployment, the batches formed between two ``/v1/stats`` bodies
    (``{"deployments": {name: {"batches", "histogram", "requests_histogram"}}}``):
    items-per-forward histogram, requests-per-batch histogram, mean items per batch.

    The deployments keep a window of their last batches; when more batches than the
    window happened in between, the histograms undercount and ``window_exceeded`` is
    set. With several replicas, each snapshot comes from one replica.
    """
    result: dict[str, dict[str, Any]] = {}
    later = after.get("deployments", after)
    earlier = before.get("deployments", before)
    for name, stats in later.items():
        if not isinstance(stats, Mapping) or "histogram" not in stats:
            result[name] = {"error": str(stats.get("error", "no statistics"))}
            continue
        previous = earlier.get(name) or {}
        batches = int(stats.get("batches", 0)) - int(previous.get("batches", 0))
        sizes = _counts(stats.get("histogram"))
        for size, count in _counts(previous.get("histogram")).items():
            sizes[size] = sizes.get(size, 0) - count
        requests = _counts(stats.get("requests_histogram"))
        for size, count in _counts(previous.get("requests_histogram")).items():
            requests[size] = requests.get(size, 0) - count
        sizes = {k: v for k, v in sorted(sizes.items()) if v > 0}
        requests = {k: v for k, v in sorted(requests.items()) if v > 0}
        counted = sum(sizes.values())
        result[name] = {
            "batches": batches,
            "items_histogram": sizes,
            "requests_histogram": requests,
            "mean_items": round(sum(k * v for k, v in sizes.items()) / counted, 2)
            if counted
            else 0.0,
            "max_items": max(sizes, default=0),
            "window_exceeded": counted < batches,
        }
    return result


def stage_times(trace: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """One response's stage times in ms: each stage by name, plus per plan
    ``<plan> encode`` / ``ann`` / ``tier1`` from its detail, and the groups of the
    breakdown table: ``encode`` and ``ann`` (slowest plan), ``rrf`` (RRF + injection)."""
    times: dict[str, float] = {}
    for entry in trace:
        name = str(entry.get("name"))
        times[name] = times.get(name, 0.0) + float(entry.get("ms") or 0.0)
        if name.startswith("plan:"):
            detail = entry.get("detail") or {}
            for key in ("encode_ms", "ann_ms", "tier1_ms"):
                if key in detail:
                    times[f"{name} {key.removesuffix('_ms')}"] = float(detail[key])
    for part in ("encode", "ann", "tier1"):
        values = [v for k, v in times.items() if k.startswith("plan:") and k.endswith(part)]
        if values:
            times[part] = max(values)
    times["rrf+injection"] = times.get("rrf", 0.0) + times.get("injection", 0.0)
    return times


def critical_path_ms(trace: Iterable[Mapping[str, Any]], parallel_plans: bool = True) -> float:
    """Time the pipeline's stages account for in one response: the sequential stages
    plus the recall stages (plans, supplement) as the slowest one when they run in
    parallel, their sum otherwise. Nested stages (``backfill``) are not added twice."""
    sequential = 0.0
    recall: list[float] = []
    for entry in trace:
        name = str(entry.get("name"))
        ms = float(entry.get("ms") or 0.0)
        if name in NESTED_STAGES:
            continue
        if name.startswith(RECALL_PREFIXES):
            recall.append(ms)
        else:
            sequential += ms
    return sequential + ((max(recall, default=0.0)) if parallel_plans else sum(recall))


def stage_breakdown(
    traces: Sequence[Sequence[Mapping[str, Any]]],
    latencies_ms: Sequence[float] | None = None,
    parallel_plans: bool = True,
) -> dict[str, dict[str, float]]:
    """Per stage over many responses: p50, p90 and mean ms and in how many responses it
    appeared; with ``latencies_ms`` (same order), also ``stages (critical path)`` and
    ``outside stages`` (latency minus critical path: HTTP, proxy, ingress, queueing
    before the pipeline starts)."""
    columns: dict[str, list[float]] = {}
    for trace in traces:
        for name, ms in stage_times(trace).items():
            columns.setdefault(name, []).append(ms)
        columns.setdefault("stages (critical path)", []).append(
            critical_path_ms(trace, parallel_plans)
        )
    if latencies_ms is not None:
        paths = columns.get("stages (critical path)", [])
        columns["total (client)"] = list(latencies_ms)
        columns["outside stages"] = [
            latency - path for latency, path in zip(latencies_ms, paths, strict=False)
        ]
    return {
        name: {
            "p50_ms": round(percentile(values, 0.5), 3),
            "p90_ms": round(percentile(values, 0.9), 3),
            "mean_ms": round(sum(values) / len(values), 3),
            "responses": len(values),
        }
        for name, values in columns.items()
        if values
    }
