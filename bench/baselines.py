"""The serving design against honest baselines, in one run, on one machine, on the same
data (issue 7). Steps, in this order:

1. ``in-process``: the full pipeline in this process (``in_process_service``: local
   models, one model call per request, no batching, no Serve) in a closed loop at
   concurrency 1 and 16, with its stage times.
2. ``infinity``: infinity-emb serving the same MiniLM folder (its own virtual
   environment), ``POST /embeddings`` texts/s at rising concurrency (before Ray starts,
   so it does not share the CPU with idle Ray processes).
3. Ray + Serve start (bounded logical CPUs).
4. ``encoders``: each model deployment against its in-process batched limit
   (``bench/encoders.py``), with the profile's options and with ``models.cpu_threads``
   set; the same HTTP client as step 2 against an HTTP front over our MiniLM deployment.
5. ``service``: the whole application (``build_application``), ``/v1/search`` load
   with batching on at every concurrency (and open-loop rates), then batching off
   (``max_batch_size=1``; and one request's pairs per scorer call), then sequential
   plans (``pipeline.parallel_plans: false``), at the comparison concurrencies.

Outputs under ``--out``: ``baselines-<time>.json`` (everything), ``.md`` (the tables and
the targets), PNGs. Usage: ``python -m bench.baselines --data-dir /tmp/bench-data``
(ingest first: ``biomed-search ingest --data-dir /tmp/bench-data --kb demo demo/``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


from bench import REPOSITORY
from bench.load import (
    LevelResult,
    LoadSettings,
    Outcome,
    degraded_stages,
    run_load,
)
from bench.queries import (
    DEFAULT_PASSAGES,
    DEFAULT_QUERY_SETS,
    DEFAULT_SMILES,
    QueryMix,
    load_passages,
    load_smiles,
)
from bench.tables import targets, write_outputs
from deployments.config import AppConfig, load_config
from deployments.stores import EmbeddedServers, StoreEndpoints
from models.specs import Runtime

if TYPE_CHECKING:  # bench.served imports ray
    from bench.served import RateResult

__all__ = [
    "STEPS",
    "BaselineSettings",
    "LoadAverageSampler",
    "main",
    "run_baselines",
    "run_in_process",
    "run_infinity",
    "run_service_variants",
]

STEPS = ("in-process", "infinity", "encoders", "service")
# batching off also sends one handle call per encode call (no merging at the ingress)
BATCHING_OFF = {"serve": {"encoder": {"max_batch_size": 1, "caller_merge_items": None},
                          "cross_encoder": {"max_batch_size": 1}}}
PER_REQUEST_BATCHES = {"serve": {"encoder": {"max_batch_size": 1, "caller_merge_items": None},
                                 "cross_encoder": {"max_batch_size": 32}}}
CALLS_NOT_MERGED = {"serve": {"encoder": {"caller_merge_items": None}}}
TWO_CALLS_PER_REPLICA = {"serve": {"encoder": {"caller_calls_per_replica": 2}}}
SEQUENTIAL_PLANS = {"pipeline": {"parallel_plans": False}}
SERVICE_VARIANTS = ("batching on", "batching off", "per-request batches", "sequential plans",
                    "calls not merged", "2 merged calls per replica")
NOTES = [
    "Every service variant is a fresh deployment (cold query-embedding cache in the "
    "ingress, cold document-embedding cache in the scorer replica) and sees the same query "
    "sequence (same seed), levels in the same order; the in-process baseline likewise. "
    "Later levels of one variant run with the caches the earlier levels filled.",
    "Queries carry a request-unique stop-word suffix, so no query embedding is served "
    "from the ingress cache; retrieved chunks repeat across queries, so the scorer's "
    "document cache does hit, as it would in service.",
    "Model deployments are measured through handles from the benchmark process; an "
    "encoder through the ingress's port (HandleTextEncoder), one handle call per text and "
    "merged as the ingress merges them (serve.encoder.caller_merge_items); the "
    "CrossEncoder deployment with pipeline.tier2.scorer=cross_encoder (the production "
    "profile's; the offline default scores from stored vectors and deploys none), its "
    "calls at each level on passages no earlier call in that process saw.",
    "'batching off' is max_batch_size=1 on every model deployment (the scorer then runs "
    "one pair per forward pass); 'per-request batches' keeps one request's pairs (32) "
    "per scorer forward pass but never combines requests.",
]


#: ``models.runtime`` values the model deployments can be measured with.
RUNTIMES = tuple(runtime.value for runtime in Runtime)


@dataclass(frozen=True)
class BaselineSettings:
    """Everything one baseline run needs; the bounds apply per load level."""

    data_dir: Path = Path("/tmp/bench-data")
    profile: str = "default"
    config: Path | None = None
    steps: tuple[str, ...] = STEPS
    query_sets: tuple[Path, ...] = DEFAULT_QUERY_SETS
    passages: Path = DEFAULT_PASSAGES
    smiles: Path = DEFAULT_SMILES
    concurrencies: tuple[int, ...] = (1, 4, 16, 64)
    compare_concurrencies: tuple[int, ...] = (1, 16)
    rates: tuple[float, ...] = ()
    #: the /v1/search variants to run (names from run_service_variants), each freshly deployed
    service_variants: tuple[str, ...] = SERVICE_VARIANTS
    requests: int = 64
    duration_s: float = 240.0
    warmup: int = 2
    encoder_concurrencies: tuple[int, ...] = (1, 8, 32)
    encoder_calls: int = 256
    scorer_calls: int = 16
    #: passages per cross-encoder call (a search's Tier-2 window: 32)
    scorer_pairs: int = 32
    served_threads: tuple[int | None, ...] = (None, 2)
    runtimes: tuple[str, ...] = ("torch",)
    infinity_engines: tuple[str, ...] = ("torch",)
    infinity_python: Path | None = None
    throughput_optimized: bool = False
    embeddings_port: int | None = None
    encoder_replicas: tuple[int | None, ...] = (None,)
    encoder_batching_off: tuple[int, ...] = ()
    #: models.runtime -> serve.encoder.batch_wait_timeout_s for that runtime's variants
    #: (absent: the profile's)
    encoder_batch_wait_s: dict[str, float] = field(default_factory=dict)
    infinity_port: int = 7997
    #: Ray's logical CPUs (a scheduling count, not cores): the encoder step's model
    #: deployments (text, SMILES, cross-encoder, 2 replicas each with --encoder-replicas 2)
    #: and its HTTP apps are up at once, and a replica that does not fit waits unplaced
    ray_cpus: int = 6
    route_prefix: str = "/"
    out_dir: Path = REPOSITORY / "bench" / "results"
    seed: int = 0


@dataclass
class BaselineReport:
    """What the steps measured, as JSON-ready mappings."""

    settings: dict[str, Any]
    environment: dict[str, Any]
    in_process: list[dict[str, Any]] = field(default_factory=list)
    infinity: dict[str, Any] = field(default_factory=dict)
    encoders: list[dict[str, Any]] = field(default_factory=list)
    service: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _config(settings: BaselineSettings, overrides: dict[str, Any] | None = None
            ) -> AppConfig:
    """The validated configuration of ``settings`` with ``overrides`` merged over it."""
    return load_config(settings.profile, settings.config, settings.data_dir, overrides)


# -- 1. in-process ------------------------------------------------------------------------


async def _in_process_levels(settings: BaselineSettings, endpoints: StoreEndpoints
                             ) -> list[dict[str, Any]]:
    from deployments.inprocess import in_process_service
    from deployments.service import Principal
    from pipeline.errors import BiomedSearchError
    from pipeline.schema import SearchRequest

    config = _config(settings)
    parallel = config.pipeline.parallel_plans
    principal = Principal(name="bench", kb_ids=None)
    mix = QueryMix.from_paths(settings.query_sets, settings.seed, unique=True, offset=1)
    levels = []
    async with in_process_service(config, endpoints) as running:
        service = running.service

        async def one(query: str) -> Outcome:
            start = time.perf_counter()
            try:
                response = await service.search(SearchRequest(query=query), principal)
            except BiomedSearchError as error:
                return Outcome((time.perf_counter() - start) * 1000, 500, str(error)[:200])
            trace = [entry.model_dump(by_alias=True) for entry in response.trace]
            return Outcome((time.perf_counter() - start) * 1000, 200, None, trace,
                           degraded_stages(trace))

        for _ in range(settings.warmup):
            await one(mix.next())
        for concurrency in settings.compare_concurrencies:
            level = LevelResult("closed", concurrency, None)
            remaining = settings.requests
            deadline = time.perf_counter() + settings.duration_s

            async def worker(level: LevelResult = level, deadline: float = deadline) -> None:
                nonlocal remaining
                while remaining > 0 and time.perf_counter() < deadline:
                    remaining -= 1
                    level.outcomes.append(await one(mix.next()))

            start = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            level.seconds = time.perf_counter() - start
            levels.append(level.as_dict(parallel))
            _progress(f"in-process c={concurrency}", levels[-1])
    return levels


def run_in_process(settings: BaselineSettings, endpoints: StoreEndpoints
                   ) -> list[dict[str, Any]]:
    """The full pipeline in this process, one model call per request, no batching, no
    Serve, at each comparison concurrency."""
    return asyncio.run(_in_process_levels(settings, endpoints))


# -- 2. infinity-emb ----------------------------------------------------------------------


def _minilm_texts(settings: BaselineSettings, count: int) -> list[str]:
    return QueryMix.from_paths(settings.query_sets, settings.seed, unique=False).take(count)


def _peer_engines(settings: BaselineSettings) -> list[tuple[str, Path]]:
    """``(engine, model folder)`` per ``--infinity-engines`` item: ``torch`` runs on the
    MiniLM folder; ``optimum:FOLDER`` runs infinity's ONNX Runtime engine on a folder
    holding the model files and an optimum export (``model.onnx``, or
    ``model_quantized.onnx``, which it prefers on the CPU): see bench/README.md."""
    from bench.infinity import default_minilm_path

    engines = []
    for item in settings.infinity_engines:
        engine, _, folder = item.partition(":")
        engines.append((engine, Path(folder) if folder else default_minilm_path()))
    return engines


def _client_cpu_ms(result: RateResult) -> float | None:
    """The benchmark process's CPU ms per request sent (the load generator, and on our
    rows the Ray driver's threads too; it shares the cores with the server)."""
    sent = result.calls + result.failures
    if result.client_cpu_s is None or not sent:
        return None
    return result.client_cpu_s * 1000.0 / sent


