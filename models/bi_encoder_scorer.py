"""The offline stand-in for the cross-encoder role (family ``bi-encoder-scorer``).

No cross-encoder ships inside a PyPI wheel, so the offline profile fills ``medcpt-rerank``
with this scorer: the cosine similarity of the query embedding and each
``"title. text"`` embedding from a sentence-embedding model (MiniLM by default). It is
**not** a cross-encoder: query and text never attend to each other. Same call shape and
the same document formatting as :class:`models.cross_encoder.CrossEncoderScorer`; scores
are cosines in [-1, 1] rather than logits (R-T2-3 min-max normalises either).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from models.cross_encoder import PairScorer
from models.specs import EncoderFamily, EncoderSpec, ModelProfile
from models.text import TransformerTextEncoder, load_hf_text_encoder

__all__ = ["BiEncoderScorer", "load_bi_encoder_scorer"]


class BiEncoderScorer(PairScorer):
    """``score(query, texts, titles=None) -> np.ndarray (n,) float32``: cosine of the query
    and each ``"title. text"`` (text cut to ``max_chars``, default 2048) under one
    embedding model, in input order.

    Document embeddings are kept in an LRU of ``cache_size`` entries keyed by the
    formatted document: a retrieval service scores the same chunks for many queries, and
    re-encoding them is the scorer's whole cost on a CPU. Cached and fresh embeddings
    are identical (same model, same input).
    """

    def __init__(
        self, spec: EncoderSpec, encoder: TransformerTextEncoder, cache_size: int = 20_000
    ):
        self.spec = spec
        self.encoder = encoder
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.cache_hits = 0
        self.cache_misses = 0

    def _score_rows(self, questions: list[str], documents: list[str]) -> np.ndarray:
        """Cosines of each question and document embedding, float32 ``(n,)``."""
        if not documents:
            return np.zeros((0,), dtype=np.float32)
        unique_questions = list(dict.fromkeys(questions))
        vectors = self._embed(documents)
        query_vectors = self.encoder.encode(unique_questions)
        index = {question: i for i, question in enumerate(unique_questions)}
        picked = query_vectors[[index[q] for q in questions]]
        return np.einsum("ij,ij->i", vectors, picked).astype(np.float32)

    def _embed(self, documents: list[str]) -> np.ndarray:
        with self._lock:
            cached = {doc: self._cache[doc] for doc in documents if doc in self._cache}
            for doc in cached:
                self._cache.move_to_end(doc)
        missing = list(dict.fromkeys(doc for doc in documents if doc not in cached))
        self.cache_hits += len(documents) - len(missing)
        self.cache_misses += len(missing)
        if missing:
            fresh = self.encoder.encode(missing)
            with self._lock:
                for doc, vector in zip(missing, fresh, strict=True):
                    cached[doc] = vector
                    if self.cache_size > 0:
                        self._cache[doc] = vector
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return np.stack([cached[doc] for doc in documents]).astype(np.float32)


def load_bi_encoder_scorer(spec: EncoderSpec, profile: ModelProfile) -> BiEncoderScorer:
    """Load the embedding model named by the spec (as an ``hf-text`` role with the spec's
    pooling, dimension and max tokens) and wrap it as a scorer.

    Raises:
        ModelNotAvailableError: weights not available locally, or a dimension mismatch.
    """
    embedding_spec = spec.model_copy(update={"family": EncoderFamily.HF_TEXT, "max_chars": None})
    return BiEncoderScorer(spec, load_hf_text_encoder(embedding_spec, profile))
