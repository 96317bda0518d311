"""Entity-anchored supplementary recall (SPEC.md section 7, R-SUP-1..4).

Finds the documents whose *name* mentions the query's drugs in the PostgreSQL registry
(independent of file names), then runs a dense search scoped to those document ids.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from pipeline.context import SearchContext, Stage, bounded
from pipeline.errors import BackendUnavailable
from pipeline.hybrid import sparse_score
from pipeline.ports import DocumentRegistry, VectorStore
from pipeline.schema import NodeWithScore, QueryRetrievalIntent, ScopeFilter, StageTrace
from pipeline.scoring import entity_boost_score, set_aside_sections, without_sections
from pipeline.settings import PipelineSettings
from pipeline.vocabulary import Vocabulary
from pipeline.vocabulary_entities import EntityType

__all__ = [
    "SupplementResult",
    "names_drug_terms",
    "rank_supplement_hits",
    "resolve_drug_terms",
    "run_supplement_stage",
    "supplement_collections",
    "supplement_entity_anchored_hits",
]

QueryEncoder = Callable[[str, str], Awaitable[np.ndarray]]
"""``(encoder_role, collection) -> (d,) float32`` query vector for that plan."""


def resolve_drug_terms(query: str, vocabulary: Vocabulary, related_limit: int = 4) -> list[str]:
    """Drug terms for the name look-up (R-SUP-1): the query's own drugs; when it names
    none, the first matched entity's ``related_drugs[:related_limit]``. Ordered,
    de-duplicated. A drug the vocabulary knows always wins over related drugs (the
    q-exp-053 defect of the source)."""
    drugs = vocabulary.match_drug_entities(query)
    if not drugs:
        entities = vocabulary.match_entities(query)
        if entities:
            drugs = list(entities[0].related_drugs[:related_limit])
    return list(dict.fromkeys(drugs))


def names_drug_terms(
    query: str, vocabulary: Vocabulary, related_types: Sequence[EntityType] | None = None
) -> bool:
    """True when ``query`` names a drug, or an entity with related drugs whose
    ``semantic_type`` is in ``related_types`` (None: any type, A-13 as written: a class
    with members, a gene, a curated condition): the questions a kb's ``fusion_by_kb`` was
    chosen on (A-13; ``("gene",)`` is A-16's narrower gate). Unlike
    ``resolve_drug_terms`` it looks past the first entity ("headache after an SGLT2
    inhibitor" names a class)."""
    if vocabulary.match_drug_entities(query):
        return True
    return any(
        entity.related_drugs and (related_types is None or entity.semantic_type in related_types)
        for entity in vocabulary.match_entities(query)
    )


def name_terms_for(drugs: Sequence[str], vocabulary: Vocabulary, brand_limit: int = 3) -> list[str]:
    """Terms for the registry name look-up: each drug plus a few of its curated brand
    names, so a document named only by its brand ("Iressa") is found from "gefitinib"."""
    terms: list[str] = []
    for drug in drugs:
        terms.append(drug)
        entity = vocabulary.get(drug)
        if entity is not None:
            brands = [alias for alias in entity.aliases if alias[:1].isupper() and alias.isalpha()]
            terms.extend(brands[:brand_limit])
    return list(dict.fromkeys(term for term in terms if len(term) >= 3))


def supplement_collections(
    intent: QueryRetrievalIntent, settings: PipelineSettings
) -> list[tuple[str, str]]:
    """``(collection, query encoder)`` pairs to search (R-SUP-3): the chemical collection
    for the chemical workflow; otherwise biomedical text plus chemical unless suppressed.
    Collections the profile does not enable are left out."""
    routing = settings.routing
    if intent.workflow == "chemical":
        names = [routing.chemical_collection]
    else:
        names = [routing.biomed_text_collection, routing.chemical_collection]
    enabled = settings.enabled_collections()
    return [
        (name, enabled[name].query_encoder)
        for name in names
        if name in enabled and name not in intent.suppress_collections
    ]


def rank_supplement_hits(
    hits: Sequence[NodeWithScore],
    query: str,
    drug_terms: Sequence[str],
    settings: PipelineSettings,
) -> list[NodeWithScore]:
    """Rank supplement hits (R-SUP-4): ``2.0 * entity + lexical + 0.1 * dense``, best first.

    entity = ``entity_boost_score(metadata, drug_terms)`` (R-ENT-1); lexical =
    ``sparse_score(query, text, extra_terms=drug_terms)``; dense = the ANN similarity.
    """
    weights = settings.supplement
    ranked = []
    for item in hits:
        entity = entity_boost_score(item.node.metadata, drug_terms)
        lexical = sparse_score(query, item.node.text, drug_terms)
        dense = item.vector_similarity if item.vector_similarity is not None else item.score
        combined = (
            weights.entity_weight * entity
            + weights.lexical_weight * lexical
            + weights.dense_weight * dense
        )
        ranked.append(
            item.model_copy(
                update={"score": combined, "term_similarity": lexical, "vector_similarity": dense}
            )
        )
    ranked.sort(key=lambda item: item.score, reverse=True)
    return ranked


@dataclass
class SupplementResult:
    """Supplement hits plus what the trace reports."""

    hits: list[NodeWithScore] = field(default_factory=list)
    drug_terms: list[str] = field(default_factory=list)
    document_ids: list[str] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def supplement_entity_anchored_hits(
    query: str,
    intent: QueryRetrievalIntent,
    *,
    vocabulary: Vocabulary,
    registry: DocumentRegistry,
    store: VectorStore,
    encode_query: QueryEncoder,
    settings: PipelineSettings,
    scope: ScopeFilter | None = None,
    allowed_collections: Collection[str] | None = None,
) -> SupplementResult:
    """Entity-anchored supplementary recall (R-SUP-1..4).

    Drug terms (R-SUP-1) -> registry name look-up (R-SUP-2, ``ILIKE %term%``) -> per
    collection a dense search filtered to those document ids, limited to
    ``min(recall_top_k, max(len(doc_ids) * 4, 8))`` (R-SUP-3) -> ranking (R-SUP-4).
    ``allowed_collections`` narrows the searched collections (a request restricted to
    some collections).
    A collection whose search fails is skipped and named in ``errors``.
    """
    result = SupplementResult()
    if not settings.supplement.enabled:
        return result
    result.drug_terms = resolve_drug_terms(
        query, vocabulary, settings.supplement.related_drugs_limit
    )
    if not result.drug_terms:
        return result
    kb_names = list(scope.kb_names) if scope else []
    document_ids = await registry.lookup_document_ids_by_name_terms(
        name_terms_for(result.drug_terms, vocabulary), kb_names or None, settings.namespace
    )
    if scope is not None and scope.document_ids:
        allowed = set(scope.document_ids)
        document_ids = [doc_id for doc_id in document_ids if doc_id in allowed]
    document_ids = document_ids[: settings.supplement.max_document_ids]
    result.document_ids = document_ids
    if not document_ids:
        return result
    limit = min(
        settings.routing.collection_recall_top_k,
        max(
            len(document_ids) * settings.supplement.per_document_limit,
            settings.supplement.min_limit,
        ),
    )
    scoped = ScopeFilter(
        kb_names=tuple(kb_names),
        document_ids=tuple(document_ids),
        tags=scope.tags if scope else (),
    )

    async def search(collection: str, encoder: str) -> list[NodeWithScore]:
        vector = await encode_query(encoder, collection)
        # Stored vectors come along: Tier-2 scores injected hits from them.
        return await store.search_dense(collection, vector, limit, scoped, with_vectors=True)

    pairs = [
        (collection, encoder)
        for collection, encoder in supplement_collections(intent, settings)
        if allowed_collections is None or collection in allowed_collections
    ]
    outcomes = await asyncio.gather(
        *(search(collection, encoder) for collection, encoder in pairs), return_exceptions=True
    )
    hits: list[NodeWithScore] = []
    aside = set_aside_sections(settings.hybrid.set_aside_sections, intent.section_cues)
    for (collection, _encoder), outcome in zip(pairs, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            result.errors.append(f"{collection}: {type(outcome).__name__}: {outcome}")
            continue
        result.searched.append(collection)
        hits.extend(without_sections(outcome, aside))
    result.hits = rank_supplement_hits(hits, query, result.drug_terms, settings)
    return result


async def run_supplement_stage(
    context: SearchContext,
    *,
    registry: DocumentRegistry | None,
    store: VectorStore,
    vocabulary: Vocabulary,
    settings: PipelineSettings,
    encode_query: QueryEncoder,
) -> tuple[SupplementResult, StageTrace | None]:
    """The supplement stage of one request (SPEC.md section 1 step 5): the recall of
    :func:`supplement_entity_anchored_hits` within ``budgets.supplement_ms`` and the
    deadline, and its trace (None without a registry). Disabled, skipped (no entity
    intent) and failed runs return an empty result; a failure marks the trace degraded."""
    if registry is None:
        return SupplementResult(), None
    stage = Stage("supplement")
    if not settings.stages.supplement:
        return SupplementResult(), stage.done(decisions=["supplement_disabled"])
    if not context.intent.require_entity_match:
        # R-INJ-1 injects only for entity intents, so the recall would be thrown away.
        return SupplementResult(), stage.done(decisions=["supplement_skipped_no_entity_intent"])
    try:
        result = await bounded(
            supplement_entity_anchored_hits(
                context.query,
                context.intent,
                vocabulary=vocabulary,
                registry=registry,
                store=store,
                encode_query=encode_query,
                settings=settings,
                scope=context.scope,
                allowed_collections=context.request.collections,
            ),
            settings.budgets.supplement_ms,
            context.deadline,
        )
    except (TimeoutError, BackendUnavailable, OSError, RuntimeError, ValueError) as error:
        return SupplementResult(), stage.failed(error, "supplement_failed")
    searched = (f"searched:{c}" for c in result.searched)
    return result, stage.done(
        len(result.hits),
        [f"drug_terms:{','.join(result.drug_terms)}", *searched],
        items_in=len(result.document_ids),
        degraded=bool(result.errors),
        error="; ".join(result.errors) or None,
    )
