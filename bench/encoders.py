"""In-process encoder throughput: the ceiling the served (Ray Serve) numbers are measured against.

For one text role (MiniLM in the offline profile) it measures texts/s at several call batch
sizes for three engines: torch with each call padded to its longest text ("unsorted"),
torch with texts sorted by length into token-budgeted sub-batches ("length-sorted"), and
ONNX Runtime on a cached export (length-sorted); then the cross-encoder role's pairs/s
when scoring one query against 50 texts. Texts are real leaflet sections (EMA), sampled
with a fixed seed.

With ``--served``, per model deployment of the profile (MiniLM ``Encoder-pubmedbert``,
the SMILES ``Encoder-molformer``, the ``CrossEncoder`` scorer) it then compares the
in-process batched limit (the replica's own batch function over full batches of
``max_batch_size`` items, no serving) with the same model behind its Serve deployment
driven through a handle at rising concurrency (one query text, one SMILES, or one
request's 32 passages per call, as the ingress sends them): items/s and served/limit.
Ray is started here with a bounded number of logical CPUs, and stopped at the end.

Usage: ``python -m bench.encoders [--texts PATH] [--count 512] [--quick]``
       ``python -m bench.encoders --served [--served-only] [--concurrency 1 8 32]``

:func:`benchmark_rows` returns :class:`ThroughputRow` records (:func:`iter_benchmark_rows`
yields them as measured) and :func:`format_table` prints them, so another engine (a Ray
Serve deployment handle, HTTP) can add rows to the same table; :func:`served_comparison`
returns :class:`ServedRow` records.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


from bench import REPOSITORY
from models.loader import load_cross_encoder, load_encoder
from models.specs import ModelProfile

if TYPE_CHECKING:
    from deployments.call_coalescing import MergeSettings
    from deployments.config import AppConfig, DeploymentSettings

__all__ = [
    "BenchSettings",
    "ServedRow",
    "ServedSettings",
    "ThroughputRow",
    "benchmark_rows",
    "cross_encoder_rows",
    "format_header",
    "format_row",
    "format_served_table",
    "format_table",
    "in_process_limit",
    "iter_benchmark_rows",
    "load_texts",
    "main",
    "served_comparison",
    "text_encoder_rows",
]

DEFAULT_TEXTS = REPOSITORY.parent / "shared" / "data" / "drug_labels" / "ema_leaflet_sections.jsonl"
DEFAULT_PROFILE = REPOSITORY / "configs" / "profiles" / "default.yaml"
QUERY = "gefitinib EGFR inhibitor dosage and warnings"


@dataclass(frozen=True)
class BenchSettings:
    """What to measure: the texts file, the profile and roles, call batch sizes, how many
    texts, how many pairs per cross-encoder call and how many such calls."""

    texts_path: Path = DEFAULT_TEXTS
    profile_path: Path = DEFAULT_PROFILE
    text_role: str = "general-text"
    scorer_role: str = "medcpt-rerank"
    count: int = 512
    batch_sizes: tuple[int, ...] = (1, 8, 32, 128)
    pairs: int = 50
    pair_calls: int = 8
    cpu_threads: int | None = None
    onnx_cache_dir: Path | None = None
    #: ``models.cpu_max_tokens_per_forward`` values to measure the text role at (padded
    #: tokens per forward pass on the CPU); empty: the profile's own.
    token_budgets: tuple[int, ...] = ()


@dataclass(frozen=True)
class ThroughputRow:
    """One measurement: ``items`` inputs in ``seconds`` wall time, in calls of
    ``batch_size`` inputs; ``unit`` is ``texts/s`` or ``pairs/s``."""

    target: str
    engine: str
    batch_size: int
    items: int
    seconds: float
    unit: str

    @property
    def rate(self) -> float:
        """Inputs per second."""
        return self.items / self.seconds if self.seconds > 0 else float("inf")


def _text_of(record: dict[str, Any]) -> str:
    return str(record.get("text") or record.get("query") or "").strip()


def load_texts(path: Path, count: int, seed: int = 0) -> list[str]:
    """``count`` non-empty ``text`` fields (``query`` fields in a query set) from a JSONL
    file, sampled with a fixed seed.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file holds fewer texts than ``count``.
    """
    with path.open(encoding="utf-8") as handle:
        texts = [text for line in handle if (text := _text_of(json.loads(line)))]
    if len(texts) < count:
        raise ValueError(f"{path} holds {len(texts)} texts, fewer than {count}")
    return random.Random(seed).sample(texts, count)


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _calls(items: Sequence[str], size: int) -> list[Sequence[str]]:
    return [items[start:start + size] for start in range(0, len(items), size)]


def text_encoder_rows(
    texts: Sequence[str], profile: ModelProfile, settings: BenchSettings
) -> Iterator[ThroughputRow]:
    """texts/s of the text role for each engine and call batch size, yielded as measured
    (one warm-up call per engine is not timed)."""
    engines = {
        "torch unsorted": {"runtime": "torch", "sort_by_length": False},
        "torch length-sorted": {"runtime": "torch", "sort_by_length": True},
        "onnxruntime length-sorted": {"runtime": "onnx", "sort_by_length": True},
        "onnxruntime int8 length-sorted": {"runtime": "onnx-int8", "sort_by_length": True},
    }
    budgets: Sequence[int | None] = settings.token_budgets or (None,)
    for engine, fields in engines.items():
        for budget in budgets:
            update = dict(fields) if budget is None else {
                **fields, "cpu_max_tokens_per_forward": budget}
            label = engine if budget is None else f"{engine}, {budget} tok"
            engine_profile = profile.model_copy(update=update)
            encoder = load_encoder(engine_profile.spec(settings.text_role), engine_profile)
            encoder.encode(list(texts[:8]))
            for size in settings.batch_sizes:
                calls = _calls(texts, size)
                seconds = _timed(lambda encoder=encoder, calls=calls: [
                    encoder.encode(list(call)) for call in calls])
                yield ThroughputRow(settings.text_role, label, size, len(texts), seconds,
                                    "texts/s")


def cross_encoder_rows(
    texts: Sequence[str], profile: ModelProfile, settings: BenchSettings
) -> Iterator[ThroughputRow]:
    """pairs/s of the cross-encoder role scoring one query against ``settings.pairs`` texts
    per call, with torch and ONNX Runtime, yielded as measured. Every call scores texts
    no earlier call saw (the bi-encoder scorer caches document embeddings, so repeated
    texts would measure its cache), and the warm-up call uses texts of its own."""
    calls = [list(texts[i * settings.pairs:(i + 1) * settings.pairs])
             for i in range(settings.pair_calls)]
    warm_up = ["warm-up passage one", "warm-up passage two"]
    engines = (("torch length-sorted", "torch"), ("onnxruntime length-sorted", "onnx"))
    for engine, runtime in engines:
        engine_profile = profile.model_copy(update={"runtime": runtime})
        scorer = load_cross_encoder(engine_profile.spec(settings.scorer_role), engine_profile)
        scorer.score(QUERY, warm_up)
        seconds = _timed(lambda scorer=scorer: [scorer.score(QUERY, documents)
                                                for documents in calls])
        label = f"{settings.scorer_role} ({scorer.spec.family.value})"
        yield ThroughputRow(label, engine, settings.pairs, sum(len(c) for c in calls),
                            seconds, "pairs/s")


def iter_benchmark_rows(settings: BenchSettings) -> Iterator[ThroughputRow]:
    """All in-process rows, yielded as measured: the text role's engines x batch sizes,
    then the scorer role."""
    profile = ModelProfile.from_yaml(settings.profile_path)
    update: dict[str, object] = {}
    if settings.cpu_threads is not None:
        update["cpu_threads"] = settings.cpu_threads
    if settings.onnx_cache_dir is not None:
        update["onnx_cache_dir"] = settings.onnx_cache_dir
    profile = profile.model_copy(update=update)
    needed = max(settings.count, settings.pairs * settings.pair_calls)
    texts = load_texts(settings.texts_path, needed)
    yield from text_encoder_rows(texts[: settings.count], profile, settings)
    if settings.pair_calls > 0:
        yield from cross_encoder_rows(texts, profile, settings)


def benchmark_rows(settings: BenchSettings) -> list[ThroughputRow]:
    """All in-process rows (see :func:`iter_benchmark_rows`)."""
    return list(iter_benchmark_rows(settings))


def format_header() -> str:
    """The table's two header lines."""
    header = f"{'target':<34} {'engine':<26} {'batch':>5} {'items':>6} {'seconds':>8} {'rate':>9}"
    return header + "\n" + "-" * len(header)


