"""Why a query missed: corpus, route, recall or ranking gap (issue 6).

- *corpus gap*: nothing relevant is stored. ``qrels`` sets: no judged-relevant document
  id is registered. ``name`` sets: no registered document name (in the evaluated kb)
  contains an expected substring, or, when the query gives ``expected_section``, none of
  those documents has a stored chunk in that section.
- *route gap*: relevant documents are stored, but in collections the query never
  searched (neither a routed plan nor the supplement).
- *recall gap*: the relevant collection was searched, but no relevant chunk came back
  from any store search (dense, BM25, supplement): it is not in the candidate pool.
- *ranking gap*: a relevant chunk was in the candidate pool but the final order put it
  below rank k (or a Tier-1 entity filter dropped it).

The facts come from the registry (names, ids, collections) and a scoped store search
(sections); the candidate pool from :mod:`pipeline.evaluation.recording`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from pipeline.errors import BiomedSearchError
from pipeline.evaluation.querysets import EvalQuery, Judgement
from pipeline.ports import DocumentRegistry, VectorStore
from pipeline.schema import ScopeFilter

__all__ = [
    "FAILURE_CLASSES",
    "CorpusFacts",
    "CorpusProbe",
    "FailureClass",
    "StoreCorpusProbe",
    "classify_miss",
]

logger = logging.getLogger(__name__)

FailureClass = Literal[
    "hit", "corpus_gap", "route_gap", "recall_gap", "ranking_gap", "error", "unclassified"
]
FAILURE_CLASSES: tuple[str, ...] = (
    "hit", "corpus_gap", "route_gap", "recall_gap", "ranking_gap", "error", "unclassified"
)

CollectionVector = Callable[[str, str], Awaitable[np.ndarray]]
"""``(collection, text) -> (d,) float32`` query vector with that collection's encoder."""


@dataclass(frozen=True)
class CorpusFacts:
    """What the stores hold for one query.

    Attributes:
        relevant_documents: document id -> collections it was ingested into, for every
            stored document that is relevant (``name`` sets with a section: only those
            with a chunk in that section); None when unknown (no registry, e.g. HTTP).
        note: why the set is empty, for the report.
    """

    relevant_documents: Mapping[str, tuple[str, ...]] | None = None
    note: str = ""

    @property
    def known(self) -> bool:
        """True when the relevant documents are known (``relevant_documents`` not None)."""
        return self.relevant_documents is not None

    @property
    def relevant_collections(self) -> set[str]:
        """Every collection a relevant document was ingested into (empty when unknown)."""
        return {c for cs in (self.relevant_documents or {}).values() for c in cs}


class CorpusProbe(Protocol):
    """Finds what is stored that is relevant to a query."""

    async def facts(self, query: EvalQuery, judgement: Judgement) -> CorpusFacts:
        """The stored documents relevant to ``query`` under ``judgement`` (``qrels`` /
        ``name``) and the collections they were ingested into."""
        ...


