"""Tier-1 per-plan cosine rerank (SPEC.md section 6) and Tier-2 fused rerank
(section 10, ``post_rrf_rerank``) with its rerank policy (R-T2-11).

Tier-1 lives in :mod:`pipeline.tier1`; its names are re-exported here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

import numpy as np

from pipeline.drug_coverage import cover_named_drugs, entity_caps
from pipeline.reversal import asks_for_reversal, reversal_entity_score, reversal_subject
from pipeline.schema import NodeWithScore, QueryRetrievalIntent
from pipeline.scoring import (
    boost_terms_for_query,
    condition_terms,
    cross_drug_penalty,
    entity_match_score,
    member_topic_terms,
    protected_drugs,
    section_match_score,
    topic_match_score,
    topic_terms,
)
from pipeline.settings import CrossDrugTerms, RerankPolicy, Tier2Settings
from pipeline.tier1 import (
    NodeVectors,
    cosine_rerank,
    entity_filter,
    tier1_encoder_for,
    tier1_rerank,
)
from pipeline.vocabulary import Vocabulary

__all__ = [
    "CrossEncoderScores",
    "NodeVectors",
    "Tier2Outcome",
    "boost_terms_for_query",
    "cosine_rerank",
    "entity_filter",
    "first_stage_evidence",
    "min_max_normalise",
    "post_rrf_rerank",
    "protected_drugs",
    "running_minimum",
    "tier1_encoder_for",
    "tier1_rerank",
]


CrossEncoderScores = Callable[[str, Sequence[NodeWithScore]], Awaitable[np.ndarray]]
"""``(query, nodes) -> (n,)`` raw cross-encoder scores, in order."""


def min_max_normalise(scores: np.ndarray) -> np.ndarray:
    """(n,) -> (n,) float32 in [0, 1] over the pool (R-T2-3); all-equal scores give 1.0.
    NaN entries (a node the scorer could not score) stay NaN and do not set the range."""
    values = np.asarray(scores, dtype=np.float32)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return values
    low, high = float(finite.min()), float(finite.max())
    if high - low <= 1e-12:
        return np.where(np.isfinite(values), 1.0, values).astype(np.float32)
    return (values - low) / (high - low)


def first_stage_evidence(nodes: Sequence[NodeWithScore], k: float) -> np.ndarray:
    """(n,) float32 in (0, 1]: ``(k + 1) / (k + rank)`` of each node in the first-stage
    (post-RRF) order, rank from 1 (A-4). Injected supplement hits (R-INJ-1) were not
    found by the first stage and get 0.0; they do not take a rank."""
    evidence = np.zeros(len(nodes), dtype=np.float32)
    rank = 0
    for index, item in enumerate(nodes):
        if item.score_parts.get("injected"):
            continue
        rank += 1
        evidence[index] = (k + 1.0) / (k + rank)
    return evidence


@dataclass
class Tier2Outcome:
    """Reranked nodes and the audit trail of Tier-2. Every node's ``score_parts`` holds
    ``similarity`` in [0, 1], non-increasing along ``nodes`` (A-2)."""

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
    structure_only: bool = False,
) -> Tier2Outcome:
    """Tier-2 fused rerank (R-T2-1..11, A-2..A-4) of the post-RRF window, best first.

    ``nodes`` come in first-stage order. The fused score is
    ``w_ce * ce + w_first * first + w_entity * entity + w_sec * section - w_xdrug * xdrug``
    with the weights of the intent's workflow (R-T2-8, preset ``seed`` or ``tuned``);
    ``first`` is the first-stage evidence (:func:`first_stage_evidence`) so that Tier-2
    refines the first stage instead of replacing it (A-4). ``ce`` is the min-max
    normalised scorer output (R-T2-3); a node the scorer returns NaN for, takes its
    ``first`` instead; a structure hit (``score_parts["structure"]``, Tanimoto) takes its
    structure score: a text scorer never orders structures (A-3). The similarity is
    ``clip(fused / reachable, 0, 1)`` (A-2), ``reachable`` the largest fused score this
    query can reach: ``w_ce + w_first``, plus ``w_entity`` when it has boost terms (or,
    with ``condition_entity``, conditions a chunk of the window names: A-36) and
    ``w_sec`` when it has section cues.

    ``structure_only`` (a structure and nothing else): by structure score, then first
    stage; the text scorer is not called (A-3).

    Image nodes are appended after the text nodes (R-T2-1). A scorer error, or a score
    count different from the node count, falls back to the first-stage order (R-T2-4).
    Policy ``none`` passes through; ``general`` orders by the scorer alone. In the
    chemical workflow a node with entity score > 0 takes the higher of its similarity
    and its MolFormer cosine (R-T2-9); elsewhere a related drug's entity score can be
    scaled by topic (A-15) or capped for a fixed combination (A-22). A question that asks
    what reverses or treats an overdose scores the chunks that name what it reverses, the
    class overdose it names included (A-11, A-34: ``pipeline.reversal``). A question
    that names only conditions scores the chunks that name them (A-36,
    ``pipeline.scoring.condition_terms``). Decisions: ``rerank_t2_domain`` / ``general``
    / ``passthrough`` / ``structure`` (``rerank_t2_*``), ``rerank_member_entity_by_topic``,
    ``rerank_fixed_combination``, ``rerank_condition_entity``."""
    policy = policy or settings.policy
    text_nodes = [item for item in nodes if not item.node.is_image]
    image_nodes = [item for item in nodes if item.node.is_image]
    first = first_stage_evidence(text_nodes, settings.first_stage_k)
    if structure_only and text_nodes:
        return _structure_order(text_nodes, image_nodes, first)
    if policy == RerankPolicy.NONE or not text_nodes or cross_encoder is None:
        return _first_stage_order(text_nodes, image_nodes, first, ["rerank_t2_passthrough"])
    decision = "rerank_t2_general" if policy == RerankPolicy.GENERAL else "rerank_t2_domain"
    # a reversal question's named drugs are not its answer
    reversal = settings.reversal_agents and policy != RerankPolicy.GENERAL
    reversal = reversal and asks_for_reversal(query)
    skipped, fuse_decisions = None, []
    try:
        raw = np.asarray(await cross_encoder(query, text_nodes), dtype=np.float32).reshape(-1)
    except Exception as error:  # R-T2-4: any scorer failure falls back, never raises
        return _fallback(
            text_nodes, image_nodes, first, decision, f"{type(error).__name__}: {error}"
        )
    if raw.shape[0] != len(text_nodes) or not np.any(np.isfinite(raw)):
        return _fallback(
            text_nodes,
            image_nodes,
            first,
            decision,
            f"scorer returned {raw.shape[0]} scores ({int(np.isfinite(raw).sum())} finite) "
            f"for {len(text_nodes)}",
        )
    ce = min_max_normalise(raw)
    structure = np.array(
        [item.score_parts.get("structure", np.nan) for item in text_nodes], dtype=np.float32
    )
    ce = np.where(np.isfinite(structure), structure, ce)
    ce = np.where(np.isfinite(ce), ce, first)
    if policy == RerankPolicy.GENERAL:
        scored = [
            _with_similarity(item, float(value), {"ce": float(value), "first": float(f)})
            for item, value, f in zip(text_nodes, ce, first, strict=True)
        ]
    else:
        scored, fuse_decisions = _fuse(
            text_nodes, ce, first, query, intent, vocabulary, settings, reversal
        )
        if intent.workflow == "chemical" and chemical_scores is not None:
            try:
                scored = await _chemical_rescore(scored, chemical_scores)
            except Exception as error:  # R-T2-4: the fused order stands, the skip recorded
                skipped = f"rerank_t2_9_skipped: {type(error).__name__}: {error}"
    order = sorted(
        range(len(scored)),
        key=lambda i: (-scored[i].score_parts["similarity"], -scored[i].score, i),
    )
    ranked = [scored[i] for i in order]
    decisions = [d for d in (decision, skipped) if d] + fuse_decisions
    if reversal:
        decisions.append("rerank_reversal_agents")
    elif settings.cover_named_drugs and policy != RerankPolicy.GENERAL:
        named = protected_drugs(ranked, query, (), vocabulary, CrossDrugTerms.QUERY_DRUGS_IN_POOL)
        covered = cover_named_drugs(ranked, named)
        if covered is not ranked:
            ranked = covered
            decisions.append(f"rerank_cover_named_drugs:{len(named)}")
    return Tier2Outcome(
        nodes=[*ranked, *_unscored(image_nodes)], decisions=decisions, scored=len(scored)
    )


def _with_similarity(
    item: NodeWithScore, similarity: float, parts: dict[str, float], score: float | None = None
) -> NodeWithScore:
    value = min(1.0, max(0.0, similarity))
    return item.model_copy(
        update={
            "score": value if score is None else score,
            "score_parts": {**item.score_parts, **parts, "similarity": value},
        }
    )


def _unscored(image_nodes: list[NodeWithScore]) -> list[NodeWithScore]:
    # R-T2-1: images pass unscored, after every text node: similarity 0 keeps the
    # scale monotone with the order.
    return [_with_similarity(item, 0.0, {}, score=item.score) for item in image_nodes]


def _first_stage_order(
    text_nodes: list[NodeWithScore],
    image_nodes: list[NodeWithScore],
    first: np.ndarray,
    decisions: list[str],
    degraded: bool = False,
    error: str | None = None,
) -> Tier2Outcome:
    # The first-stage order, its evidence as the similarity (monotone by construction
    # except for injected hits, which take the running minimum).
    nodes = list(text_nodes)
    similarities = running_minimum(
        [
            1.0 if item.score_parts.get("injected") else float(f)
            for item, f in zip(nodes, first, strict=True)
        ]
    )
    scored = [
        _with_similarity(item, value, {"first": float(f)}, score=item.score)
        for item, value, f in zip(nodes, similarities, first, strict=True)
    ]
    return Tier2Outcome(
        nodes=[*scored, *_unscored(image_nodes)],
        decisions=decisions,
        degraded=degraded,
        error=error,
    )


def _structure_order(
    text_nodes: list[NodeWithScore], image_nodes: list[NodeWithScore], first: np.ndarray
) -> Tier2Outcome:
    # a structure query is answered by structure similarity (Tanimoto; an
    # identical parent is 1.0), ties by the first stage; nodes without a structure
    # score follow in first-stage order.
    keyed = []
    for index, item in enumerate(text_nodes):
        structure = item.score_parts.get("structure")
        keyed.append((0 if structure is not None else 1, -(structure or 0.0), index))
    keyed.sort()
    ordered: list[NodeWithScore] = []
    floor = 1.0
    for _, negative, index in keyed:
        item = text_nodes[index]
        value = -negative if item.score_parts.get("structure") is not None else float(first[index])
        floor = min(floor, value)
        ordered.append(_with_similarity(item, floor, {"first": float(first[index])}))
    return Tier2Outcome(
        nodes=[*ordered, *_unscored(image_nodes)],
        decisions=["rerank_t2_structure"],
        scored=len(ordered),
    )


def running_minimum(values: Sequence[float]) -> list[float]:
    """Each value capped by every value before it: a non-increasing sequence (A-2)."""
    return list(accumulate((float(value) for value in values), min))


def _fallback(
    text_nodes: list[NodeWithScore],
    image_nodes: list[NodeWithScore],
    first: np.ndarray,
    decision: str,
    error: str,
) -> Tier2Outcome:
    return _first_stage_order(
        text_nodes,
        image_nodes,
        first,
        [decision, "rerank_t2_fallback_existing_scores"],
        degraded=True,
        error=error,
    )


def _fuse(
    nodes: list[NodeWithScore],
    ce: np.ndarray,
    first: np.ndarray,
    query: str,
    intent: QueryRetrievalIntent,
    vocabulary: Vocabulary,
    settings: Tier2Settings,
    reversal: bool = False,
) -> tuple[list[NodeWithScore], list[str]]:  # the fused nodes, A-15's and A-22's decisions
    weights = settings.weights_for(intent.workflow)
    entity_score = reversal_entity_score if reversal else entity_match_score
    # "overdose" in "antidote for paracetamol overdose" names the case, not a section
    cues = () if reversal else intent.section_cues
    drugs = boost_terms_for_query(
        query, vocabulary, settings.related_drugs_limit, settings.related_drug_types,
        settings.class_members_limit)
    protected = protected_drugs(nodes, query, drugs, vocabulary, settings.cross_drug_terms)
    if reversal:  # the antidote's label names the class's overdose, not the drug
        drugs, protected = reversal_subject(query, vocabulary, drugs, protected)
    # the conditions of a question with no boost terms earn the entity score alone
    # (no topic part, no drug to cross; not R-T2-9's pick), where a chunk names one
    on = settings.condition_entity and not drugs and intent.workflow != "chemical"
    conditions = condition_terms(query, vocabulary) if on else []
    window = settings.entity_window_chars
    if conditions and not any(entity_match_score(i.node, conditions, window) for i in nodes):
        conditions = []  # no chunk to earn it: the reachable score stays as it was
    # The largest fused score this query can reach: entity and section terms count only
    # when the query has drugs / section cues to match.
    # A-7: the topic part tells the named drugs' own chunks apart; it is not a vote across
    # drugs (a chunk that mentions the drug and a topic word is not its leaflet's answer).
    topics = topic_terms(query, vocabulary) if weights.w_topic and drugs else []
    by_topic = settings.member_entity == "by_topic" and drugs and not reversal
    by_topic = by_topic and intent.workflow != "chemical"  # R-T2-9 picks by entity > 0
    member_topics = member_topic_terms(query, vocabulary) if by_topic else []
    fixed, brand = settings.fixed_combinations, settings.brand_products
    caps, brands, limits = entity_caps(
        nodes, query, vocabulary, fixed and not reversal, brand and not reversal)
    reachable = (
        weights.w_ce
        + weights.w_first
        + (weights.w_entity if drugs or conditions else 0.0)
        + (weights.w_sec if cues else 0.0)
        + (weights.w_topic if topics else 0.0)
    )
    fused = []
    for item, ce_value, first_value in zip(nodes, ce, first, strict=True):
        entity = entity_score(item.node, drugs or conditions, window)
        entity = min(entity, limits[len(fused)]) if limits else entity
        section = section_match_score(item.node, cues, settings.summary_window_chars)
        # A-7's topic part, read before A-15 scales the entity: the named drugs' own chunks
        topic = topic_match_score(item.node, topics) if entity >= 1.0 else 0.0
        if member_topics and entity:
            entity *= topic_match_score(item.node, member_topics)
        xdrug = cross_drug_penalty(item.node, protected, window)
        final = (
            weights.w_ce * float(ce_value)
            + weights.w_first * float(first_value)
            + weights.w_entity * entity
            + weights.w_sec * section
            + weights.w_topic * topic
            - weights.w_xdrug * xdrug
        )
        parts = {
            "ce": float(ce_value),
            "first": float(first_value),
            "entity": entity,
            "section": section,
            "xdrug": xdrug,
            "fused": final,
        }
        if topics:
            parts["topic"] = topic
        fused.append(_with_similarity(item, final / max(reachable, 1e-9), parts, score=final))
    taken = {
        "rerank_member_entity_by_topic": member_topics,
        "rerank_fixed_combination": caps,
        "rerank_brand_product": brands,
        "rerank_condition_entity": conditions,
    }
    return fused, [decision for decision, on in taken.items() if on]


async def _chemical_rescore(
    nodes: list[NodeWithScore],
    chemical_scores: Callable[[Sequence[NodeWithScore]], Awaitable[np.ndarray]],
) -> list[NodeWithScore]:
    # R-T2-9: only nodes with an entity score take part; each keeps the higher of its
    # similarity and its MolFormer cosine (both on the [0, 1] scale).
    candidates = [i for i, item in enumerate(nodes) if item.score_parts.get("entity", 0.0) > 0]
    if not candidates:
        return nodes
    cosines = np.asarray(await chemical_scores([nodes[i] for i in candidates]), dtype=np.float32)
    result = list(nodes)
    for index, cosine in zip(candidates, cosines.reshape(-1), strict=True):
        if float(cosine) > result[index].score_parts["similarity"]:
            result[index] = _with_similarity(
                result[index], float(cosine), {"molformer": float(cosine)}, score=float(cosine)
            )
    return result