def run_infinity(settings: BaselineSettings) -> dict[str, Any]:
    """infinity-emb on the same MiniLM weights, with each engine it has here: texts/s per
    concurrency over HTTP, or the reason it could not run."""
    from bench.infinity import http_embedding_rate, infinity_server

    if settings.infinity_python is None:
        return {"skipped": "no --infinity-python given"}
    texts = _minilm_texts(settings, settings.encoder_calls)
    batch = _config(settings).serve.encoder.max_batch_size
    rows = []
    for engine, folder in _peer_engines(settings):
        label = f"{engine} ({folder.name})" if engine != "torch" else "torch"
        try:
            with infinity_server(settings.infinity_python, folder, settings.infinity_port,
                                 batch_size=batch, engine=engine) as server:
                for concurrency in settings.encoder_concurrencies:
                    result = asyncio.run(http_embedding_rate(server.url, texts, concurrency,
                                                             server.model))
                    rows.append({"engine": label, "concurrency": concurrency,
                                 "texts_per_s": result.rate, "texts": result.items,
                                 "failures": result.failures,
                                 "client_cpu_ms": _client_cpu_ms(result)})
                    _progress(f"infinity-emb {label} c={concurrency}", rows[-1])
        except (FileNotFoundError, RuntimeError, OSError) as error:
            rows.append({"engine": label, "skipped": f"{type(error).__name__}: {error}"[-600:]})
    return {"batch_size": batch, "python": str(settings.infinity_python),
            "packages": _peer_packages(settings.infinity_python), "rows": rows}


