"""A question that names several drugs opens with one chunk of each (A-10): "gleevec vs
tasigna" should not return ten Tasigna chunks before the first Glivec one. Pure
function over Tier-2's ranked window."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

from pipeline.schema import NodeWithScore
from pipeline.scoring import drug_key, primary_drug_names

__all__ = ["cover_named_drugs"]


def cover_named_drugs(ranked: list[NodeWithScore], named: Sequence[str]) -> list[NodeWithScore]:
    """``ranked`` (best first) with the best chunk of each of the ``named`` drugs (a
    ``primary_drugs`` value or a part of a combination) moved to the first places, in
    their own order, the rest after in theirs (A-10): "gleevec vs tasigna" opens with one
    chunk of each. A moved chunk keeps its similarity and the ones it passes take it where
    theirs is higher, so similarities stay non-increasing (A-2). ``ranked`` itself (the
    same list) when fewer than two named drugs have a chunk of their own, or their best
    chunks already lead."""
    wanted = {drug_key(drug) for drug in named}
    if len(wanted) < 2:
        return ranked
    leaders: list[int] = []
    covered: set[str] = set()
    for index, item in enumerate(ranked):
        own = wanted & primary_drug_names(item.node.metadata)
        if own - covered:
            leaders.append(index)
            covered |= own
            if covered == wanted:
                break
    if len(leaders) < 2 or leaders == list(range(len(leaders))):
        return ranked
    chosen = set(leaders)
    order = leaders + [i for i in range(len(ranked)) if i not in chosen]
    similarities = accumulate((ranked[i].score_parts["similarity"] for i in order), min)
    return [
        ranked[i].model_copy(update={"score_parts": {**ranked[i].score_parts, "similarity": value}})
        for i, value in zip(order, similarities, strict=True)
    ]
