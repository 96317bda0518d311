"""The offline stand-in for the cross-encoder role (family ``bi-encoder-scorer``).

No cross-encoder ships inside a PyPI wheel, so the offline profile fills ``medcpt-rerank``
with this scorer: the cosine similarity of the query embedding and each
``"title. text"`` embedding from a sentence-embedding model (MiniLM by default). It is
**not** a cross-encoder: query and text never attend to each other. Same call shape and
the same document formatting as :class:`models.cross_encoder.CrossEncoderScorer`; scores
are cosines in [-1, 1] rather than logits (R-T2-3 min-max normalises either).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.cross_encoder import query_text, rerank_documents
from models.specs import EncoderFamily, EncoderSpec, ModelProfile
from models.text import TransformerTextEncoder, load_hf_text_encoder

__all__ = ["BiEncoderScorer", "load_bi_encoder_scorer"]


class BiEncoderScorer:
    """``score(query, texts, titles=None) -> np.ndarray (n,) float32``: cosine of the query
    and each ``"title. text"`` (text cut to ``max_chars``, default 2048) under one
    embedding model, in input order."""

    def __init__(self, spec: EncoderSpec, encoder: TransformerTextEncoder):
        self.spec = spec
        self.encoder = encoder

    def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """Cosine scores, float32 ``(n,)``; ``(0,)`` for no texts.

        Raises:
            ModelInputError: query not a str, texts not a list of str, titles misaligned.
        """
        question = query_text(query)
        documents = rerank_documents(texts, titles, self.spec.max_chars)
        if not documents:
            return np.zeros((0,), dtype=np.float32)
        vectors = self.encoder.encode([question, *documents])
        return (vectors[1:] @ vectors[0]).astype(np.float32)


def load_bi_encoder_scorer(spec: EncoderSpec, profile: ModelProfile) -> BiEncoderScorer:
    """Load the embedding model named by the spec (as an ``hf-text`` role with the spec's
    pooling, dimension and max tokens) and wrap it as a scorer.

    Raises:
        ModelNotAvailableError: weights not available locally, or a dimension mismatch.
    """
    embedding_spec = spec.model_copy(update={"family": EncoderFamily.HF_TEXT, "max_chars": None})
    return BiEncoderScorer(spec, load_hf_text_encoder(embedding_spec, profile))