PEER_PACKAGES = ("infinity-emb", "optimum", "optimum-onnx", "onnxruntime", "torch",
                 "transformers")


def _peer_packages(python: Path) -> dict[str, str]:
    """Distribution -> version in the peer's environment (its engines' speed moved with
    them between runs); {} when that python cannot say."""
    script = ("import importlib.metadata as m, json, sys\n"
              "def v(n):\n"
              "    try: return m.version(n)\n"
              "    except m.PackageNotFoundError: return None\n"
              "print(json.dumps({n: v(n) for n in sys.argv[1:] if v(n)}))")
    try:
        done = subprocess.run([str(python), "-c", script, *PEER_PACKAGES],
                              capture_output=True, text=True, errors="replace", timeout=60,
                              check=True)
        lines = done.stdout.strip().splitlines()
        return json.loads(lines[-1]) if lines else {}  # the last line: a site hook may print
    except (OSError, subprocess.SubprocessError, ValueError):  # JSONDecodeError included
        return {}


# -- 4. encoders --------------------------------------------------------------------------


def run_encoders(settings: BaselineSettings, serve_url: str) -> tuple[list[dict[str, Any]],
                                                                      list[dict[str, Any]]]:
    """Served/limit rows for each ``served_threads`` variant, and for each variant the
    HTTP-front texts/s of our MiniLM deployment (the infinity-emb comparison)."""
    from bench.encoders import ServedSettings, served_comparison
    from bench.infinity import http_embedding_rate
    from bench.served import (
        ModelApp,
        deploy_embeddings_direct,
        deploy_embeddings_http,
        direct_ingress_url,
        hop_table,
    )

    texts = _minilm_texts(settings, settings.encoder_calls)
    rows: list[dict[str, Any]] = []
    http_rows: list[dict[str, Any]] = []
    for runtime, threads, replicas in itertools.product(
            settings.runtimes, settings.served_threads, settings.encoder_replicas):
        # Tier-2 on the cross-encoder role, so the scorer gets its own deployment to
        # measure (the production profile's setting; the offline default scores from
        # stored vectors and deploys none)
        overrides: dict[str, Any] = {"models": {"runtime": runtime},
                                     "pipeline": {"tier2": {"scorer": "cross_encoder"}},
                                     "serve": {"encoder": {}, "cross_encoder": {}}}
        for name in ("encoder", "cross_encoder"):
            if threads:
                overrides["serve"][name]["intra_op_threads"] = threads
            if replicas:
                overrides["serve"][name]["num_replicas"] = replicas
        wait_s = settings.encoder_batch_wait_s.get(runtime)
        if wait_s is not None:
            overrides["serve"]["encoder"]["batch_wait_timeout_s"] = wait_s
        if settings.embeddings_port:  # the direct app's replicas also answer on this port
            overrides["serve"] |= {"embeddings_route": "/v1/embeddings",
                                   "embeddings_port": settings.embeddings_port}
        label = (f"{runtime}, " + (f"{replicas} replicas x " if replicas else "")
                 + (f"{threads} intra-op threads" if threads else "profile threads")
                 + (f", batch wait {wait_s * 1000:g} ms" if wait_s is not None else ""))
        served = ServedSettings(
            config=_config(settings, overrides),
            queries=tuple(texts),
            smiles=tuple(load_smiles(settings.smiles, settings.encoder_calls)),
            passages=tuple(load_passages(
                settings.passages,
                settings.scorer_calls * settings.scorer_pairs * len(settings.encoder_concurrencies),
                settings.seed)),
            concurrencies=settings.encoder_concurrencies,
            calls=settings.encoder_calls,
            scorer_calls=settings.scorer_calls,
            pairs=settings.scorer_pairs,
            duration_s=settings.duration_s,
            label=label,
        )

        def over_http(apps: dict[str, ModelApp], label: str = label,
                      config: AppConfig = served.config) -> None:
            minilm = next(app for app in apps.values() if app.kind == "encoder")
            paths = {"front + handle": f"{serve_url}{deploy_embeddings_http(minilm)}",
                     "direct": f"{serve_url}{deploy_embeddings_direct(config)}"}
            if settings.throughput_optimized:  # the same replica, on its own port
                replica_url = direct_ingress_url("/bench-direct")
                if replica_url:
                    paths["direct ingress (replica port)"] = replica_url
            if settings.embeddings_port:  # the same replicas, past Serve's request path
                paths["serve.embeddings_port"] = (
                    f"http://127.0.0.1:{settings.embeddings_port}/v1")
            def measure(path: str, base_url: str, concurrencies: Sequence[int]) -> None:
                for concurrency in concurrencies:
                    samples: list[tuple[float, str]] = []
                    result = asyncio.run(http_embedding_rate(
                        base_url, texts, concurrency, model=minilm.roles[0],
                        samples=samples))
                    client_ms = [sample[0] for sample in samples] or [float("nan")]
                    http_rows.append({"setting": label, "path": path,
                                      "deployment": minilm.deployment,
                                      "concurrency": concurrency,
                                      "texts_per_s": result.rate, "texts": result.items,
                                      "failures": result.failures,
                                      "client_cpu_ms": _client_cpu_ms(result),
                                      "p50_ms": float(np.percentile(client_ms, 50)),
                                      "p99_ms": float(np.percentile(client_ms, 99)),
                                      "hops_ms": hop_table(samples)})
                    _progress(f"our MiniLM over HTTP ({label}, {path}) c={concurrency}",
                              http_rows[-1])

            for path, base_url in paths.items():
                measure(path, base_url, settings.encoder_concurrencies)
            if settings.encoder_batching_off:
                # the leanest path again with one text per forward pass (batching off)
                path, base_url = list(paths.items())[-1]
                off = config.model_copy(update={"serve": config.serve.model_copy(update={
                    "encoder": config.serve.encoder.model_copy(update={"max_batch_size": 1})})})
                deploy_embeddings_direct(off)
                measure(f"{path}, batching off", base_url, settings.encoder_batching_off)

        rows += [{**asdict(row), "ratio": row.ratio}
                 for row in served_comparison(served, after=over_http)]
    return rows, http_rows


