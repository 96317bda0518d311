"""Collection administration of :class:`~pipeline.stores.milvus.MilvusVectorStore`.

Names, describe (and load), create with the ``milvus_schema`` layout, drop, list,
health and exact row counts. Creation and drop go through the sync ``MilvusClient`` in a
worker thread (see :mod:`pipeline.stores.milvus` for why).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from pymilvus import MilvusException

from pipeline.stores.dense_metric import DENSE_METRICS, metric_from_index
from pipeline.stores.expressions import in_list
from pipeline.stores.milvus_schema import (
    DENSE_FIELD,
    FINGERPRINT_FIELD,
    INCHIKEY_FIELD,
    WEIGHTS_PROPERTY,
    CollectionInfo,
    build_index_params,
    build_schema,
    collection_info_from_description,
)

#: How a collection created before the weights were recorded is described.
UNRECORDED = "not recorded: created before 2026-12-03, counted as float"


def _other_weights(info: CollectionInfo, wanted: str | None) -> str | None:
    """``"vectors of <w> encoder weights"`` when ``info``'s weights are not ``wanted``
    (a collection from before the record counts as float, the only default then)."""
    written = info.weights or "float"
    if not wanted or written == wanted:
        return None
    return f"vectors of {written} encoder weights" + ("" if info.weights else f" ({UNRECORDED})")


class MilvusCollectionsMixin:
    """Collection methods of ``MilvusVectorStore``; the store (``milvus.py``) provides
    the clients (``_client``, ``_sync``), ``_guard``, ``_run``, the settings and the
    ``_infos`` cache."""

    # -- collections -------------------------------------------------------------------
    def physical_name(self, collection: str) -> str:
        """Server-side name of logical ``collection`` (``collection_prefix`` + name)."""
        if not collection:
            raise ValueError("collection name must not be empty")
        return f"{self.collection_prefix}{collection}"

    async def describe(self, collection: str, fresh: bool = False) -> CollectionInfo | None:
        """Dimension, hybrid / structure flags and dense metric (read from the ``dense``
        field's index: ``cosine`` or ``ip``) of ``collection``; None when it does not
        exist. Cached per collection; ``fresh`` reads the server anyway and replaces the
        cached one (searches meanwhile keep using it). A cached description is dropped
        on any Milvus error of a call on its collection, so a collection created again
        with another layout is read again after one failed call; one whose change makes
        no call fail (another weights record, BM25 added) is read again by the next
        :meth:`weights_mismatches` (``/readyz``) or on a restart.

        Raises:
            ValueError: the dense index has a metric the store does not use.
            BackendUnavailable: the server does not answer.
        """
        cached = None if fresh else self._infos.get(collection)
        if cached is not None:
            return cached
        name = self.physical_name(collection)
        async with self._guard("describe", collection):
            if not await self._client().has_collection(name):
                self._infos.pop(collection, None)
                return None
            description = await self._client().describe_collection(name)
            index_names = await self._client().list_indexes(name, field_name=DENSE_FIELD)
            index = (
                await self._client().describe_index(name, index_names[0]) if index_names else None
            )
            # Idempotent and cheap when loaded (3-7 ms on Lite); a reopened Lite
            # collection is released and refuses searches until loaded.
            await self._client().load_collection(name)
        info = collection_info_from_description(description)
        info = CollectionInfo(
            name=collection,
            dimension=info.dimension,
            hybrid=info.hybrid,
            structure=info.structure,
            metric=metric_from_index(index),
            weights=info.weights,
        )
        self._infos[collection] = info
        return info

    async def ensure_collection(
        self,
        name: str,
        dimension: int,
        hybrid: bool,
        structure: bool = False,
        metric: str = "cosine",
    ) -> CollectionInfo:
        """Create ``name`` (schema in ``milvus_schema``) unless it exists; return its info.

        ``structure`` asks for the structure-search fields (SPEC A-3; collections of the
        ``smiles`` modality). An existing structure collection also serves a caller that
        does not ask for them. ``metric`` (``cosine`` / ``ip``, the collection's
        ``CollectionSpec.metric``) is the dense index's metric (``COSINE`` / ``IP``).

        Raises:
            ValueError: an unknown metric; it exists with another dimension or hybrid
                flag, or with another dense metric (its stored vectors were made for the
                other metric, e.g. L2-normalised for COSINE where MedCPT's ``ip`` needs
                the raw vectors: drop it and ingest again; Milvus cannot change an
                index's metric in place), or without the structure fields that
                ``structure`` asks for (created before SPEC A-3: it must be dropped and
                its compounds ingested again).
            BackendUnavailable: the server does not answer.
        """
        if metric not in DENSE_METRICS:
            raise ValueError(f"unknown dense metric {metric!r}; one of {sorted(DENSE_METRICS)}")
        existing = await self.describe(name)
        if existing is None:
            schema = build_schema(
                dimension, hybrid, self.analyzer_params, self.partition_key, structure
            )
            index_params = build_index_params(self.index, hybrid, structure, metric)
            physical = self.physical_name(name)
            weights = self.weights.get(name)
            properties = {WEIGHTS_PROPERTY: weights} if weights else {}

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
                        properties=properties,
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
        if existing.metric != metric:
            physical = self.physical_name(name)
            raise ValueError(
                f"collection {name!r} ({physical!r} on {self.uri}) has a "
                f"{DENSE_METRICS[existing.metric]} dense index; asked for metric {metric!r} "
                f"({DENSE_METRICS[metric]}). Its vectors were encoded for the other metric "
                f"and Milvus cannot change an index's metric in place: drop it (pymilvus: "
                f"MilvusClient(uri).drop_collection({physical!r}), or start from a new data "
                f"directory) and ingest its documents again"
            )
        self._refuse_other_weights(name, existing)
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

    async def check_writable(self) -> None:
        """Refuse, before an ingest deletes or writes anything, to write vectors of other
        encoder weights into an existing collection (one created before the record counts
        as float; ``ensure_collection`` would refuse too, but only after a changed
        document's old chunks were deleted).

        Raises:
            ValueError: such a collection (its name, both weights, what to do).
            BackendUnavailable: the server does not answer.
        """
        for name in sorted(self.weights):
            existing = await self.describe(name)
            if existing is not None:
                self._refuse_other_weights(name, existing)

    def _refuse_other_weights(self, name: str, existing: CollectionInfo) -> None:
        wanted = self.weights.get(name)
        held = _other_weights(existing, wanted)
        if held:
            raise ValueError(
                f"collection {name!r} ({self.physical_name(name)!r} on {self.uri}) holds "
                f"{held} and this configuration writes {wanted} ones (models.runtime: "
                f"onnx-int8 is int8, torch and onnx float); the two are not comparable in "
                f"one collection. Ingest with the runtime that wrote it, or ingest "
                f"everything again into a new data dir (or after dropping it: pymilvus "
                f"MilvusClient(uri).drop_collection({self.physical_name(name)!r}))"
            )

    async def weights_mismatches(self) -> dict[str, str]:
        """One line per existing collection whose vectors were written with other encoder
        weights (:data:`~pipeline.stores.milvus_schema.WEIGHTS_PROPERTY`) than the
        configuration queries it with (``weights`` of the store): int8 queries against
        float vectors lose ranking quality (``bench/README.md`` "int8 quality"). A
        collection created before the weights were recorded counts as float (the only
        default then). Collection -> its line; empty when every configured collection
        matches. Each collection is described afresh (``/readyz`` calls this): one
        dropped and created again by another writer is read as it is now, for the
        searches after it too (``describe(fresh=True)``).

        Raises:
            BackendUnavailable: the server does not answer.
        """
        lines = {}
        for name, wanted in sorted(self.weights.items()):
            try:
                info = await self.describe(name, fresh=True)
            except ValueError as error:  # not one of ours: say so, keep serving the rest
                lines[name] = f"collection {name!r} cannot be read: {error}"
                continue
            held = _other_weights(info, wanted) if info is not None else None
            if held:
                lines[name] = (
                    f"collection {name!r} holds {held} and is queried with {wanted} "
                    f"ones: ranking suffers; serve with the models.runtime that ingested "
                    f"it, or ingest it again (into a new data dir, or after dropping the "
                    f"collection)"
                )
        return lines

    async def has_collection(self, collection: str) -> bool:
        """True when ``collection`` exists (via :meth:`describe`, which loads it).

        Raises:
            ValueError: the dense index has a metric the store does not use.
            BackendUnavailable: the server does not answer.
        """
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

    # -- reads -------------------------------------------------------------------------
    async def count(self, collection: str, kb_names: Sequence[str] | None = None) -> int:
        """Exact row count (strong consistency: reflects every finished upsert); 0 for a
        missing collection. ``kb_names``: count only the rows of these knowledge bases
        (``kb_name in [...]``; an empty list counts nothing); None: every row.

        Raises:
            ValueError: a kb name fails the filter quoting rules.
        """
        if kb_names is not None and not kb_names:
            return 0
        expression = in_list("kb_name", kb_names) if kb_names is not None else ""
        if await self.describe(collection) is None:
            return 0
        physical = self.physical_name(collection)
        result = await self._run(
            "count",
            collection,
            lambda: self._client().query(
                physical,
                filter=expression,
                output_fields=["count(*)"],
                consistency_level="Strong",
            ),
        )
        return int(result[0]["count(*)"]) if result else 0
