"""``biomed-search ingest``: the CLI face of the ingest runner, with the models in this
process (``--engine inprocess``) or on Ray Data actor pools (``--engine ray``,
:mod:`deployments.ingest_ray`)."""

from __future__ import annotations

import itertools
import os
import resource
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tqdm import tqdm

from deployments.config import AppConfig
from deployments.local import load_local_models
from deployments.runtime.processes import sigterm_kept
from deployments.stores import (
    EmbeddedServers,
    collection_metrics,
    collection_weights,
    open_stores,
)
from pipeline.ingest.readers import read_source
from pipeline.ingest.records import SourceRecord
from pipeline.ingest.removal import remove_documents, remove_knowledge_base
from pipeline.ingest.runner import IngestReport, IngestRunner
from pipeline.scope_names import name_problem
from pipeline.vocabulary import default_vocabulary

if TYPE_CHECKING:
    from deployments.ingest_ray import RayIngestSettings

__all__ = ["connect_ray", "document_roles", "ingest_sources", "peak_rss_mib", "run_ingest"]

REPOSITORY = Path(__file__).resolve().parent.parent


def document_roles(config: AppConfig) -> list[str]:
    """The document-side encoder roles of the collections the profile enables."""
    roles = [spec.document_encoder for spec in config.pipeline.enabled_collections().values()]
    enabled = set(config.models.enabled_roles())
    return [role for role in dict.fromkeys(roles) if role in enabled]


async def run_ingest(
    config: AppConfig,
    records: Iterable[SourceRecord],
    kb_name: str,
    store: Any,
    registry: Any,
    encoders: dict[str, Any],
    progress: bool = True,
) -> IngestReport:
    """Run the ingest runner with a progress bar (documents, chunks, rate)."""
    bar = tqdm(total=0, unit="doc", disable=not progress, desc=f"ingest {kb_name}")

    def update(done: int, total: int, report: IngestReport) -> None:
        bar.total = total
        bar.n = done
        bar.set_postfix(
            chunks=sum(report.chunks_written.values()),
            unchanged=report.documents_unchanged,
            refresh=False,
        )
        bar.refresh()

    runner = IngestRunner(
        store=store,
        registry=registry,
        encoders=encoders,
        settings=config.pipeline,
        vocabulary=default_vocabulary(),
        progress=update,
    )
    try:
        return await runner.run(records, kb_name)
    finally:
        bar.close()


