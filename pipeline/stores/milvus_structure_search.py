"""Structure search (SPEC A-3) of :class:`~pipeline.stores.milvus.MilvusVectorStore`.

Exact Tanimoto top-k over the sparse Morgan-fingerprint field, and exact InChIKey match.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pipeline.schema import Node, NodeWithScore, ScopeFilter
from pipeline.stores.expressions import quote_value, scope_expressions
from pipeline.stores.milvus_schema import (
    FINGERPRINT_BITS_FIELD,
    FINGERPRINT_FIELD,
    INCHIKEY_FIELD,
    entity_to_node,
    fingerprint_to_sparse,
    output_fields,
)
from pipeline.stores.milvus_search import MAX_TOP_K
from pipeline.structure import fingerprint_on_bits

#: A fingerprint search first asks Milvus for ``max(4 * top_k, top_k + 32)`` hits.
FINGERPRINT_OVERFETCH = 32


class MilvusStructureSearchMixin:
    """Structure-search methods of ``MilvusVectorStore``; the store (``milvus.py``)
    provides ``_client``, ``_run``, the settings; ``describe`` / ``physical_name`` /
    ``fetch`` / ``_search`` / ``_check_top_k`` come from the other mixins."""

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