@dataclass
class StoreCorpusProbe:
    """``CorpusProbe`` over the document registry and (for sections) the vector store.

    Args:
        registry: the ``documents`` registry (R-ING-6).
        kb: the evaluated knowledge base; name look-ups stay inside it (None = any).
        store: the vector store, for listing the sections of candidate documents.
        collection_vector: query vector per collection, needed with ``store``.
        namespace: registry namespace of the documents.
        section_scan_limit: chunks listed per collection and query (a scoped search).
    """

    registry: DocumentRegistry
    kb: str | None = None
    store: VectorStore | None = None
    collection_vector: CollectionVector | None = None
    namespace: str = "biomed"
    section_scan_limit: int = 4096
    _cache: dict[tuple[str, str], CorpusFacts] = field(default_factory=dict)

    async def facts(self, query: EvalQuery, judgement: Judgement) -> CorpusFacts:
        """Relevant stored documents of ``query`` (cached per query id and judgement).

        Raises:
            pipeline.errors.BackendUnavailable: the registry does not answer.
        """
        key = (query.query_id, judgement)
        if key not in self._cache:
            if judgement == "qrels":
                self._cache[key] = await self._qrels_facts(query)
            else:
                self._cache[key] = await self._name_facts(query)
        return self._cache[key]

    async def _qrels_facts(self, query: EvalQuery) -> CorpusFacts:
        records = await self.registry.lookup_documents(list(query.relevant_ids))
        documents = {doc_id: tuple(record.collections) for doc_id, record in records.items()}
        note = "" if documents else (
            f"none of the {len(query.relevant_ids)} judged-relevant document ids is stored"
        )
        return CorpusFacts(relevant_documents=documents, note=note)

    async def _name_facts(self, query: EvalQuery) -> CorpusFacts:
        ids = await self.registry.lookup_document_ids_by_name_terms(
            list(query.expected_names), self.kb, self.namespace
        )
        if not ids:
            where = f" in kb {self.kb!r}" if self.kb else ""
            return CorpusFacts(
                relevant_documents={},
                note=f"no stored document name{where} contains any of "
                f"{list(query.expected_names)}",
            )
        records = await self.registry.lookup_documents(ids)
        documents = {doc_id: tuple(record.collections) for doc_id, record in records.items()}
        if not query.expected_section or self.store is None or self.collection_vector is None:
            return CorpusFacts(relevant_documents=documents)
        sections = await self._sections(query, documents)
        with_section = {
            doc_id: collections
            for doc_id, collections in documents.items()
            if query.expected_section in sections.get(doc_id, set())
        }
        note = "" if with_section else (
            f"{len(documents)} document(s) match by name, none has a stored "
            f"{query.expected_section!r} chunk"
        )
        return CorpusFacts(relevant_documents=with_section, note=note)

    async def _sections(
        self, query: EvalQuery, documents: Mapping[str, Sequence[str]]
    ) -> dict[str, set[str]]:
        assert self.store is not None and self.collection_vector is not None
        sections: dict[str, set[str]] = {}
        collections = sorted({c for cs in documents.values() for c in cs})
        scope = ScopeFilter(document_ids=tuple(documents))
        for collection in collections:
            try:
                vector = await self.collection_vector(collection, query.text)
                hits = await self.store.search_dense(
                    collection, vector, self.section_scan_limit, scope
                )
            except (BiomedSearchError, ValueError) as error:
                logger.warning("section scan of %s failed: %s", collection, error)
                continue
            for hit in hits:
                metadata = hit.node.metadata
                sections.setdefault(str(metadata.get("document_id") or ""), set()).add(
                    str(metadata.get("biomed_section") or "")
                )
        return sections


def classify_miss(
    *,
    hit: bool,
    facts: CorpusFacts | None,
    searched_collections: set[str] | None,
    recalled: Sequence[str] | None,
) -> tuple[FailureClass, str]:
    """Failure class and a one-line reason for one query of one ablation.

    Args:
        hit: a relevant result is within rank k.
        facts: what is stored (None = not probed).
        searched_collections: collections the query searched (None = unknown).
        recalled: where relevant chunks appeared in the candidate pool, e.g.
            ``["lexical:biomed_text@3"]``; ``[]`` = nowhere; None = pool not visible.

    Returns:
        ``(class, reason)``; checks run in the order corpus, route, recall, ranking.
    """
    if hit:
        return "hit", ""
    if facts is not None and facts.known and not facts.relevant_documents:
        return "corpus_gap", facts.note or "nothing relevant stored"
    if facts is not None and facts.known and searched_collections is not None:
        relevant = facts.relevant_collections
        if relevant and not relevant & searched_collections:
            return "route_gap", (
                f"relevant documents are in {sorted(relevant)}; searched "
                f"{sorted(searched_collections)}"
            )
    if recalled is None:
        return "unclassified", "candidate pool not visible (remote service)"
    if not recalled:
        return "recall_gap", "no relevant chunk in the candidate pool"
    shown = ", ".join(recalled[:4]) + (" ..." if len(recalled) > 4 else "")
    return "ranking_gap", f"in the pool ({shown}) but ranked below k"
