"""Tier-1 per-plan cosine rerank (SPEC.md section 6) and Tier-2 fused rerank
(section 10, ``post_rrf_rerank``) with its rerank policy (R-T2-11)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pipeline.schema import NodeWithScore, QueryRetrievalIntent
from pipeline.scoring import (
    cross_drug_penalty,
    entity_boost_score,
    entity_match_score,
    section_match_score,
)
from pipeline.settings import RerankPolicy, Tier1Settings, Tier2Settings
from pipeline.text import contains_term, path_blob
from pipeline.vocabulary import Vocabulary

__all__ = [
    "CrossEncoderScores",
    "NodeVectors",
    "Tier2Outcome",
    "boost_terms_for_query",
    "cosine_rerank",
    "entity_filter",
    "min_max_normalise",
    "post_rrf_rerank",
    "tier1_encoder_for",
    "tier1_rerank",
]

NodeVectors = Callable[[str, Sequence[NodeWithScore]], Awaitable[np.ndarray]]
"""``(encoder_role, nodes) -> (n, d) float32`` L2-normalised document vectors."""

CrossEncoderScores = Callable[[str, Sequence[NodeWithScore]], Awaitable[np.ndarray]]
"""``(query, nodes) -> (n,)`` raw cross-encoder scores, in order."""


def tier1_encoder_for(collection: str, settings: Tier1Settings) -> str | None:
    """The Tier-1 encoder of ``collection`` (R-T1-1); None when the collection abstains."""
    return settings.encoders.get(collection)


def entity_filter(
    nodes: Sequence[NodeWithScore],
    intent: QueryRetrievalIntent,
    sparse_terms: Sequence[str],
    window: int = 512,
) -> list[NodeWithScore]:
    """R-T1-2: when the intent requires an entity match and there are sparse terms, keep
    nodes with ``entity_boost_score > 0`` or a term in ``text[:window]`` or the path blob;
    the filter applies only when something survives."""
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
    return kept if kept else list(nodes)


async def cosine_rerank(
    nodes: Sequence[NodeWithScore],
    query_vector: np.ndarray,
    encoder: str,
    node_vectors: NodeVectors,
) -> list[NodeWithScore]:
    """R-T1-3: score each node by the dot product of the L2-normalised query vector
    ((d,) float32) and its document vector, best first. ``node_vectors`` supplies the
    document vectors (stored ones reused where valid, else texts[:2048] encoded)."""
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
) -> tuple[list[NodeWithScore], str]:
    """Tier-1 rerank of one plan's list (R-T1-1..3).

    Returns the list and the audit decision: ``tier1_abstain`` (collection without a
    Tier-1 encoder: list unchanged), else ``tier1_cosine:<encoder>``.
    """
    encoder = tier1_encoder_for(collection, settings)
    if encoder is None or not nodes:
        return list(nodes), "tier1_abstain"
    filtered = entity_filter(nodes, intent, sparse_terms, settings.entity_window_chars)
    ranked = await cosine_rerank(filtered, await query_vector(encoder), encoder, node_vectors)
    return ranked, f"tier1_cosine:{encoder}"


def boost_terms_for_query(query: str, vocabulary: Vocabulary, related_limit: int = 6) -> list[str]:
    """Tier-2 boost terms (R-T2-5): the query's drugs; else ``related_drugs[:6]`` of each
    matched entity, de-duplicated in order."""
    drugs = vocabulary.match_drug_entities(query)
    if drugs:
        return drugs
    related: list[str] = []
    for entity in vocabulary.match_entities(query):
        related.extend(entity.related_drugs[:related_limit])
    return list(dict.fromkeys(related))


def min_max_normalise(scores: np.ndarray) -> np.ndarray:
    """(n,) -> (n,) float32 in [0, 1] over the pool (R-T2-3); all-equal scores give 1.0."""
    values = np.asarray(scores, dtype=np.float32)
    if values.size == 0:
        return values
    low, high = float(values.min()), float(values.max())
    if high - low <= 1e-12:
        return np.ones_like(values)
    return (values - low) / (high - low)


@dataclass
class Tier2Outcome:
    """Reranked nodes and the audit trail of Tier-2."""

    nodes: list[NodeWithScore]
    decisions: list[str] = field(default_factory=list)
    degraded: bool = False
    error: str | None = None
    scored: int = 0


async def post_rrf_rerank(
    nodes: Sequence[NodeWithScore],
    query: str,
    intent: QueryRetrievalIntent,
    *,
    vocabulary: Vocabulary,
    settings: Tier2Settings,
    cross_encoder: CrossEncoderScores | None,
    policy: RerankPolicy | None = None,
    chemical_scores: Callable[[Sequence[NodeWithScore]], Awaitable[np.ndarray]] | None = None,
) -> Tier2Outcome:
    """Tier-2 fused rerank (R-T2-1..9, R-T2-11) of the post-RRF pool, best first.

    ``final = w_ce * ce_norm + w_entity * entity + w_sec * section - w_xdrug * xdrug``
    with weights of the intent's workflow (R-T2-8). Image nodes are appended unscored
    (R-T2-1). A cross-encoder error, or a score count different from the node count,
    falls back to the incoming scores for the whole pool (R-T2-4). In the chemical
    workflow, nodes with entity score > 0 take the higher of their fused score and
    their MolFormer cosine (R-T2-9). Policy ``none`` passes through; ``general`` orders
    by the cross-encoder alone. Each path records ``rerank_t2_domain`` /
    ``rerank_t2_general`` / ``rerank_t2_passthrough``.
    """
    policy = policy or settings.policy
    text_nodes = [item for item in nodes if not item.node.is_image]
    image_nodes = [item for item in nodes if item.node.is_image]
    if policy == RerankPolicy.NONE or not text_nodes or cross_encoder is None:
        reason = "rerank_t2_passthrough"
        return Tier2Outcome(nodes=[*text_nodes, *image_nodes], decisions=[reason])
    decision = "rerank_t2_general" if policy == RerankPolicy.GENERAL else "rerank_t2_domain"
    try:
        raw = np.asarray(await cross_encoder(query, text_nodes), dtype=np.float32).reshape(-1)
    except Exception as error:  # R-T2-4: any cross-encoder failure falls back, never raises
        return _fallback(text_nodes, image_nodes, decision, f"{type(error).__name__}: {error}")
    if raw.shape[0] != len(text_nodes) or not np.all(np.isfinite(raw)):
        return _fallback(
            text_nodes,
            image_nodes,
            decision,
            f"cross-encoder returned {raw.shape[0]} scores for {len(text_nodes)}",
        )
    ce_norm = min_max_normalise(raw)
    if policy == RerankPolicy.GENERAL:
        scored = [
            item.model_copy(
                update={"score": float(ce), "score_parts": {**item.score_parts, "ce": float(ce)}}
            )
            for item, ce in zip(text_nodes, ce_norm, strict=True)
        ]
    else:
        scored = _fuse(text_nodes, ce_norm, query, intent, vocabulary, settings)
        if intent.workflow == "chemical" and chemical_scores is not None:
            scored = await _chemical_rescore(scored, chemical_scores)
    order = sorted(range(len(scored)), key=lambda i: -scored[i].score)
    return Tier2Outcome(
        nodes=[*(scored[i] for i in order), *image_nodes],
        decisions=[decision],
        scored=len(scored),
    )


def _fallback(
    text_nodes: list[NodeWithScore], image_nodes: list[NodeWithScore], decision: str, error: str
) -> Tier2Outcome:
    return Tier2Outcome(
        nodes=[*text_nodes, *image_nodes],
        decisions=[decision, "rerank_t2_fallback_existing_scores"],
        degraded=True,
        error=error,
    )


def _fuse(
    nodes: list[NodeWithScore],
    ce_norm: np.ndarray,
    query: str,
    intent: QueryRetrievalIntent,
    vocabulary: Vocabulary,
    settings: Tier2Settings,
) -> list[NodeWithScore]:
    weights = settings.weights_for(intent.workflow)
    drugs = boost_terms_for_query(query, vocabulary, settings.related_drugs_limit)
    fused = []
    for item, ce in zip(nodes, ce_norm, strict=True):
        entity = entity_match_score(item.node, drugs, settings.entity_window_chars)
        section = section_match_score(item.node, intent.section_cues, settings.summary_window_chars)
        xdrug = cross_drug_penalty(item.node, drugs, settings.entity_window_chars)
        final = (
            weights.w_ce * float(ce)
            + weights.w_entity * entity
            + weights.w_sec * section
            - weights.w_xdrug * xdrug
        )
        parts = {
            **item.score_parts,
            "ce": float(ce),
            "entity": entity,
            "section": section,
            "xdrug": xdrug,
        }
        fused.append(item.model_copy(update={"score": final, "score_parts": parts}))
    return fused


async def _chemical_rescore(
    nodes: list[NodeWithScore],
    chemical_scores: Callable[[Sequence[NodeWithScore]], Awaitable[np.ndarray]],
) -> list[NodeWithScore]:
    # R-T2-9: only nodes with an entity score take part; each keeps the higher score.
    candidates = [i for i, item in enumerate(nodes) if item.score_parts.get("entity", 0.0) > 0]
    if not candidates:
        return nodes
    cosines = np.asarray(await chemical_scores([nodes[i] for i in candidates]), dtype=np.float32)
    result = list(nodes)
    for index, cosine in zip(candidates, cosines.reshape(-1), strict=True):
        if float(cosine) > result[index].score:
            parts = {**result[index].score_parts, "molformer": float(cosine)}
            result[index] = result[index].model_copy(
                update={"score": float(cosine), "score_parts": parts}
            )
    return result
