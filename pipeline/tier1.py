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

__all__ = [
    "NodeVectors",
    "cosine_rerank",
    "entity_filter",
    "entity_groups",
    "tier1_encoder_for",
    "tier1_rerank",
]

NodeVectors = Callable[[str, Sequence[NodeWithScore]], Awaitable[np.ndarray]]
"""``(encoder_role, nodes) -> (n, d) float32`` document vectors (L2-normalised for a
``cosine`` role, raw for an ``ip`` role)."""


def tier1_encoder_for(collection: str, settings: Tier1Settings) -> str | None:
    """The Tier-1 encoder of ``collection`` (R-T1-1); None when the collection abstains."""
    return settings.encoders.get(collection)


def entity_groups(
    nodes: Sequence[NodeWithScore],
    intent: QueryRetrievalIntent,
    sparse_terms: Sequence[str],
    window: int = 512,
    keep_rest: bool = False,
) -> list[list[NodeWithScore]]:
    """R-T1-2's groups, each in its given order: ``[named]`` (the seed: the rest dropped)
    or, with ``keep_rest`` (A-33), ``[named, rest]``. A node is named when its
    ``entity_boost_score > 0`` or a term is in ``text[:window]`` (``window`` in
    characters) or the path blob. ``[nodes]`` when the intent requires no entity match,
    there are no sparse terms, or no node is named."""
    if not intent.require_entity_match or not sparse_terms:
        return [list(nodes)]
    named: list[NodeWithScore] = []
    rest: list[NodeWithScore] = []
    for item in nodes:
        head = item.node.text[:window].lower()
        blob = path_blob(item.node.metadata)
        if entity_boost_score(item.node.metadata, sparse_terms) > 0 or any(
            contains_term(head, term) or contains_term(blob, term) for term in sparse_terms
        ):
            named.append(item)
        else:
            rest.append(item)
    if not named:
        return [list(nodes)]
    return [named, rest] if keep_rest else [named]


def entity_filter(
    nodes: Sequence[NodeWithScore],
    intent: QueryRetrievalIntent,
    sparse_terms: Sequence[str],
    window: int = 512,
    keep_rest: bool = False,
) -> list[NodeWithScore]:
    """R-T1-2: the nodes of :func:`entity_groups`, named ones first; without ``keep_rest``
    only the named ones (the filter applies only when something survives)."""
    groups = entity_groups(nodes, intent, sparse_terms, window, keep_rest)
    return [item for group in groups for item in group]


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
    what reverses a drug or treats an overdose only with ``entity_filter_on_reversal``:
    A-31, A-34).

    Returns the list and the audit decision: ``tier1_abstain`` (collection without a
    Tier-1 encoder: list unchanged), ``tier1_entity_filter`` (``cosine_sort`` off: R-T1-2
    ran; the named candidates in the plan's fused order, then, with
    ``entity_filter_keeps_rest`` (A-33), the rest in that order), ``tier1_fused_order``
    (neither runs for this scope: list unchanged), else ``tier1_cosine:<encoder>`` (each
    of R-T1-2's groups sorted by cosine on its own, the named one first).
    """
    encoder = tier1_encoder_for(collection, settings)
    if encoder is None or not nodes:
        return list(nodes), "tier1_abstain"
    filters = settings.entity_filter_for(kb_names)
    filters = filters and (settings.entity_filter_on_reversal or not asks_for_reversal(query))
    groups = (
        entity_groups(
            nodes,
            intent,
            sparse_terms,
            settings.entity_window_chars,
            keep_rest=settings.entity_filter_keeps_rest,
        )
        if filters
        else [list(nodes)]
    )
    ordered = [item for group in groups for item in group]
    if not settings.cosine_sort:
        return ordered, "tier1_entity_filter" if filters else "tier1_fused_order"
    # one vector look-up for every node; the stable sort keeps each group's nodes together
    # once the named ones are put back first
    ranked = await cosine_rerank(ordered, await query_vector(encoder), encoder, node_vectors)
    if len(groups) > 1:
        named = {item.node.node_id for item in groups[0]}
        ranked = sorted(ranked, key=lambda item: item.node.node_id not in named)
    return ranked, f"tier1_cosine:{encoder}"
