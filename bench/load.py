"""HTTP load generator for a running biomed-search service (``POST /v1/search``).

Closed loop: ``C`` workers each send the next request as soon as the previous one
answers, for each concurrency ``C``. Open loop: requests arrive at a given rate with
exponential gaps (Poisson arrivals) whether or not earlier ones have answered; latency
counts from the scheduled arrival, so a backed-up service is not hidden (no coordinated
omission). Every level is bounded by a request count and a time limit.

Reported per level: throughput (successful requests/s), p50 / p90 / p99 / max latency,
error rate and status codes, the encoder and cross-encoder batch sizes formed during the
level (difference of ``GET /v1/stats`` before and after), and for chosen concurrencies a
stage-time breakdown from the response traces. Queries come from real query sets,
request-unique by default (see :mod:`bench.queries`: the ingress caches query
embeddings). Writes ``<out>/load-<label>-<time>.json`` and a PNG beside it.

Usage (the ``biomed-search-bench`` command, or ``python -m bench.load`` from the
repository root)::

    biomed-search-bench http://127.0.0.1:8000                     # 1, 4, 16, 64
    biomed-search-bench --url http://127.0.0.1:8000 --rates 0.5 1
    python -m bench.load --url URL --concurrency 1 16 --requests 64 --rates 0.5 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from bench import REPOSITORY
from bench.measure import (
    batch_histogram_difference,
    stage_breakdown,
    summarise_latencies,
)
from bench.plots import plot_load
from bench.queries import DEFAULT_QUERY_SETS, QueryMix

__all__ = [
    "LevelResult",
    "LoadSettings",
    "Outcome",
    "degraded_stages",
    "format_levels",
    "main",
    "parse_arguments",
    "run_closed_loop",
    "run_load",
    "run_open_loop",
    "write_report",
]

DEFAULT_OUT = REPOSITORY / "bench" / "results"


@dataclass(frozen=True)
class LoadSettings:
    """One load run: where, which levels, bounds per level, the query mix and outputs."""

    url: str = "http://127.0.0.1:8000"
    concurrencies: tuple[int, ...] = (1, 4, 16, 64)
    rates: tuple[float, ...] = ()
    requests: int = 128
    duration_s: float = 120.0
    warmup: int = 2
    timeout_s: float = 120.0
    page_size: int = 5
    kb_ids: tuple[str, ...] = ()
    query_sets: tuple[Path, ...] = DEFAULT_QUERY_SETS
    unique: bool = True
    seed: int = 0
    suffix_offset: int | None = None
    stage_concurrencies: tuple[int, ...] = (1, 16)
    parallel_plans: bool = True
    max_in_flight: int = 256
    api_key: str | None = None
    label: str = "service"
    out_dir: Path = DEFAULT_OUT
    plot: bool = True


@dataclass
class Outcome:
    """One request: latency (ms), HTTP status (0 = no response) and, when kept, the
    response trace."""

    latency_ms: float
    status: int
    error: str | None = None
    trace: list[dict[str, Any]] | None = None
    degraded: tuple[str, ...] = ()


@dataclass
class LevelResult:
    """One load level and what it measured."""

    mode: str
    concurrency: int | None
    rate_rps: float | None
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    batches: dict[str, Any] = field(default_factory=dict)

    def as_dict(self, parallel_plans: bool = True) -> dict[str, Any]:
        """The level's report (no per-request data)."""
        ok = [o for o in self.outcomes if o.status == 200]
        summary = summarise_latencies([o.latency_ms for o in ok], len(self.outcomes) - len(ok),
                                      self.seconds)
        report: dict[str, Any] = {
            "mode": self.mode,
            "concurrency": self.concurrency,
            "rate_rps": self.rate_rps,
            "summary": summary.as_dict(),
            "status_codes": dict(Counter(str(o.status) for o in self.outcomes)),
            "degraded_stages": dict(Counter(name for o in ok for name in o.degraded)),
            "errors_sample": sorted({o.error for o in self.outcomes if o.error})[:5],
            "batches": self.batches,
        }
        traced = [o for o in ok if o.trace is not None]
        if traced:
            report["stages"] = stage_breakdown(
                [o.trace for o in traced if o.trace is not None],
                [o.latency_ms for o in traced],
                parallel_plans,
            )
        return report