def format_row(row: ThroughputRow) -> str:
    """One fixed-width table line: target, engine, batch size, items, seconds, rate, unit."""
    return (
        f"{row.target:<34} {row.engine:<26} {row.batch_size:>5} {row.items:>6} "
        f"{row.seconds:>8.2f} {row.rate:>9.1f} {row.unit}"
    )


def format_table(rows: Sequence[ThroughputRow]) -> str:
    """The header and one line per row."""
    return "\n".join([format_header(), *(format_row(row) for row in rows)])


# -- in-process batched limit against the served deployments ------------------------------


@dataclass(frozen=True)
class ServedSettings:
    """The served comparison: the validated configuration (``load_config``), the
    inputs (query texts, SMILES, passages for the scorer), caller concurrencies, calls
    per level (scorer calls carry ``pairs`` passages each) and a time bound per level."""

    config: AppConfig
    queries: tuple[str, ...]
    smiles: tuple[str, ...]
    passages: tuple[str, ...]
    concurrencies: tuple[int, ...] = (1, 8, 32)
    calls: int = 256
    scorer_calls: int = 16
    pairs: int = 32
    duration_s: float = 60.0
    label: str = "profile options"
    #: also measure each merged encoder with the other merge modes (``_call_paths``)
    merge_modes: bool = False


