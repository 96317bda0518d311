"""``biomed-search eval``: retrieval quality of a query set, every stage against its
ablation, in one run (issue 6).

In-process (default): the embedded stores of ``--data-dir`` and the profile's local
models, one ``Retriever`` per ablation over the same store, registry and models (the
code the service runs), each searching through a recording store wrapper so that misses
can be classed as recall or ranking gaps. With ``--url``: the running service over
HTTP (``POST /v1/search``), full pipeline only, no store access (misses unclassified
beyond what the response shows).

Dataset defaults (paths relative to the project's ``../shared/data``):

| dataset | queries | judgement | kb |
|---|---|---|---|
| ``nfcorpus`` | ``nfcorpus/queries.test.jsonl`` + ``qrels/test.tsv`` | qrels | ``nfcorpus`` |
| ``drug-kb`` | ``drug_kb_dev.jsonl`` | document name (+ section) | ``drug-kb`` |
| ``eaglerag`` | ``eaglerag_eval/eval_queries.aligned.jsonl`` | document name | ``drug-kb`` |
| ``beir`` | ``--data`` folder (``--queries`` optional) | graded qrels | ``--kb`` |
| ``jsonl`` | ``--queries`` | document name (+ section) | ``--kb`` |
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from deployments.config import AppConfig
from pipeline.errors import BackendUnavailable
from pipeline.evaluation.ablations import Ablation, resolve_ablations, settings_for
from pipeline.evaluation.diagnosis import StoreCorpusProbe
from pipeline.evaluation.eagle import route_accuracy
from pipeline.evaluation.querysets import QuerySet, read_beir, read_jsonl_queries
from pipeline.evaluation.recording import RecordingVectorStore
from pipeline.evaluation.report import (
    markdown_answerable_table,
    markdown_misses,
    markdown_stage_timings,
    markdown_table,
    write_reports,
)
from pipeline.evaluation.runner import AblationTarget, EvalOptions, EvalRun, evaluate
from pipeline.ports import RetrieverPorts
from pipeline.retriever import Retriever
from pipeline.schema import SearchRequest, SearchResponse
from pipeline.settings import StageBudgets

__all__ = ["DATASETS", "DatasetSpec", "load_query_set", "run_eval", "run_in_process"]

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"

#: Stage budgets of in-process evaluation, in ms: high, so that a busy CPU degrades no
#: stage (a plan or Tier-2 over budget would change the ranking being measured); degraded
#: stages are still counted per ablation.
EVAL_BUDGETS = StageBudgets(
    plan_ms=600_000.0, supplement_ms=600_000.0, rerank_ms=600_000.0, request_ms=1_800_000.0
)


@dataclass(frozen=True)
class DatasetSpec:
    """Defaults of one ``--dataset`` value."""

    judgement: str
    data: Path | None = None
    queries: Path | None = None
    kb: str | None = None


DATASETS: dict[str, DatasetSpec] = {
    "nfcorpus": DatasetSpec("qrels", data=SHARED_DATA / "nfcorpus", kb="nfcorpus"),
    "drug-kb": DatasetSpec("name", queries=SHARED_DATA / "drug_kb_dev.jsonl", kb="drug-kb"),
    "eaglerag": DatasetSpec(
        "name",
        queries=SHARED_DATA / "eaglerag_eval" / "eval_queries.aligned.jsonl",
        kb="drug-kb",
    ),
    "beir": DatasetSpec("qrels"),
    "jsonl": DatasetSpec("name"),
}


def load_query_set(dataset: str, data: Path | None, queries: Path | None) -> QuerySet:
    """The query set of ``dataset`` with ``--data`` / ``--queries`` over its defaults.

    Raises:
        ValueError: unknown dataset, or a required path is missing.
        FileNotFoundError: a file does not exist.
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; valid: {', '.join(DATASETS)}")
    spec = DATASETS[dataset]
    if spec.judgement == "qrels":
        folder = data or spec.data
        if folder is None:
            raise ValueError(f"--dataset {dataset} needs --data (a BEIR folder)")
        return read_beir(folder, queries_path=queries, name=dataset)
    path = queries or spec.queries
    if path is None:
        raise ValueError(f"--dataset {dataset} needs --queries (a JSONL file)")
    return read_jsonl_queries(path, name=dataset)


