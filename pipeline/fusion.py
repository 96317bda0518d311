"""Reciprocal rank fusion, cross-collection de-duplication and supplement injection
(SPEC.md sections 8-9; RRF: Cormack, Clarke and Buettcher, SIGIR 2009)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from pipeline.schema import NodeWithScore

__all__ = [
    "dedupe_cross_collection",
    "inject_supplement_candidates",
    "merge_rrf",
    "rrf_key",
]


def rrf_key(item: NodeWithScore) -> Hashable:
    """Identity of a hit for RRF (R-RRF-4): ``node_id``, else ``source_chunk_id``, else
    ``(document_id, path)``."""
    node = item.node
    if node.node_id:
        return node.node_id
    source_chunk_id = node.metadata.get("source_chunk_id")
    if source_chunk_id:
        return f"chunk:{source_chunk_id}"
    return (str(node.metadata.get("document_id") or ""), str(node.metadata.get("path") or ""))


def _copy_preference(rank: int, item: NodeWithScore) -> tuple[int, float, str]:
    # Which copy of a shared key survives: best rank, then highest score, then the
    # collection name, so the result does not depend on the order of the lists.
    return (rank, -item.score, item.collection or "")


def merge_rrf(
    lists: Sequence[Sequence[NodeWithScore]],
    k: int = 60,
    weights: Sequence[float] | None = None,
) -> list[NodeWithScore]:
    """Reciprocal rank fusion (R-RRF-1..4): ``score[key] += w / (k + rank)``, rank from 1,
    ``w`` the list's weight (``weights``, one per list; 1.0 each when None: plain RRF).

    Empty lists are left out (R-RRF-2); exactly one non-empty list passes through
    unchanged (R-RRF-3); zero lists give ``[]``. Output is best first, ties broken by key;
    each key appears once, as its best-ranked copy, with ``score`` and
    ``score_parts["rrf"]`` set to the fused value. The result does not depend on the order
    of ``lists``.

    Raises:
        ValueError: ``k < 0``, or ``weights`` not one non-negative number per list.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if weights is None:
        weights = [1.0] * len(lists)
    if len(weights) != len(lists) or any(weight < 0 for weight in weights):
        raise ValueError(f"weights must be {len(lists)} non-negative numbers, got {weights}")
    non_empty = [(hits, weight) for hits, weight in zip(lists, weights, strict=True) if hits]
    if not non_empty:
        return []
    if len(non_empty) == 1:
        return list(non_empty[0][0])
    contributions: dict[Hashable, list[float]] = {}
    best: dict[Hashable, tuple[tuple[int, float, str], NodeWithScore]] = {}
    for hits, weight in non_empty:
        seen_in_list: set[Hashable] = set()
        for rank, item in enumerate(hits, start=1):
            key = rrf_key(item)
            if key in seen_in_list:
                continue  # a key counts once per list, at its best rank
            seen_in_list.add(key)
            contributions.setdefault(key, []).append(weight / (k + rank))
            preference = _copy_preference(rank, item)
            if key not in best or preference < best[key][0]:
                best[key] = (preference, item)
    # fsum is exactly rounded, so equal fused scores tie whatever the order of ``lists``
    scores = {key: math.fsum(parts) for key, parts in contributions.items()}
    ordered = sorted(scores, key=lambda key: (-scores[key], str(key)))
    return [
        best[key][1].model_copy(
            update={
                "score": scores[key],
                "score_parts": {**best[key][1].score_parts, "rrf": scores[key]},
            }
        )
        for key in ordered
    ]


def _dedupe_key(item: NodeWithScore) -> Hashable | None:
    metadata = item.node.metadata
    if metadata.get("source_chunk_id"):
        return ("chunk", str(metadata["source_chunk_id"]))
    if metadata.get("document_id") and metadata.get("path"):
        return ("path", str(metadata["document_id"]), str(metadata["path"]))
    return None


def dedupe_cross_collection(nodes: Sequence[NodeWithScore]) -> list[NodeWithScore]:
    """Collapse copies of one chunk found in several collections (R-RRF-5): by
    ``source_chunk_id`` (preferred) or ``(document_id, path)``, keeping the higher-ranked
    (earlier) copy. Nodes with neither key are kept. The caller applies it only when more
    than one plan succeeded and records the count as ``rrf_dedupe``."""
    seen: set[Hashable] = set()
    kept = []
    for item in nodes:
        key = _dedupe_key(item)
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        kept.append(item)
    return kept


def inject_supplement_candidates(
    merged: Sequence[NodeWithScore],
    supplement: Sequence[NodeWithScore],
    min_new: int = 2,
    boost: float = 100.0,
) -> list[NodeWithScore]:
    """Put up to ``min_new`` supplement hits that the merged list lacks at its top, each
    with ``score + boost`` (R-INJ-1), so they reach the Tier-2 pool. A hit counts as
    present when its RRF key or its de-dup key is already in ``merged``."""
    present = {rrf_key(item) for item in merged}
    present |= {key for item in merged if (key := _dedupe_key(item)) is not None}
    injected: list[NodeWithScore] = []
    for item in supplement:
        if len(injected) >= min_new:
            break
        keys = {rrf_key(item), _dedupe_key(item)} - {None}
        if keys & present:
            continue
        present |= keys
        injected.append(
            item.model_copy(
                update={
                    "score": item.score + boost,
                    "score_parts": {**item.score_parts, "injected": 1.0},
                }
            )
        )
    return [*injected, *merged]