@dataclass(frozen=True)
class ServedRow:
    """One deployment at one concurrency: served items/s against the in-process batched
    limit of the same model, threads on each side, and the batches the replica formed."""

    deployment: str
    label: str
    unit: str
    concurrency: int
    served_rate: float
    limit_rate: float
    items: int
    failures: int
    limit_batch: int
    limit_threads: int
    served_threads: str
    mean_batch_items: float
    #: how the caller reached the replica: one handle call per text (per scorer
    #: request), or the ingress's merged calls (``deployments.call_coalescing``)
    calls: str = "one per request"
    #: ``calls`` is how the profile's search ingress reaches this deployment (its merged
    #: calls when it merges, else one call per text or request): the served / limit
    #: target applies to this row; the other paths are measured for comparison
    ingress_path: bool = True
    #: the in-process limit measured before the deployment's levels and after them
    #: (items/s); ``limit_rate`` is the higher (a ceiling; on a shared machine one
    #: measurement moves with the load)
    limit_runs: tuple[float, ...] = ()

    @property
    def ratio(self) -> float:
        """served / limit."""
        return self.served_rate / self.limit_rate if self.limit_rate > 0 else float("nan")


def _work(kind: str, roles: Sequence[str], settings: ServedSettings, smiles_role: bool,
          level: int = 0) -> list[Any]:
    """What the ingress sends the deployment: one text per encode call, one query with
    ``pairs`` passages per scorer call. The scorer caches document embeddings, so each
    ``level`` gets passages no other level of the same process saw (while
    ``settings.passages`` lasts)."""
    from deployments.batching import EncodeRequest, ScoreRequest

    if kind == "cross-encoder":
        passages = settings.passages
        first = level * settings.scorer_calls * settings.pairs
        return [
            ScoreRequest(settings.queries[i % len(settings.queries)],
                         tuple(passages[(first + i * settings.pairs + j) % len(passages)]
                               for j in range(settings.pairs)))
            for i in range(settings.scorer_calls)
        ]
    texts = settings.smiles if smiles_role else settings.queries
    return [EncodeRequest(roles[0], (texts[i % len(texts)],)) for i in range(settings.calls)]


