"""Dense and lexical (BM25) search of :class:`~pipeline.stores.milvus.MilvusVectorStore`.

``_search`` is the shared search call of every leg (structure search included): one
search per scope expression, concurrent one-query searches merged by the loop's
:class:`~pipeline.stores.search_batching.SearchBatcher`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from pipeline.schema import NodeWithScore, ScopeFilter
from pipeline.stores.dense_metric import DENSE_METRICS, dense_scores
from pipeline.stores.expressions import scope_expressions
from pipeline.stores.milvus_schema import (
    DENSE_FIELD,
    SPARSE_FIELD,
    CollectionInfo,
    entity_to_node,
    output_fields,
)

MAX_TOP_K = 16384


class MilvusSearchMixin:
    """Search methods of ``MilvusVectorStore``; the store (``milvus.py``) provides
    ``_client``, ``_run``, ``_batcher``, the settings, and ``describe`` /
    ``physical_name`` come from ``MilvusCollectionsMixin``."""

    # -- reads -------------------------------------------------------------------------
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
        sections: Sequence[str] = (),
    ) -> list[tuple[float, dict[str, Any]]]:
        """Run one search per scope expression; hits as (raw distance, entity). ``fields``
        replaces the default output fields (``output_fields``); ``sections`` keeps the
        chunks of those canonical sections only (A-28)."""
        fields = (
            list(fields)
            if fields is not None
            else output_fields(info.hybrid, with_vectors, info.structure)
        )
        expressions = scope_expressions(
            scope, max_ids_per_expression=self.max_ids_per_expression, sections=sections
        )

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
        sections: Sequence[str] = (),
    ) -> list[NodeWithScore]:
        """Nearest chunks to ``vector`` by the collection's metric, best first.

        The metric is the dense index's (``CollectionInfo.metric``): ``cosine`` or ``ip``
        (raw inner product; MedCPT's model card scores by it, Jin et al. 2023).

        Args:
            collection: logical collection name; a missing collection gives ``[]``.
            vector: the (d,) or (1, d) float32 query vector (L2-normalised by the encoder
                of a ``cosine`` collection; raw for an ``ip`` one).
            top_k: hits wanted, 1..16384.
            scope: kb names / document ids / tags (R-SUP-3, R-RT-12); None = everything.
            sections: canonical sections (``biomed_section``) to keep, ``()`` = all (A-28).
            with_vectors: fill ``Node.embedding`` with the stored (d,) vector (Tier-1
                reuse, DESIGN.md performance notes).

        Returns:
            ``NodeWithScore`` list, ``collection`` set. ``cosine``: ``score`` =
            ``vector_similarity`` = ``max(0, cos)`` in [0, 1] (R-HYB-2). ``ip``: ``score``
            = the raw inner product (the order; unbounded), ``vector_similarity`` = the
            cosine of query and stored vector clipped to [0, 1] (the stored vectors are
            read for it whatever ``with_vectors`` says; ``Node.embedding`` is filled
            only when asked).

        Raises:
            ValueError: bad ``top_k``, a vector of the wrong size or non-finite, an invalid
                scope value, or a collection whose index metric is not the one
                ``metrics`` expects for it (created before the metric changed: drop it
                and ingest again).
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
        expected = self.metrics.get(collection)
        if expected is not None and expected != info.metric:
            physical = self.physical_name(collection)
            raise ValueError(
                f"collection {collection!r} ({physical!r}) has a {DENSE_METRICS[info.metric]} "
                f"dense index but is configured with metric {expected!r}; its vectors were "
                f"encoded for the other metric: drop it and ingest its documents again"
            )
        # An ip hit's cosine (vector_similarity) needs the stored vector's norm.
        fetch_vectors = with_vectors or info.metric == "ip"
        hits = await self._search(
            collection,
            info,
            [query.tolist()],
            DENSE_FIELD,
            self.index.search_params_for(top_k, info.metric),
            top_k,
            scope,
            fetch_vectors,
            sections=sections,
        )
        return self._ranked(
            collection,
            hits,
            top_k,
            with_vectors,
            dense=True,
            metric=info.metric,
            query_norm=float(np.linalg.norm(query.astype(np.float64))),
        )

    async def search_lexical(
        self,
        collection: str,
        query_text: str,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
        sections: Sequence[str] = (),
    ) -> list[NodeWithScore]:
        """BM25 full-text search over ``lexical_text``, best first.

        Returns ``[]`` for a missing or non-hybrid collection and for a blank query.
        ``sections``: canonical sections to keep, ``()`` = all (A-28). ``score`` is the
        positive BM25 score (not bounded; ``term_similarity`` is left to the pipeline's
        [0, 1] ``sparse_score``, R-HYB-3).

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
            sections=sections,
        )
        return self._ranked(collection, hits, top_k, with_vectors, dense=False)

    @staticmethod
    def _ranked(
        collection: str,
        hits: list[tuple[float, dict[str, Any]]],
        top_k: int,
        with_vectors: bool,
        dense: bool,
        metric: str = "cosine",
        query_norm: float = 1.0,
    ) -> list[NodeWithScore]:
        """Merge the hits of several scope searches: best score per node, best first
        (ties by node id), at most ``top_k``. Dense scores come from
        :func:`~pipeline.stores.milvus_schema.dense_scores` (``ip``: ordered by the raw
        inner product); lexical ones are the positive BM25 score."""
        best: dict[str, tuple[float, float | None, dict[str, Any]]] = {}
        for distance, entity in hits:
            if dense:
                score, similarity = dense_scores(
                    distance, metric, query_norm, entity.get(DENSE_FIELD)
                )
            else:
                score, similarity = abs(distance), None
            node_id = str(entity.get("node_id"))
            if node_id not in best or score > best[node_id][0]:
                best[node_id] = (score, similarity, entity)
        ordered = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:top_k]
        return [
            NodeWithScore(
                node=entity_to_node(entity, with_vectors),
                score=score,
                collection=collection,
                vector_similarity=similarity,
            )
            for _, (score, similarity, entity) in ordered
        ]