def degraded_stages(trace: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """Names of the stages a response's trace marks degraded (a stage that failed or ran
    out of budget and fell back): a variant that looks fast because it degrades more
    must show it."""
    return tuple(str(entry.get("name")) for entry in trace if entry.get("degraded"))


class _Client:
    """The HTTP side: one ``httpx.AsyncClient``, the request body, the stats endpoint."""

    def __init__(self, settings: LoadSettings, connections: int) -> None:
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self.settings = settings
        self.http = httpx.AsyncClient(
            base_url=settings.url.rstrip("/"),
            headers=headers,
            timeout=settings.timeout_s,
            limits=httpx.Limits(max_connections=connections,
                                max_keepalive_connections=connections),
        )

    async def search(self, query: str, keep_trace: bool, started: float | None = None) -> Outcome:
        body: dict[str, Any] = {"query": query, "page_size": self.settings.page_size}
        if self.settings.kb_ids:
            body["kb_ids"] = list(self.settings.kb_ids)
        start = time.perf_counter() if started is None else started
        try:
            response = await self.http.post("/v1/search", json=body)
        except httpx.HTTPError as error:
            return Outcome((time.perf_counter() - start) * 1000.0, 0,
                           f"{type(error).__name__}: {error}"[:200])
        latency = (time.perf_counter() - start) * 1000.0
        if response.status_code != 200:
            return Outcome(latency, response.status_code, response.text[:200])
        trace = response.json().get("trace") or []
        return Outcome(latency, 200, None, trace if keep_trace else None,
                       degraded_stages(trace))

    async def stats(self) -> dict[str, Any]:
        try:
            response = await self.http.get("/v1/stats")
            response.raise_for_status()
            return dict(response.json())
        except (httpx.HTTPError, ValueError) as error:
            return {"error": f"{type(error).__name__}: {error}"[:200]}

    async def close(self) -> None:
        await self.http.aclose()


async def run_closed_loop(
    client: _Client, mix: QueryMix, concurrency: int, keep_trace: bool
) -> LevelResult:
    """``concurrency`` workers, each sending its next request when the last answers,
    until ``settings.requests`` were sent or ``settings.duration_s`` passed."""
    settings = client.settings
    level = LevelResult("closed", concurrency, None)
    remaining = settings.requests
    deadline = time.perf_counter() + settings.duration_s

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0 and time.perf_counter() < deadline:
            remaining -= 1
            level.outcomes.append(await client.search(mix.next(), keep_trace))

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    level.seconds = time.perf_counter() - start
    return level


async def run_open_loop(
    client: _Client, mix: QueryMix, rate_rps: float, keep_trace: bool, seed: int = 0
) -> LevelResult:
    """Poisson arrivals at ``rate_rps`` until ``settings.requests`` arrived or
    ``settings.duration_s`` passed; arrivals beyond ``max_in_flight`` outstanding
    requests are counted as client-side drops (status 0), not sent."""
    settings = client.settings
    level = LevelResult("open", None, rate_rps)
    gaps = random.Random(seed)
    tasks: list[asyncio.Task[None]] = []
    in_flight = 0

    async def send(query: str, scheduled: float) -> None:
        nonlocal in_flight
        in_flight += 1
        try:
            level.outcomes.append(await client.search(query, keep_trace, started=scheduled))
        finally:
            in_flight -= 1

    start = time.perf_counter()
    arrival = start
    for _ in range(settings.requests):
        arrival += gaps.expovariate(rate_rps)
        if arrival - start > settings.duration_s:
            break
        await asyncio.sleep(max(0.0, arrival - time.perf_counter()))
        if in_flight >= settings.max_in_flight:
            level.outcomes.append(Outcome(0.0, 0, "client: max_in_flight reached, not sent"))
            continue
        tasks.append(asyncio.create_task(send(mix.next(), arrival)))
    await asyncio.gather(*tasks)
    level.seconds = time.perf_counter() - start
    return level


async def run_load(settings: LoadSettings) -> dict[str, Any]:
    """Warm up, then every closed-loop concurrency and open-loop rate in turn; the
    report as a JSON-ready mapping."""
    suffix_offset = settings.suffix_offset
    if suffix_offset is None:  # another run's suffixes rarely meet the same query again
        suffix_offset = random.randrange(8**5)
    mix = QueryMix.from_paths(settings.query_sets, settings.seed, settings.unique, suffix_offset)
    connections = max([*settings.concurrencies, settings.max_in_flight, 1])
    client = _Client(settings, connections)
    levels: list[LevelResult] = []
    started = time.time()
    try:
        for _ in range(settings.warmup):
            await client.search(mix.next(), keep_trace=False)
        plan: list[tuple[str, float]] = [("closed", c) for c in settings.concurrencies]
        plan += [("open", r) for r in settings.rates]
        for mode, value in plan:
            before = await client.stats()
            keep = mode == "closed" and int(value) in settings.stage_concurrencies
            if mode == "closed":
                level = await run_closed_loop(client, mix, int(value), keep)
            else:
                level = await run_open_loop(client, mix, value, keep, settings.seed)
            after = await client.stats()
            level.batches = (
                batch_histogram_difference(before, after)
                if "error" not in before and "error" not in after
                else {"error": before.get("error") or after.get("error")}
            )
            levels.append(level)
            print(format_levels([level.as_dict(settings.parallel_plans)], header=False),
                  file=sys.stderr, flush=True)
    finally:
        await client.close()
    return {
        "label": settings.label,
        "url": settings.url,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        "settings": {
            "requests_per_level": settings.requests,
            "duration_s_per_level": settings.duration_s,
            "warmup": settings.warmup,
            "page_size": settings.page_size,
            "kb_ids": list(settings.kb_ids),
            "query_sets": [str(p) for p in settings.query_sets],
            "parallel_plans_assumed": settings.parallel_plans,
        },
        "queries": mix.describe(),
        "levels": [level.as_dict(settings.parallel_plans) for level in levels],
    }


def format_levels(levels: Sequence[dict[str, Any]], header: bool = True) -> str:
    """A fixed-width table of level reports: load, throughput, percentiles, errors and
    mean items per batch of each model deployment."""
    lines = []
    if header:
        lines.append(f"{'level':<12} {'req':>5} {'rps':>7} {'p50':>8} {'p90':>8} {'p99':>8} "
                     f"{'max':>8} {'err%':>6} {'degr':>5}  mean batch (items)")
    for level in levels:
        name = (f"c={level['concurrency']}" if level["mode"] == "closed"
                else f"rate={level['rate_rps']:g}")
        summary = level["summary"]
        batches = ", ".join(
            f"{deployment}:{stats.get('mean_items', '?')}"
            for deployment, stats in (level.get("batches") or {}).items()
            if isinstance(stats, dict)
        )
        lines.append(
            f"{name:<12} {summary['requests']:>5} {summary['throughput_rps']:>7.2f} "
            f"{summary['p50_ms']:>8.0f} {summary['p90_ms']:>8.0f} {summary['p99_ms']:>8.0f} "
            f"{summary['max_ms']:>8.0f} {100 * _zero_nan(summary['error_rate']):>6.1f} "
            f"{sum((level.get('degraded_stages') or {}).values()):>5}  {batches}"
        )
    return "\n".join(lines)


def _zero_nan(value: float) -> float:
    return 0.0 if isinstance(value, float) and math.isnan(value) else value


def write_report(report: dict[str, Any], out_dir: Path, plot: bool = True) -> dict[str, Path]:
    """Write ``load-<label>-<time>.json`` (and ``.png``) under ``out_dir``; their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"load-{report['label']}-{time.strftime('%Y%m%d-%H%M%S')}"
    paths = {"json": out_dir / f"{stem}.json"}
    paths["json"].write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    if plot and report["levels"]:
        paths["png"] = plot_load(report, out_dir / f"{stem}.png")
    return paths


def parse_arguments(argv: Sequence[str] | None) -> LoadSettings:
    """``LoadSettings`` from the command line."""
    parser = argparse.ArgumentParser(prog="biomed-search-bench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default=None, metavar="URL",
                        help="service base URL (same as --url)")
    parser.add_argument("--url", default=None, help=f"default {LoadSettings.url}")
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 4, 16, 64],
                        help="closed-loop concurrencies (default 1 4 16 64)")
    parser.add_argument("--rates", type=float, nargs="*", default=[],
                        help="open-loop request rates, requests/s (default: none)")
    parser.add_argument("--requests", type=int, default=128, help="requests per level (bound)")
    parser.add_argument("--duration", type=float, default=120.0,
                        help="seconds per level (bound; in-flight requests finish)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0, help="per request, seconds")
    parser.add_argument("--page-size", type=int, default=5)
    parser.add_argument("--kb", action="append", default=[], help="restrict to a kb (repeat)")
    parser.add_argument("--queries", type=Path, nargs="+", default=list(DEFAULT_QUERY_SETS),
                        help="JSONL query sets (fields query/text); default: drug KB dev + "
                             "NFCorpus test queries from the shared data folder")
    parser.add_argument("--repeat-queries", action="store_true",
                        help="no request-unique suffix (measures the embedding cache too)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stage-concurrency", type=int, nargs="*", default=[1, 16],
                        help="closed-loop levels whose traces are broken down by stage")
    parser.add_argument("--sequential-plans", action="store_true",
                        help="the service runs plans one after another (stage accounting)")
    parser.add_argument("--max-in-flight", type=int, default=256)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--label", default="service")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-plot", action="store_true")
    arguments = list(argv if argv is not None else sys.argv[1:])
    if arguments[:1] == ["--"]:  # ``biomed-search-bench -- --url ...``
        arguments = arguments[1:]
    args = parser.parse_args(arguments)
    if args.target and args.url and args.target != args.url:
        parser.error("give the URL once (positional or --url)")
    if args.requests < 1 or args.duration <= 0:
        parser.error("--requests must be >= 1 and --duration > 0")
    if any(c < 1 for c in args.concurrency) or any(r <= 0 for r in args.rates):
        parser.error("concurrencies must be >= 1 and rates > 0")
    return replace(
        LoadSettings(),
        url=args.target or args.url or LoadSettings.url,
        concurrencies=tuple(args.concurrency), rates=tuple(args.rates),
        requests=args.requests, duration_s=args.duration, warmup=args.warmup,
        timeout_s=args.timeout, page_size=args.page_size, kb_ids=tuple(args.kb),
        query_sets=tuple(args.queries), unique=not args.repeat_queries, seed=args.seed,
        stage_concurrencies=tuple(args.stage_concurrency),
        parallel_plans=not args.sequential_plans, max_in_flight=args.max_in_flight,
        api_key=args.api_key, label=args.label, out_dir=args.out, plot=not args.no_plot,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``biomed-search-bench ...``: run the load levels, print a table, write JSON and
    PNG. Returns 0, or 1 when every request of some level failed."""
    settings = parse_arguments(argv)
    report = asyncio.run(run_load(settings))
    paths = write_report(report, settings.out_dir, settings.plot)
    print(format_levels(report["levels"]))
    print(f"queries: {report['queries']['unique_suffix']}")
    for kind, path in paths.items():
        print(f"{kind}: {path}")
    failed = any(level["summary"]["errors"] == level["summary"]["requests"]
                 for level in report["levels"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