def _warm_up(kind: str, role: str) -> Any:
    """An input no measured call uses (so it cannot prime the scorer's cache)."""
    from deployments.batching import EncodeRequest, ScoreRequest

    if kind == "cross-encoder":
        return ScoreRequest("warm-up query", ("warm-up passage one", "warm-up passage two"))
    return EncodeRequest(role, ("CCO" if "molformer" in role else "warm-up query",))


def in_process_limit(models: Any, kind: str, work: Sequence[Any], batch_items: int,
                     repeats: int = 3) -> tuple[int, float]:
    """Items and seconds for ``work`` run by the replica's own batch function
    (``encode_batch`` / ``score_batch``) in full batches of up to ``batch_items`` items,
    in this process, after one untimed warm-up call on inputs of its own. The work runs
    ``repeats`` times and the fastest counts: a limit is a ceiling, and on a shared
    machine one run of it varied from 634 to 926 texts/s (int8 MiniLM, runs 4 and 5).
    A scorer runs once: the stored-vector scorer caches document embeddings, so only its
    first run is cold."""
    from deployments.batching import encode_batch, items_in, score_batch

    run = (lambda batch: score_batch(models, batch)) if kind == "cross-encoder" else (
        lambda batch: encode_batch(models, batch))
    batches: list[list[Any]] = [[]]
    for request in work:
        if batches[-1] and items_in([*batches[-1], request]) > batch_items:
            batches.append([])
        batches[-1].append(request)
    run([_warm_up(kind, getattr(work[0], "role", ""))])
    fastest = float("inf")
    for _ in range(1 if kind == "cross-encoder" else max(1, repeats)):
        start = time.perf_counter()
        for batch in batches:
            run(batch)
        fastest = min(fastest, time.perf_counter() - start)
    return items_in(work), fastest


def _deployment_settings(config: AppConfig, name: str) -> DeploymentSettings:
    """Serve settings of model deployment ``name``, as the application gives them
    (``deployments.app.settings_for``)."""
    from deployments.app import settings_for
    from deployments.roles import model_deployments

    return settings_for(config, next(d for d in model_deployments(config) if d.name == name))


def _served_threads(config: AppConfig, name: str) -> str:
    """The intra-op threads a replica of deployment ``name`` sets (issue 16: explicit, from
    ``serve.<kind>.intra_op_threads`` / ``models.cpu_threads`` / ``ceil(num_cpus)``)."""
    settings = _deployment_settings(config, name)
    return f"{settings.threads_for(config.models)} intra-op threads"


def _merge_label(merge: MergeSettings) -> str:
    if merge.max_in_flight is None:
        return f"merged (<= {merge.max_items} texts, no bound)"
    past = ", full calls past it" if merge.send_full_calls else ""
    return f"merged (<= {merge.max_items} texts, <= {merge.max_in_flight} out{past})"


def _call_paths(config: AppConfig, kind: str, name: str, merge_modes: bool = False
                ) -> dict[str, MergeSettings | None]:
    """Label -> the ``HandleTextEncoder`` merge setting to measure deployment ``name`` with:
    one handle call per text, and the ingress's merged calls when the profile merges;
    with ``merge_modes`` also the profile's bound with and without full calls past it
    (``send_full_calls``, the profile's mode since 2026-12-02) and no bound at all."""
    if kind == "cross-encoder":
        return {"one per request": None}
    merge = config.serve.encoder_for(name).caller_merge()
    paths: dict[str, MergeSettings | None] = {"one per text": None}
    if merge is None:
        return paths
    variants = [merge]
    if merge_modes:
        variants += [replace(merge, send_full_calls=False),
                     replace(merge, send_full_calls=True),
                     replace(merge, max_in_flight=None, send_full_calls=False)]
    for variant in variants:
        paths.setdefault(_merge_label(variant), variant)
    return paths


