"""Query and node vectors for the pipeline: a per-(role, text) LRU of query embeddings
with in-flight sharing, the SMILES query text of a chemical plan, and document vectors
for the Tier-1 / Tier-2 reranks that reuse stored vectors where they are valid (DESIGN.md
performance notes). Vectors are as the role's encoder returns them: unit rows for a
``cosine`` role, raw rows for an ``ip`` role (MedCPT), so a dot product is each role's
own metric."""

from __future__ import annotations

import asyncio
import contextvars
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from pipeline.errors import BackendUnavailable
from pipeline.intent import smiles_tokens
from pipeline.ports import TextEncoder
from pipeline.schema import NodeWithScore
from pipeline.settings import PipelineSettings
from pipeline.structure import standardize
from pipeline.vocabulary import Vocabulary

__all__ = ["EmbeddingService", "chemical_query_text", "is_smiles_role"]

# The query vectors of the search running in this task and the tasks it starts (asyncio
# copies the context into each): (role, text) -> its encoding. None outside a search.
_REQUEST_VECTORS: ContextVar[dict[tuple[str, str], asyncio.Future[np.ndarray]] | None] = ContextVar(
    "request_query_vectors", default=None
)


def chemical_query_text(query: str, vocabulary: Vocabulary) -> str:
    """What a SMILES encoder embeds for ``query``: its SMILES tokens; else the
    standardised parent SMILES of the drugs it names (vocabulary, R-ING-5 data; A-3's
    ``pipeline.structure.standardize``); else the query unchanged.

    A SMILES model cannot read English, so a chemical plan routed from a drug name
    (R-RT-5) searches with that drug's structure, as the source system did with its
    ``name_aliases`` table. The parent, not the salt the vocabulary may list: lapatinib's
    entry is the ditosylate, whose tosylate matched every stored tosylate salt
    (Sorafenib Tosylate first for "SMILES of lapatinib").
    """
    found = smiles_tokens(query)
    if found:
        return ".".join(found)
    structures = []
    for name in vocabulary.match_drug_entities(query):
        entity = vocabulary.get(name)
        if entity is not None and entity.smiles:
            parent = standardize(entity.smiles)
            structures.append(parent.canonical_smiles if parent else entity.smiles)
    return ".".join(dict.fromkeys(structures)) if structures else query


def is_smiles_role(role: str, settings: PipelineSettings) -> bool:
    """True when ``role`` fills a collection whose modality is SMILES."""
    return any(
        spec.modality == "smiles" and role in (spec.query_encoder, spec.document_encoder)
        for spec in settings.collections.values()
    )


class EmbeddingService:
    """Encodes queries (cached) and node texts through the encoder ports.

    Args:
        encoders: role -> encoder port.
        settings: pipeline settings (cache size, Tier-1 text cut, collection table).
    """

    def __init__(self, encoders: Mapping[str, TextEncoder], settings: PipelineSettings) -> None:
        self.encoders = dict(encoders)
        self.settings = settings
        self._cache: OrderedDict[tuple[str, str], asyncio.Future[np.ndarray]] = OrderedDict()
        self.cache_hits = 0
        self.cache_misses = 0

    def encoder(self, role: str) -> TextEncoder:
        """The port of ``role``.

        Raises:
            BackendUnavailable: the profile has no encoder for ``role``.
        """
        try:
            return self.encoders[role]
        except KeyError:
            raise BackendUnavailable(f"no encoder for role {role!r}") from None

    async def query_vector(self, role: str, text: str) -> np.ndarray:
        """(d,) float32 embedding of ``text`` by ``role`` (L2-normalised for a ``cosine``
        role, the raw model output for an ``ip`` role such as MedCPT); repeated and
        concurrent requests for the same (role, text) share one encoder call.

        The call runs as its own task, so one caller timing out (and being cancelled)
        does not cancel it for the others.
        """
        key = (role, text)
        in_request = _REQUEST_VECTORS.get()
        task = self._cache.get(key)
        if task is None and in_request is not None:
            task = in_request.get(key)
        if task is not None and not (
            task.done() and (task.cancelled() or task.exception() is not None)
        ):
            if key in self._cache:
                self._cache.move_to_end(key)
            self.cache_hits += 1
        else:
            self.cache_misses += 1
            # a fresh context: the call is shared, so it must not be a child of this
            # request's context (Ray Serve cancels those when this request's client leaves)
            task = asyncio.get_running_loop().create_task(
                self._encode_one(role, text), context=contextvars.Context()
            )
            if self.settings.query_cache_size > 0:
                self._cache[key] = task
                while len(self._cache) > self.settings.query_cache_size:
                    self._cache.popitem(last=False)
        if in_request is not None:
            in_request[key] = task
        return await asyncio.shield(task)

    @staticmethod
    @contextmanager
    def request_scope() -> Iterator[None]:
        """Within it (one search, and the tasks it starts), each distinct (role, text) is
        encoded at most once, whatever ``query_cache_size`` is (0 turns the cache off,
        not this)."""
        token = _REQUEST_VECTORS.set({})
        try:
            yield
        finally:
            _REQUEST_VECTORS.reset(token)

    async def _encode_one(self, role: str, text: str) -> np.ndarray:
        # A failed task stays cached only until the next call for its key replaces it.
        vectors = await self.encoder(role).encode([text])
        return np.asarray(vectors, dtype=np.float32).reshape(-1)

    async def node_vectors(self, role: str, nodes: Sequence[NodeWithScore]) -> np.ndarray:
        """(n, d) float32 document vectors of ``nodes`` for ``role`` (unit rows for a
        ``cosine`` role, raw for an ``ip`` role).

        A node's stored vector (returned by the dense search) is reused when its
        collection's document encoder is ``role`` and its text is within the Tier-1 cut
        (same model, same text: same vector); the others are encoded from
        ``text[:max_chars]`` in one batch.
        """
        max_chars = self.settings.tier1.max_chars
        result: list[np.ndarray | None] = []
        missing: list[int] = []
        for index, item in enumerate(nodes):
            spec = self.settings.collections.get(item.collection or "")
            reusable = (
                item.node.embedding is not None
                and spec is not None
                and spec.document_encoder == role
                and len(item.node.text) <= max_chars
            )
            if reusable:
                result.append(np.asarray(item.node.embedding, dtype=np.float32))
            else:
                result.append(None)
                missing.append(index)
        if missing:
            texts = [self._document_text(role, nodes[i]) for i in missing]
            encoded = np.asarray(await self.encoder(role).encode(texts), dtype=np.float32)
            for index, vector in zip(missing, encoded, strict=True):
                result[index] = vector
        return (
            np.stack([vector for vector in result if vector is not None])
            if result
            else (np.zeros((0, 0), dtype=np.float32))
        )

    def _document_text(self, role: str, item: NodeWithScore) -> str:
        if is_smiles_role(role, self.settings):
            smiles = item.node.metadata.get("smiles")
            if smiles:
                return str(smiles)
        return item.node.text[: self.settings.tier1.max_chars]
