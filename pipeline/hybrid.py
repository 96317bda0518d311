"""Hybrid dense + sparse fusion (SPEC.md section 5, R-HYB-1..3)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, get_args

import numpy as np

from pipeline.schema import NodeWithScore
from pipeline.settings_search import TermWeighting
from pipeline.text import contains_term, query_terms, tokens

__all__ = [
    "hybrid_fuse_dense_sparse",
    "pool_term_weights",
    "sparse_score",
    "with_vector_similarity",
]


@lru_cache(maxsize=8192)
def _words(lowered: str) -> frozenset[str]:
    # Chunk texts recur across queries (the same popular chunks, the plan and the
    # supplement scoring one chunk twice): tokenise each once.
    return frozenset(tokens(lowered))


def _hits(term: str, lowered: str, words: frozenset[str]) -> bool:
    if " " in term or "-" in term:
        return contains_term(lowered, term)
    return term in words


def sparse_score(
    query: str,
    text: str,
    extra_terms: Sequence[str] = (),
    weights: Mapping[str, float] | None = None,
) -> float:
    """Term overlap in [0, 1] (R-HYB-3): hits / len(terms), where terms are the query's
    tokens (stop words left out) plus ``extra_terms`` (drug names, section cues), and a
    term hits when it occurs in ``text`` as a whole word (multi-word terms as a phrase,
    letter-bounded). With ``weights`` (term -> weight >= 0, from
    :func:`pool_term_weights`), each term counts its weight instead of 1 (a term without
    one counts 0). No terms, or no weight: 0.0."""
    terms = query_terms(query, tuple(extra_terms))
    if not terms:
        return 0.0
    lowered = text.lower()
    words = _words(lowered)
    if weights is None:
        return sum(1 for term in terms if _hits(term, lowered, words)) / len(terms)
    total = sum(weights.get(term, 0.0) for term in terms)
    if total <= 0.0:
        return 0.0
    hit = sum(weights.get(term, 0.0) for term in terms if _hits(term, lowered, words))
    return hit / total


def pool_term_weights(
    query: str, texts: Sequence[str], extra_terms: Sequence[str] = ()
) -> dict[str, float]:
    """A-14: each query term's BM25 inverse document frequency over the candidate pool,
    ``ln(1 + (n - df + 0.5) / (df + 0.5))`` (Robertson-Sparck Jones, as Lucene's BM25),
    where ``n`` is ``len(texts)`` and ``df`` the number of texts the term occurs in (as
    :func:`sparse_score` finds it). A word the whole pool shares (the question's "pain",
    "children") weighs little and a word few candidates hold (the disease the question
    names) much, so that term overlap stops rewarding chunks that hold many common words.
    A term no text holds keeps the largest weight (``df`` 0): it is in the denominator
    as R-HYB-3 has every term, so the overlap keeps the seed's scale against the cosine
    (leaving it out raised every score; measured worse, eval-results/2026-12-05-pool-idf).

    Returns term -> weight > 0 for every term; empty for no terms or no texts."""
    terms = query_terms(query, tuple(extra_terms))
    if not terms or not texts:
        return {}
    pool = [(lowered, _words(lowered)) for lowered in (text.lower() for text in texts)]
    n = len(pool)
    weights = {}
    for term in terms:
        df = sum(1 for lowered, words in pool if _hits(term, lowered, words))
        weights[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    return weights


def hybrid_fuse_dense_sparse(
    nodes: Sequence[NodeWithScore],
    query: str,
    extra_terms: Sequence[str],
    alpha: float,
    term_weighting: TermWeighting = "uniform",
) -> list[NodeWithScore]:
    """Re-score ``nodes`` with ``alpha * dense + (1 - alpha) * sparse`` (R-HYB-1), best first.

    ``dense`` is the node's ``vector_similarity`` (cosine normalised to [0, 1], R-HYB-2;
    0.0 when the node came from the lexical leg without a vector). On an ``ip`` collection
    (MedCPT, scored by raw inner product per its model card) it is still the cosine of
    query and stored vector, not the inner product: the raw inner product is unbounded
    (tens to hundreds for MedCPT) and would swamp the [0, 1] overlap whatever ``alpha``
    says; the inner product's order enters through the dense leg (which hits are
    recalled, and their RRF rank under ``fusion: rrf``). ``sparse`` is
    ``sparse_score(query, text, extra_terms)``: every term counts 1 with
    ``term_weighting="uniform"`` (R-HYB-3, the seed), its pool IDF with ``"pool_idf"``
    (A-14, :func:`pool_term_weights` over ``nodes``). Returns new objects; ties keep
    input order.

    Raises:
        ValueError: ``alpha`` outside [0, 1], or an unknown ``term_weighting``.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if term_weighting not in get_args(TermWeighting):
        raise ValueError(
            f"term_weighting must be one of {get_args(TermWeighting)}, got {term_weighting!r}"
        )
    weights = (
        pool_term_weights(query, [item.node.text for item in nodes], extra_terms)
        if term_weighting == "pool_idf"
        else None
    )
    fused = []
    for item in nodes:
        dense = item.vector_similarity if item.vector_similarity is not None else 0.0
        sparse = sparse_score(query, item.node.text, extra_terms, weights)
        fused.append(
            item.model_copy(
                update={
                    "score": alpha * dense + (1.0 - alpha) * sparse,
                    "vector_similarity": dense,
                    "term_similarity": sparse,
                }
            )
        )
    fused.sort(key=lambda item: item.score, reverse=True)
    return fused


def with_vector_similarity(
    item: NodeWithScore, query_vector: np.ndarray, collection: str, metric: str = "cosine"
) -> NodeWithScore:
    """A BM25 hit has no ANN score: its ``vector_similarity`` is the cosine of its stored
    (d,) vector and the (d,) query vector, clipped to [0, 1] (R-HYB-2), as the dense leg
    sets it. ``cosine`` collections hold unit vectors, so the dot product is the cosine;
    an ``ip`` collection (MedCPT: raw vectors, model card) divides it by both norms, so
    the number means the same as the dense hits' ``vector_similarity`` (their order by
    raw inner product is the dense leg's, not this)."""
    update: dict[str, Any] = {"collection": item.collection or collection}
    if item.node.embedding is not None and item.vector_similarity is None:
        stored = np.asarray(item.node.embedding, dtype=np.float32)
        cosine = float(np.dot(stored, query_vector))
        if metric == "ip":
            norms = float(np.linalg.norm(stored) * np.linalg.norm(query_vector))
            cosine = cosine / norms if norms > 0.0 else 0.0
        update["vector_similarity"] = min(1.0, max(0.0, cosine))
    return item.model_copy(update=update)
