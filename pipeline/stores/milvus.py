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

Scores: dense, on a ``cosine`` collection = cosine clipped to [0, 1] (R-HYB-2), also set
as ``vector_similarity``; on an ``ip`` collection (MedCPT, whose model card scores by the
raw inner product) ``score`` = the raw inner product, which orders the hits, and
``vector_similarity`` = their cosine clipped to [0, 1] from the stored vector
(``milvus_schema.dense_scores``); lexical = BM25, positive, best first (Lite returns
negative distances; the sign is dropped); structure (SPEC A-3) = exact Tanimoto of
Morgan fingerprints, or 1.0 for an exact InChIKey match. Scope filters are built by
:mod:`pipeline.stores.expressions`: no value is pasted raw, and long document-id lists
are split into several searches whose hits are merged (BM25 statistics are
collection-wide, so scores of the parts compare).

Layout: this module holds the store's constructor, clients and error mapping; its
methods come from one mixin per job: ``milvus_collections`` (create / describe / drop /
counts), ``milvus_writes`` (upsert / flush / delete / fetch), ``milvus_search`` (the
shared ``_search`` with the search batcher, dense and BM25), ``milvus_structure_search``
(fingerprint and InChIKey, SPEC A-3); ``milvus_errors`` classifies ``MilvusException``.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, ClassVar, TypeVar

from pymilvus import AsyncMilvusClient, MilvusClient, MilvusException

from pipeline.errors import BackendUnavailable
from pipeline.stores.expressions import DEFAULT_MAX_IDS_PER_EXPRESSION
from pipeline.stores.milvus_collections import MilvusCollectionsMixin
from pipeline.stores.milvus_errors import _is_released
from pipeline.stores.milvus_schema import CollectionInfo, DenseIndex
from pipeline.stores.milvus_search import MAX_TOP_K as MAX_TOP_K
from pipeline.stores.milvus_search import MilvusSearchMixin
from pipeline.stores.milvus_structure_search import (
    FINGERPRINT_OVERFETCH as FINGERPRINT_OVERFETCH,
)
from pipeline.stores.milvus_structure_search import MilvusStructureSearchMixin
from pipeline.stores.milvus_structure_search import (
    _tanimoto_from_cosine as _tanimoto_from_cosine,
)
from pipeline.stores.milvus_writes import MilvusWritesMixin
from pipeline.stores.search_batching import SearchBatcher

__all__ = ["CollectionInfo", "DenseIndex", "MilvusVectorStore"]

T = TypeVar("T")


class MilvusVectorStore(
    MilvusCollectionsMixin, MilvusWritesMixin, MilvusSearchMixin, MilvusStructureSearchMixin
):
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
        metrics: logical collection -> the dense metric the configuration expects
            (``cosine`` / ``ip``, ``CollectionSpec.metric``); a dense search of an
            existing collection whose index has another metric raises ``ValueError``
            instead of silently comparing by the old metric. Unlisted collections are
            searched with whatever metric their index has.
        weights: logical collection -> the encoder weights (``float`` / ``int8``,
            ``ModelProfile.vector_weights``) the configuration writes it with (ingest) or
            queries it with (search): recorded on a new collection
            (``milvus_schema.WEIGHTS_PROPERTY``), checked by ``ensure_collection``
            (mixing them raises ``ValueError``) and by ``weights_mismatches``.
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
        metrics: Mapping[str, str] | None = None,
        weights: Mapping[str, str] | None = None,
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
        self.metrics = dict(metrics or {})
        self.weights = dict(weights or {})
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
        """Map client errors to ``BackendUnavailable`` naming the operation. A Milvus
        error also drops the collection's cached description: the collection may be gone,
        or dropped and created again with another layout, and the next call reads it
        afresh (a describe costs 3-7 ms; errors are rare)."""
        try:
            yield
        except MilvusException as error:
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
