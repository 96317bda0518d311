"""``Retriever.search``: the whole retrieval flow of SPEC.md section 1, async.

The same object serves tests, evaluation and production: it only talks to the ports
(``pipeline/ports.py``). Plans run concurrently with each other and with the supplement;
every stage has a time budget, and a stage that fails or runs out of time degrades as
SPEC.md says and is recorded in the trace instead of failing the request.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

import numpy as np

from pipeline.context import SearchContext, Stage
from pipeline.embeddings import EmbeddingService
from pipeline.errors import BackendUnavailable, DeadlineExceeded
from pipeline.expansion import expand
from pipeline.fusion import dedupe_cross_collection, inject_supplement_candidates, merge_rrf
from pipeline.intent import detect_retrieval_intent
from pipeline.lay_names import glossed_lay_names
from pipeline.overdose import glossed_overdoses
from pipeline.pagination import assemble_response
from pipeline.plan_recall import PlanRecall, PlanResult
from pipeline.ports import RetrieverPorts
from pipeline.request_checks import check_request
from pipeline.routing import (
    BiomedQueryRouteClassifier,
    general_default_route,
    scope_collections,
    with_image_plans,
)
from pipeline.schema import (
    NodeWithScore,
    QueryRetrievalIntent,
    QueryRouteDecision,
    ScopeFilter,
    SearchRequest,
    SearchResponse,
    StageTrace,
)
from pipeline.settings import PipelineSettings
from pipeline.spelling import WordSpeller, default_speller
from pipeline.supplement import SupplementResult, run_supplement_stage
from pipeline.tier2_stage import Tier2Stage
from pipeline.vocabulary import Vocabulary, default_vocabulary

__all__ = ["PlanResult", "Retriever", "RetrieverPorts"]

logger = logging.getLogger(__name__)


class Retriever:
    """The retrieval pipeline over the ports.

    Args:
        settings: every tunable of SPEC.md (``PipelineSettings``).
        ports: store, registry, encoders, cross-encoder.
        vocabulary: the entity vocabulary; the shipped one when None.
        speller: reads misspelt words that are no names (A-19); the shipped one when None.
    """

    def __init__(
        self,
        settings: PipelineSettings,
        ports: RetrieverPorts,
        vocabulary: Vocabulary | None = None,
        speller: WordSpeller | None = None,
    ) -> None:
        self.settings = settings
        self.ports = ports
        self.vocabulary = vocabulary or default_vocabulary()
        self.speller = speller or default_speller()
        self.router = BiomedQueryRouteClassifier(settings, self.vocabulary)
        models = ports.models
        self.embeddings = EmbeddingService(models.encoders, settings)
        self.plans = PlanRecall(
            settings,
            ports.store,
            models.encoders,
            models.image_encoders,
            self.embeddings,
            self.vocabulary,
        )
        chemical_role = settings.tier1.encoders.get(settings.routing.chemical_collection)
        self.tier2 = Tier2Stage(
            settings,
            self.embeddings,
            self.vocabulary,
            models.cross_encoder,
            ports.registry,
            chemical_role if chemical_role in models.encoders else None,
        )

    # -- request checks -------------------------------------------------------------------

    def validate(self, request: SearchRequest, has_image: bool = False) -> None:
        """:func:`pipeline.request_checks.check_request` with this retriever's settings.

        Raises:
            InvalidRequest: naming the field that is out of range.
        """
        check_request(self.settings, request, has_image)

    # -- the flow -------------------------------------------------------------------------

    async def search(
        self,
        request: SearchRequest,
        image: bytes | None = None,
        deadline: float | None = None,
    ) -> SearchResponse:
        """Run SPEC.md section 1 for ``request`` and return one page of results.

        Args:
            request: the validated request model.
            image: image bytes for ``/v1/search/image`` (R-RT-8, R-XM-1..3).
            deadline: ``time.monotonic()`` value by which the answer is due; default now
                plus ``budgets.request_ms``.

        Raises:
            InvalidRequest: a configured bound is exceeded.
            BackendUnavailable: every plan failed (stores or models down).
            DeadlineExceeded: the deadline passed before results were assembled.
        """
        request = check_request(self.settings, request, has_image=image is not None)
        deadline = deadline or (time.monotonic() + self.settings.budgets.request_ms / 1000.0)
        trace: list[StageTrace] = []
        intent, query = self._intent(request.query, trace)
        scope = request.scope()
        scope = None if scope.is_empty else scope
        decision = await self._route(
            request, query, intent, scope, image is not None, trace, deadline
        )
        context = SearchContext(
            request=request,
            query=query,
            intent=intent,
            scope=scope,
            alpha=(
                request.vector_similarity_weight
                if request.vector_similarity_weight is not None
                else self.settings.hybrid.alpha
            ),
            page_size=request.page_size or self.settings.final_top_k,
            image=image,
            deadline=deadline,
        )
        with self.embeddings.request_scope():  # each query text encoded once per role
            succeeded, supplement = await self._recall(context, decision, trace)
            first_stage = self._merge(succeeded, supplement, intent, trace)[: request.top_k]
            ordered = await self.tier2.rank(context, first_stage, trace)
        self._check_deadline(deadline, "assembly")
        return assemble_response(context, decision, ordered, trace, self.settings)

    # -- stages ---------------------------------------------------------------------------

    def _intent(self, query: str, trace: list[StageTrace]) -> tuple[QueryRetrievalIntent, str]:
        """SPEC.md section 2, once per request (R-INT-7), and the question as every later
        stage reads it: with its misspelt drug names (A-12) and other misspelt words
        (A-19, ``pipeline.spelling``) corrected, the intent read from that text and the
        corrections kept, an overdose said in other words glossed as one (A-30,
        ``pipeline.overdose``), then its lay condition names glossed with the clinical
        name (A-25, ``pipeline.lay_names``). The entities found, the corrections and
        the text searched in the trace (``entities:a,b``, ``corrected:x→y``,
        ``searched_as:...``)."""
        stage = Stage("intent", items_in=1)
        corrections = tuple(self.vocabulary.corrections(query))
        searched = query
        if corrections and self.settings.routing.search_corrected_query:
            searched = self.vocabulary.corrected(query)
        if self.settings.routing.correct_misspelt_words:  # A-19, after the drug names
            searched, fixes = self.speller.corrected(searched, self.vocabulary)
            corrections += tuple(str(fix) for fix in fixes)
        if self.settings.routing.gloss_overdoses:  # A-30, read by the intent
            searched = glossed_overdoses(
                searched, self.vocabulary, self.settings.routing.gloss_class_overdoses
            )
        intent = detect_retrieval_intent(
            searched,
            self.vocabulary,
            self.settings.routing.chemical_collection,
            self.settings.routing.extended_section_cues,
            self.settings.routing.treatment_section_cue,
            self.settings.routing.general_section_cue,
        ).model_copy(update={"corrections": corrections})
        # A-25 after the intent: a gloss names the condition the question named, and its
        # words ask for no section ("morning sickness (nausea and vomiting of pregnancy)"
        # is no question about pregnancy warnings)
        if self.settings.routing.gloss_lay_names:
            searched = glossed_lay_names(searched, self.vocabulary)
        found = ",".join(entity.canonical for entity in self.vocabulary.match_entities(searched))
        decisions = [f"workflow:{intent.workflow}"]
        decisions += [f"entities:{found}"] if found else []
        decisions += [f"corrected:{correction}" for correction in corrections]
        decisions += [f"searched_as:{searched}"] if searched != query else []
        trace.append(stage.done(1, decisions))
        return intent, searched

    async def _route(
        self,
        request: SearchRequest,
        query: str,
        intent: QueryRetrievalIntent,
        scope: ScopeFilter | None,
        has_image: bool,
        trace: list[StageTrace],
        deadline: float,
    ) -> QueryRouteDecision:
        """SPEC.md section 3 for ``query`` (the question as the stages read it, A-12),
        then the request's own limits: the general default route for another namespace
        (R-RT-1), image plans for an upload, the ``collections`` restriction."""
        in_scope = await scope_collections(
            self.ports.registry, scope, trace, self.settings.budgets.plan_ms, deadline
        )
        stage = Stage("routing", items_in=1)
        decision = self.router.route(
            query,
            plugin_namespace=request.namespace,
            has_image=has_image,
            route_mode=request.route_mode,
            scope=scope,
            scope_collections=in_scope,
            intent=intent,
        )
        route_decisions = []
        if decision is None:  # R-RT-1: another namespace gets the general default route
            decision = general_default_route(self.settings)
            route_decisions.append("route_general_default")
        if has_image:
            decision = with_image_plans(decision, self.settings)
        if request.collections is not None:
            wanted = set(request.collections)
            decision = QueryRouteDecision(
                plans=tuple(p for p in decision.plans if p.collection in wanted),
                retrieval_hints=decision.retrieval_hints,
            )
            route_decisions.append(f"restricted_to:{','.join(sorted(wanted))}")
        stage.detail["hints"] = decision.retrieval_hints
        plans = (f"{p.collection}/{p.encoder}" for p in decision.plans)
        trace.append(stage.done(len(decision.plans), [*route_decisions, *plans]))
        return decision

    async def _recall(
        self, context: SearchContext, decision: QueryRouteDecision, trace: list[StageTrace]
    ) -> tuple[list[PlanResult], SupplementResult]:
        """Every plan and the supplement, concurrently (section 1 steps 4-5).

        Raises:
            BackendUnavailable: every plan failed.
        """
        plan_tasks = [self.plans.run(context, plan) for plan in decision.plans]
        supplement_task = self._run_supplement(context)
        if self.settings.parallel_plans:
            *plan_results, (supplement, supplement_trace) = await asyncio.gather(
                *plan_tasks, supplement_task
            )
        else:
            plan_results = [await task for task in plan_tasks]
            supplement, supplement_trace = await supplement_task
        trace.extend(result.trace for result in plan_results)
        if supplement_trace is not None:
            trace.append(supplement_trace)
        succeeded = [result for result in plan_results if result.ok]
        if plan_results and not succeeded:
            reasons = "; ".join(f"{r.plan.collection}: {r.trace.error}" for r in plan_results)
            raise BackendUnavailable(f"every retrieval plan failed ({reasons})")
        return succeeded, supplement

    async def _run_supplement(
        self, context: SearchContext
    ) -> tuple[SupplementResult, StageTrace | None]:
        async def encode_query(role: str, collection: str) -> np.ndarray:
            expanded = expand(context.query, role, self.vocabulary, context.intent)
            return await self.embeddings.query_vector(role, self.plans.dense_text(role, expanded))

        return await run_supplement_stage(
            context,
            registry=self.ports.registry,
            store=self.ports.store,
            vocabulary=self.vocabulary,
            settings=self.settings,
            encode_query=encode_query,
        )

    def _merge(
        self,
        succeeded: Sequence[PlanResult],
        supplement: SupplementResult,
        intent: QueryRetrievalIntent,
        trace: list[StageTrace],
    ) -> list[NodeWithScore]:
        lists = [result.hits for result in succeeded]
        stage = Stage("rrf", items_in=sum(len(h) for h in lists))
        merged = merge_rrf(lists, self.settings.rrf.k)  # R-RRF-1..4, R-RRF-6
        decisions = [f"rrf_k:{self.settings.rrf.k}", f"lists:{sum(1 for h in lists if h)}"]
        if len(succeeded) > 1:  # R-RRF-5
            before = len(merged)
            merged = dedupe_cross_collection(merged)
            decisions.append(f"rrf_dedupe:{before - len(merged)}")
        trace.append(stage.done(len(merged), decisions))
        stage = Stage("injection", items_in=len(merged))
        settings = self.settings.supplement
        if intent.require_entity_match and supplement.hits:  # R-INJ-1
            injected = inject_supplement_candidates(
                merged, supplement.hits, settings.inject_min_new, settings.inject_boost
            )
            trace.append(stage.done(len(injected), [f"injected:{len(injected) - len(merged)}"]))
            return injected
        trace.append(stage.done(len(merged), ["injection_skipped"]))
        return merged

    @staticmethod
    def _check_deadline(deadline: float, stage: str) -> None:
        if time.monotonic() > deadline:
            raise DeadlineExceeded(f"deadline passed before {stage}")