# -- 5. the service -----------------------------------------------------------------------


def _deploy_service(config: AppConfig, endpoints: StoreEndpoints, url: str,
                    route_prefix: str) -> None:
    from ray import serve

    from deployments.app import build_application
    from deployments.serve_cli import wait_ready

    application = build_application(config, endpoints)
    serve.run(application, name="bench-service", route_prefix=route_prefix, blocking=False)
    wait_ready(url, timeout_s=600)


def run_service_variants(settings: BaselineSettings, endpoints: StoreEndpoints,
                         serve_url: str) -> dict[str, Any]:
    """``/v1/search`` load on each variant of the application (Serve running at
    ``serve_url``, the application at ``settings.route_prefix``):
    every concurrency with batching on; the comparison concurrencies for batching off,
    one request's pairs per scorer call, sequential plans, encode calls not merged at
    the ingress, and two merged calls out per encoder replica instead of one."""
    from ray import serve

    every = [
        ("batching on", None, settings.concurrencies, settings.rates),
        ("batching off", BATCHING_OFF, settings.compare_concurrencies, ()),
        ("per-request batches", PER_REQUEST_BATCHES, settings.compare_concurrencies, ()),
        ("sequential plans", SEQUENTIAL_PLANS, settings.compare_concurrencies, ()),
        ("calls not merged", CALLS_NOT_MERGED, settings.compare_concurrencies, ()),
        ("2 merged calls per replica", TWO_CALLS_PER_REPLICA,
         settings.compare_concurrencies, ()),
    ]
    variants: list[tuple[str, dict[str, Any] | None, tuple[int, ...], tuple[float, ...]]] = [
        variant for variant in every if variant[0] in settings.service_variants]
    results: dict[str, Any] = {}
    url = serve_url.rstrip("/") + settings.route_prefix.rstrip("/")
    try:
        for name, overrides, concurrencies, rates in variants:
            config = _config(settings, overrides)
            # a fresh application per variant: every variant starts with cold caches
            # (the ingress's query embeddings, the scorer's document embeddings)
            serve.delete("bench-service")
            _deploy_service(config, endpoints, url, settings.route_prefix)
            load = LoadSettings(
                url=url, concurrencies=concurrencies, rates=rates, requests=settings.requests,
                duration_s=settings.duration_s, warmup=settings.warmup,
                query_sets=settings.query_sets, seed=settings.seed,
                stage_concurrencies=settings.compare_concurrencies,
                parallel_plans=config.pipeline.parallel_plans,
                label=name.replace(" ", "-"), out_dir=settings.out_dir, plot=False,
            )
            _progress(f"service: {name}", None)
            report = asyncio.run(run_load(load))
            report["overrides"] = overrides or {}
            results[name] = report
    finally:
        with contextlib.suppress(Exception):  # the Ray session ends right after
            serve.delete("bench-service")
    return results