def _kb(dataset: str, kb: str | None) -> str | None:
    if kb is not None:
        return None if kb in {"", "*"} else kb
    return DATASETS[dataset].kb


def _progress(started: float) -> Callable[[str, int, int], None]:
    def report(ablation: str, done: int, total: int) -> None:
        if done == total or done % 25 == 0:
            elapsed = time.perf_counter() - started
            print(f"  [{elapsed:7.1f}s] {ablation}: {done}/{total}", file=sys.stderr, flush=True)

    return report


def _collection_vector(
    config: AppConfig, encoders: dict[str, Any]
) -> Callable[[str, str], Awaitable[np.ndarray]]:
    async def vector(collection: str, text: str) -> np.ndarray:
        spec = config.pipeline.collections.get(collection)
        encoder = encoders.get(spec.query_encoder) if spec is not None else None
        if encoder is None:
            raise BackendUnavailable(f"no query encoder for collection {collection!r}")
        return np.asarray((await encoder.encode([text]))[0], dtype=np.float32)

    return vector


async def run_in_process(
    config: AppConfig,
    query_set: QuerySet,
    ablations: list[Ablation],
    options: EvalOptions,
    dataset: str,
    progress: Callable[[str, int, int], None] | None = None,
    on_ablation: Callable[[EvalRun], None] | None = None,
) -> EvalRun:
    """Start (or reuse) the stores of ``config.data_dir``, load the models, and evaluate
    one ``Retriever`` per ablation sharing them.

    Raises:
        pipeline.errors.BackendUnavailable: a store does not come up, or the kb is empty.
    """
    from deployments.inprocess import in_process_service

    async with in_process_service(config) as running:
        service = running.service
        await service.start()
        base = service.retriever
        assert base is not None
        registry = base.ports.registry
        if options.kb and registry is not None and hasattr(registry, "count_documents"):
            stored = await registry.count_documents(options.kb)
            if stored == 0:
                raise BackendUnavailable(
                    f"knowledge base {options.kb!r} holds no documents under "
                    f"{config.data_dir}; ingest it first (biomed-search ingest --kb "
                    f"{options.kb} ...)"
                )
        pool_store = RecordingVectorStore(base.ports.store)
        settings = config.pipeline.model_copy(update={"budgets": EVAL_BUDGETS})
        targets = []
        for ablation in ablations:
            retriever = Retriever(
                settings_for(settings, ablation),
                RetrieverPorts(store=pool_store, models=base.ports.models, registry=registry),
                vocabulary=base.vocabulary,
            )
            targets.append(
                AblationTarget(ablation.name, ablation.description, retriever.search, pool_store)
            )
        probe = (
            StoreCorpusProbe(
                registry=registry,
                kb=options.kb,
                store=base.ports.store,
                collection_vector=_collection_vector(config, dict(base.ports.models.encoders)),
                namespace=config.pipeline.namespace,
            )
            if registry is not None
            else None
        )
        run = await evaluate(query_set, targets, options, probe, dataset, progress, on_ablation)
        if dataset == "eaglerag" and run.summaries:
            run.extra["eagle"] = route_accuracy(
                query_set.queries, run.rows_of(run.summaries[-1].name), base.vocabulary
            )
        return run


