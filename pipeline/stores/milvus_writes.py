"""Writes and point reads of :class:`~pipeline.stores.milvus.MilvusVectorStore`.

Upsert in bounded batches, flush, compact, delete by document id, fetch by node id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pipeline.schema import Node
from pipeline.stores.expressions import chunked, in_list
from pipeline.stores.milvus_schema import entity_to_node, node_to_row, output_fields


class MilvusWritesMixin:
    """Write / fetch methods of ``MilvusVectorStore``; the store (``milvus.py``) provides
    ``_client``, ``_run``, the settings, and ``describe`` / ``_require`` /
    ``physical_name`` come from ``MilvusCollectionsMixin``."""

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
        """Delete every node of ``document_ids`` (re-ingest of a changed document, or the
        leftovers of an interrupted one); flushed (``flush_after_upsert``) only when
        something was deleted.

        Raises:
            ValueError: an invalid id (see ``expressions.quote_value``).
            BackendUnavailable: the server does not answer.
        """
        if not document_ids or await self.describe(collection) is None:
            return
        expressions = [
            in_list("document_id", chunk)
            for chunk in chunked(document_ids, self.max_ids_per_expression)
        ]
        await self._delete_matching(collection, expressions)

    async def delete_knowledge_base(self, collection: str, kb_name: str) -> int | None:
        """Delete every node of knowledge base ``kb_name`` (``kb_name`` field), registered
        or not: ``biomed-search delete --kb`` sweeps up the chunks an ingest cut short
        stored before registering their document. Flushed like :meth:`delete_documents`.

        Returns:
            The nodes deleted, None when the server does not say; 0 for a missing
            collection.

        Raises:
            ValueError: an invalid name (see ``expressions.quote_value``).
            BackendUnavailable: the server does not answer.
        """
        if await self.describe(collection) is None:
            return 0
        return await self._delete_matching(collection, [in_list("kb_name", [kb_name])])

    async def _delete_matching(self, collection: str, expressions: Sequence[str]) -> int | None:
        """Delete the rows each filter expression matches; the count (None if unknown)."""
        physical = self.physical_name(collection)
        total: int | None = 0
        for expression in expressions:
            result = await self._run(
                "delete",
                collection,
                lambda: self._client().delete(physical, filter=expression),  # noqa: B023
            )
            count = result.get("delete_count") if isinstance(result, dict) else None
            total = None if total is None or count is None else total + count
        # a first ingest deletes nothing here for every batch: no flush for that
        if self.flush_after_upsert and total != 0:  # unknown count: flush
            await self.flush(collection)
        return total

    # -- reads -------------------------------------------------------------------------
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
