"""Tier-1 per-plan rerank (SPEC.md section 6, R-T1-1..3): the R-T1-2 entity filter and
the cosine rerank by each collection's Tier-1 encoder."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import numpy as np

from pipeline.reversal import asks_for_reversal
from pipeline.schema import NodeWithScore, QueryRetrievalIntent
from pipeline.scoring import entity_boost_score
from pipeline.settings import Tier1Settings
from pipeline.text import contains_term, path_blob

__all__ = ["NodeVectors", "cosine_rerank", "entity_filter", "tier1_encoder_for", "tier1_rerank"]

NodeVectors = Callable[[str, Sequence[NodeWithScore]], Awaitable[np.ndarray]]
"""``(encoder_role, nodes) -> (n, d) float32`` document vectors (L2-normalised for a
``cosine`` role, raw for an ``ip`` role)."""


def tier1_encoder_for(collection: str, settings: Tier1Settings) -> str | None:
    """The Tier-1 encoder of ``collection`` (R-T1-1); None when the collection abstains."""
    return settings.encoders.get(collection)


def entity_filter(
    nodes: Sequence[NodeWithScore],
    intent: QueryRetrievalIntent,
    sparse_terms: Sequence[str],
    window: int = 512,
    keep_rest: bool = False,
) -> list[NodeWithScore]:
    """R-T1-2: when the intent requires an entity match and there are sparse terms, keep
    nodes with ``entity_boost_score > 0`` or a term in ``text[:window]`` (``window`` in
    characters) or the path blob; the filter applies only when something survives. With
    ``keep_rest`` (A-33) the other nodes follow the kept ones, each group in its given
    order, instead of being dropped."""
    if not intent.require_entity_match or not sparse_terms:
        return list(nodes)
    kept = []
    for item in nodes:
        if entity_boost_score(item.node.metadata, sparse_terms) > 0:
            kept.append(item)
            continue
        head = item.node.text[:window].lower()
        blob = path_blob(item.node.metadata)
        if any(contains_term(head, term) or contains_term(blob, term) for term in sparse_terms):
            kept.append(item)
    if not kept:
        return list(nodes)
    if keep_rest:
        named = {id(item) for item in kept}
        kept.extend(item for item in nodes if id(item) not in named)
    return kept


async def cosine_rerank(
    nodes: Sequence[NodeWithScore],
    query_vector: np.ndarray,
    encoder: str,
    node_vectors: NodeVectors,
) -> list[NodeWithScore]:
    """R-T1-3: score each node by the dot product of the query vector ((d,) float32) and
    its document vector, best first. ``node_vectors`` supplies the document vectors
    (stored ones reused where valid, else texts[:2048] encoded).

    The dot product is the role's own metric: the cosine for a ``cosine`` role (the
    encoder returns unit vectors), the raw inner product for an ``ip`` role (MedCPT: its
    model card scores by the inner product of unnormalised vectors, Jin et al. 2023), so
    no normalisation happens here. ``score`` is that value (unbounded for ``ip``; only
    the order is used downstream)."""
    if not nodes:
        return []
    vectors = await node_vectors(encoder, nodes)
    scores = np.asarray(vectors, dtype=np.float32) @ np.asarray(query_vector, dtype=np.float32)
    order = np.argsort(-scores, kind="stable")
    return [nodes[i].model_copy(update={"score": float(scores[i])}) for i in order]


async def tier1_rerank(
    nodes: Sequence[NodeWithScore],
    collection: str,
    intent: QueryRetrievalIntent,
    sparse_terms: Sequence[str],
    settings: Tier1Settings,
    query_vector: Callable[[str], Awaitable[np.ndarray]],
    node_vectors: NodeVectors,
    kb_names: Sequence[str] = (),
    query: str = "",
) -> tuple[list[NodeWithScore], str]:
    """Tier-1 rerank of one plan's list (R-T1-1..3), for a request scoped to ``kb_names``
    (R-T1-2 runs where ``settings.entity_filter_for(kb_names)``, and where ``query`` asks
    what reverses a drug only with ``entity_filter_on_reversal``: A-31).

    Returns the list and the audit decision: ``tier1_abstain`` (collection without a
    Tier-1 encoder: list unchanged), ``tier1_entity_filter`` (``cosine_sort`` off: the
    R-T1-2 filter ran, the plan's fused order kept), ``tier1_fused_order`` (neither
    runs for this scope: list unchanged), else ``tier1_cosine:<encoder>``.
    """
    encoder = tier1_encoder_for(collection, settings)
    if encoder is None or not nodes:
        return list(nodes), "tier1_abstain"
    filters = settings.entity_filter_for(kb_names)
    filters = filters and (settings.entity_filter_on_reversal or not asks_for_reversal(query))
    filtered = (
        entity_filter(
            nodes,
            intent,
            sparse_terms,
            settings.entity_window_chars,
            keep_rest=settings.entity_filter_keeps_rest,
        )
        if filters
        else list(nodes)
    )
    if not settings.cosine_sort:
        return filtered, "tier1_entity_filter" if filters else "tier1_fused_order"
    ranked = await cosine_rerank(filtered, await query_vector(encoder), encoder, node_vectors)
    return ranked, f"tier1_cosine:{encoder}"
