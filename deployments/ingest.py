"""``biomed-search ingest``: the CLI face of the ingest runner (models in-process)."""

from __future__ import annotations

import itertools
import resource
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from deployments.config import AppConfig
from deployments.local import load_local_models
from deployments.stores import EmbeddedServers, collection_metrics, open_stores
from pipeline.ingest.readers import read_source
from pipeline.ingest.records import SourceRecord
from pipeline.ingest.runner import IngestReport, IngestRunner
from pipeline.vocabulary import default_vocabulary

__all__ = ["document_roles", "ingest_sources", "run_ingest"]


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


async def ingest_sources(
    config: AppConfig,
    sources: Sequence[Path],
    kb_name: str,
    fmt: str = "auto",
    progress: bool = True,
) -> dict[str, Any]:
    """Ingest ``sources`` into ``kb_name``; start (and afterwards stop) the embedded
    servers unless they are already running. Returns the report plus row counts per
    collection, documents in the registry, wall time and peak memory."""
    started = time.perf_counter()
    servers = EmbeddedServers(config)
    endpoints = servers.start()
    try:
        models = load_local_models(config.models, document_roles(config))
        vocabulary = default_vocabulary()
        records = itertools.chain.from_iterable(
            read_source(source, vocabulary, fmt) for source in sources
        )
        metrics = collection_metrics(config)
        async with open_stores(endpoints, config.stores, metrics) as (store, registry):
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
        servers.stop()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        **report.as_dict(),
        "rows_per_collection": rows,
        "documents_in_registry": documents,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "peak_memory_mib": round(peak_kib / 1024, 1),
        "peak_memory_children_mib": round(children_kib / 1024, 1),
    }