# -- the run ------------------------------------------------------------------------------


def _progress(title: str, row: dict[str, Any] | None) -> None:
    summary = row.get("summary") if isinstance(row, dict) else None
    text = json.dumps(summary if summary else row, default=str) if row else ""
    print(f"[{time.strftime('%H:%M:%S')}] {title} {text}", file=sys.stderr, flush=True)


def _environment() -> dict[str, Any]:
    import platform

    import torch

    load = os.getloadavg()
    return {
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "load_average_at_start": [round(v, 2) for v in load],
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


class LoadAverageSampler:
    """Samples the 1-minute load average every ``interval_s`` in a daemon thread, so a
    report can say whether other work shared the machine during the run."""

    def __init__(self, interval_s: float = 15.0) -> None:
        self.interval_s = interval_s
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(self.interval_s)

    def __enter__(self) -> LoadAverageSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def summary(self) -> dict[str, float]:
        """min / mean / max of the samples."""
        if not self.samples:
            return {}
        return {"min": round(min(self.samples), 2),
                "mean": round(sum(self.samples) / len(self.samples), 2),
                "max": round(max(self.samples), 2), "samples": len(self.samples)}


def run_baselines(settings: BaselineSettings, endpoints: StoreEndpoints,
                  serve_url: str | None = None) -> BaselineReport:
    """Run the selected steps against stores at ``endpoints``. With ``serve_url`` the
    Serve steps use that running Serve (tests); without it Ray and Serve are started
    here for those steps and stopped after."""
    from bench.ray_session import ray_serve_session

    report = BaselineReport(
        settings={k: str(v) if isinstance(v, Path) else v
                  for k, v in asdict(settings).items()},
        environment=_environment(),
    )
    with LoadAverageSampler() as sampler:
        if "in-process" in settings.steps:
            report.in_process = run_in_process(settings, endpoints)
        if "infinity" in settings.steps:
            report.infinity = run_infinity(settings)
        serve_steps = {"encoders", "service"} & set(settings.steps)
        if serve_steps:
            session = (contextlib.nullcontext(serve_url) if serve_url
                       else ray_serve_session(
                           settings.ray_cpus, throughput_optimized=settings.throughput_optimized))
            with session as url:
                if "encoders" in serve_steps:
                    report.encoders, http_rows = run_encoders(settings, url)
                    report.infinity["ours_over_http"] = http_rows
                if "service" in serve_steps:
                    report.service = run_service_variants(settings, endpoints, url)
    report.environment["load_average_during_run"] = sampler.summary()
    report.environment["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    report.notes += NOTES
    return report


def _runtime_seconds(text: str) -> tuple[str, float]:
    """``RUNTIME=S`` -> (runtime, seconds >= 0), for ``--encoder-batch-wait``."""
    runtime, _, value = text.partition("=")
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if runtime not in RUNTIMES or not (math.isfinite(seconds) and seconds >= 0):
        raise argparse.ArgumentTypeError(f"{text!r}: RUNTIME=SECONDS, e.g. onnx-int8=0")
    return runtime, seconds


def _arguments(argv: Sequence[str] | None) -> BaselineSettings:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=BaselineSettings.data_dir)
    parser.add_argument("--profile", default="default")
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    parser.add_argument("--queries", type=Path, nargs="+", default=list(DEFAULT_QUERY_SETS))
    parser.add_argument("--passages", type=Path, default=DEFAULT_PASSAGES)
    parser.add_argument("--smiles", type=Path, default=DEFAULT_SMILES)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--compare-concurrency", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--rates", type=float, nargs="*", default=[])
    parser.add_argument("--service-variants", nargs="+", choices=SERVICE_VARIANTS,
                        default=list(SERVICE_VARIANTS),
                        help="/v1/search variants of the service step, each deployed fresh")
    parser.add_argument("--requests", type=int, default=64, help="per load level")
    parser.add_argument("--duration", type=float, default=240.0, help="s per level (bound)")
    parser.add_argument("--encoder-concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--encoder-calls", type=int, default=256)
    parser.add_argument("--scorer-calls", type=int, default=16,
                        help="cross-encoder calls per level (32 passages each); a level "
                        "runs at most this many at once, so give several times the highest "
                        "--encoder-concurrency")
    parser.add_argument("--served-threads", type=int, nargs="*", default=[0, 2],
                        help="intra-op threads per model replica (serve.<kind>."
                        "intra_op_threads) variants; 0 = the profile's")
    parser.add_argument("--runtimes", nargs="+", default=["torch"],
                        choices=list(RUNTIMES),
                        help="models.runtime variants of the model deployments")
    parser.add_argument("--serve-throughput-optimized", action="store_true",
                        help="RAY_SERVE_THROUGHPUT_OPTIMIZED=1 (direct ingress to replicas)")
    parser.add_argument("--embeddings-port", type=int, default=None,
                        help="serve.embeddings_port of the direct app (its replicas answer "
                        "HTTP on this port themselves)")
    parser.add_argument("--encoder-replicas", type=int, nargs="+", default=[0],
                        help="serve.encoder.num_replicas variants; 0 = the profile's")
    parser.add_argument("--encoder-batching-off", type=int, nargs="*", default=[],
                        help="concurrencies at which to measure the leanest HTTP path again "
                        "with serve.encoder.max_batch_size 1 (batching off)")
    parser.add_argument("--encoder-batch-wait", nargs="*", default=[], metavar="RUNTIME=S",
                        type=_runtime_seconds,
                        help="serve.encoder.batch_wait_timeout_s per runtime, e.g. "
                        "onnx-int8=0 torch=0.005 (default: the profile's)")
    parser.add_argument("--infinity-engines", nargs="+", default=["torch"],
                        help="peer engines: torch, optimum:FOLDER (bench/README.md)")
    parser.add_argument("--infinity-python", type=Path, default=None,
                        help="python of the infinity-emb environment (bench/README.md)")
    parser.add_argument("--ray-cpus", type=int, default=BaselineSettings.ray_cpus,
                        help="Ray's logical CPUs (a scheduling count)")
    parser.add_argument("--out", type=Path, default=BaselineSettings.out_dir)
    parser.add_argument("--quick", action="store_true", help="tiny bounds (smoke run)")
    args = parser.parse_args(argv)
    settings = BaselineSettings(
        data_dir=args.data_dir, profile=args.profile, config=args.config,
        steps=tuple(args.steps), query_sets=tuple(args.queries), passages=args.passages,
        smiles=args.smiles, concurrencies=tuple(args.concurrency),
        compare_concurrencies=tuple(args.compare_concurrency), rates=tuple(args.rates),
        requests=args.requests, duration_s=args.duration,
        service_variants=tuple(args.service_variants),
        encoder_concurrencies=tuple(args.encoder_concurrency),
        encoder_calls=args.encoder_calls, scorer_calls=args.scorer_calls,
        served_threads=tuple(t or None for t in args.served_threads),
        runtimes=tuple(args.runtimes), infinity_engines=tuple(args.infinity_engines),
        throughput_optimized=args.serve_throughput_optimized,
        embeddings_port=args.embeddings_port,
        encoder_replicas=tuple(r or None for r in args.encoder_replicas),
        encoder_batching_off=tuple(args.encoder_batching_off),
        encoder_batch_wait_s=dict(args.encoder_batch_wait),
        infinity_python=args.infinity_python, ray_cpus=args.ray_cpus, out_dir=args.out,
    )
    return quick(settings) if args.quick else settings


def quick(settings: BaselineSettings) -> BaselineSettings:
    """Tiny bounds: a smoke run that only shows the steps work (two /v1/search variants,
    batching on and off: the others are the same loop over another configuration)."""
    return replace(settings, concurrencies=(1, 2), compare_concurrencies=(1, 2), requests=3,
                   duration_s=60.0, warmup=1, encoder_concurrencies=(1, 2), encoder_calls=8,
                   scorer_calls=2, scorer_pairs=4, served_threads=(None,),
                   service_variants=("batching on", "batching off"))


def main(argv: Sequence[str] | None = None) -> int:
    """Start the embedded stores of ``--data-dir``, run the steps, write the outputs,
    stop everything started."""
    settings = _arguments(argv)
    config = _config(settings)
    servers = EmbeddedServers(config)
    endpoints = servers.start()
    try:
        report = run_baselines(settings, endpoints)
    finally:
        servers.stop()
    paths = write_outputs(asdict(report), settings.out_dir)
    for line in targets(asdict(report)):
        print(line["text"])
    for kind, path in paths.items():
        print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