def _ingress_path(paths: dict[str, MergeSettings | None]) -> str:
    """The label of ``_call_paths``' entry that the profile's search ingress uses: its
    first merged path (the profile's own merge setting) when it merges, else the one
    call per text (per request) path."""
    return next((label for label, merge in paths.items() if merge is not None),
                next(iter(paths)))


async def _served_level(app: Any, kind: str, work: Sequence[Any], concurrency: int,
                        settings: ServedSettings, merge: MergeSettings | None = None
                        ) -> tuple[Any, dict[str, Any]]:
    """One concurrency level through the deployment's handle, after one warm-up call.
    An encoder is called through the ingress's port (``HandleTextEncoder``) with
    ``merge``."""
    from bench.measure import batch_histogram_difference
    from bench.served import drive
    from deployments.handles import HandleTextEncoder, merged_encoder_calls

    handle = app.handle()
    merged = merged_encoder_calls(handle, merge) if merge is not None else None
    port = HandleTextEncoder(handle, app.roles[0], 0, merged)

    async def call(index: int) -> int:
        request = work[index % len(work)]
        if kind == "cross-encoder":
            scores = await handle.score.remote(request.query, list(request.texts))
            return len(scores)
        vectors = await port.encode(list(request.texts))
        return len(vectors)

    warm_up = _warm_up(kind, app.roles[0])
    if kind == "cross-encoder":
        await handle.score.remote(warm_up.query, list(warm_up.texts))
    else:
        await port.encode(list(warm_up.texts))
    before = await handle.batch_stats.remote()
    result = await drive(call, concurrency, len(work), settings.duration_s)
    after = await handle.batch_stats.remote()
    batches = batch_histogram_difference({app.deployment: before}, {app.deployment: after})
    return result, batches[app.deployment]


def served_comparison(
    settings: ServedSettings, after: Callable[[dict[str, Any]], None] | None = None
) -> list[ServedRow]:
    """For each text model deployment of the profile: the in-process batched limit, then
    the deployment (Serve must be running) at each concurrency, then the limit again,
    with every deployment of the profile still up and idle (each row's ``limit_rate``
    is the higher of the two; the rows printed per level show the first);
    ``after(apps)`` runs
    while the deployments are still up (``bench.served.ModelApp`` by deployment name).
    The deployments are removed at the end."""
    import asyncio

    import torch
    from ray import serve

    from bench.served import delete_apps, deploy_model_apps, model_groups
    from deployments.roles import load_shared

    config = settings.config
    groups = model_groups(config)
    plans: dict[str, tuple[str, bool]] = {}

    def limit_of(name: str) -> float:
        """The deployment's in-process batched limit now (items/s)."""
        roles = groups[name]
        kind, smiles = plans[name]
        loaded = load_shared(config.models, list(roles))
        models = loaded[roles[0]] if kind == "cross-encoder" else loaded
        items, seconds = in_process_limit(models, kind, _work(kind, roles, settings, smiles),
                                          _deployment_settings(config, name).max_batch_size)
        del loaded, models
        return items / seconds

    limits: dict[str, float] = {}
    for name, roles in groups.items():
        plans[name] = ("cross-encoder" if name == "CrossEncoder" else "encoder",
                       config.models.spec(roles[0]).modality.value == "smiles")
        limits[name] = limit_of(name)
    apps = deploy_model_apps(config, prefix="bench-encoders")
    rows: list[ServedRow] = []
    try:
        for name, app in apps.items():
            kind, smiles = plans[name]
            limit_rate = limits[name]
            limit_batch = _deployment_settings(config, name).max_batch_size
            first_row = len(rows)
            paths = _call_paths(config, kind, name, settings.merge_modes)
            ingress = _ingress_path(paths)
            levels = [(level, concurrency, path, merge)
                      for level, concurrency in enumerate(settings.concurrencies)
                      for path, merge in paths.items()]
            for level, concurrency, path, merge in levels:
                work = _work(kind, app.roles, settings, smiles, level)
                result, batches = asyncio.run(
                    _served_level(app, kind, work, concurrency, settings, merge))
                rows.append(ServedRow(
                    deployment=name, label=settings.label,
                    unit="pairs/s" if kind == "cross-encoder" else "texts/s",
                    # callers beyond the calls of a level never call: 8 scorer calls
                    # measure c=8 whatever the level asked for
                    concurrency=min(concurrency, len(work)),
                    served_rate=result.rate, limit_rate=limit_rate,
                    items=result.items, failures=result.failures, limit_batch=limit_batch,
                    limit_threads=torch.get_num_threads(),
                    served_threads=_served_threads(config, name),
                    mean_batch_items=float(batches.get("mean_items", 0.0)),
                    calls=path, ingress_path=path == ingress,
                ))
                print(format_served_table(rows[-1:], header=False), flush=True)
            # the limit again, the deployments idle: the higher of the two counts
            runs = (limit_rate, limit_of(name))
            print(f"{name}: in-process limit before / after its levels "
                  f"{runs[0]:.1f} / {runs[1]:.1f} (the rows above use the first; the "
                  "final table and the JSON the higher)", flush=True)
            rows[first_row:] = [replace(row, limit_rate=max(runs), limit_runs=runs)
                                for row in rows[first_row:]]
        if after is not None:
            after(apps)
    finally:  # the deployments and any front added by ``after``
        try:
            delete_apps([name for name in serve.status().applications
                         if name.startswith("bench-encoders")])
        except RuntimeError as error:  # never hide the error that brought us here
            print(f"warning: {error}", file=sys.stderr, flush=True)
    return rows


