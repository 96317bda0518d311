"""Query routing: which collections to search with which encoder (SPEC.md section 3).

``BiomedQueryRouteClassifier.route`` builds the plans of R-RT-3..9 from the intent and
the entities of the query, drops suppressed (R-RT-11) and disabled collections, and adds
the collections a scope's documents were ingested into (R-RT-12).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.context import Stage, bounded
from pipeline.errors import BackendUnavailable
from pipeline.intent import detect_retrieval_intent, smiles_tokens
from pipeline.ports import DocumentRegistry
from pipeline.schema import (
    CollectionQueryPlan,
    QueryRetrievalIntent,
    QueryRouteDecision,
    ScopeFilter,
    StageTrace,
)
from pipeline.settings import PipelineSettings
from pipeline.vocabulary import Entity, Vocabulary, default_vocabulary

__all__ = [
    "BiomedQueryRouteClassifier",
    "RouteSignals",
    "apply_scope_aware_union",
    "general_default_route",
    "scope_collections",
    "with_image_plans",
]


@dataclass(frozen=True)
class RouteSignals:
    """What routing reads from one query, computed once."""

    intent: QueryRetrievalIntent
    entities: tuple[Entity, ...]
    drugs: tuple[str, ...]
    has_smiles: bool
    radiology: bool
    pathology: bool


@dataclass
class _PlanList:
    top_k: int
    plans: list[CollectionQueryPlan] = field(default_factory=list)

    def add(self, collection: str, encoder: str) -> None:
        if all(plan.collection != collection or plan.encoder != encoder for plan in self.plans):
            self.plans.append(
                CollectionQueryPlan(collection=collection, encoder=encoder, top_k=self.top_k)
            )


def _keyword_pattern(keywords: Sequence[str]) -> re.Pattern[str] | None:
    if not keywords:
        return None
    alternatives = "|".join(re.escape(word) for word in sorted(keywords, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z])(?:{alternatives})(?![A-Za-z])", re.I)


class BiomedQueryRouteClassifier:
    """Route a query to collection plans (R-RT-1..12).

    Args:
        config: pipeline settings (routing flags, collection table, recall top-k).
        vocabulary: entity vocabulary; the shipped one when None.
    """

    def __init__(self, config: PipelineSettings, vocabulary: Vocabulary | None = None) -> None:
        self.config = config
        self.vocabulary = vocabulary or default_vocabulary()
        routing = config.routing
        self._radiology = _keyword_pattern(routing.radiology_keywords)
        self._pathology = _keyword_pattern(routing.pathology_keywords)

    def signals(self, query: str, intent: QueryRetrievalIntent | None = None) -> RouteSignals:
        """Intent, entities, drugs and keyword hits of ``query`` (R-RT-2 step 3)."""
        routing = self.config.routing
        intent = intent or detect_retrieval_intent(
            query,
            self.vocabulary,
            routing.chemical_collection,
            routing.extended_section_cues,
            routing.treatment_section_cue,
            routing.general_section_cue,
        )
        entities = tuple(self.vocabulary.match_entities(query))
        drugs = tuple(self.vocabulary.match_drug_entities(query))
        return RouteSignals(
            intent=intent,
            entities=entities,
            drugs=drugs,
            has_smiles=bool(smiles_tokens(query)),
            radiology=bool(self._radiology and self._radiology.search(query)),
            pathology=bool(self._pathology and self._pathology.search(query)),
        )

    def _query_encoder(self, collection: str) -> str:
        spec = self.config.collections.get(collection)
        return spec.query_encoder if spec else collection

    def route(
        self,
        query: str,
        plugin_namespace: str = "biomed",
        has_image: bool = False,
        route_mode: str = "hybrid",
        scope: ScopeFilter | None = None,
        scope_collections: Sequence[tuple[str, str]] = (),
        intent: QueryRetrievalIntent | None = None,
    ) -> QueryRouteDecision | None:
        """Plans for ``query``, or None when ``plugin_namespace`` is not ours (R-RT-1).

        Args:
            query: the assembled query.
            plugin_namespace: the request's namespace; only the configured one routes.
            has_image: an image is attached (R-RT-8).
            route_mode: ``hybrid``, ``text`` or ``visual``.
            scope: the request scope; when non-empty, ``scope_collections`` are added.
            scope_collections: ``(collection, encoder)`` pairs the scoped documents were
                ingested into, from the registry (R-RT-12).
            intent: the request's intent when already computed (R-INT-7).

        Returns:
            The decision; ``retrieval_hints["skipped_collections"]`` lists planned
            collections that the profile does not enable.
        """
        if plugin_namespace != self.config.namespace:
            return None
        routing = self.config.routing
        signals = self.signals(query, intent)
        plans = _PlanList(top_k=routing.collection_recall_top_k)
        chemical_task = signals.intent.workflow == "chemical" or signals.has_smiles
        chemical = routing.chemical_collection
        if chemical_task:  # R-RT-3
            plans.add(chemical, self._query_encoder(chemical))
        elif route_mode in ("text", "hybrid"):  # R-RT-4
            plans.add(
                routing.biomed_text_collection, self._query_encoder(routing.biomed_text_collection)
            )
            if routing.medcpt_dual_search:
                plans.add(
                    routing.medcpt_text_collection,
                    self._query_encoder(routing.medcpt_text_collection),
                )
            if routing.default_dual_text_search:
                plans.add(
                    routing.general_text_collection,
                    self._query_encoder(routing.general_text_collection),
                )
        related = any(entity.related_drugs for entity in signals.entities)
        if (
            routing.chemical_for_drug_queries
            and (signals.drugs or related)
            and not chemical_task
            and (chemical not in signals.intent.suppress_collections)
        ):  # R-RT-5
            plans.add(chemical, self._query_encoder(chemical))
        if signals.radiology:  # R-RT-6
            plans.add(
                routing.radiology_collection, self._query_encoder(routing.radiology_collection)
            )
        if signals.pathology:  # R-RT-7
            plans.add(
                routing.pathology_collection, self._query_encoder(routing.pathology_collection)
            )
        if (
            route_mode == "visual"
            or has_image
            or (signals.intent.workflow == "combination" and signals.drugs)
        ):  # R-RT-8
            plans.add(routing.visual_collection, self._query_encoder(routing.visual_collection))
        for collection in routing.exploratory_search_collections:  # R-RT-9
            plans.add(collection, self._query_encoder(collection))
        hints: dict[str, object] = {}
        if signals.drugs or signals.entities:  # R-RT-10
            hints["parent_doc_retrieval"] = False
        kept = [
            plan
            for plan in plans.plans
            if plan.collection not in signals.intent.suppress_collections  # R-RT-11
        ]
        decision = QueryRouteDecision(plans=tuple(kept), retrieval_hints=hints)
        if scope is not None and not scope.is_empty:  # R-RT-12
            # The registry records the document-side encoder; a query needs the
            # collection's query-side role (medcpt-article -> medcpt-query).
            query_side = [
                (
                    collection,
                    self._query_encoder(collection)
                    if collection in self.config.collections
                    else encoder,
                )
                for collection, encoder in scope_collections
            ]
            if routing.scope_union == "query_modalities":
                carried = {"text"} | ({"smiles"} if chemical_task else set())
                if has_image or route_mode == "visual":
                    carried.add("image")
                query_side = [
                    (collection, encoder)
                    for collection, encoder in query_side
                    if collection not in self.config.collections
                    or self.config.collections[collection].modality in carried
                ]
            decision = apply_scope_aware_union(
                decision,
                query_side,
                routing.collection_recall_top_k,
                suppressed=signals.intent.suppress_collections,
            )
        return self._only_enabled(decision)

    def _only_enabled(self, decision: QueryRouteDecision) -> QueryRouteDecision:
        enabled = self.config.enabled_collections()
        kept = tuple(plan for plan in decision.plans if plan.collection in enabled)
        skipped = [plan.collection for plan in decision.plans if plan.collection not in enabled]
        hints = dict(decision.retrieval_hints)
        if skipped:
            hints["skipped_collections"] = skipped
        return QueryRouteDecision(plans=kept, retrieval_hints=hints)


def apply_scope_aware_union(
    decision: QueryRouteDecision,
    scope_collections: Sequence[tuple[str, str]],
    top_k: int,
    suppressed: Sequence[str] = (),
) -> QueryRouteDecision:
    """Add the ``(collection, encoder)`` pairs a scope's documents were ingested into
    (R-RT-12), after the existing plans, without duplicates, in the given order;
    suppressed collections stay out (R-RT-11)."""
    plans = _PlanList(top_k=top_k, plans=list(decision.plans))
    for collection, encoder in scope_collections:
        if collection not in suppressed:
            plans.add(collection, encoder)
    return QueryRouteDecision(plans=tuple(plans.plans), retrieval_hints=decision.retrieval_hints)


def general_default_route(settings: PipelineSettings) -> QueryRouteDecision:
    """R-RT-1: the general text collection alone, for a query of another namespace;
    no plans when the profile does not enable it."""
    routing = settings.routing
    spec = settings.enabled_collections().get(routing.general_text_collection)
    if spec is None:
        return QueryRouteDecision()
    return QueryRouteDecision(
        plans=(
            CollectionQueryPlan(
                collection=spec.name,
                encoder=spec.query_encoder,
                top_k=routing.collection_recall_top_k,
            ),
        )
    )


def with_image_plans(
    decision: QueryRouteDecision, settings: PipelineSettings
) -> QueryRouteDecision:
    """An uploaded image is searched image -> image in the medical image collections
    the profile enables (R-XM-2), beside the R-RT-8 visual plan: the radiology and
    pathology collections are appended (``collection_recall_top_k``) unless already
    planned; hints are kept."""
    plans = list(decision.plans)
    routing = settings.routing
    enabled = settings.enabled_collections()
    for name in (routing.radiology_collection, routing.pathology_collection):
        spec = enabled.get(name)
        if spec is not None and all(plan.collection != name for plan in plans):
            plans.append(
                CollectionQueryPlan(
                    collection=name,
                    encoder=spec.query_encoder,
                    top_k=routing.collection_recall_top_k,
                )
            )
    return QueryRouteDecision(plans=tuple(plans), retrieval_hints=decision.retrieval_hints)


async def scope_collections(
    registry: DocumentRegistry | None,
    scope: ScopeFilter | None,
    trace: list[StageTrace],
    budget_ms: float = float("inf"),
    deadline: float = float("inf"),
) -> list[tuple[str, str]]:
    """The ``(collection, encoder)`` pairs of the scope's documents from the registry
    (R-RT-12), traced as stage ``scope``; ``[]`` without a scope or registry, or when the
    registry fails or takes over ``budget_ms`` (ms) or past ``deadline``
    (``time.monotonic()`` s): the stage is then marked degraded, and the request goes on
    with the route alone rather than spend its time waiting for PostgreSQL."""
    if scope is None or registry is None:
        return []
    stage = Stage("scope", items_in=1)
    try:
        pairs = await bounded(registry.collections_for_scope(scope), budget_ms, deadline)
    except (OSError, BackendUnavailable, TimeoutError) as error:
        trace.append(stage.failed(error))
        return []
    trace.append(stage.done(len(pairs), [f"{c}/{e}" for c, e in pairs]))
    return list(pairs)
