"""Ranking metrics of one query: Hit@k, Recall@k, MRR@k, nDCG@k (graded), term coverage.

Every function takes the *judged ranking* of one query: ``gains[i]`` is the relevance
grade of the item at rank ``i + 1`` (0 = not relevant or not judged), after the items
have been de-duplicated (see :func:`first_occurrences`). Conventions follow BEIR /
``trec_eval`` (``pytrec_eval``):

- an item is relevant when its grade is > 0; negative grades count as 0;
- nDCG: gain = grade (linear), discount ``log2(rank + 1)``; the ideal DCG sorts *all*
  judged grades of the query (retrieved or not) in descending order;
- ranks are positions in the order the system returned (the system decides ties);
  :func:`rank_by_score` gives ``trec_eval``'s order (score descending, then item id
  descending) where only scores are known.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = [
    "dcg",
    "first_occurrences",
    "first_relevant_rank",
    "hit_at_k",
    "ndcg_at_k",
    "rank_by_score",
    "recall_at_k",
    "reciprocal_rank",
    "term_coverage",
]

Key = TypeVar("Key", bound=Hashable)


def first_occurrences(keys: Iterable[Key]) -> list[Key]:
    """Keys in order of first appearance: a document returned as several chunks counts
    once, at its best (first) rank."""
    return list(dict.fromkeys(keys))


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Item ids ordered as ``trec_eval`` ranks a run: score descending, ties broken by
    id descending (string comparison)."""
    return [item for item, _ in sorted(scores.items(), key=lambda pair: (pair[1], pair[0]),
                                        reverse=True)]


def _positive(gains: Sequence[float]) -> list[float]:
    return [max(0.0, float(gain)) for gain in gains]


def first_relevant_rank(gains: Sequence[float]) -> int | None:
    """1-based rank of the first item with a grade > 0; None when there is none."""
    for index, gain in enumerate(gains):
        if gain > 0:
            return index + 1
    return None


def hit_at_k(gains: Sequence[float], k: int) -> float:
    """1.0 when a relevant item is within the first ``k`` ranks, else 0.0."""
    rank = first_relevant_rank(gains[:k])
    return 1.0 if rank is not None else 0.0


def reciprocal_rank(gains: Sequence[float], k: int = 10) -> float:
    """``1 / rank`` of the first relevant item within the first ``k`` ranks (MRR@k of one
    query); 0.0 when none is."""
    rank = first_relevant_rank(gains[:k])
    return 1.0 / rank if rank is not None else 0.0


def recall_at_k(
    gains: Sequence[float], relevant_count: int, k: int, capped: bool = False
) -> float:
    """Relevant items within the first ``k`` ranks over the number of relevant items.

    Args:
        gains: judged ranking of distinct items.
        relevant_count: how many items are relevant for the query (judged grade > 0, or
            stored documents meeting a name condition); 0 gives 0.0.
        k: cut-off rank.
        capped: divide by ``min(relevant_count, k)`` instead (BEIR's ``R_cap@k``), so a
            query with more relevant items than ``k`` can still reach 1.0.
    """
    if relevant_count <= 0:
        return 0.0
    found = sum(1 for gain in gains[:k] if gain > 0)
    denominator = min(relevant_count, k) if capped else relevant_count
    return min(1.0, found / denominator)


def dcg(gains: Sequence[float], k: int) -> float:
    """Discounted cumulative gain of the first ``k`` ranks: ``sum(g_i / log2(i + 1))``
    over ranks ``i`` = 1..k, gains clipped at 0."""
    return sum(gain / math.log2(rank + 2) for rank, gain in enumerate(_positive(gains)[:k]))


def ndcg_at_k(gains: Sequence[float], judged_grades: Iterable[float], k: int = 10) -> float:
    """nDCG@k with graded relevance (``trec_eval`` ``ndcg_cut``).

    Args:
        gains: judged ranking (grade per rank, distinct items).
        judged_grades: the grades of *every* judged item of the query (the qrels row),
            retrieved or not; they form the ideal ranking.
        k: cut-off rank (10 for nDCG@10).

    Returns:
        ``DCG@k / IDCG@k`` in [0, 1]; 0.0 when the query has no relevant judged item.
    """
    ideal = sorted(_positive(list(judged_grades)), reverse=True)
    ideal_dcg = dcg(ideal, k)
    if ideal_dcg <= 0:
        return 0.0
    return dcg(gains, k) / ideal_dcg


def term_coverage(texts: Sequence[str], terms: Sequence[str]) -> float | None:
    """Fraction of ``terms`` found (case-insensitive substring) in any of ``texts`` (the
    top-k result texts); None when the query names no terms."""
    wanted = [term.lower() for term in terms if term.strip()]
    if not wanted:
        return None
    haystack = "\n".join(texts).lower()
    return sum(1 for term in wanted if term in haystack) / len(wanted)
