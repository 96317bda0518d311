"""Scale benchmark: Milvus Lite (FLAT) against a Milvus 2.3.5 server (HNSW) at the same
200k+ chunks: top-k search latency (p50 / p99, without and with a ``document_id in
[...]`` filter) and recall@k of each against exact (numpy) cosine neighbours.

Data (synthetic, deterministic from ``--seed``): ``--rows`` chunks of ``--dim``-d
vectors drawn around ``--clusters`` random centroids (noise 0.35 per unit direction,
then L2-normalised), the shape of real embedding sets, where neighbours sit in clusters;
uniform random vectors are the worst case for HNSW and unlike any encoder output.
Texts are short ("chunk i of document j"), 10 chunks per document. Queries are noisy
copies of random stored vectors. Both stores are written through ``MilvusVectorStore``
(the product's store), batches of ``--batch`` rows, one flush at the end; the server's
HNSW build is awaited before searching (``indexed_rows == total_rows``).

The server runs in its own network namespace (:mod:`deployments.runtime.milvus_standalone`), so
its half of the benchmark runs as ``nsenter -n -t PID python -m bench.scale --worker
server ...`` and returns JSON; the Lite half runs in this process against a managed Lite
server. Needs root, ``unshare`` and ``pip install milvus==2.3.5`` for the server half
(``--stores lite`` runs without them).

Usage::

    python -m bench.scale                      # 200k x 384-d, 200 queries, top-20
    python -m bench.scale --rows 5000 --queries 50   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from bench import REPOSITORY
from pipeline.schema import Node, ScopeFilter
from pipeline.stores.milvus import DenseIndex, MilvusVectorStore

__all__ = [
    "ScaleSettings",
    "StoreResult",
    "exact_neighbours",
    "format_table",
    "main",
    "make_dataset",
    "recall_at_k",
    "run_store",
]

CHUNKS_PER_DOCUMENT = 10
COLLECTION = "scale_bench"


@dataclass(frozen=True)
class ScaleSettings:
    """What to build and measure (sizes in rows / dimensions, times in seconds)."""

    rows: int = 200_000
    dim: int = 384
    clusters: int = 2_000
    queries: int = 200
    top_k: int = 20
    filter_documents: int = 20
    batch: int = 5_000
    seed: int = 0
    index_timeout_s: float = 1800.0
    settle_timeout_s: float = 600.0


@dataclass
class StoreResult:
    """One store's numbers: ingest and index seconds, search latencies in ms, the ids of
    the top-k hits per query (unfiltered) and per filtered query."""

    store: str
    index: str
    ingest_s: float = 0.0
    index_s: float = 0.0
    note: str = ""
    latencies_ms: list[float] = field(default_factory=list)
    filtered_latencies_ms: list[float] = field(default_factory=list)
    hits: list[list[int]] = field(default_factory=list)
    filtered_hits: list[list[int]] = field(default_factory=list)


def make_dataset(settings: ScaleSettings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(vectors (rows, dim), queries (queries, dim), query_documents (queries, F))``:
    float32 L2-normalised vectors and, per query, the F document numbers of its filter
    (the document of the stored vector it was made from, plus F-1 random ones)."""
    rng = np.random.default_rng(settings.seed)
    centroids = rng.normal(size=(settings.clusters, settings.dim)).astype(np.float32)
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    assignment = rng.integers(0, settings.clusters, size=settings.rows)
    noise = rng.normal(size=(settings.rows, settings.dim)).astype(np.float32)
    vectors = centroids[assignment] + noise * (0.35 / np.sqrt(settings.dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sources = rng.choice(settings.rows, size=settings.queries, replace=False)
    query_noise = rng.normal(size=(settings.queries, settings.dim)).astype(np.float32)
    queries = vectors[sources] + query_noise * (0.35 / np.sqrt(settings.dim))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    documents = max(1, settings.rows // CHUNKS_PER_DOCUMENT)
    random_documents = rng.integers(
        0, documents, size=(settings.queries, max(0, settings.filter_documents - 1))
    )
    own = (sources // CHUNKS_PER_DOCUMENT)[:, None]
    return vectors, queries.astype(np.float32), np.concatenate([own, random_documents], axis=1)


def exact_neighbours(
    vectors: np.ndarray, queries: np.ndarray, top_k: int, allowed: np.ndarray | None = None
) -> list[list[int]]:
    """Exact top-k row numbers by cosine (vectors are unit length); ``allowed`` is a
    (queries, rows) boolean mask of rows each query may return."""
    result = []
    for number, query in enumerate(queries):
        scores = vectors @ query
        if allowed is not None:
            scores = np.where(allowed[number], scores, -np.inf)
        best = np.argpartition(-scores, top_k)[:top_k]
        best = best[np.argsort(-scores[best])]
        result.append([int(i) for i in best if np.isfinite(scores[i])])
    return result


def recall_at_k(found: Sequence[Sequence[int]], truth: Sequence[Sequence[int]]) -> float:
    """Mean over queries of |found ∩ truth| / |truth| (1.0 for an empty truth)."""
    values = [
        len(set(hits) & set(expected)) / len(expected) if expected else 1.0
        for hits, expected in zip(found, truth, strict=True)
    ]
    return float(np.mean(values)) if values else 0.0


def _document_id(number: int) -> str:
    return f"doc-{number}"


async def _ingest(store: MilvusVectorStore, vectors: np.ndarray, batch: int) -> None:
    await store.drop_collection(COLLECTION)
    await store.ensure_collection(COLLECTION, vectors.shape[1], hybrid=False)
    for start in range(0, len(vectors), batch):
        stop = min(start + batch, len(vectors))
        nodes = [
            Node(node_id=str(row), text=f"chunk {row} of document {row // CHUNKS_PER_DOCUMENT}",
                 metadata={"document_id": _document_id(row // CHUNKS_PER_DOCUMENT),
                           "kb_name": "scale"})
            for row in range(start, stop)
        ]
        await store.upsert(COLLECTION, nodes, vectors[start:stop])
        if stop % (10 * batch) == 0 or stop == len(vectors):
            print(f"  {store.uri}: {stop} rows written", file=sys.stderr, flush=True)
    await store.flush(COLLECTION)


def _wait_for_index(store: MilvusVectorStore, timeout_s: float, settle_s: float) -> str:
    """Block until every row is in the dense index (server HNSW); then wait up to
    ``settle_s`` more for no rows to be pending: right after the build, compaction merges
    the flushed segments and indexes the merged ones again (minutes on two cores), and
    measuring after it keeps segments steady. Returns a note on how it ended.

    Raises:
        TimeoutError: the index did not cover every row within ``timeout_s``.
    """
    from pymilvus import MilvusClient

    client = MilvusClient(uri=store.uri)
    name = store.physical_name(COLLECTION)
    deadline = time.monotonic() + timeout_s
    settle_deadline: float | None = None
    try:
        while True:
            description = client.describe_index(name, index_name="dense")
            total = int(description.get("total_rows", 0))
            indexed = int(description.get("indexed_rows", 0))
            pending = int(description.get("pending_index_rows", 0))
            if total and indexed >= total:
                if not pending:
                    client.load_collection(name)
                    return "index settled"
                settle_deadline = settle_deadline or time.monotonic() + settle_s
                if time.monotonic() > settle_deadline:
                    client.load_collection(name)
                    return f"compaction still indexing {pending} rows"
            elif time.monotonic() > deadline:
                raise TimeoutError(f"index of {name} not built within {timeout_s:.0f} s")
            time.sleep(2.0)
    finally:
        client.close()


async def run_store(
    uri: str, store_name: str, index: DenseIndex, settings: ScaleSettings, wait_index: bool
) -> list[StoreResult]:
    """Ingest the dataset into ``uri`` with ``index`` and time the searches, through the
    store (as the product searches) and through a plain client with Bounded consistency."""
    vectors, queries, query_documents = make_dataset(settings)
    result = StoreResult(store=store_name, index=index.index_type)
    store = MilvusVectorStore(
        uri, index=index, collection_prefix="bench_", flush_after_upsert=False,
        upsert_batch_rows=1_000, timeout_s=600.0,
    )
    try:
        started = time.perf_counter()
        await _ingest(store, vectors, settings.batch)
        result.ingest_s = time.perf_counter() - started
        started = time.perf_counter()
        if wait_index:
            result.note = await asyncio.to_thread(
                _wait_for_index, store, settings.index_timeout_s, settings.settle_timeout_s
            )
        result.index_s = time.perf_counter() - started
        print(f"  {store_name}: searching", file=sys.stderr, flush=True)
        load_before = os.getloadavg()[0]
        for query in queries[: min(10, len(queries))]:  # warm-up
            await store.search_dense(COLLECTION, query, settings.top_k)
        for number, query in enumerate(queries):
            started = time.perf_counter()
            hits = await store.search_dense(COLLECTION, query, settings.top_k)
            result.latencies_ms.append((time.perf_counter() - started) * 1000)
            result.hits.append([int(hit.node.node_id) for hit in hits])
            scope = ScopeFilter(
                document_ids=[_document_id(int(d)) for d in query_documents[number]]
            )
            started = time.perf_counter()
            hits = await store.search_dense(COLLECTION, query, settings.top_k, scope=scope)
            result.filtered_latencies_ms.append((time.perf_counter() - started) * 1000)
            result.filtered_hits.append([int(hit.node.node_id) for hit in hits])
        raw = StoreResult(store=f"{store_name} (Bounded)", index=index.index_type,
                          ingest_s=result.ingest_s, index_s=result.index_s, note=result.note)
        await asyncio.to_thread(
            _raw_searches, store, index, queries, query_documents, settings, raw
        )
        # The machine's 1-minute load average around the searches: latencies on a shared
        # machine mean little without it.
        load = f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} while searching"
        result.note = f"{result.note}; {load}" if result.note else load
        await store.drop_collection(COLLECTION)
    finally:
        await store.close()
    return [result, raw]


def _raw_searches(
    store: MilvusVectorStore,
    index: DenseIndex,
    queries: np.ndarray,
    query_documents: np.ndarray,
    settings: ScaleSettings,
    result: StoreResult,
) -> None:
    """The same searches through a plain ``MilvusClient`` with ``consistency_level=
    "Bounded"``: the engine's own latency. The store's collections are Strong, and on a
    Milvus server a Strong search waits for the next time tick (about 200 ms in 2.3.5)."""
    from pymilvus import MilvusClient

    from pipeline.stores.expressions import in_list

    client = MilvusClient(uri=store.uri)
    name = store.physical_name(COLLECTION)
    params = index.search_params_for(settings.top_k)
    try:
        for number, query in enumerate(queries):
            documents = [_document_id(int(d)) for d in query_documents[number]]
            for expression, latencies, hits in (
                ("", result.latencies_ms, result.hits),
                (in_list("document_id", documents), result.filtered_latencies_ms,
                 result.filtered_hits),
            ):
                started = time.perf_counter()
                found = client.search(
                    name, data=[query.tolist()], anns_field="dense", limit=settings.top_k,
                    filter=expression, output_fields=["node_id"], search_params=params,
                    consistency_level="Bounded",
                )
                latencies.append((time.perf_counter() - started) * 1000)
                hits.append([int(hit.get("id") or hit["entity"]["node_id"]) for hit in found[0]])
    finally:
        client.close()


def _run_lite(settings: ScaleSettings, work_dir: Path) -> list[StoreResult]:
    from deployments.runtime import MilvusLiteServer

    server = MilvusLiteServer(work_dir / "lite", start_timeout_s=120.0).start()
    try:
        return asyncio.run(run_store(server.uri, "Milvus Lite", DenseIndex.flat(), settings,
                                     wait_index=False))
    finally:
        server.stop()


def _run_server(settings: ScaleSettings, work_dir: Path) -> list[StoreResult]:
    from deployments.runtime.milvus_standalone import MilvusStandalone

    server = MilvusStandalone(work_dir / "server").start()
    try:
        command = server.client_command([
            sys.executable, str(Path(__file__).resolve()), "--worker", "server",
            "--uri", server.uri, "--settings", json.dumps(asdict(settings)),
        ])
        completed = subprocess.run(
            command, capture_output=True, text=True, cwd=REPOSITORY,
            env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        )
        if completed.returncode != 0:
            raise RuntimeError(f"server worker failed:\n{completed.stderr[-4000:]}")
        rows = json.loads(completed.stdout.strip().splitlines()[-1])
        return [StoreResult(**row) for row in rows]
    finally:
        server.stop()


def _percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def format_table(results: Sequence[StoreResult], settings: ScaleSettings) -> str:
    """One row per store: ingest / index seconds, p50 / p99 ms, recall@k unfiltered and
    filtered (exact cosine neighbours as the truth)."""
    vectors, queries, query_documents = make_dataset(settings)
    truth = exact_neighbours(vectors, queries, settings.top_k)
    row_documents = np.arange(settings.rows) // CHUNKS_PER_DOCUMENT
    allowed = np.stack([np.isin(row_documents, documents) for documents in query_documents])
    filtered_truth = exact_neighbours(vectors, queries, settings.top_k, allowed)
    k = settings.top_k
    header = (
        f"{'store':<30} {'index':<6} {'ingest s':>8} {'index s':>8} {'p50 ms':>7} "
        f"{'p99 ms':>7} {'recall@' + str(k):>9} {'filt p50':>8} {'filt p99':>8} "
        f"{'filt rec':>8}"
    )
    lines = [
        f"{settings.rows} chunks x {settings.dim}-d, {settings.queries} queries, top-{k}, "
        f"filter: document_id in [{settings.filter_documents} ids]",
        header, "-" * len(header),
    ]
    for result in results:
        if result.note and not result.store.endswith("(Bounded)"):
            lines.append(f"  ({result.store}: {result.note})")
        lines.append(
            f"{result.store:<30} {result.index:<6} {result.ingest_s:>8.1f} {result.index_s:>8.1f} "
            f"{_percentile(result.latencies_ms, 50):>7.1f} "
            f"{_percentile(result.latencies_ms, 99):>7.1f} "
            f"{recall_at_k(result.hits, truth):>9.3f} "
            f"{_percentile(result.filtered_latencies_ms, 50):>8.1f} "
            f"{_percentile(result.filtered_latencies_ms, 99):>8.1f} "
            f"{recall_at_k(result.filtered_hits, filtered_truth):>8.3f}"
        )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = ScaleSettings()
    parser.add_argument("--rows", type=int, default=defaults.rows)
    parser.add_argument("--dim", type=int, default=defaults.dim)
    parser.add_argument("--clusters", type=int, default=defaults.clusters)
    parser.add_argument("--queries", type=int, default=defaults.queries)
    parser.add_argument("--top-k", type=int, default=defaults.top_k)
    parser.add_argument("--filter-documents", type=int, default=defaults.filter_documents)
    parser.add_argument("--batch", type=int, default=defaults.batch)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--stores", choices=["both", "lite", "server"], default="both")
    parser.add_argument("--work-dir", type=Path, default=None, help="default: a temp folder")
    parser.add_argument("--json", type=Path, default=None,
                        help="write raw results (after each store)")
    parser.add_argument("--reuse", type=Path, default=None,
                        help="results JSON of an earlier run with the same settings: "
                             "stores found there are not run again")
    parser.add_argument("--worker", choices=["server"], help=argparse.SUPPRESS)
    parser.add_argument("--uri", help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the table; 0 on success."""
    args = _parser().parse_args(argv)
    if args.worker == "server":  # inside the server's network namespace
        settings = ScaleSettings(**json.loads(args.settings))
        found = asyncio.run(run_store(args.uri, "Milvus 2.3.5 server", DenseIndex.hnsw(),
                                      settings, wait_index=True))
        print(json.dumps([asdict(result) for result in found]))
        return 0
    settings = ScaleSettings(
        rows=args.rows, dim=args.dim, clusters=args.clusters, queries=args.queries,
        top_k=args.top_k, filter_documents=args.filter_documents, batch=args.batch,
        seed=args.seed,
    )
    results: list[StoreResult] = []
    if args.reuse is not None:  # rows of an earlier run with the same settings
        results = [StoreResult(**row) for row in json.loads(args.reuse.read_text())]
    done = {result.index for result in results}

    def save() -> None:
        if args.json:
            args.json.write_text(json.dumps([asdict(result) for result in results]))

    with tempfile.TemporaryDirectory(prefix="scale-bench-") as temporary:
        work_dir = args.work_dir or Path(temporary)
        if args.stores in ("both", "lite") and "FLAT" not in done:
            print(f"Milvus Lite (FLAT): ingesting {settings.rows} rows ...", file=sys.stderr)
            results.extend(_run_lite(settings, work_dir))
            save()
        if args.stores in ("both", "server") and "HNSW" not in done:
            print(f"Milvus 2.3.5 server (HNSW): ingesting {settings.rows} rows ...",
                  file=sys.stderr)
            results.extend(_run_server(settings, work_dir))
            save()
    print(format_table(results, settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
