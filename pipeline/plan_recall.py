"""Recall of one collection plan (SPEC.md section 1 step 4): expand the query for the
plan's encoder (section 4), encode, dense ANN + BM25 leg for hybrid collections (section
5), structure legs for SMILES collections (A-3), hybrid fusion and Tier-1 (section 6).

A plan that fails or runs out of its budget contributes no hits and a degraded trace
entry; it never fails the request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from pipeline import section_recall
from pipeline.context import SearchContext, Stage, Stopwatch, bounded
from pipeline.embeddings import EmbeddingService, chemical_query_text, is_smiles_role
from pipeline.errors import BackendUnavailable, InvalidInput, InvalidRequest
from pipeline.expansion import expand
from pipeline.fusion import merge_rrf
from pipeline.hybrid import hybrid_fuse_dense_sparse, with_vector_similarity
from pipeline.lexical import lexical_query_text, meets_minimum_should_match
from pipeline.pagination import plan_depth, rerank_window
from pipeline.ports import ImageEncoder, TextEncoder, VectorStore
from pipeline.rerank import tier1_rerank
from pipeline.reversal import fuse_reversal_hits, reversal_hits
from pipeline.schema import CollectionQueryPlan, ExpandedQuery, NodeWithScore, StageTrace
from pipeline.scoring import set_aside_sections, without_sections
from pipeline.settings import PipelineSettings
from pipeline.structure_search import query_structures, structure_recall
from pipeline.supplement import names_drug_terms
from pipeline.vocabulary import Vocabulary

__all__ = ["PlanRecall", "PlanResult", "query_structures"]

logger = logging.getLogger(__name__)


@dataclass
class PlanResult:
    """Hits of one plan plus its trace entry."""

    plan: CollectionQueryPlan
    hits: list[NodeWithScore]
    trace: StageTrace
    ok: bool


class PlanSkipped(Exception):
    """A plan that cannot run by design (no text tower, no encoder for the role)."""


class PlanRecall:
    """Runs one :class:`CollectionQueryPlan` against the store.

    Args:
        settings: pipeline settings.
        store: the vector store port.
        encoders: text encoder ports by role.
        image_encoders: image encoder ports by role.
        embeddings: the query-vector cache shared with the other stages.
        vocabulary: the entity vocabulary (expansion, SMILES of named drugs).
    """

    def __init__(
        self,
        settings: PipelineSettings,
        store: VectorStore,
        encoders: Mapping[str, TextEncoder],
        image_encoders: Mapping[str, ImageEncoder],
        embeddings: EmbeddingService,
        vocabulary: Vocabulary,
    ) -> None:
        self.settings = settings
        self.store = store
        self.encoders = encoders
        self.image_encoders = image_encoders
        self.embeddings = embeddings
        self.vocabulary = vocabulary
        #: A-28: scopes whose search within the indications found nothing
        self.sectionless = section_recall.SectionlessScopes()

    async def run(self, context: SearchContext, plan: CollectionQueryPlan) -> PlanResult:
        """The plan's hits, best first, within ``budgets.plan_ms``; failures degrade."""
        detail: dict[str, Any] = {"encoder": plan.encoder}
        stage = Stage(f"plan:{plan.collection}", detail=detail)

        def failed(decision: str, error: Exception | str) -> PlanResult:
            return PlanResult(plan, [], stage.failed(error, decision), ok=False)

        try:
            hits = await bounded(
                self._recall(context, plan, detail),
                self.settings.budgets.plan_ms,
                context.deadline,
            )
        except PlanSkipped as reason:
            return failed("plan_skipped", str(reason))
        except TimeoutError:
            return failed("plan_timeout", f"over budget ({self.settings.budgets.plan_ms} ms)")
        except (BackendUnavailable, InvalidInput, OSError, RuntimeError, ValueError) as error:
            logger.warning("plan %s/%s failed: %s", plan.collection, plan.encoder, error)
            return failed("plan_failed", error)
        decisions = detail.pop("decisions", [])
        return PlanResult(
            plan, hits, stage.done(len(hits), decisions, items_in=plan.top_k), ok=True
        )

    def dense_text(self, role: str, expanded: ExpandedQuery) -> str:
        """What ``role`` embeds for the query: SMILES for a SMILES encoder, else the
        (expanded, R-EXP-1) dense query."""
        if is_smiles_role(role, self.settings):
            return chemical_query_text(expanded.dense_query, self.vocabulary)
        return expanded.dense_query

    async def _query_vector(
        self, context: SearchContext, plan: CollectionQueryPlan, expanded: ExpandedQuery
    ) -> np.ndarray:
        spec = self.settings.collections[plan.collection]
        if spec.modality == "image":
            encoder = self.image_encoders.get(plan.encoder)
            if encoder is None:  # R-XM-3: never substitute another image model
                raise PlanSkipped(f"no image encoder for role {plan.encoder!r}")
            if context.image is not None:
                try:
                    return np.asarray(await encoder.encode_images([context.image]))[0]
                except InvalidInput as error:  # the client's bytes: a 422, not a quiet skip
                    raise InvalidRequest("image", f"cannot be read as an image: {error}") from error
            try:
                return np.asarray(await encoder.encode_texts([context.query]))[0]
            except InvalidInput as error:  # R-XM-2: UNI2 has no text tower
                raise PlanSkipped(str(error)) from error
        if plan.encoder not in self.encoders:
            raise PlanSkipped(f"no encoder for role {plan.encoder!r}")
        return await self.embeddings.query_vector(
            plan.encoder, self.dense_text(plan.encoder, expanded)
        )

    def _is_hybrid(self, collection: str) -> bool:
        configured = self.settings.hybrid.hybrid_text_collections
        if configured:  # R-HYB-4: the configured list wins
            return collection in configured
        spec = self.settings.collections.get(collection)
        return bool(spec and spec.hybrid)

    def depth(self, plan: CollectionQueryPlan, context: SearchContext) -> int:
        """Hits per leg (R-RT-2): at least the rerank window (R-REQ-2); independent of
        the page (A-1)."""
        top_k = context.request.top_k
        return plan_depth(plan.top_k, rerank_window(context.page_size, top_k, self.settings), top_k)

    async def _recall(
        self, context: SearchContext, plan: CollectionQueryPlan, detail: dict[str, Any]
    ) -> list[NodeWithScore]:
        stages = self.settings.stages
        expanded = expand(context.query, plan.encoder, self.vocabulary, context.intent)
        detail["dense_query"] = expanded.dense_query
        depth = self.depth(plan, context)
        spec = self.settings.collections[plan.collection]
        hybrid = (
            self._is_hybrid(plan.collection) and stages.lexical and self.settings.hybrid.lexical_leg
        )
        sections = self._recall_sections(plan.collection, spec.modality, context)
        clock = Stopwatch()
        # The BM25 leg and the structure look-up need no query vector: they run while the
        # query is encoded, which takes the encoder off the critical path.
        lexical = asyncio.ensure_future(
            self._lexical(plan.collection, depth, context, sections) if hybrid else _no_legs()
        )
        structural = asyncio.ensure_future(
            self._structure(plan.collection, depth, context)
            if spec.modality == "smiles"
            else _none_structure()
        )
        try:
            vector = await self._query_vector(context, plan, expanded)
            detail["encode_ms"] = clock.ms
            dense_hits = (
                await self._dense(plan.collection, vector, depth, context, sections)
                if stages.dense
                else []
            )
            (lexical_hits, reversal_leg), structure = await asyncio.gather(lexical, structural)
        finally:
            _settle(lexical, structural)
        detail["ann_ms"] = round(clock.ms - detail["encode_ms"], 3)

        def scored(hits: Iterable[NodeWithScore]) -> list[NodeWithScore]:
            return [with_vector_similarity(i, vector, plan.collection, spec.metric) for i in hits]

        should_match = self.settings.lexical.minimum_should_match
        lexical_hits = scored(
            item
            for item in lexical_hits
            if meets_minimum_should_match(context.query, item.node.text, should_match)
        )
        # the short query's own words matched these; the long question's need not
        reversal_leg = scored(reversal_leg)
        dense_hits = [
            item if item.collection else item.model_copy(update={"collection": plan.collection})
            for item in dense_hits
        ]
        aside = set_aside_sections(
            self.settings.hybrid.set_aside_sections, context.intent.section_cues
        )
        if aside:
            kept = [without_sections(hits, aside) for hits in (dense_hits, lexical_hits)]
            detail["set_aside"] = len(dense_hits) + len(lexical_hits) - sum(map(len, kept))
            dense_hits, lexical_hits = kept
            reversal_leg = without_sections(reversal_leg, aside)
        structure_hits, written = structure
        detail.update(
            dense_hits=len(dense_hits),
            lexical_hits=len(lexical_hits),
            structure_hits=len(structure_hits),
        )
        decisions = [f"recall_sections:{','.join(sections)}"] if sections else []
        if structure_hits:
            return self._fuse_structure(structure_hits, dense_hits, written, decisions, detail)
        candidates = merge_rrf([dense_hits, lexical_hits], self.settings.rrf.k)
        kb_names = context.scope.kb_names if context.scope is not None else ()
        if hybrid and stages.hybrid_fusion:  # R-HYB-1 over the RRF union of both legs
            names_drugs = names_drug_terms(
                context.query, self.vocabulary, self.settings.hybrid.fusion_by_kb_related_types
            )
            fusion = self.settings.hybrid.fusion_for(kb_names, names_drugs=names_drugs)
            weighting = self.settings.hybrid.term_weighting_for(kb_names, names_drugs=names_drugs)
            rescored = hybrid_fuse_dense_sparse(
                candidates, context.query, expanded.sparse_terms, context.alpha, weighting
            )
            if fusion == "rrf":
                candidates = merge_rrf(
                    [rescored, dense_hits, lexical_hits],
                    self.settings.rrf.k,
                    weights=(self.settings.hybrid.rrf_weight, 1.0, 1.0),
                )
            else:
                candidates = rescored
            decisions.append(f"hybrid_alpha:{context.alpha}:{fusion}:{weighting}")
            # A-44: R-HYB-1 reorders the legs' union; the short query's order survives it
            if reversal_leg and self.settings.hybrid.reversal_list:
                candidates = merge_rrf([candidates, reversal_leg], self.settings.rrf.k)
                decisions.append(f"reversal_list:{len(reversal_leg)}")
        if stages.tier1:
            clock = Stopwatch()
            candidates, tier1_decision = await tier1_rerank(
                candidates,
                plan.collection,
                context.intent,
                expanded.sparse_terms,
                self.settings.tier1,
                query_vector=lambda role: self.embeddings.query_vector(
                    role, self.dense_text(role, ExpandedQuery(dense_query=context.query))
                ),
                node_vectors=self.embeddings.node_vectors,
                kb_names=kb_names,
                query=context.query,
            )
            detail["tier1_ms"] = clock.ms
            decisions.append(tier1_decision)
        detail["decisions"] = decisions
        return candidates

    def _recall_sections(
        self, collection: str, modality: str, context: SearchContext
    ) -> tuple[str, ...]:
        """The sections both legs also search within (A-28); ``()`` for none, and for a
        scope remembered to have none of them."""
        if not self.settings.hybrid.section_recall or modality != "text":
            return ()
        named = section_recall.names_a_medicine(context.query, self.vocabulary)
        sections = section_recall.recall_sections(context.intent, named)
        return self.sectionless.keep(collection, context.scope, sections)

    async def _dense(
        self,
        collection: str,
        vector: np.ndarray,
        depth: int,
        context: SearchContext,
        sections: Sequence[str] = (),
    ) -> list[NodeWithScore]:
        # Stored vectors are needed only where a cosine is recomputed: Tier-1's re-sort
        # and the SMILES rescore (R-T2-9). Fetching them costs ~20 ms on Lite at 20k rows.
        spec = self.settings.collections.get(collection)
        with_vectors = (self.settings.stages.tier1 and self.settings.tier1.cosine_sort) or (
            spec is not None and spec.modality == "smiles"
        )
        key = section_recall.scope_key(collection, context.scope, sections)
        search = partial(self.store.search_dense, collection, vector, depth, context.scope)
        return await section_recall.leg_within_sections(
            partial(search, with_vectors=with_vectors),
            sections,
            depth,
            self.settings.rrf.k,
            # the dense leg finds a chunk of the sections wherever the scope has one
            found_any=partial(self.sectionless.record, key),
        )

    async def _lexical(
        self, collection: str, depth: int, context: SearchContext, sections: Sequence[str] = ()
    ) -> tuple[list[NodeWithScore], list[NodeWithScore]]:
        """The BM25 leg's hits (A-32's short query fused in) and the short query's own."""
        text = lexical_query_text(context.query, self.vocabulary, self.settings.lexical)
        search = partial(self.store.search_lexical, collection, text, depth, context.scope)
        hits = await section_recall.leg_within_sections(
            partial(search, with_vectors=True), sections, depth, self.settings.rrf.k
        )
        if not self.settings.lexical.reversal_leg:
            return hits, []

        def short(words: str) -> Awaitable[list[NodeWithScore]]:
            words = lexical_query_text(words, self.vocabulary, self.settings.lexical)
            return self.store.search_lexical(
                collection, words, depth, context.scope, with_vectors=True
            )

        extra = await reversal_hits(context.query, self.vocabulary, short)
        return fuse_reversal_hits(hits, extra, self.settings.rrf.k), extra

    async def _structure(
        self, collection: str, depth: int, context: SearchContext
    ) -> tuple[list[NodeWithScore], bool]:
        structures, written = query_structures(context.query, self.vocabulary)
        if not structures:
            return [], written
        hits = await structure_recall(
            self.store, collection, structures, depth, context.scope, neighbours=written
        )
        hits = [
            item.model_copy(update={"collection": item.collection or collection}) for item in hits
        ]
        return hits, written

    def _fuse_structure(
        self,
        structure_hits: Sequence[NodeWithScore],
        dense_hits: Sequence[NodeWithScore],
        written: bool,
        decisions: list[str],
        detail: dict[str, Any],
    ) -> list[NodeWithScore]:
        # an identical parent structure (Tanimoto 1.0; the exact InChIKey matches
        # come first) is rank 1; below it the fingerprint leg and the learned SMILES
        # embedding are fused by RRF. A structure the query wrote keeps its Tanimoto as
        # ``score_parts["structure"]`` on every copy (Tier-2 orders by it); one looked up
        # from a drug name does not (the text question decides the order).
        similarity = {item.node_id: float(item.score_parts["structure"]) for item in structure_hits}
        exact = [item for item in structure_hits if similarity[item.node_id] >= 1.0]
        exact_ids = {item.node_id for item in exact}
        similar = [item for item in structure_hits if item.node_id not in exact_ids]
        dense = [item for item in dense_hits if item.node_id not in exact_ids]
        fused = [*exact, *merge_rrf([similar, dense], self.settings.rrf.k)]
        decisions.append(f"structure_exact:{len(exact)}")
        detail["decisions"] = decisions
        result = []
        for item in fused:
            parts = {k: v for k, v in item.score_parts.items() if k != "structure"}
            if written and item.node_id in similarity:
                parts["structure"] = similarity[item.node_id]
            result.append(item.model_copy(update={"score_parts": parts}))
        return result


def _settle(*tasks: asyncio.Future[Any]) -> None:
    """Cancel legs still running after a failure; read the error of legs that failed, so
    that none is reported as never retrieved (the failure that ended the plan wins)."""
    for task in tasks:
        if not task.done():
            task.cancel()
        elif not task.cancelled():
            task.exception()


async def _no_legs() -> tuple[list[NodeWithScore], list[NodeWithScore]]:
    return [], []


async def _none_structure() -> tuple[list[NodeWithScore], bool]:
    return [], False