def format_served_table(rows: Sequence[ServedRow], header: bool = True) -> str:
    """Served against limit: deployment, concurrency, rates, ratio, batch, threads."""
    lines = []
    if header:
        title = (f"{'deployment':<20} {'setting':<18} {'calls':<54} {'conc':>4} {'served':>9} "
                 f"{'limit':>9} {'ratio':>6} {'batch':>6} {'unit':<8} threads (served / limit)")
        lines += [title, "-" * len(title)]
    for row in rows:
        lines.append(
            f"{row.deployment:<20} {row.label[:18]:<18} {row.calls:<54} {row.concurrency:>4} "
            f"{row.served_rate:>9.1f} {row.limit_rate:>9.1f} {row.ratio:>6.2f} "
            f"{row.mean_batch_items:>6.1f} {row.unit:<8} {row.served_threads} / "
            f"{row.limit_threads}" + (f"  failures {row.failures}" if row.failures else "")
        )
    return "\n".join(lines)


def _passages_needed(scorer_calls: int, pairs: int, concurrencies: Sequence[int]) -> int:
    """Passages for distinct scorer inputs at every level (see :func:`_work`)."""
    return scorer_calls * pairs * max(len(concurrencies), 1)


def _served_settings(args: argparse.Namespace) -> ServedSettings:
    from bench.queries import QueryMix, load_passages, load_smiles
    from deployments.config import load_config

    overrides: dict[str, Any] = {}
    if args.served_threads is not None:
        overrides = {"models": {"cpu_threads": args.served_threads}}
    config = load_config(str(args.profile), args.config, data_dir=args.data_dir,
                         overrides=overrides)
    calls = 24 if args.quick else args.served_calls
    mix = QueryMix.from_paths(args.queries, seed=0, unique=False)
    return ServedSettings(
        config=config,
        queries=tuple(mix.take(calls)),
        smiles=tuple(load_smiles(args.smiles, calls)),
        passages=tuple(load_passages(args.texts, _passages_needed(
            4 if args.quick else args.scorer_calls, args.pairs_per_call, args.concurrency))),
        concurrencies=tuple(args.concurrency),
        calls=calls,
        scorer_calls=4 if args.quick else args.scorer_calls,
        pairs=args.pairs_per_call,
        duration_s=args.served_duration,
        label=(f"cpu_threads={args.served_threads}" if args.served_threads
               else "profile options"),
        merge_modes=args.merge_modes,
    )


