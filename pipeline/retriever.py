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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from pipeline.embeddings import EmbeddingService, chemical_query_text, is_smiles_role
from pipeline.errors import BackendUnavailable, DeadlineExceeded, InvalidInput, InvalidRequest
from pipeline.expansion import expand
from pipeline.fusion import dedupe_cross_collection, inject_supplement_candidates, merge_rrf
from pipeline.hybrid import hybrid_fuse_dense_sparse
from pipeline.intent import detect_retrieval_intent
from pipeline.lexical import lexical_query_text, meets_minimum_should_match
from pipeline.pagination import (
    assemble_chunks,
    candidate_pool_size,
    doc_aggs,
    paginate,
    plan_depth,
    relevance,
    rerank_window_size,
    reranks_page,
)
from pipeline.ports import CrossEncoder, DocumentRegistry, ImageEncoder, TextEncoder, VectorStore
from pipeline.rerank import Tier2Outcome, post_rrf_rerank, tier1_rerank
from pipeline.routing import BiomedQueryRouteClassifier
from pipeline.schema import (
    CollectionQueryPlan,
    ExpandedQuery,
    NodeWithScore,
    QueryRetrievalIntent,
    QueryRouteDecision,
    ScopeFilter,
    SearchRequest,
    SearchResponse,
    StageTrace,
)
from pipeline.settings import PipelineSettings
from pipeline.supplement import SupplementResult, supplement_entity_anchored_hits
from pipeline.vocabulary import Vocabulary, default_vocabulary