async def run_remote(
    url: str,
    query_set: QuerySet,
    options: EvalOptions,
    dataset: str,
    api_key: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> EvalRun:
    """Evaluate a running service (full pipeline only) over HTTP."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(
        base_url=url.rstrip("/"), headers=headers, timeout=120.0
    ) as client:

        async def search(request: SearchRequest) -> SearchResponse:
            try:
                response = await client.post(
                    "/v1/search", json=request.model_dump(mode="json", exclude_none=True)
                )
            except httpx.HTTPError as error:
                raise BackendUnavailable(f"{url}: {error}") from error
            if response.status_code != 200:
                raise BackendUnavailable(f"HTTP {response.status_code}: {response.text[:300]}")
            return SearchResponse.model_validate(response.json())

        targets = [AblationTarget("full", "service at " + url, search)]
        return await evaluate(query_set, targets, options, None, dataset, progress)


def _notes(config: AppConfig, args: argparse.Namespace, options: EvalOptions) -> dict[str, str]:
    roles = config.models.roles
    text_model = getattr(roles.get("pubmedbert"), "source", "?")
    scorer = getattr(roles.get("medcpt-rerank"), "source", "?")
    notes = {
        "profile": config.profile,
        "config overrides": str(args.config) if args.config else "none",
        "target": args.url or f"in-process, data dir {config.data_dir}",
        "text encoder": str(text_model),
        "cross-encoder role": str(scorer),
        "tier2 max_candidates": str(config.pipeline.tier2.max_candidates),
        "unit of ranking": "document (chunks de-duplicated by document id)"
        if DATASETS[args.dataset].judgement == "qrels"
        else "chunk as returned",
    }
    if not args.url:
        notes["stage budgets"] = (
            "raised to 600 s for evaluation (service: plan 5 s, supplement 5 s, rerank 10 s)"
        )
    if options.similarity_threshold == 0.0:
        notes["similarity threshold"] = "0.0 for evaluation (the service default is 0.2)"
    return notes


def run_eval(config: AppConfig, args: argparse.Namespace) -> int:
    """The ``eval`` sub-command: evaluate, print the ablation table and the misses of the
    last row, write JSON / Markdown / PNG under ``--out``. Returns the exit status."""
    query_set = load_query_set(args.dataset, args.data, args.queries).limited(args.limit)
    if not len(query_set):
        print("biomed-search eval: the query set is empty", file=sys.stderr)
        return 2
    options = EvalOptions(
        page_size=int(getattr(args, "page_size", None) or 20),
        kb=_kb(args.dataset, args.kb),
    )
    started = time.perf_counter()
    progress = _progress(started)
    stem = args.dataset + (f"-{Path(args.config).stem}" if args.config else "")
    print(
        f"eval {args.dataset}: {len(query_set)} queries, kb {options.kb!r}, "
        f"{'service ' + args.url if args.url else 'in-process'}",
        file=sys.stderr,
    )
    try:
        if args.url:
            if args.ablations not in {"all", "full"}:
                print("biomed-search eval: --url runs the full pipeline only", file=sys.stderr)
            run = asyncio.run(
                run_remote(
                    args.url,
                    query_set,
                    options,
                    args.dataset,
                    os.environ.get("BIOMED_SEARCH_API_KEY"),
                    progress,
                )
            )
        else:
            ablations = resolve_ablations(args.ablations)

            def checkpoint(partial: EvalRun) -> None:
                partial.extra["notes"] = _notes(config, args, options)
                write_reports(partial, Path(args.out), stem)

            run = asyncio.run(
                run_in_process(
                    config, query_set, ablations, options, args.dataset, progress, checkpoint
                )
            )
    except BackendUnavailable as error:
        print(f"biomed-search eval: {error}", file=sys.stderr)
        return 1
    run.extra["notes"] = _notes(config, args, options)
    run.extra["wall_s"] = round(time.perf_counter() - started, 1)
    paths = write_reports(run, Path(args.out), stem)
    print(markdown_table(run))
    print()
    answerable = markdown_answerable_table(run)
    if answerable:
        print(answerable)
        print()
    print(markdown_stage_timings(run))
    print()
    print(markdown_misses(run))
    eagle = run.extra.get("eagle")
    if eagle:
        print()
        print(
            f"EagleRAG hints: entity recall {eagle['entity_recall']:.3f}, route accuracy "
            f"{eagle['route_accuracy']:.3f}, workflow agreement {eagle['workflow_agreement']:.3f}"
        )
    print()
    print("wrote " + ", ".join(str(path) for path in paths.values()))
    return 0