def _run_served(args: argparse.Namespace) -> list[ServedRow]:
    """Start Ray (bounded logical CPUs) and Serve, run the comparison, stop both."""
    from bench.ray_session import ray_serve_session

    settings = _served_settings(args)
    with ray_serve_session(args.ray_cpus):
        return served_comparison(settings)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run the benchmark, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=Path, default=DEFAULT_TEXTS,
                        help="JSONL with a 'text' field per line (default: EMA leaflet sections)")
    parser.add_argument("--profile", type=Path, default=DEFAULT_PROFILE)
    parser.add_argument("--role", default="general-text", help="text role to measure")
    parser.add_argument("--scorer-role", default="medcpt-rerank")
    parser.add_argument("--count", type=int, default=512, help="texts per measurement")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8, 32, 128])
    parser.add_argument("--pairs", type=int, default=50, help="texts per cross-encoder call")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: all)")
    parser.add_argument("--onnx-cache-dir", type=Path, default=None)
    parser.add_argument("--token-budgets", type=int, nargs="+", default=[],
                        help="models.cpu_max_tokens_per_forward values to measure the text "
                             "role at (default: the profile's)")
    parser.add_argument("--skip-scorer", action="store_true",
                        help="measure the text role only (no cross-encoder rows)")
    parser.add_argument("--quick", action="store_true", help="smoke run on a few items")
    served = parser.add_argument_group("served deployments (--served)")
    served.add_argument("--served", action="store_true",
                        help="also compare each model deployment with its in-process limit")
    served.add_argument("--served-only", action="store_true",
                        help="skip the in-process engine table")
    served.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    served.add_argument("--served-calls", type=int, default=256,
                        help="encoder calls (one text each) per level")
    served.add_argument("--scorer-calls", type=int, default=16,
                        help="scorer calls per level (each --pairs-per-call passages)")
    served.add_argument("--pairs-per-call", type=int, default=32)
    served.add_argument("--served-duration", type=float, default=60.0, help="s per level")
    served.add_argument("--served-threads", type=int, default=None,
                        help="models.cpu_threads for the replicas (default: Ray's)")
    served.add_argument("--ray-cpus", type=int, default=4, help="Ray logical CPUs")
    served.add_argument("--merge-modes", action="store_true",
                        help="measure each merged encoder with its bound with and without "
                             "full calls past it, and with no bound, too")
    served.add_argument("--queries", type=Path, nargs="+",
                        default=[REPOSITORY.parent / "shared" / "data" / "drug_kb_dev.jsonl",
                                 REPOSITORY.parent / "shared" / "data" / "nfcorpus"
                                 / "queries.test.jsonl"])
    served.add_argument("--smiles", type=Path,
                        default=REPOSITORY.parent / "shared" / "data" / "compounds"
                        / "chembl_approved_drugs.csv")
    served.add_argument("--config", type=Path, default=None, help="YAML merged over --profile")
    served.add_argument("--data-dir", type=Path, default=Path("/tmp/bench-data"))
    served.add_argument("--out", type=Path, default=None, help="write rows as JSON here")
    args = parser.parse_args(argv)
    settings = BenchSettings(
        texts_path=args.texts, profile_path=args.profile, text_role=args.role,
        scorer_role=args.scorer_role, count=args.count, batch_sizes=tuple(args.batch_sizes),
        pairs=args.pairs, cpu_threads=args.threads, onnx_cache_dir=args.onnx_cache_dir,
        token_budgets=tuple(args.token_budgets), pair_calls=0 if args.skip_scorer else 8,
    )
    if args.quick:
        settings = replace(settings, count=16, batch_sizes=(1, 8), pairs=10,
                           pair_calls=min(settings.pair_calls, 1))
    report: dict[str, Any] = {}
    if not args.served_only:
        print(format_header(), flush=True)
        rows = []
        for row in iter_benchmark_rows(settings):
            print(format_row(row), flush=True)
            rows.append(row)
        report["in_process"] = [{**asdict(row), "rate": row.rate} for row in rows]
    if args.served or args.served_only:
        served_rows = _run_served(args)
        print(format_served_table(served_rows))
        report["served"] = [{**asdict(row), "ratio": row.ratio} for row in served_rows]
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
        print(f"json: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
