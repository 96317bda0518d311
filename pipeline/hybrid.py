"""Hybrid dense + sparse fusion (SPEC.md section 5, R-HYB-1..3)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from pipeline.schema import NodeWithScore
from pipeline.text import contains_term, query_terms, tokens

__all__ = ["hybrid_fuse_dense_sparse", "sparse_score"]


@lru_cache(maxsize=8192)
def _words(lowered: str) -> frozenset[str]:
    # Chunk texts recur across queries (the same popular chunks, the plan and the
    # supplement scoring one chunk twice): tokenise each once.
    return frozenset(tokens(lowered))


def sparse_score(query: str, text: str, extra_terms: Sequence[str] = ()) -> float:
    """Term overlap in [0, 1] (R-HYB-3): hits / len(terms), where terms are the query's
    tokens (stop words left out) plus ``extra_terms`` (drug names, section cues), and a
    term hits when it occurs in ``text`` as a whole word (multi-word terms as a phrase,
    letter-bounded). No terms: 0.0."""
    terms = query_terms(query, tuple(extra_terms))
    if not terms:
        return 0.0
    lowered = text.lower()
    words = _words(lowered)
    hits = sum(
        1
        for term in terms
        if (term in words if " " not in term and "-" not in term else contains_term(lowered, term))
    )
    return hits / len(terms)


def hybrid_fuse_dense_sparse(
    nodes: Sequence[NodeWithScore],
    query: str,
    extra_terms: Sequence[str],
    alpha: float,
) -> list[NodeWithScore]:
    """Re-score ``nodes`` with ``alpha * dense + (1 - alpha) * sparse`` (R-HYB-1), best first.

    ``dense`` is the node's ``vector_similarity`` (cosine normalised to [0, 1], R-HYB-2;
    0.0 when the node came from the lexical leg without a vector). On an ``ip`` collection
    (MedCPT, scored by raw inner product per its model card) it is still the cosine of
    query and stored vector, not the inner product: the raw inner product is unbounded
    (tens to hundreds for MedCPT) and would swamp the [0, 1] overlap whatever ``alpha``
    says; the inner product's order enters through the dense leg (which hits are
    recalled, and their RRF rank under ``fusion: rrf``). ``sparse`` is
    ``sparse_score(query, text, extra_terms)``. Returns new objects; ties keep input order.

    Raises:
        ValueError: ``alpha`` outside [0, 1].
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    fused = []
    for item in nodes:
        dense = item.vector_similarity if item.vector_similarity is not None else 0.0
        sparse = sparse_score(query, item.node.text, extra_terms)
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
