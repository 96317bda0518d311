"""Protocols the pipeline depends on (DESIGN.md). The same ``Retriever`` runs with models
called in-process or through Ray Serve handles; nothing in ``pipeline/`` knows which.

All methods are async: an implementation backed by a blocking call runs it in a thread.
Vectors are numpy ``float32`` arrays, shape ``(n, d)``: L2-normalised for a ``cosine``
role; raw for an ``ip`` role (MedCPT, whose model card scores by the inner product of
unnormalised vectors; ``CollectionSpec.metric``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pipeline.schema import DocumentRecord, Node, NodeWithScore, ScopeFilter

__all__ = [
    "CrossEncoder",
    "DocumentRegistry",
    "HealthCheck",
    "ImageEncoder",
    "IngestRegistry",
    "IngestVectorStore",
    "ModelPorts",
    "RetrieverPorts",
    "TextEncoder",
    "VectorStore",
]


@runtime_checkable
class TextEncoder(Protocol):
    """One embedding role (text or SMILES).

    ``encode(texts, titles=None) -> (n, d) float32``, L2-normalised unless the role's
    metric is ``ip`` (then the raw model output, e.g. MedCPT's ``[CLS]``). ``titles`` is given
    for document-side encoding where the model takes ``[title, text]`` pairs (MedCPT
    article encoder); encoders that do not use titles ignore it.

    Raises:
        pipeline.errors.BackendUnavailable: the model cannot run.
        pipeline.errors.InvalidInput: an input the model cannot take (e.g. bad SMILES).
    """

    dimension: int

    async def encode(
        self, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        """``(len(texts), dimension)`` float32, one row per text, in order."""
        ...


@runtime_checkable
class ImageEncoder(Protocol):
    """An image embedding role. ``encode_images(images) -> (n, d) float32`` from encoded
    image bytes (PNG, JPEG, ...); ``encode_texts`` exists only for models with a text tower
    (BiomedCLIP, R-XM-1) and raises ``InvalidInput`` otherwise (UNI2, R-XM-2)."""

    dimension: int

    async def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        """``(len(images), dimension)`` float32, L2-normalised, one row per image."""
        ...

    async def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dimension)`` float32 from the text tower, L2-normalised, in the
        image rows' space (R-XM-1)."""
        ...


@runtime_checkable
class CrossEncoder(Protocol):
    """The cross-encoder role. ``score(query, texts, titles=None) -> (n,) float32``, one
    raw relevance score (logit) per text, in order (R-T2-3)."""

    async def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        """``(len(texts),)`` float32 logits of ``(query, text)`` pairs, in order."""
        ...


@runtime_checkable
class VectorStore(Protocol):
    """Vector collections (Milvus). Dense scores are cosine similarity normalised to
    [0, 1] (R-HYB-2) on a ``cosine`` collection; on an ``ip`` collection ``score`` is the
    raw inner product (the order) and ``vector_similarity`` the cosine in [0, 1]. Lexical
    scores are BM25, positive, best first; structure scores (SPEC A-3) are the Tanimoto
    similarity of packed 2048-bit Morgan fingerprints (``pipeline.structure``), or 1.0 for
    an exact InChIKey match. The structure searches give ``[]`` for a collection without
    structure fields."""

    async def search_dense(
        self,
        collection: str,
        vector: np.ndarray,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
        sections: Sequence[str] = (),
    ) -> list[NodeWithScore]:
        """At most ``top_k`` chunks nearest to ``vector`` (``(d,)`` float32) within
        ``scope``, best first; ``with_vectors``: each node carries its stored vector (for
        Tier-2 from stored vectors); ``sections``: only chunks whose ``biomed_section`` is
        one of them (A-28; ``()``: any). ``[]`` for a missing collection."""
        ...

    async def search_lexical(
        self,
        collection: str,
        query_text: str,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
        sections: Sequence[str] = (),
    ) -> list[NodeWithScore]:
        """At most ``top_k`` chunks by BM25 over their lexical text within ``scope`` and
        ``sections`` (as :meth:`search_dense`), best first; ``[]`` for a missing or
        non-hybrid collection or a blank query."""
        ...

    async def search_fingerprint(
        self,
        collection: str,
        fingerprint: bytes,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        """At most ``top_k`` structures by the Tanimoto similarity of their Morgan
        fingerprints to ``fingerprint`` (packed 2048 bits, 256 bytes), best first."""
        ...

    async def search_inchikey(
        self,
        collection: str,
        inchikey: str,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        """The rows whose standardised parent has InChIKey ``inchikey``, score 1.0."""
        ...

    async def upsert(
        self,
        collection: str,
        nodes: Sequence[Node],
        vectors: np.ndarray,
        lexical_texts: Sequence[str] | None = None,
    ) -> int:
        """Insert or replace ``nodes`` by node id with ``vectors`` (``(len(nodes), d)``
        float32) and, on a hybrid collection, the text BM25 reads per node; the number of
        distinct node ids written (idempotent: the same call twice leaves one copy)."""
        ...

    async def count(self, collection: str, kb_names: Sequence[str] | None = None) -> int:
        """Rows of ``collection`` (of ``kb_names`` only, when given); 0 when missing."""
        ...

    async def has_collection(self, collection: str) -> bool:
        """Whether ``collection`` exists."""
        ...


@runtime_checkable
class DocumentRegistry(Protocol):
    """The PostgreSQL ``documents`` registry (R-ING-6)."""

    async def lookup_document_ids_by_name_terms(
        self,
        terms: Sequence[str],
        kb_name: str | Sequence[str] | None = None,
        namespace: str | None = "biomed",
    ) -> list[str]:
        """Ids of the documents whose names hold any of ``terms`` (R-SUP-2: the drug
        terms of R-SUP-1), of ``kb_name`` and ``namespace`` when given."""
        ...

    async def lookup_documents(self, document_ids: Sequence[str]) -> dict[str, DocumentRecord]:
        """The registered records of ``document_ids`` by id (unknown ids left out)."""
        ...

    async def collections_for_scope(self, scope: ScopeFilter) -> list[tuple[str, str]]:
        """Distinct ``(collection, encoder)`` pairs of the documents in ``scope``
        (R-RT-12), sorted; ``[]`` for an empty scope."""
        ...

    async def register_documents(self, records: Sequence[DocumentRecord]) -> int:
        """Insert or update ``records`` by document id (R-ING-6, idempotent); the number
        of distinct documents in ``records``."""
        ...


@runtime_checkable
class IngestVectorStore(VectorStore, Protocol):
    """What ingestion needs beyond search: create collections (``structure``: with the
    structure-search fields, SPEC A-3; ``metric``: the dense metric, ``cosine`` or ``ip``,
    ``CollectionSpec.metric``), replace a document."""

    async def ensure_collection(
        self,
        name: str,
        dimension: int,
        hybrid: bool,
        structure: bool = False,
        metric: str = "cosine",
    ) -> object:
        """Create collection ``name`` unless it exists; its description."""
        ...

    async def delete_documents(self, collection: str, document_ids: Sequence[str]) -> None:
        """Delete every chunk of ``document_ids`` from ``collection``."""
        ...

    async def delete_knowledge_base(self, collection: str, kb_name: str) -> int | None:
        """Delete every chunk of knowledge base ``kb_name`` from ``collection``; how
        many (None when the store does not say)."""
        ...


@runtime_checkable
class IngestRegistry(DocumentRegistry, Protocol):
    """What ingestion needs beyond look-ups (which give each stored document's content
    hash, kb and collections): removing documents
    (``pipeline.ingest.removal.remove_documents``)."""

    async def delete_documents(self, document_ids: Sequence[str]) -> int:
        """Delete the rows of ``document_ids``; how many existed."""
        ...

    async def document_ids_for_scope(self, scope: ScopeFilter) -> list[str]:
        """Ids of the documents in ``scope``, sorted; ``[]`` for an empty scope."""
        ...


HealthCheck = Callable[[], Awaitable[Any]]
"""An awaitable probe: a model deployment's readiness check or its statistics source."""


@dataclass
class ModelPorts:
    """The models, by role: text / SMILES encoders, the cross-encoder, image encoders; a
    role the profile does not fill is simply absent. ``health_checks`` and
    ``stats_sources`` (per model deployment: a tiny forward pass, its batch sizes) serve
    the service's readiness and statistics; the pipeline never calls them."""

    encoders: Mapping[str, TextEncoder]
    cross_encoder: CrossEncoder | None = None
    image_encoders: Mapping[str, ImageEncoder] = field(default_factory=dict)
    health_checks: Mapping[str, HealthCheck] = field(default_factory=dict)
    stats_sources: Mapping[str, HealthCheck] = field(default_factory=dict)


@dataclass
class RetrieverPorts:
    """Everything the retriever talks to: the vector store, the models and (optional)
    the document registry. The one ports object, in-process and under Ray Serve."""

    store: VectorStore
    models: ModelPorts
    registry: DocumentRegistry | None = None
