"""``VectorStore`` over Milvus (pymilvus): collections, upsert, dense and BM25 search.

Works against the managed Milvus Lite server (:class:`~deployments.runtime.
MilvusLiteServer`, the default) and any Milvus server by URI; the layout is in
:mod:`pipeline.stores.milvus_schema`.

Client choice (measured with pymilvus 3.0.2 / milvus-lite 3.2.2): ``AsyncMilvusClient``
works against the Lite server for upsert, search, query, get, describe and delete, but
its ``create_index`` waits through ``AllocTimestamp``, which Lite does not implement
(``UNIMPLEMENTED``). So collection creation and drop go through the sync ``MilvusClient``
in a worker thread, and the data plane uses ``AsyncMilvusClient``. An async client is
bound to the event loop it was made in; the store keeps one per running loop.

Two Lite behaviours the store handles (measured): rows not yet flushed are searched by
brute force in the server process (3000 x 384-d: dense top-20 190 ms, BM25 900 ms before
a flush; 17 ms and 13 ms after), so ``upsert`` flushes by default; and after a server
restart every collection is *released* and refuses searches ("call load()"), so the
store loads a collection when it first describes it and, if a call still finds it
released, loads it and retries once.

Scores: dense = cosine clipped to [0, 1] (R-HYB-2), also set as ``vector_similarity``;
lexical = BM25, positive, best first (Lite returns negative distances; the sign is
dropped); structure (SPEC A-3) = exact Tanimoto of Morgan fingerprints, or 1.0 for an
exact InChIKey match. Scope filters are built by :mod:`pipeline.stores.expressions`: no value is
pasted raw, and long document-id lists are split into several searches whose hits are
merged (BM25 statistics are collection-wide, so scores of the parts compare).
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, ClassVar, TypeVar

import numpy as np
from pymilvus import AsyncMilvusClient, MilvusClient, MilvusException

from pipeline.errors import BackendUnavailable
from pipeline.schema import Node, NodeWithScore, ScopeFilter
from pipeline.stores.expressions import (
    DEFAULT_MAX_IDS_PER_EXPRESSION,
    chunked,
    in_list,
    quote_value,
    scope_expressions,
)
from pipeline.stores.milvus_schema import (
    DENSE_FIELD,
    FINGERPRINT_BITS_FIELD,
    FINGERPRINT_FIELD,
    INCHIKEY_FIELD,
    SPARSE_FIELD,
    CollectionInfo,
    DenseIndex,
    build_index_params,
    build_schema,
    collection_info_from_description,
    cosine_to_unit,
    entity_to_node,
    fingerprint_to_sparse,
    node_to_row,
    output_fields,
)
from pipeline.stores.search_batching import SearchBatcher
from pipeline.structure import fingerprint_on_bits

__all__ = ["CollectionInfo", "DenseIndex", "MilvusVectorStore"]

MAX_TOP_K = 16384
#: A fingerprint search first asks Milvus for ``max(4 * top_k, top_k + 32)`` hits.
FINGERPRINT_OVERFETCH = 32
T = TypeVar("T")


def _is_missing_collection(error: MilvusException) -> bool:
    message = str(getattr(error, "message", error)).lower()
    return (
        getattr(error, "code", None) == 100
        or "does not exist" in message
        or ("not found" in message and "collection" in message)
    )


def _is_released(error: MilvusException) -> bool:
    message = str(getattr(error, "message", error)).lower()
    return getattr(error, "code", None) == 101 or "released" in message or "load()" in message


class MilvusVectorStore:
    """Milvus collections behind the ``VectorStore`` port (``pipeline/ports.py``).

    Args:
        uri: ``http://host:port`` of a Milvus (Lite) server.
        token: auth token (``user:password``) for servers with auth; empty for Lite.
        db_name: Milvus database; empty = the default one.
        index: dense index; FLAT by default (the only reliable one on Lite).
        collection_prefix: prepended to every collection name on the server, so that
            several installs or test runs can share one server; the API takes and
            returns logical names.
        analyzer_params: BM25 analyser of the ``lexical_text`` field (Milvus
            ``analyzer_params``); default the server's ``standard`` analyser.
        max_ids_per_expression: document ids per filter expression (R-SUP-3 scopes with
            more ids run several searches).
        upsert_batch_rows / upsert_batch_bytes: one upsert request carries at most this
            many rows / about this many bytes of text.
        timeout_s: per-request timeout in seconds.
        search_consistency: consistency level of searches. ``Strong`` (default) sees every
            finished upsert; on a Milvus server it waits for the next time tick (about
            200 ms measured), ``Bounded`` answers in a few ms and may miss writes of the
            last few seconds.
        partition_key: ``"kb_name"`` to make the knowledge base the partition key of new
            collections (large server collections searched per kb), else None.
        flush_after_upsert: flush at the end of every ``upsert`` / ``delete_documents``
            (see :meth:`flush`; about 20 ms for a batch of 64 rows on Lite).
        search_batch: concurrent one-query searches that differ only in the query are
            sent as one search of up to this many queries (dynamic batching,
            :mod:`pipeline.stores.search_batching`); 1 turns it off.
    """

    def __init__(
        self,
        uri: str,
        *,
        token: str = "",
        db_name: str = "",
        index: DenseIndex | None = None,
        collection_prefix: str = "",
        analyzer_params: Mapping[str, Any] | None = None,
        max_ids_per_expression: int = DEFAULT_MAX_IDS_PER_EXPRESSION,
        upsert_batch_rows: int = 512,
        upsert_batch_bytes: int = 16 * 1024 * 1024,
        timeout_s: float = 30.0,
        flush_after_upsert: bool = True,
        search_consistency: str = "Strong",
        partition_key: str | None = None,
        search_batch: int = 64,
    ) -> None:
        if min(max_ids_per_expression, upsert_batch_rows, upsert_batch_bytes, search_batch) < 1:
            raise ValueError("batch and expression limits must be >= 1")
        self.uri = uri
        self._token = token
        self._db_name = db_name
        self.index = index or DenseIndex.flat()
        self.collection_prefix = collection_prefix
        self.analyzer_params = dict(analyzer_params) if analyzer_params else None
        self.max_ids_per_expression = max_ids_per_expression
        self.upsert_batch_rows = upsert_batch_rows
        self.upsert_batch_bytes = upsert_batch_bytes
        self.timeout_s = timeout_s
        self.flush_after_upsert = flush_after_upsert
        if search_consistency not in ("Strong", "Bounded", "Session", "Eventually"):
            raise ValueError(f"unknown consistency level {search_consistency!r}")
        self.search_consistency = search_consistency
        self.partition_key = partition_key
        self._sync_client: MilvusClient | None = None
        self._async_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, AsyncMilvusClient
        ] = weakref.WeakKeyDictionary()
        self._infos: dict[str, CollectionInfo] = {}
        self.search_batch = search_batch
        self._batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SearchBatcher] = (
            weakref.WeakKeyDictionary()
        )

    # -- clients -----------------------------------------------------------------------
    # gRPC options for every client (pymilvus defaults: keepalive ping every 10 s).
    # - Reconnect backoff capped at 2 s: the default grows to 120 s, so a restarted server
    #   stayed unreachable for seconds to minutes (measured: back in ~0.5 s after a Lite
    #   restart with the cap).
    # - Keepalive every 10 min: a gRPC server (Milvus Lite's Python server among them)
    #   accepts a ping at most every 5 min without data and answers more with GOAWAY "too
    #   many pings", which failed calls and new connections in CI.
    # - A channel-local subchannel pool: a new channel must not inherit a subchannel that
    #   was sent away or sits in backoff.
    # Clients are dedicated: pymilvus shares async connections per id(event loop), and a
    # new loop that reuses a dead loop's id would inherit a channel bound to the dead loop.
    GRPC_OPTIONS: ClassVar[dict[str, int]] = {
        "grpc.initial_reconnect_backoff_ms": 200,
        "grpc.min_reconnect_backoff_ms": 200,
        "grpc.max_reconnect_backoff_ms": 2000,
        "grpc.keepalive_time_ms": 600_000,
        "grpc.use_local_subchannel_pool": 1,
    }

    def _client_options(self) -> dict[str, Any]:
        """Keyword arguments of both clients (sync and async): same server, same options."""
        return {
            "uri": self.uri,
            "token": self._token,
            "db_name": self._db_name,
            "timeout": self.timeout_s,
            "grpc_options": self.GRPC_OPTIONS,
            "dedicated": True,
        }

    def _client(self) -> AsyncMilvusClient:
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            client = AsyncMilvusClient(**self._client_options())
            self._async_clients[loop] = client
        return client

    def _sync(self) -> MilvusClient:
        if self._sync_client is None:
            self._sync_client = MilvusClient(**self._client_options())
        return self._sync_client

    async def close(self) -> None:
        """Close the current loop's async client and the sync client."""
        loop = asyncio.get_running_loop()
        client = self._async_clients.pop(loop, None)
        if client is not None:
            await client.close()
        if self._sync_client is not None:
            sync_client, self._sync_client = self._sync_client, None
            await asyncio.to_thread(sync_client.close)

    async def __aenter__(self) -> MilvusVectorStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @asynccontextmanager
    async def _guard(self, operation: str, collection: str) -> AsyncIterator[None]:
        """Map client errors to ``BackendUnavailable`` naming the operation."""
        try:
            yield
        except MilvusException as error:
            if _is_missing_collection(error):
                self._infos.pop(collection, None)
            raise BackendUnavailable(f"milvus {operation} on {collection!r}: {error}") from error
        except (TimeoutError, OSError) as error:
            raise BackendUnavailable(f"milvus {operation} on {collection!r}: {error}") from error

    async def _run(self, operation: str, collection: str, call: Callable[[], Awaitable[T]]) -> T:
        """Run a data-plane call; a collection found released (after a server restart
        Lite reopens every collection released) is loaded and the call retried once."""
        async with self._guard(operation, collection):
            try:
                return await call()
            except MilvusException as error:
                if not _is_released(error):
                    raise
                await self._client().load_collection(self.physical_name(collection))
                return await call()

    def _batcher(self) -> SearchBatcher | None:
        """This event loop's search batcher (None when ``search_batch`` is 1)."""
        if self.search_batch <= 1:
            return None
        loop = asyncio.get_running_loop()
        batcher = self._batchers.get(loop)
        if batcher is None:
            batcher = self._batchers[loop] = SearchBatcher(self.search_batch)
        return batcher

    # -- collections -------------------------------------------------------------------
    def physical_name(self, collection: str) -> str:
        """Server-side name of logical ``collection`` (``collection_prefix`` + name)."""
        if not collection:
            raise ValueError("collection name must not be empty")
        return f"{self.collection_prefix}{collection}"

    async def describe(self, collection: str) -> CollectionInfo | None:
        """Dimension and hybrid flag of ``collection``; None when it does not exist."""
        cached = self._infos.get(collection)
        if cached is not None:
            return cached
        name = self.physical_name(collection)
        async with self._guard("describe", collection):
            if not await self._client().has_collection(name):
                return None
            description = await self._client().describe_collection(name)
            # Idempotent and cheap when loaded (3-7 ms on Lite); a reopened Lite
            # collection is released and refuses searches until loaded.
            await self._client().load_collection(name)
        info = collection_info_from_description(description)
        info = CollectionInfo(
            name=collection,
            dimension=info.dimension,
            hybrid=info.hybrid,
            structure=info.structure,
        )
        self._infos[collection] = info
        return info

    async def ensure_collection(
        self, name: str, dimension: int, hybrid: bool, structure: bool = False
    ) -> CollectionInfo:
        """Create ``name`` (schema in ``milvus_schema``) unless it exists; return its info.

        ``structure`` asks for the structure-search fields (SPEC A-3; collections of the
        ``smiles`` modality). An existing structure collection also serves a caller that
        does not ask for them.

        Raises:
            ValueError: it exists with another dimension or hybrid flag, or without the
                structure fields that ``structure`` asks for (created before SPEC A-3: it
                must be dropped and its compounds ingested again).
            BackendUnavailable: the server does not answer.
        """
        existing = await self.describe(name)
        if existing is None:
            schema = build_schema(
                dimension, hybrid, self.analyzer_params, self.partition_key, structure
            )
            index_params = build_index_params(self.index, hybrid, structure)
            physical = self.physical_name(name)

            def create() -> None:
                client = self._sync()
                if client.has_collection(physical):
                    return
                try:
                    client.create_collection(
                        physical,
                        schema=schema,
                        index_params=index_params,
                        consistency_level="Strong",
                    )
                except MilvusException as error:
                    # e.g. a Milvus 2.3 server has no BM25 / sparse index: leave nothing
                    # half-made behind and say what to change
                    if client.has_collection(physical):
                        client.drop_collection(physical)
                    if hybrid:
                        raise ValueError(
                            f"this Milvus server cannot create the hybrid (BM25) collection "
                            f"{name!r}: {error.message}; use Milvus >= 2.5 or turn the lexical "
                            f"leg off (pipeline.hybrid.lexical_leg: false and the collection "
                            f"out of pipeline.hybrid.hybrid_text_collections)"
                        ) from error
                    if structure:
                        raise ValueError(
                            f"this Milvus server cannot create the structure collection "
                            f"{name!r} (sparse fingerprint vectors need Milvus >= 2.4): "
                            f"{error.message}"
                        ) from error
                    raise

            async with self._guard("create_collection", name):
                await asyncio.to_thread(create)
            self._infos.pop(name, None)
            existing = await self.describe(name)
            assert existing is not None
        if existing.dimension != dimension or existing.hybrid != hybrid:
            raise ValueError(
                f"collection {name!r} exists with dimension {existing.dimension}, hybrid "
                f"{existing.hybrid}; asked for dimension {dimension}, hybrid {hybrid}"
            )
        if structure and not existing.structure:
            raise ValueError(
                f"collection {name!r} ({self.physical_name(name)!r} on {self.uri}) was "
                f"created before structure search (SPEC A-3) and has no "
                f"'{FINGERPRINT_FIELD}' / '{INCHIKEY_FIELD}' fields; drop it (pymilvus: "
                f"MilvusClient(uri).drop_collection({self.physical_name(name)!r}), or start "
                f"from a new data directory) and ingest the compounds again"
            )
        return existing

    async def drop_collection(self, name: str) -> bool:
        """Drop ``name``; True when it existed."""
        physical = self.physical_name(name)
        self._infos.pop(name, None)

        def drop() -> bool:
            client = self._sync()
            if not client.has_collection(physical):
                return False
            client.drop_collection(physical)
            return True

        async with self._guard("drop_collection", name):
            return await asyncio.to_thread(drop)

    async def list_collections(self) -> list[str]:
        """Logical names of the collections under ``collection_prefix``, sorted."""
        async with self._guard("list_collections", "*"):
            names = await self._client().list_collections()
        prefix = self.collection_prefix
        return sorted(name[len(prefix) :] for name in names if name.startswith(prefix))

    async def has_collection(self, collection: str) -> bool:
        return await self.describe(collection) is not None

    async def health(self) -> dict[str, Any]:
        """``{"ok": bool, "latency_ms": float, "collections": int, "error": str | None}``;
        never raises."""
        started = time.perf_counter()
        try:
            collections = await asyncio.wait_for(self.list_collections(), self.timeout_s)
        except Exception as error:
            return {
                "ok": False,
                "latency_ms": (time.perf_counter() - started) * 1000,
                "collections": 0,
                "error": str(error),
            }
        return {
            "ok": True,
            "latency_ms": (time.perf_counter() - started) * 1000,
            "collections": len(collections),
            "error": None,
        }

    async def _require(self, collection: str) -> CollectionInfo:
        info = await self.describe(collection)
        if info is None:
            raise ValueError(f"collection {collection!r} does not exist (ensure_collection first)")
        return info

    # -- writes ------------------------------------------------------------------------
    async def upsert(
        self,
        collection: str,
        nodes: Sequence[Node],
        vectors: np.ndarray,
        lexical_texts: Sequence[str] | None = None,
    ) -> int:
        """Insert or replace ``nodes`` by ``node_id`` (idempotent: twice = one copy).

        Args:
            collection: an existing collection.
            nodes: the chunks; a node id given twice keeps its last occurrence.
            vectors: (n, d) float32 (any float dtype is converted), n = ``len(nodes)``,
                d = the collection dimension, all finite.
            lexical_texts: per node, the analysed text the BM25 function reads (hybrid
                collections; the pipeline passes section titles / domain terms here,
                R-REQ-6); default each node's text. Ignored for non-hybrid collections.

        Returns:
            Number of distinct nodes written.

        Raises:
            ValueError: a missing collection, a vector shape other than (n, d), non-finite
                values, a ``lexical_texts`` length other than n, or a row that fails
                validation (see ``milvus_schema.node_to_row``).
            BackendUnavailable: the server does not answer.
        """
        info = await self._require(collection)
        if not nodes:
            return 0
        array = np.asarray(vectors, dtype=np.float32)
        if array.ndim != 2 or array.shape != (len(nodes), info.dimension):
            raise ValueError(
                f"vectors for {collection!r} must have shape ({len(nodes)}, {info.dimension}), "
                f"got {tuple(array.shape)}"
            )
        if not np.isfinite(array).all():
            raise ValueError(f"vectors for {collection!r} contain NaN or infinite values")
        if lexical_texts is not None and len(lexical_texts) != len(nodes):
            raise ValueError(f"lexical_texts has {len(lexical_texts)} items for {len(nodes)} nodes")
        rows: dict[str, dict[str, Any]] = {}
        for position, node in enumerate(nodes):
            lexical = lexical_texts[position] if lexical_texts is not None else None
            rows[node.node_id] = node_to_row(
                node, array[position], lexical, info.hybrid, info.structure
            )
        batch: list[dict[str, Any]] = []
        batch_bytes = 0
        for row in rows.values():
            size = len(row["text"]) + len(row.get("lexical_text", "")) + 4 * info.dimension
            if batch and (
                len(batch) >= self.upsert_batch_rows or batch_bytes + size > self.upsert_batch_bytes
            ):
                await self._upsert_batch(collection, batch)
                batch, batch_bytes = [], 0
            batch.append(row)
            batch_bytes += size
        if batch:
            await self._upsert_batch(collection, batch)
        if self.flush_after_upsert:
            await self.flush(collection)
        return len(rows)

    async def _upsert_batch(self, collection: str, rows: list[dict[str, Any]]) -> None:
        physical = self.physical_name(collection)
        await self._run("upsert", collection, lambda: self._client().upsert(physical, rows))

    async def flush(self, collection: str) -> None:
        """Seal written rows into indexed segments. On Lite, searches over unflushed rows
        are brute force in the server process: at 3000 rows x 384-d a dense top-20 took
        190 ms and BM25 900 ms before a flush, 17 ms and 13 ms after (measured)."""
        physical = self.physical_name(collection)
        await self._run("flush", collection, lambda: self._client().flush(physical))

    async def compact(self, collection: str) -> None:
        """Merge small flushed segments (after an ingest of many upserts). Measured on
        Lite at 10000 x 384-d written in 40 flushed batches: dense top-20 112 -> 78 ms,
        BM25 50 -> 33 ms after ``compact`` (it returns at once and runs in the server)."""
        if await self.describe(collection) is None:
            return
        physical = self.physical_name(collection)
        await self._run("compact", collection, lambda: self._client().compact(physical))

    async def delete_documents(self, collection: str, document_ids: Sequence[str]) -> None:
        """Delete every node of ``document_ids`` (re-ingest of a changed document).

        Raises:
            ValueError: an invalid id (see ``expressions.quote_value``).
            BackendUnavailable: the server does not answer.
        """
        if not document_ids or await self.describe(collection) is None:
            return
        for chunk in chunked(document_ids, self.max_ids_per_expression):
            expression = in_list("document_id", chunk)
            physical = self.physical_name(collection)
            await self._run(
                "delete",
                collection,
                lambda: self._client().delete(physical, filter=expression),  # noqa: B023
            )
        if self.flush_after_upsert:
            await self.flush(collection)

    # -- reads -------------------------------------------------------------------------
    async def count(self, collection: str) -> int:
        """Exact row count (strong consistency: reflects every finished upsert); 0 for a
        missing collection."""
        if await self.describe(collection) is None:
            return 0
        physical = self.physical_name(collection)
        result = await self._run(
            "count",
            collection,
            lambda: self._client().query(
                physical,
                filter="",
                output_fields=["count(*)"],
                consistency_level="Strong",
            ),
        )
        return int(result[0]["count(*)"]) if result else 0

    async def fetch(
        self, collection: str, node_ids: Sequence[str], with_vectors: bool = False
    ) -> list[Node]:
        """The stored nodes of ``node_ids``, in the order asked (missing ids skipped)."""
        info = await self.describe(collection)
        if info is None or not node_ids:
            return []
        found: dict[str, Node] = {}
        for chunk in chunked(node_ids, self.max_ids_per_expression):
            physical = self.physical_name(collection)
            fields = output_fields(info.hybrid, with_vectors, info.structure)
            entities = await self._run(
                "get",
                collection,
                lambda: self._client().get(physical, ids=chunk, output_fields=fields),  # noqa: B023
            )
            for entity in entities:
                node = entity_to_node(entity, with_vectors)
                found[node.node_id] = node
        return [found[node_id] for node_id in dict.fromkeys(node_ids) if node_id in found]

    async def _search(
        self,
        collection: str,
        info: CollectionInfo,
        data: list[Any],
        anns_field: str,
        search_params: dict[str, Any],
        top_k: int,
        scope: ScopeFilter | None,
        with_vectors: bool,
        fields: Sequence[str] | None = None,
    ) -> list[tuple[float, dict[str, Any]]]:
        """Run one search per scope expression; hits as (raw distance, entity). ``fields``
        replaces the default output fields (``output_fields``)."""
        fields = (
            list(fields)
            if fields is not None
            else output_fields(info.hybrid, with_vectors, info.structure)
        )
        expressions = scope_expressions(scope, max_ids_per_expression=self.max_ids_per_expression)

        physical = self.physical_name(collection)

        async def one(expression: str | None) -> Any:
            async def run(queries: list[Any]) -> Any:
                return await self._run(
                    "search",
                    collection,
                    lambda: self._client().search(
                        physical,
                        data=queries,
                        anns_field=anns_field,
                        limit=top_k,
                        filter=expression or "",
                        output_fields=fields,
                        search_params=search_params,
                        consistency_level=self.search_consistency,
                    ),
                )

            batcher = self._batcher()
            if batcher is None or len(data) != 1:
                return await run(data)
            key = (
                physical,
                anns_field,
                top_k,
                expression or "",
                tuple(fields),
                json.dumps(search_params, sort_keys=True, default=str),
            )
            return [await batcher.search(key, data[0], run)]

        results = await asyncio.gather(*(one(expression) for expression in expressions))
        hits: list[tuple[float, dict[str, Any]]] = []
        for result in results:
            for hit in result[0] if result else []:
                entity = dict(hit.get("entity") or {})
                entity.setdefault("node_id", hit.get("id") or hit.get("node_id"))
                hits.append((float(hit.get("distance", 0.0)), entity))
        return hits

    @staticmethod
    def _check_top_k(top_k: int) -> None:
        if not 1 <= top_k <= MAX_TOP_K:
            raise ValueError(f"top_k must be in [1, {MAX_TOP_K}], got {top_k}")

    async def search_dense(
        self,
        collection: str,
        vector: np.ndarray,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        """Nearest chunks to ``vector`` by cosine, best first.

        Args:
            collection: logical collection name; a missing collection gives ``[]``.
            vector: the (d,) or (1, d) float32 query vector (L2-normalised by the encoder).
            top_k: hits wanted, 1..16384.
            scope: kb names / document ids / tags (R-SUP-3, R-RT-12); None = everything.
            with_vectors: fill ``Node.embedding`` with the stored (d,) vector (Tier-1
                reuse, DESIGN.md performance notes).

        Returns:
            ``NodeWithScore`` list, ``score`` = ``vector_similarity`` = ``max(0, cos)``
            in [0, 1] (R-HYB-2), ``collection`` set.

        Raises:
            ValueError: bad ``top_k``, a vector of the wrong size or non-finite, an invalid
                scope value.
            BackendUnavailable: the server does not answer.
        """
        self._check_top_k(top_k)
        info = await self.describe(collection)
        if info is None:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape != (info.dimension,) or not np.isfinite(query).all():
            raise ValueError(
                f"query vector for {collection!r} must be {info.dimension} finite floats, "
                f"got shape {np.shape(vector)}"
            )
        hits = await self._search(
            collection,
            info,
            [query.tolist()],
            DENSE_FIELD,
            self.index.search_params_for(top_k),
            top_k,
            scope,
            with_vectors,
        )
        return self._ranked(collection, hits, top_k, with_vectors, dense=True)

    async def search_lexical(
        self,
        collection: str,
        query_text: str,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        """BM25 full-text search over ``lexical_text``, best first.

        Returns ``[]`` for a missing or non-hybrid collection and for a blank query.
        ``score`` is the positive BM25 score (not bounded; ``term_similarity`` is left to
        the pipeline's [0, 1] ``sparse_score``, R-HYB-3).

        Raises:
            ValueError: bad ``top_k`` or an invalid scope value.
            BackendUnavailable: the server does not answer.
        """
        self._check_top_k(top_k)
        text = " ".join(query_text.split())
        info = await self.describe(collection)
        if info is None or not info.hybrid or not text:
            return []
        hits = await self._search(
            collection,
            info,
            [text],
            SPARSE_FIELD,
            {"metric_type": "BM25"},
            top_k,
            scope,
            with_vectors,
        )
        return self._ranked(collection, hits, top_k, with_vectors, dense=False)

    @staticmethod
    def _ranked(
        collection: str,
        hits: list[tuple[float, dict[str, Any]]],
        top_k: int,
        with_vectors: bool,
        dense: bool,
    ) -> list[NodeWithScore]:
        best: dict[str, tuple[float, dict[str, Any]]] = {}
        for distance, entity in hits:
            score = cosine_to_unit(distance) if dense else abs(distance)
            node_id = str(entity.get("node_id"))
            if node_id not in best or score > best[node_id][0]:
                best[node_id] = (score, entity)
        ordered = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:top_k]
        return [
            NodeWithScore(
                node=entity_to_node(entity, with_vectors),
                score=score,
                collection=collection,
                vector_similarity=score if dense else None,
            )
            for _, (score, entity) in ordered
        ]

    # -- structure search (SPEC A-3) ---------------------------------------------------
    async def search_fingerprint(
        self,
        collection: str,
        fingerprint: bytes,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        """Nearest structures to ``fingerprint`` by Tanimoto, best first (SPEC A-3).

        The stored fingerprint is a unit sparse vector (``milvus_schema``), so Milvus
        ranks by the fingerprints' cosine ``O = c/sqrt(a*b)`` (``c`` shared on-bits,
        ``a`` / ``b`` on-bits of query and row); each hit's exact Tanimoto ``c/(a+b-c)``
        follows from ``O`` and the stored on-bit count. For a given ``O`` the Tanimoto is
        at most ``O/(2-O)`` (reached at ``b = a``), so once the ``top_k``-th best Tanimoto
        found is at least that bound for the last hit fetched, no row left behind can beat
        it. The search ranks ids and bit counts only, fetches more (x4, up to 16384) until
        the bound holds, then reads the ``top_k`` winners: the exact Tanimoto top-k,
        whatever the index.

        Args:
            collection: logical collection name; a missing collection, or one without
                the structure fields (created before SPEC A-3), gives ``[]``.
            fingerprint: the query's packed 2048-bit Morgan fingerprint (256 bytes,
                ``pipeline.structure.morgan_fingerprint``); an all-zero one gives ``[]``.
            top_k: hits wanted, 1..16384.
            scope: kb names / document ids / tags; None = everything.
            with_vectors: fill ``Node.embedding`` with the stored dense vector.

        Returns:
            ``NodeWithScore`` list, ``score`` = ``vector_similarity`` = Tanimoto in (0, 1],
            ties by node id; rows sharing no bit with the query are not returned.

        Raises:
            ValueError: bad ``top_k``, a fingerprint that is not 256 bytes, an invalid
                scope value.
            BackendUnavailable: the server does not answer.
        """
        self._check_top_k(top_k)
        query_bits = fingerprint_on_bits(fingerprint)
        info = await self.describe(collection)
        if info is None or not info.structure or query_bits.size == 0:
            return []
        sparse = fingerprint_to_sparse(fingerprint)
        query_count = int(query_bits.size)
        limit = min(MAX_TOP_K, max(4 * top_k, top_k + FINGERPRINT_OVERFETCH))
        while True:
            hits = await self._search(
                collection,
                info,
                [sparse],
                FINGERPRINT_FIELD,
                {"metric_type": "IP"},
                limit,
                scope,
                with_vectors=False,
                fields=["node_id", FINGERPRINT_BITS_FIELD],
            )
            similarities: dict[str, float] = {}
            for cosine, entity in hits:
                similarity = _tanimoto_from_cosine(
                    cosine, query_count, int(entity.get(FINGERPRINT_BITS_FIELD) or 0)
                )
                node_id = str(entity.get("node_id"))
                if similarity > similarities.get(node_id, 0.0):
                    similarities[node_id] = similarity
            ordered = sorted(similarities.items(), key=lambda item: (-item[1], item[0]))[:top_k]
            if len(hits) < limit or limit >= MAX_TOP_K:
                break
            last = sorted((cosine for cosine, _ in hits), reverse=True)[limit - 1]
            bound = last / (2.0 - last) if last < 1.0 else 1.0
            kth = ordered[top_k - 1][1] if len(ordered) >= top_k else 0.0
            if kth >= bound:
                break
            limit = min(MAX_TOP_K, limit * 4)
        nodes = await self.fetch(collection, [node_id for node_id, _ in ordered], with_vectors)
        by_id = {node.node_id: node for node in nodes}
        return [
            NodeWithScore(
                node=by_id[node_id],
                score=similarity,
                collection=collection,
                vector_similarity=similarity,
            )
            for node_id, similarity in ordered
            if node_id in by_id
        ]

    async def search_inchikey(
        self,
        collection: str,
        inchikey: str,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        """Rows whose standardised parent has InChIKey ``inchikey`` (an exact scalar
        filter, SPEC A-3: an identical structure is rank 1), ordered by node id.

        Returns ``[]`` for a blank key and for a missing or non-structure collection;
        ``score`` = ``vector_similarity`` = 1.0.

        Raises:
            ValueError: bad ``top_k``, an invalid key or scope value.
            BackendUnavailable: the server does not answer.
        """
        self._check_top_k(top_k)
        inchikey = inchikey.strip()
        info = await self.describe(collection)
        if info is None or not info.structure or not inchikey:
            return []
        key_expression = f"{INCHIKEY_FIELD} == {quote_value(inchikey)}"
        expressions = scope_expressions(scope, max_ids_per_expression=self.max_ids_per_expression)
        fields = output_fields(info.hybrid, with_vectors, info.structure)
        physical = self.physical_name(collection)

        async def one(expression: str | None) -> list[dict[str, Any]]:
            combined = f"{key_expression} and ({expression})" if expression else key_expression
            return await self._run(
                "query",
                collection,
                lambda: self._client().query(
                    physical,
                    filter=combined,
                    output_fields=fields,
                    limit=top_k,
                    consistency_level=self.search_consistency,
                ),
            )

        results = await asyncio.gather(*(one(expression) for expression in expressions))
        found: dict[str, Node] = {}
        for entities in results:
            for entity in entities:
                node = entity_to_node(entity, with_vectors)
                found.setdefault(node.node_id, node)
        return [
            NodeWithScore(node=node, score=1.0, collection=collection, vector_similarity=1.0)
            for _, node in sorted(found.items())[:top_k]
        ]


def _tanimoto_from_cosine(cosine: float, query_bits: int, row_bits: int) -> float:
    """Exact Tanimoto ``c/(a+b-c)`` of two binary fingerprints from their cosine
    ``c/sqrt(a*b)`` and on-bit counts ``a``, ``b`` (``c`` = shared bits, an integer)."""
    if query_bits <= 0 or row_bits <= 0 or not cosine > 0:
        return 0.0
    shared = min(query_bits, row_bits, round(cosine * (query_bits * row_bits) ** 0.5))
    if shared <= 0:
        return 0.0
    return shared / (query_bits + row_bits - shared)
