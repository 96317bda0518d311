"""A ``VectorStore`` wrapper that records every hit the pipeline recalls for a query.

The union of those hits is the query's *candidate pool* before RRF, Tier-1 filters and
Tier-2 (dense and BM25 legs of every plan, and the supplement's scoped searches). The
evaluation uses it to tell a recall gap (a relevant chunk never came back from the
store) from a ranking gap (it came back but ended below rank k), without touching the
retriever. Recordings are bound to the running task through a ``ContextVar``, so
concurrent queries keep their own; searches outside :meth:`RecordingVectorStore.recording`
are not recorded.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from pipeline.evaluation.judging import ResultItem
from pipeline.ports import VectorStore
from pipeline.schema import Node, NodeWithScore, ScopeFilter

__all__ = ["PoolRecording", "RecordingVectorStore", "SearchKind", "StoreCall"]

#: The store searches a recording tells apart (``structure``: the A-3 InChIKey and
#: fingerprint searches of a structure collection).
SearchKind = Literal["dense", "lexical", "structure"]


@dataclass(frozen=True)
class StoreCall:
    """One store search: its kind, collection, whether it was scoped to document ids
    (the supplement's R-SUP-3 searches are), its hits in rank order and the sections it
    was kept within (A-28's second search of a leg; ``()``: every section)."""

    kind: SearchKind
    collection: str
    scoped_to_documents: bool
    hits: tuple[ResultItem, ...]
    within_sections: tuple[str, ...] = ()


@dataclass
class PoolRecording:
    """The store calls of one query."""

    calls: list[StoreCall] = field(default_factory=list)

    @property
    def searched_collections(self) -> set[str]:
        """Collections any search of this query looked into."""
        return {call.collection for call in self.calls}

    def items(self) -> Iterator[tuple[StoreCall, int, ResultItem]]:
        """Every recalled hit with its call and 1-based rank in that call."""
        for call in self.calls:
            for rank, item in enumerate(call.hits, start=1):
                yield call, rank, item


_current: ContextVar[PoolRecording | None] = ContextVar("evaluation_pool", default=None)


def _item(hit: NodeWithScore, collection: str) -> ResultItem:
    metadata = hit.node.metadata
    return ResultItem(
        chunk_id=hit.node.node_id,
        document_id=str(metadata.get("document_id") or ""),
        document_name=str(metadata.get("document_name") or ""),
        section=str(metadata.get("biomed_section") or ""),
        collection=hit.collection or collection,
        score=float(hit.score),
    )


class RecordingVectorStore:
    """Wraps a ``VectorStore``; ``search_dense`` / ``search_lexical`` and the structure
    searches (``search_fingerprint`` / ``search_inchikey``) record their hits
    into the recording open in the current context. Every other attribute is the
    wrapped store's."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @contextmanager
    def recording(self) -> Iterator[PoolRecording]:
        """Record the searches run in this context (and tasks started from it)."""
        recording = PoolRecording()
        token = _current.set(recording)
        try:
            yield recording
        finally:
            _current.reset(token)

    @staticmethod
    def _record(
        kind: SearchKind,
        collection: str,
        scope: ScopeFilter | None,
        hits: Sequence[NodeWithScore],
        sections: Sequence[str] = (),
    ) -> None:
        recording = _current.get()
        if recording is None:
            return
        recording.calls.append(
            StoreCall(
                kind=kind,
                collection=collection,
                scoped_to_documents=bool(scope and scope.document_ids),
                hits=tuple(_item(hit, collection) for hit in hits),
                within_sections=tuple(sections),
            )
        )

    async def search_dense(
        self,
        collection: str,
        vector: np.ndarray,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
        sections: Sequence[str] = (),
    ) -> list[NodeWithScore]:
        """The wrapped store's ``search_dense`` (``vector`` ``(d,)`` float32); its hits are
        recorded as a ``dense`` call when a recording is open."""
        hits = await self.inner.search_dense(
            collection, vector, top_k, scope, with_vectors, sections=sections
        )
        self._record("dense", collection, scope, hits, sections)
        return hits

    async def search_lexical(
        self,
        collection: str,
        query_text: str,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
        sections: Sequence[str] = (),
    ) -> list[NodeWithScore]:
        """The wrapped store's ``search_lexical`` (BM25); its hits are recorded as a
        ``lexical`` call when a recording is open."""
        hits = await self.inner.search_lexical(
            collection, query_text, top_k, scope, with_vectors, sections=sections
        )
        self._record("lexical", collection, scope, hits, sections)
        return hits

    async def search_fingerprint(
        self,
        collection: str,
        fingerprint: bytes,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        """The wrapped store's ``search_fingerprint`` (packed 2048-bit Morgan fingerprint,
        256 bytes); its hits are recorded as a ``structure`` call when a recording is
        open."""
        hits = await self.inner.search_fingerprint(
            collection, fingerprint, top_k, scope, with_vectors
        )
        self._record("structure", collection, scope, hits)
        return hits

    async def search_inchikey(
        self,
        collection: str,
        inchikey: str,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        """The wrapped store's ``search_inchikey``; its hits are recorded as a
        ``structure`` call when a recording is open."""
        hits = await self.inner.search_inchikey(collection, inchikey, top_k, scope, with_vectors)
        self._record("structure", collection, scope, hits)
        return hits

    async def upsert(
        self,
        collection: str,
        nodes: Sequence[Node],
        vectors: np.ndarray,
        lexical_texts: Sequence[str] | None = None,
    ) -> int:
        """The wrapped store's ``upsert`` (``vectors`` ``(len(nodes), d)`` float32), not
        recorded; the number of distinct node ids written."""
        return await self.inner.upsert(collection, nodes, vectors, lexical_texts)

    async def count(self, collection: str, kb_names: Sequence[str] | None = None) -> int:
        """The wrapped store's ``count`` (rows; 0 when missing), not recorded."""
        return await self.inner.count(collection, kb_names)

    async def has_collection(self, collection: str) -> bool:
        """The wrapped store's ``has_collection``, not recorded."""
        return await self.inner.has_collection(collection)