def connect_ray(address: str | None, num_cpus: int | None = None) -> bool:
    """Join Ray: the one already running in this process, the cluster at ``address``
    (``ray://head:10001``, ``auto``), or a new local one (None; the repository on the
    workers' ``PYTHONPATH``; ``num_cpus`` logical CPUs, at least the machine's). Returns
    True when this call initialised Ray."""
    import ray

    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    options: dict[str, Any] = {"address": address, "log_to_driver": False}
    if address is None:
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        path = os.pathsep.join(p for p in (str(REPOSITORY), os.environ.get("PYTHONPATH")) if p)
        env = {"PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        options |= {
            "address": "local",
            "include_dashboard": False,
            "runtime_env": {"env_vars": env},
            "num_cpus": max(os.cpu_count() or 1, num_cpus or 0),
        }
    with sigterm_kept():  # a kill while Ray runs still stops the stores
        ray.init(configure_logging=False, **options)
    return True


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident memory in MiB of this process (``RUSAGE_SELF``) or of its waited-for
    children (``RUSAGE_CHILDREN``); Linux reports KiB."""
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)


def _check_kb_name(kb_name: str) -> None:
    """Refuse, before anything is stored or removed, a kb name that ``/v1/search`` could
    not name in ``kb_ids`` (``pipeline.scope_names.name_problem``).

    Raises:
        ValueError: the name is empty, too long or holds control characters.
    """
    problem = name_problem(kb_name)
    if problem is not None:
        raise ValueError(f"--kb {kb_name!r}: a kb name {problem}")


async def ingest_sources(
    config: AppConfig,
    sources: Sequence[Path],
    kb_name: str,
    fmt: str = "auto",
    progress: bool = True,
    engine: Literal["inprocess", "ray"] = "inprocess",
    ray_settings: RayIngestSettings | None = None,
) -> dict[str, Any]:
    """Ingest ``sources`` into ``kb_name`` with ``engine``; start (and afterwards stop)
    the embedded servers unless they are already running, and for ``ray`` a local Ray
    unless ``ray_settings.address`` names a cluster (or Ray already runs here). Returns
    the report plus row counts per collection, documents in the registry, wall time and
    peak memory (this process; for ``ray`` also each encoder actor's).

    Raises:
        ValueError: an unknown engine, or a kb name ``/v1/search`` could not name.
    """
    if engine not in ("inprocess", "ray"):
        raise ValueError(f"unknown engine {engine!r}; one of inprocess, ray")
    _check_kb_name(kb_name)
    started = time.perf_counter()
    servers = EmbeddedServers(config)
    started_ray = False
    extra: dict[str, Any] = {"engine": engine}
    try:  # start() inside: a kill just after it returns still stops the stores
        endpoints = servers.start()
        vocabulary = default_vocabulary()
        records = itertools.chain.from_iterable(
            read_source(source, vocabulary, fmt) for source in sources
        )
        metrics = collection_metrics(config)
        weights = collection_weights(config, "document")
        async with open_stores(endpoints, config.stores, metrics, weights) as (store, registry):
            await store.check_writable()
            if engine == "ray":
                from deployments.ingest_ray import RayIngestSettings, ingest_ray, model_groups

                settings = ray_settings or RayIngestSettings()
                # every encoder actor holds a logical CPU (models idle on other kinds)
                actors = settings.actors * len(model_groups(config))
                started_ray = connect_ray(settings.address, num_cpus=actors)
                result = await ingest_ray(
                    config, records, kb_name, store, registry, settings, progress
                )
                report = result.report
                extra["encoder_actors_peak_memory_mib"] = result.encoder_peak_mib
            else:
                models = load_local_models(config.models, document_roles(config))
                report = await run_ingest(
                    config, records, kb_name, store, registry, dict(models.encoders), progress
                )
            rows = {
                name: await store.count(name)
                for name in config.pipeline.enabled_collections()
                if await store.has_collection(name)
            }
            documents = await registry.count_documents()
    finally:
        if started_ray:
            import ray

            ray.shutdown()
        servers.stop()
    return {
        **report.as_dict(),
        "rows_per_collection": rows,
        "documents_in_registry": documents,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "peak_memory_mib": peak_rss_mib(),
        "peak_memory_children_mib": peak_rss_mib(resource.RUSAGE_CHILDREN),
        **extra,
    }


async def delete_sources(
    config: AppConfig, document_ids: Sequence[str], kb_name: str | None = None
) -> dict[str, Any]:
    """Remove documents from the stores of ``config`` (``biomed-search delete``): by id,
    or with no ids every document of ``kb_name``; with both, only the ids of that kb. The
    embedded servers are started (and afterwards stopped) unless already running.

    Returns:
        ``removed`` / ``not_found`` / ``other_kb`` id lists
        (:func:`pipeline.ingest.removal.remove_documents`), with ``--kb`` and no ids
        ``unregistered_chunks`` (:func:`~pipeline.ingest.removal.remove_knowledge_base`),
        and ``documents_in_registry``.

    Raises:
        ValueError: neither ids nor a knowledge base given.
    """
    if not document_ids and kb_name is None:
        raise ValueError("give document ids, --kb, or both")
    if kb_name is not None:
        _check_kb_name(kb_name)
    servers = EmbeddedServers(config)
    try:  # start() inside: a kill just after it returns still stops the stores
        endpoints = servers.start()
        async with open_stores(endpoints, config.stores, collection_metrics(config)) as (
            store,
            registry,
        ):
            collections = config.pipeline.enabled_collections()
            if document_ids or kb_name is None:
                outcome = await remove_documents(
                    store, registry, document_ids, collections, kb_name
                )
            else:  # a whole kb: its unregistered chunks too
                outcome = await remove_knowledge_base(store, registry, kb_name, collections)
            documents = await registry.count_documents()
    finally:
        servers.stop()
    return {**outcome, "documents_in_registry": documents}
