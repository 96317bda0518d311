"""``biomed-search ingest --engine ray``: the in-process runner's exactly-once ingest with
the document encoders on Ray Data actor pools (one pool per model, as many actors as
asked, each on ``num_cpus`` / ``num_gpus`` from the profile's encoder deployment).

Streaming, in one driver event loop (memory bounded by the queue and Ray Data's buffers,
never by the corpus):

- producer: read -> validate -> group documents (:func:`stream_documents`) ->
  :meth:`IngestRunner.plan_batch` (content hash, registry check, chunks and metadata: the
  in-process code) -> stored chunks of those documents deleted -> rows ``{key, group, text,
  title}`` into a bounded Ray queue;
- Ray Data: one read task drains the queue -> ``map_batches`` per model group (actor pool;
  a row not of the pool's group passes through) -> ``iter_batches`` back in the driver;
- consumer: rows per collection upserted in large batches
  (:meth:`IngestRunner.store_chunks`); a document is registered
  (:meth:`IngestRunner.register`) once all its chunks in every collection are stored.

So an interrupted run leaves only unregistered documents, which the next run writes again
(stable chunk ids, idempotent upserts), and a second run writes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from tqdm import tqdm

from deployments.config import AppConfig
from deployments.ingest import document_roles
from deployments.ingest_rows import BatchEncoder, rows_block
from deployments.roles import model_sharing_key
from pipeline.ingest.chunker import ChunkDraft
from pipeline.ingest.records import SourceRecord
from pipeline.ingest.runner import (
    IngestReport,
    IngestRunner,
    RecordFailure,
    encoder_inputs,
    stream_documents,
)
from pipeline.schema import DocumentRecord
from pipeline.settings import CollectionSpec
from pipeline.vocabulary import default_vocabulary

__all__ = [
    "BatchEncoder",
    "RayIngestResult",
    "RayIngestSettings",
    "ingest_ray",
    "model_groups",
]


@dataclass(frozen=True)
class RayIngestSettings:
    """How the Ray Data engine runs. ``None`` takes the profile's value: batch size
    ``pipeline.ingest.encode_batch``, ``num_cpus`` / ``num_gpus`` of
    ``serve.encoder`` (the encoder deployments' shared settings;
    ``serve.encoder_overrides`` does not apply to the ingest actors).

    Attributes:
        address: a Ray cluster (``ray://host:10001``, ``auto``); None starts a local Ray.
        actors: encoder actors per model group (``concurrency``).
        batch_size: texts per ``map_batches`` call (one forward pass of the model).
        write_rows: rows per store write (``iter_batches`` batch size).
        queue_blocks: blocks of ``block_rows`` rows the driver keeps ahead of Ray Data.
        block_bytes: Ray Data's target block size here (its 128 MiB default holds a
            task's output until that much gathers: one block, one busy actor; 64 KiB
            is a few dozen chunks, so every encoder batch streams on at once).
    """

    address: str | None = None
    actors: int = 1
    batch_size: int | None = None
    num_cpus: float | None = None
    num_gpus: float | None = None
    write_rows: int = 1024
    block_rows: int = 256
    queue_blocks: int = 8
    block_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        if min(self.actors, self.write_rows, self.block_rows, self.queue_blocks) < 1:
            raise ValueError("actors, write_rows, block_rows and queue_blocks must be >= 1")
        if self.block_bytes < 1024:
            raise ValueError("block_bytes must be >= 1024")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError("batch_size must be >= 1")


@dataclass
class RayIngestResult:
    """The run's report, the peak resident memory (MiB) of each encoder actor, the
    chunks/s after the first stored batch (actors started, models loaded), the encoders'
    chunks/s after their first batch (from the actors' finishing times), and the
    driver's busy seconds planning (read, chunk, registry look-ups) and storing (Milvus
    writes, registration): its ceiling whatever the encoders."""

    report: IngestReport
    encoder_peak_mib: dict[int, float] = field(default_factory=dict)
    steady_chunks_per_s: float | None = None
    encode_chunks_per_s: float | None = None
    driver_seconds: dict[str, float] = field(default_factory=dict)


def _queue_dataset(queue: Any) -> Any:
    """A dataset of the blocks put on ``queue`` until ``None`` (one read task)."""
    from ray.data import Datasource, ReadTask, read_datasource
    from ray.data.block import BlockMetadata

    class QueueDatasource(Datasource):
        def estimate_inmemory_data_size(self) -> int | None:
            return None

        def get_read_tasks(self, parallelism: int, *args: Any, **kwargs: Any) -> list[ReadTask]:
            def read() -> Iterable[pa.Table]:
                while (block := queue.get()) is not None:
                    yield block

            metadata = BlockMetadata(num_rows=None, size_bytes=None, exec_stats=None)
            return [ReadTask(read, metadata)]

    # num_cpus=0: the read waits on the queue, and unlike the encoders' arguments it
    # keeps Ray Data from fusing the read into an encoder actor (one actor would do all)
    return read_datasource(QueueDatasource(), override_num_blocks=1, num_cpus=0)


@dataclass
class _Pending:
    """Chunks sent to encode and not stored yet, and what completes each document."""

    chunks: dict[int, tuple[CollectionSpec, ChunkDraft]] = field(default_factory=dict)
    remaining: dict[str, int] = field(default_factory=dict)
    records: dict[str, DocumentRecord] = field(default_factory=dict)
    keys: itertools.count = field(default_factory=itertools.count)


def model_groups(config: AppConfig) -> list[list[str]]:
    """The document roles of ``config`` grouped by the model they share (one actor pool
    per group), in a stable order."""
    groups: dict[str, list[str]] = {}
    for role in document_roles(config):
        groups.setdefault(model_sharing_key(config.models.spec(role)), []).append(role)
    return list(groups.values())


class _RayIngest:
    """One run: producer and consumer around the Ray Data pipeline (module docstring)."""

    def __init__(
        self,
        config: AppConfig,
        runner: IngestRunner,
        settings: RayIngestSettings,
        encoder_class: type[BatchEncoder],
        bar: tqdm,
    ) -> None:
        self.config, self.runner, self.settings, self.bar = config, runner, settings, bar
        self.encoder_class = encoder_class
        self.group_roles = model_groups(config)
        self.groups = {
            role: group for group, roles in enumerate(self.group_roles) for role in roles
        }
        self.first_write: tuple[float, int] | None = None  # (seconds, rows) of batch 1
        self.pending = _Pending()
        self.report = IngestReport()
        self.encoder_peak_kib: dict[int, int] = {}
        self.encoded = [0, 0, 0, 0]  # rows, first ms, rows at first ms, last ms
        self.driver_seconds = {"plan": 0.0, "store": 0.0}  # busy time, not waits

    def dataset(self, queue: Any) -> Any:
        from ray.data import ActorPoolStrategy

        ds = _queue_dataset(queue)
        encoder = self.config.serve.encoder
        num_cpus = (
            self.settings.num_cpus if self.settings.num_cpus is not None else encoder.num_cpus
        )
        num_gpus = (
            self.settings.num_gpus if self.settings.num_gpus is not None else encoder.num_gpus
        )
        batch_size = self.settings.batch_size or self.config.pipeline.ingest.encode_batch
        for group, roles in enumerate(self.group_roles):
            ds = ds.map_batches(
                self.encoder_class,
                fn_constructor_kwargs={
                    "profile": self.config.models,
                    "roles": roles,
                    "group": group,
                },
                batch_size=batch_size,
                batch_format="pyarrow",
                compute=ActorPoolStrategy(size=self.settings.actors),
                num_cpus=max(num_cpus, 0.01),
                num_gpus=num_gpus or None,
            )
        return ds

    async def produce(
        self, records: Iterable[SourceRecord], kb_name: str, namespace: str, queue: Any
    ) -> None:
        """Plan document batches and queue their rows; ``None`` last (not on cancel)."""
        report = self.report
        documents = stream_documents(records, report.failures)
        size = self.config.pipeline.ingest.batch_documents
        while True:
            started = time.perf_counter()  # reading and validating count as planning
            if not (batch := dict(itertools.islice(documents, size))):
                break
            report.documents_seen += len(batch)
            plan = await self.runner.plan_batch(batch, kb_name, namespace, report)
            await self.runner.delete_stale(plan)
            rows: list[dict[str, Any]] = []
            for spec, drafts in plan.per_collection.values():
                role = spec.document_encoder
                if role not in self.groups:
                    raise LookupError(f"no encoder for role {role!r}")
                await self.runner.prepare_collection(spec, self.config.models.spec(role).dimension)
                texts, titles = encoder_inputs(spec, drafts)
                for draft, text, title in zip(drafts, texts, titles, strict=True):
                    key = next(self.pending.keys)
                    self.pending.chunks[key] = (spec, draft)
                    doc_id = draft.metadata["document_id"]
                    self.pending.remaining[doc_id] = self.pending.remaining.get(doc_id, 0) + 1
                    rows.append(
                        {"key": key, "group": self.groups[role], "text": text, "title": title}
                    )
            self.pending.records.update(plan.records)
            self.driver_seconds["plan"] += time.perf_counter() - started
            for start in range(0, len(rows), self.settings.block_rows):
                part = rows[start : start + self.settings.block_rows]
                await queue.put_async(rows_block(part, len(self.group_roles)))
        await queue.put_async(None)

    def _count_encoded(self, ms: int) -> None:
        rows, first, at_first, last = self.encoded
        if not rows or ms < first:
            first, at_first = ms, 0
        at_first += ms == first
        self.encoded = [rows + 1, first, at_first, max(last, ms)]

    async def consume(self, batches: Any) -> None:
        """Store every encoded batch, then register the documents it completes."""
        iterator = iter(batches)
        while (batch := await asyncio.to_thread(next, iterator, None)) is not None:
            await self.store(batch)

    async def store(self, batch: pa.Table) -> None:
        report, started = self.report, time.perf_counter()
        per_collection: dict[str, tuple[CollectionSpec, list[ChunkDraft], list[bytes]]] = {}
        vectors = batch.column("vector").to_pylist()
        for key, vector in zip(batch.column("key").to_pylist(), vectors, strict=True):
            spec, draft = self.pending.chunks.pop(key)
            entry = per_collection.setdefault(spec.name, (spec, [], []))
            entry[1].append(draft)
            entry[2].append(vector)
        for group in range(len(self.group_roles)):
            pids, peaks = batch.column(f"pid_{group}"), batch.column(f"kib_{group}")
            for pid, peak in set(zip(pids.to_pylist(), peaks.to_pylist(), strict=True)):
                if pid:
                    self.encoder_peak_kib[pid] = max(peak, self.encoder_peak_kib.get(pid, 0))
        times = {g: batch.column(f"ms_{g}").to_pylist() for g in range(len(self.group_roles))}
        for row, group in enumerate(batch.column("group").to_pylist()):
            self._count_encoded(times[group][row])
        complete: list[DocumentRecord] = []
        for spec, drafts, parts in per_collection.values():
            array = np.frombuffer(b"".join(parts), dtype=np.float32).reshape(len(drafts), -1)
            report.chunks_written[spec.name] += await self.runner.store_chunks(spec, drafts, array)
            for draft in drafts:
                doc_id = draft.metadata["document_id"]
                self.pending.remaining[doc_id] -= 1
                if self.pending.remaining[doc_id] == 0:
                    del self.pending.remaining[doc_id]
                    complete.append(self.pending.records.pop(doc_id))
        await self.runner.register(complete, report)
        self.driver_seconds["store"] += time.perf_counter() - started
        if self.first_write is None:
            self.first_write = (time.perf_counter(), batch.num_rows)
        self.bar.update(batch.num_rows)
        self.bar.set_postfix(docs=report.documents_written, refresh=False)


def _rate(encoded: list[int]) -> float | None:
    rows, first, at_first, last = encoded
    return round(1000 * (rows - at_first) / (last - first), 2) if last > first else None


async def ingest_ray(
    config: AppConfig,
    records: Iterable[SourceRecord],
    kb_name: str,
    store: Any,
    registry: Any,
    settings: RayIngestSettings | None = None,
    progress: bool = True,
    namespace: str | None = None,
    encoder_class: type[BatchEncoder] = BatchEncoder,
) -> RayIngestResult:
    """Ingest ``records`` into ``kb_name`` with the encoders on Ray Data (module
    docstring); Ray must be initialised (``deployments.ingest.connect_ray``). Documents
    are registered under ``namespace`` (default: ``config.pipeline.namespace``).

    Raises:
        pipeline.errors.BackendUnavailable: a store does not answer (registered documents
            stay; a re-run resumes).
        ray.exceptions.RayTaskError: an encoder batch failed (likewise resumable).
    """
    from ray.data import DataContext
    from ray.util.queue import Queue

    started = time.perf_counter()
    settings = settings or RayIngestSettings()
    context = DataContext.get_current()
    saved = (context.enable_progress_bars, context.target_max_block_size)
    context.enable_progress_bars, context.target_max_block_size = progress, settings.block_bytes
    runner = IngestRunner(
        store=store,
        registry=registry,
        encoders={},
        settings=config.pipeline,
        vocabulary=default_vocabulary(),
    )
    bar = tqdm(unit="chunk", disable=not progress, desc=f"ingest {kb_name} (ray)")
    run = _RayIngest(config, runner, settings, encoder_class, bar)
    queue = Queue(maxsize=settings.queue_blocks, actor_options={"num_cpus": 0})
    namespace = namespace or config.pipeline.namespace
    producer = asyncio.create_task(run.produce(records, kb_name, namespace, queue))
    consumer: asyncio.Task[None] | None = None
    batches = None
    try:
        batches = run.dataset(queue).iter_batches(
            batch_size=settings.write_rows, batch_format="pyarrow", prefetch_batches=2
        )
        consumer = asyncio.create_task(run.consume(batches))
        done, _ = await asyncio.wait({producer, consumer}, return_when=asyncio.FIRST_EXCEPTION)
        if producer in done and producer.exception() is not None:
            await queue.put_async(None)  # let the read task end, then report the cause
            await asyncio.gather(consumer, return_exceptions=True)
            raise producer.exception()  # type: ignore[misc]
        await consumer
        await producer
    finally:  # on failure or Ctrl-C: stop both sides and the streaming executor
        for task in (producer, consumer):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        close = getattr(batches, "close", None)
        if close is not None:
            with contextlib.suppress(ValueError):  # still running in the consumer's thread
                close()
        queue.shutdown(force=True)
        bar.close()
        context.enable_progress_bars, context.target_max_block_size = saved
    for doc_id in run.pending.remaining:  # only when a block was lost in transit
        run.report.failures.append(RecordFailure(doc_id, "chunks lost in transit; re-run"))
    finished = time.perf_counter()
    run.report.seconds = finished - started
    steady = None
    if run.first_write is not None and finished > run.first_write[0]:
        written = sum(run.report.chunks_written.values()) - run.first_write[1]
        steady = round(written / (finished - run.first_write[0]), 2)
    return RayIngestResult(
        report=run.report,
        steady_chunks_per_s=steady,
        encode_chunks_per_s=_rate(run.encoded),
        driver_seconds={name: round(value, 2) for name, value in run.driver_seconds.items()},
        encoder_peak_mib={
            pid: round(kib / 1024, 1) for pid, kib in sorted(run.encoder_peak_kib.items())
        },
    )