__all__ = ["PlanResult", "Retriever", "RetrieverPorts"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class RetrieverPorts:
    """What the retriever talks to. ``encoders`` and ``image_encoders`` map roles to
    ports; a role the profile does not fill is simply absent."""

    store: VectorStore
    encoders: Mapping[str, TextEncoder]
    cross_encoder: CrossEncoder | None = None
    registry: DocumentRegistry | None = None
    image_encoders: Mapping[str, ImageEncoder] = field(default_factory=dict)


@dataclass
class PlanResult:
    """Hits of one plan plus its trace entry."""

    plan: CollectionQueryPlan
    hits: list[NodeWithScore]
    trace: StageTrace
    ok: bool


class _PlanSkipped(Exception):
    """A plan that cannot run by design (no text tower, no encoder for the role)."""


@dataclass
class _Context:
    request: SearchRequest
    query: str
    intent: QueryRetrievalIntent
    scope: ScopeFilter | None
    alpha: float
    depth_page: int
    page_size: int
    image: bytes | None
    deadline: float


class _Stopwatch:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def ms(self) -> float:
        return round((time.perf_counter() - self.start) * 1000.0, 3)


class Retriever:
    """The retrieval pipeline over the ports.

    Args:
        settings: every tunable of SPEC.md (``PipelineSettings``).
        ports: store, registry, encoders, cross-encoder.
        vocabulary: the entity vocabulary; the shipped one when None.
    """

    def __init__(
        self,
        settings: PipelineSettings,
        ports: RetrieverPorts,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        self.settings = settings
        self.ports = ports
        self.vocabulary = vocabulary or default_vocabulary()
        self.router = BiomedQueryRouteClassifier(settings, self.vocabulary)
        self.embeddings = EmbeddingService(ports.encoders, settings)

    # -- request checks -------------------------------------------------------------------

    def validate(self, request: SearchRequest) -> None:
        """Check the bounds that come from configuration (R-REQ-1).

        Raises:
            InvalidRequest: naming the field that is out of range.
        """
        limits = self.settings.request
        if len(request.query) > limits.max_query_chars:
            raise InvalidRequest(
                "query", f"longer than {limits.max_query_chars} characters ({len(request.query)})"
            )
        page_size = request.page_size or self.settings.final_top_k
        if page_size > limits.max_page_size:
            raise InvalidRequest("page_size", f"must be <= {limits.max_page_size}")
        if request.page > limits.max_page:
            raise InvalidRequest("page", f"must be <= {limits.max_page}")
        if request.top_k > limits.top_k:
            raise InvalidRequest("top_k", f"must be <= {limits.top_k}")
        if request.collections is not None:
            enabled = self.settings.enabled_collections()
            unknown = sorted(set(request.collections) - set(enabled))
            if unknown:
                raise InvalidRequest(
                    "collections",
                    f"unknown or disabled: {', '.join(unknown)}; enabled: {', '.join(enabled)}",
                )

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
        self.validate(request)
        budgets = self.settings.budgets
        deadline = deadline or (time.monotonic() + budgets.request_ms / 1000.0)
        trace: list[StageTrace] = []
        page_size = request.page_size or self.settings.final_top_k
        alpha = (
            request.vector_similarity_weight
            if request.vector_similarity_weight is not None
            else self.settings.hybrid.alpha
        )

        clock = _Stopwatch()
        intent = detect_retrieval_intent(
            request.query,
            self.vocabulary,
            self.settings.routing.chemical_collection,
            self.settings.routing.extended_section_cues,
        )
        trace.append(
            StageTrace(
                name="intent",
                ms=clock.ms,
                items_in=1,
                items_out=1,
                decisions=[f"workflow:{intent.workflow}"],
            )
        )

        scope = request.scope()
        scope = None if scope.is_empty else scope
        scope_collections = await self._scope_collections(scope, trace)

        clock = _Stopwatch()
        decision = self.router.route(
            request.query,
            plugin_namespace=request.namespace,
            has_image=image is not None,
            route_mode=request.route_mode,
            scope=scope,
            scope_collections=scope_collections,
            intent=intent,
        )
        route_decisions = []
        if decision is None:  # R-RT-1: another namespace gets the general default route
            decision = self._general_route()
            route_decisions.append("route_general_default")
        if image is not None:
            decision = self._with_image_plans(decision)
        if request.collections is not None:
            wanted = set(request.collections)
            decision = QueryRouteDecision(
                plans=tuple(p for p in decision.plans if p.collection in wanted),
                retrieval_hints=decision.retrieval_hints,
            )
            route_decisions.append(f"restricted_to:{','.join(sorted(wanted))}")
        trace.append(
            StageTrace(
                name="routing",
                ms=clock.ms,
                items_in=1,
                items_out=len(decision.plans),
                decisions=[
                    *route_decisions,
                    *(f"{p.collection}/{p.encoder}" for p in decision.plans),
                ],
                detail={"hints": decision.retrieval_hints},
            )
        )

        context = _Context(
            request=request,
            query=request.query,
            intent=intent,
            scope=scope,
            alpha=alpha,
            depth_page=request.page,
            page_size=page_size,
            image=image,
            deadline=deadline,
        )
        plan_results, supplement, supplement_trace = await self._recall(context, decision)
        trace.extend(result.trace for result in plan_results)
        if supplement_trace is not None:
            trace.append(supplement_trace)
        succeeded = [result for result in plan_results if result.ok]
        if plan_results and not succeeded:
            reasons = "; ".join(f"{r.plan.collection}: {r.trace.error}" for r in plan_results)
            raise BackendUnavailable(f"every retrieval plan failed ({reasons})")

        first_stage = self._merge(succeeded, supplement, intent, trace)[: request.top_k]
        ordered = await self._rerank(context, first_stage, trace)
        self._check_deadline(deadline, "assembly")

        clock = _Stopwatch()
        scored = [relevance(item, request.query, alpha) for item in ordered]
        threshold = (
            request.similarity_threshold
            if request.similarity_threshold is not None
            else self.settings.request.similarity_threshold
        )
        page = paginate(scored, request.page, page_size, threshold)
        chunks = assemble_chunks(page.items, request.query if request.highlight else None)
        trace.append(
            StageTrace(
                name="assembly",
                ms=clock.ms,
                items_in=len(ordered),
                items_out=len(chunks),
                decisions=[
                    f"threshold:{threshold}",
                    f"dropped_below_threshold:{page.dropped_by_threshold}",
                ],
            )
        )
        return SearchResponse(
            chunks=chunks,
            doc_aggs=doc_aggs(chunks),
            total=page.total,
            page=request.page,
            page_size=page_size,
            intent=intent,
            route=list(decision.plans),
            trace=trace,
        )

    # -- stages ---------------------------------------------------------------------------

    async def _scope_collections(
        self, scope: ScopeFilter | None, trace: list[StageTrace]
    ) -> list[tuple[str, str]]:
        if scope is None or self.ports.registry is None:
            return []
        clock = _Stopwatch()
        try:
            pairs = await self.ports.registry.collections_for_scope(scope)
        except (OSError, BackendUnavailable) as error:
            trace.append(
                StageTrace(
                    name="scope",
                    ms=clock.ms,
                    degraded=True,
                    error=f"{type(error).__name__}: {error}",
                )
            )
            return []
        trace.append(
            StageTrace(
                name="scope",
                ms=clock.ms,
                items_in=1,
                items_out=len(pairs),
                decisions=[f"{c}/{e}" for c, e in pairs],
            )
        )
        return list(pairs)

    def _general_route(self) -> QueryRouteDecision:
        routing = self.settings.routing
        spec = self.settings.enabled_collections().get(routing.general_text_collection)
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

    def _with_image_plans(self, decision: QueryRouteDecision) -> QueryRouteDecision:
        # An uploaded image is searched image -> image in the medical image collections
        # the profile enables (R-XM-2), beside the R-RT-8 visual plan.
        plans = list(decision.plans)
        routing = self.settings.routing
        enabled = self.settings.enabled_collections()
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

    async def _recall(
        self, context: _Context, decision: QueryRouteDecision
    ) -> tuple[list[PlanResult], SupplementResult, StageTrace | None]:
        plan_tasks = [self._run_plan_bounded(context, plan) for plan in decision.plans]
        supplement_task = self._run_supplement(context)
        if self.settings.parallel_plans:
            *plan_results, (supplement, supplement_trace) = await asyncio.gather(
                *plan_tasks, supplement_task
            )
        else:
            plan_results = [await task for task in plan_tasks]
            supplement, supplement_trace = await supplement_task
        return list(plan_results), supplement, supplement_trace

    async def _bounded(self, awaitable: Awaitable[T], budget_ms: float, deadline: float) -> T:
        remaining = deadline - time.monotonic()
        timeout = min(budget_ms / 1000.0, remaining)
        if timeout <= 0:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise TimeoutError("request deadline passed")
        return await asyncio.wait_for(awaitable, timeout)

    async def _run_plan_bounded(self, context: _Context, plan: CollectionQueryPlan) -> PlanResult:
        clock = _Stopwatch()
        detail: dict[str, Any] = {"encoder": plan.encoder}

        def failed(decision: str, error: str) -> PlanResult:
            trace = StageTrace(
                name=f"plan:{plan.collection}",
                ms=clock.ms,
                decisions=[decision],
                degraded=True,
                error=error,
                detail=detail,
            )
            return PlanResult(plan, [], trace, ok=False)

        try:
            hits = await self._bounded(
                self._run_plan(context, plan, detail),
                self.settings.budgets.plan_ms,
                context.deadline,
            )
        except _PlanSkipped as reason:
            return failed("plan_skipped", str(reason))
        except TimeoutError:
            return failed("plan_timeout", f"over budget ({self.settings.budgets.plan_ms} ms)")
        except (BackendUnavailable, InvalidInput, OSError, RuntimeError, ValueError) as error:
            logger.warning("plan %s/%s failed: %s", plan.collection, plan.encoder, error)
            return failed("plan_failed", f"{type(error).__name__}: {error}")
        trace = StageTrace(
            name=f"plan:{plan.collection}",
            ms=clock.ms,
            items_in=plan.top_k,
            items_out=len(hits),
            decisions=detail.pop("decisions", []),
            detail=detail,
        )
        return PlanResult(plan, hits, trace, ok=True)

    async def _plan_query_vector(
        self, context: _Context, plan: CollectionQueryPlan, expanded: ExpandedQuery
    ) -> np.ndarray:
        spec = self.settings.collections[plan.collection]
        if spec.modality == "image":
            encoder = self.ports.image_encoders.get(plan.encoder)
            if encoder is None:  # R-XM-3: never substitute another image model
                raise _PlanSkipped(f"no image encoder for role {plan.encoder!r}")
            if context.image is not None:
                return np.asarray(await encoder.encode_images([context.image]))[0]
            try:
                return np.asarray(await encoder.encode_texts([context.query]))[0]
            except InvalidInput as error:  # R-XM-2: UNI2 has no text tower
                raise _PlanSkipped(str(error)) from error
        if plan.encoder not in self.ports.encoders:
            raise _PlanSkipped(f"no encoder for role {plan.encoder!r}")
        return await self.embeddings.query_vector(
            plan.encoder, self._dense_text(plan.encoder, expanded)
        )

    def _dense_text(self, role: str, expanded: ExpandedQuery) -> str:
        if is_smiles_role(role, self.settings):
            return chemical_query_text(expanded.dense_query, self.vocabulary)
        return expanded.dense_query

    def _is_hybrid(self, collection: str) -> bool:
        configured = self.settings.hybrid.hybrid_text_collections
        if configured:  # R-HYB-4: the configured list wins
            return collection in configured
        spec = self.settings.collections.get(collection)
        return bool(spec and spec.hybrid)

    async def _run_plan(
        self, context: _Context, plan: CollectionQueryPlan, detail: dict[str, Any]
    ) -> list[NodeWithScore]:
        stages = self.settings.stages
        store = self.ports.store
        expanded = expand(context.query, plan.encoder, self.vocabulary, context.intent)
        detail["dense_query"] = expanded.dense_query
        depth = plan_depth(plan.top_k, context.depth_page, context.page_size, context.request.top_k)
        clock = _Stopwatch()
        vector = await self._plan_query_vector(context, plan, expanded)
        detail["encode_ms"] = clock.ms
        hybrid = (
            self._is_hybrid(plan.collection)
            and stages.lexical
            and (self.settings.hybrid.lexical_leg)
        )
        clock = _Stopwatch()
        dense_task = (
            store.search_dense(plan.collection, vector, depth, context.scope, with_vectors=True)
            if stages.dense
            else _empty()
        )
        lexical_task = (
            store.search_lexical(
                plan.collection,
                lexical_query_text(context.query, self.vocabulary, self.settings.lexical),
                depth,
                context.scope,
                with_vectors=True,
            )
            if hybrid
            else _empty()
        )
        dense_hits, lexical_hits = await asyncio.gather(dense_task, lexical_task)
        detail["ann_ms"] = clock.ms
        lexical_hits = [
            _with_vector_similarity(item, vector, plan.collection)
            for item in lexical_hits
            if meets_minimum_should_match(
                context.query, item.node.text, self.settings.lexical.minimum_should_match
            )
        ]
        dense_hits = [
            item.model_copy(update={"collection": plan.collection})
            if item.collection is None
            else item
            for item in dense_hits
        ]
        detail.update(dense_hits=len(dense_hits), lexical_hits=len(lexical_hits))
        decisions: list[str] = []
        candidates = merge_rrf([dense_hits, lexical_hits], self.settings.rrf.k)
        if hybrid and stages.hybrid_fusion:  # R-HYB-1 over the RRF union of both legs
            candidates = hybrid_fuse_dense_sparse(
                candidates, context.query, expanded.sparse_terms, context.alpha
            )
            decisions.append(f"hybrid_alpha:{context.alpha}")
        if stages.tier1:
            clock = _Stopwatch()
            candidates, tier1_decision = await tier1_rerank(
                candidates,
                plan.collection,
                context.intent,
                expanded.sparse_terms,
                self.settings.tier1,
                query_vector=lambda role: self.embeddings.query_vector(
                    role, self._dense_text(role, ExpandedQuery(dense_query=context.query))
                ),
                node_vectors=self.embeddings.node_vectors,
            )
            detail["tier1_ms"] = clock.ms
            decisions.append(tier1_decision)
        detail["decisions"] = decisions
        return candidates

    async def _run_supplement(
        self, context: _Context
    ) -> tuple[SupplementResult, StageTrace | None]:
        registry = self.ports.registry
        if not self.settings.stages.supplement or registry is None:
            return SupplementResult(), None
        clock = _Stopwatch()
        if not context.intent.require_entity_match:
            # R-INJ-1 injects only for entity intents, so the recall would be thrown away.
            return SupplementResult(), StageTrace(
                name="supplement", ms=clock.ms, decisions=["supplement_skipped_no_entity_intent"]
            )

        async def encode_query(role: str, collection: str) -> np.ndarray:
            expanded = expand(context.query, role, self.vocabulary, context.intent)
            return await self.embeddings.query_vector(role, self._dense_text(role, expanded))

        try:
            result = await self._bounded(
                supplement_entity_anchored_hits(
                    context.query,
                    context.intent,
                    vocabulary=self.vocabulary,
                    registry=registry,
                    store=self.ports.store,
                    encode_query=encode_query,
                    settings=self.settings,
                    scope=context.scope,
                    allowed_collections=context.request.collections,
                ),
                self.settings.budgets.supplement_ms,
                context.deadline,
            )
        except (TimeoutError, BackendUnavailable, OSError, RuntimeError, ValueError) as error:
            return SupplementResult(), StageTrace(
                name="supplement",
                ms=clock.ms,
                degraded=True,
                decisions=["supplement_failed"],
                error=f"{type(error).__name__}: {error}",
            )
        return result, StageTrace(
            name="supplement",
            ms=clock.ms,
            items_in=len(result.document_ids),
            items_out=len(result.hits),
            decisions=[
                f"drug_terms:{','.join(result.drug_terms)}",
                *(f"searched:{c}" for c in result.searched),
            ],
            degraded=bool(result.errors),
            error="; ".join(result.errors) or None,
        )

    def _merge(
        self,
        succeeded: Sequence[PlanResult],
        supplement: SupplementResult,
        intent: QueryRetrievalIntent,
        trace: list[StageTrace],
    ) -> list[NodeWithScore]:
        clock = _Stopwatch()
        lists = [result.hits for result in succeeded]
        merged = merge_rrf(lists, self.settings.rrf.k)  # R-RRF-1..4, R-RRF-6
        decisions = [f"rrf_k:{self.settings.rrf.k}", f"lists:{sum(1 for h in lists if h)}"]
        if len(succeeded) > 1:  # R-RRF-5
            before = len(merged)
            merged = dedupe_cross_collection(merged)
            decisions.append(f"rrf_dedupe:{before - len(merged)}")
        trace.append(
            StageTrace(
                name="rrf",
                ms=clock.ms,
                items_in=sum(len(h) for h in lists),
                items_out=len(merged),
                decisions=decisions,
            )
        )
        clock = _Stopwatch()
        settings = self.settings.supplement
        if intent.require_entity_match and supplement.hits:  # R-INJ-1
            injected = inject_supplement_candidates(
                merged, supplement.hits, settings.inject_min_new, settings.inject_boost
            )
            count = len(injected) - len(merged)
            trace.append(
                StageTrace(
                    name="injection",
                    ms=clock.ms,
                    items_in=len(merged),
                    items_out=len(injected),
                    decisions=[f"injected:{count}"],
                )
            )
            return injected
        trace.append(
            StageTrace(
                name="injection",
                ms=clock.ms,
                items_in=len(merged),
                items_out=len(merged),
                decisions=["injection_skipped"],
            )
        )
        return merged

    async def _rerank(
        self, context: _Context, first_stage: list[NodeWithScore], trace: list[StageTrace]
    ) -> list[NodeWithScore]:
        request = context.request
        clock = _Stopwatch()
        if not self.settings.stages.tier2:
            trace.append(
                StageTrace(
                    name="tier2",
                    ms=0.0,
                    items_in=len(first_stage),
                    items_out=len(first_stage),
                    decisions=["tier2_disabled"],
                )
            )
            return first_stage
        if not reranks_page(request.page, request.rerank, self.settings.request):
            reason = "rerank_off" if not request.rerank else "rerank_t2_skipped_page_beyond_limit"
            trace.append(
                StageTrace(
                    name="tier2",
                    ms=0.0,
                    items_in=len(first_stage),
                    items_out=len(first_stage),
                    decisions=[reason],
                )
            )
            return first_stage
        pool = candidate_pool_size(context.page_size, request.top_k, self.settings.request)
        window_size = rerank_window_size(pool, self.settings.tier2.max_candidates)
        window, rest = first_stage[:window_size], first_stage[window_size:]
        window = await self._backfill_names(window, trace)
        try:
            outcome = await self._bounded(
                post_rrf_rerank(
                    window,
                    context.query,
                    context.intent,
                    vocabulary=self.vocabulary,
                    settings=self.settings.tier2,
                    cross_encoder=self._cross_encoder_scores if self.ports.cross_encoder else None,
                    chemical_scores=self._chemical_scores(context),
                ),
                self.settings.budgets.rerank_ms,
                context.deadline,
            )
        except TimeoutError:  # R-T2-4: a cross-encoder over budget falls back too
            outcome = Tier2Outcome(
                nodes=window,
                decisions=["rerank_t2_domain", "rerank_t2_fallback_existing_scores"],
                degraded=True,
                error=f"over budget ({self.settings.budgets.rerank_ms} ms)",
            )
        trace.append(
            StageTrace(
                name="tier2",
                ms=clock.ms,
                items_in=len(window),
                items_out=len(outcome.nodes),
                decisions=[*outcome.decisions, f"window:{window_size}"],
                degraded=outcome.degraded,
                error=outcome.error,
            )
        )
        return [*outcome.nodes, *rest]

    async def _cross_encoder_scores(self, query: str, nodes: Sequence[NodeWithScore]) -> np.ndarray:
        assert self.ports.cross_encoder is not None
        limit = self.settings.tier2.ce_max_chars
        texts = [item.node.text[:limit] for item in nodes]  # R-T2-3
        titles = [
            str(item.node.metadata.get("title") or item.node.metadata.get("document_name") or "")
            for item in nodes
        ]
        return await self.ports.cross_encoder.score(query, texts, titles)

    def _chemical_scores(
        self, context: _Context
    ) -> Callable[[Sequence[NodeWithScore]], Awaitable[np.ndarray]] | None:
        role = self.settings.tier1.encoders.get(self.settings.routing.chemical_collection)
        if role is None or role not in self.ports.encoders:
            return None

        async def scores(nodes: Sequence[NodeWithScore]) -> np.ndarray:
            # R-T2-9 compares structures: only nodes that carry a SMILES are re-scored.
            query_vector = await self.embeddings.query_vector(
                role, chemical_query_text(context.query, self.vocabulary)
            )
            with_smiles = [i for i, item in enumerate(nodes) if item.node.metadata.get("smiles")]
            result = np.full(len(nodes), -np.inf, dtype=np.float32)
            if with_smiles:
                vectors = await self.embeddings.node_vectors(role, [nodes[i] for i in with_smiles])
                result[with_smiles] = vectors @ query_vector
            return result

        return scores

    async def _backfill_names(
        self, nodes: list[NodeWithScore], trace: list[StageTrace]
    ) -> list[NodeWithScore]:
        """R-T2-10: fill missing ``file_name`` / ``document_name`` from the registry."""
        registry = self.ports.registry
        missing = sorted(
            {
                str(item.node.metadata.get("document_id"))
                for item in nodes
                if item.node.metadata.get("document_id")
                and not (
                    item.node.metadata.get("file_name") and item.node.metadata.get("document_name")
                )
            }
        )
        if registry is None or not missing:
            return nodes
        clock = _Stopwatch()
        try:
            records = await registry.lookup_documents(missing)
        except (OSError, BackendUnavailable, RuntimeError) as error:
            trace.append(
                StageTrace(
                    name="backfill",
                    ms=clock.ms,
                    degraded=True,
                    error=f"{type(error).__name__}: {error}",
                )
            )
            return nodes
        filled = []
        for item in nodes:
            record = records.get(str(item.node.metadata.get("document_id")))
            if record is None:
                filled.append(item)
                continue
            metadata = dict(item.node.metadata)
            metadata.setdefault("file_name", record.file_name)
            metadata["file_name"] = metadata["file_name"] or record.file_name
            metadata["document_name"] = metadata.get("document_name") or record.name
            node = item.node.model_copy(update={"metadata": metadata})
            filled.append(item.model_copy(update={"node": node}))
        trace.append(
            StageTrace(name="backfill", ms=clock.ms, items_in=len(missing), items_out=len(records))
        )
        return filled

    @staticmethod
    def _check_deadline(deadline: float, stage: str) -> None:
        if time.monotonic() > deadline:
            raise DeadlineExceeded(f"deadline passed before {stage}")


async def _empty() -> list[NodeWithScore]:
    return []


def _with_vector_similarity(
    item: NodeWithScore, query_vector: np.ndarray, collection: str
) -> NodeWithScore:
    # A BM25 hit has no ANN score: its cosine comes from its stored vector (R-HYB-2).
    update: dict[str, Any] = {"collection": item.collection or collection}
    if item.node.embedding is not None and item.vector_similarity is None:
        cosine = float(np.dot(np.asarray(item.node.embedding, dtype=np.float32), query_vector))
        update["vector_similarity"] = min(1.0, max(0.0, cosine))
    return item.model_copy(update=update)
