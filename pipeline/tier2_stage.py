"""The Tier-2 stage of one search (SPEC.md section 10, A-1..A-4): take the rerank window
of the first-stage list, back-fill names (R-T2-10), score it, and return the whole list
in its final order with a [0, 1] similarity on every node.

The window is reranked on every page (A-1), so page N always continues pages 1..N-1.
Past the window the first-stage order continues, its similarity the first-stage evidence
capped by the last similarity before it, so the similarity never rises down the list.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence

import numpy as np

from pipeline.context import SearchContext, Stage, bounded
from pipeline.embeddings import EmbeddingService, chemical_query_text
from pipeline.errors import BackendUnavailable
from pipeline.intent import smiles_tokens
from pipeline.pagination import rerank_window
from pipeline.ports import CrossEncoder, DocumentRegistry
from pipeline.rerank import (
    CrossEncoderScores,
    Tier2Outcome,
    first_stage_evidence,
    post_rrf_rerank,
    running_minimum,
)
from pipeline.schema import NodeWithScore, StageTrace
from pipeline.settings import PipelineSettings, RerankPolicy, Tier2Scorer
from pipeline.vocabulary import Vocabulary

__all__ = ["Tier2Stage", "is_structure_only"]

#: Words that may stand beside a structure in a query that asks for structures only.
_STRUCTURE_FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "for",
        "like",
        "as",
        "with",
        "similar",
        "similarity",
        "structure",
        "structures",
        "structural",
        "compound",
        "compounds",
        "molecule",
        "molecules",
        "smiles",
        "analog",
        "analogs",
        "analogue",
        "analogues",
        "find",
        "search",
        "show",
        "me",
        "substructure",
        "related",
        "close",
        "closest",
        "nearest",
        # "which drug has the structure <SMILES>", "what is this compound <SMILES>"
        "which",
        "what",
        "is",
        "this",
        "has",
        "have",
        "drug",
        "drugs",
        "medicine",
        "identify",
        "name",
    ]
)
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


def is_structure_only(query: str) -> bool:
    """True when ``query`` holds a structure (A-3) and otherwise only filler words
    ("structure similar to <SMILES>"): it is answered by structure similarity alone."""
    structures = smiles_tokens(query)
    if not structures:
        return False
    rest = query
    for token in structures:
        rest = rest.replace(token, " ")
    return all(word.lower() in _STRUCTURE_FILLER for word in _WORD_RE.findall(rest))


class Tier2Stage:
    """Final ordering of the first-stage list (A-1..A-4).

    Args:
        settings: pipeline settings (``tier2``, ``request``, ``stages``, ``budgets``).
        embeddings: query vectors (shared cache) and stored document vectors.
        vocabulary: entity vocabulary (boost terms, R-T2-5).
        cross_encoder: the cross-encoder port; used when ``tier2.scorer`` is
            ``cross_encoder``.
        registry: document registry for the name back-fill (R-T2-10); optional.
        chemical_role: the SMILES encoder role for R-T2-9; None skips it.
    """

    def __init__(
        self,
        settings: PipelineSettings,
        embeddings: EmbeddingService,
        vocabulary: Vocabulary,
        cross_encoder: CrossEncoder | None,
        registry: DocumentRegistry | None,
        chemical_role: str | None,
    ) -> None:
        self.settings = settings
        self.embeddings = embeddings
        self.vocabulary = vocabulary
        self.cross_encoder = cross_encoder
        self.registry = registry
        self.chemical_role = chemical_role

    async def rank(
        self, context: SearchContext, first_stage: list[NodeWithScore], trace: list[StageTrace]
    ) -> list[NodeWithScore]:
        """``first_stage`` (post-RRF, injected hits on top) in final order, every node with
        ``score_parts["similarity"]`` in [0, 1], non-increasing (A-2)."""
        settings = self.settings
        request = context.request
        stage = Stage("tier2", items_in=len(first_stage))
        if not settings.stages.tier2 or not request.rerank:
            outcome = await self._first_stage_order(context, first_stage)
            reason = "tier2_disabled" if not settings.stages.tier2 else "rerank_off"
            trace.append(stage.done(len(outcome.nodes), [reason]))
            return outcome.nodes
        window_size = rerank_window(context.page_size, request.top_k, settings)
        window = first_stage[:window_size]
        window = await self._backfill_names(window, trace, context.deadline)
        scorer = self._scorer()
        kb_names = context.scope.kb_names if context.scope is not None else ()
        try:
            outcome = await bounded(
                post_rrf_rerank(
                    window,
                    context.query,
                    context.intent,
                    vocabulary=self.vocabulary,
                    settings=settings.tier2.for_scope(kb_names),
                    cross_encoder=scorer,
                    chemical_scores=self._chemical_scores(context),
                    structure_only=is_structure_only(context.query),
                ),
                settings.budgets.rerank_ms,
                context.deadline,
            )
        except TimeoutError:  # R-T2-4: a scorer over budget falls back too
            outcome = await self._first_stage_order(context, window)
            outcome = Tier2Outcome(
                nodes=outcome.nodes,
                decisions=["rerank_t2_domain", "rerank_t2_fallback_existing_scores"],
                degraded=True,
                error=f"over budget ({settings.budgets.rerank_ms} ms)",
            )
        trace.append(
            stage.done(
                len(outcome.nodes),
                [
                    *outcome.decisions,
                    f"window:{window_size}",
                    f"scorer:{settings.tier2.scorer.value}",
                ],
                items_in=len(window),
                degraded=outcome.degraded,
                error=outcome.error,
            )
        )
        texts = [item for item in outcome.nodes if not item.node.is_image]
        rest = self._continue(texts, first_stage, window_size)
        # R-T2-1: image nodes, unscored (similarity 0), after every text node of the list.
        images = [item for item in outcome.nodes if item.node.is_image]
        return [
            *texts,
            *(i for i in rest if not i.node.is_image),
            *images,
            *(i for i in rest if i.node.is_image),
        ]

    async def _first_stage_order(
        self, context: SearchContext, nodes: list[NodeWithScore]
    ) -> Tier2Outcome:
        return await post_rrf_rerank(
            nodes,
            context.query,
            context.intent,
            vocabulary=self.vocabulary,
            settings=self.settings.tier2,
            cross_encoder=None,
            policy=RerankPolicy.NONE,
        )

    def _continue(
        self, window: Sequence[NodeWithScore], first_stage: Sequence[NodeWithScore], start: int
    ) -> list[NodeWithScore]:
        # past the window, first-stage order; similarity = first-stage evidence
        # at its global rank, capped by the window's last text similarity (an image
        # past the window is unscored like one inside it: 0).
        rest = first_stage[start:]
        if not rest:
            return []
        evidence = first_stage_evidence(first_stage, self.settings.tier2.first_stage_k)[start:]
        floor = min((item.score_parts.get("similarity", 1.0) for item in window), default=1.0)
        similarities = running_minimum([floor, *evidence.tolist()])[1:]
        return [
            item.model_copy(
                update={
                    "score_parts": {
                        **item.score_parts,
                        "first": float(value),
                        "similarity": 0.0
                        if item.node.is_image
                        else float(max(0.0, min(1.0, similarity))),
                    }
                }
            )
            for item, value, similarity in zip(rest, evidence, similarities, strict=True)
        ]

    def _scorer(self) -> CrossEncoderScores | None:
        if self.settings.tier2.scorer == Tier2Scorer.STORED_VECTORS:
            return self._stored_vector_scores
        return self._cross_encoder_scores if self.cross_encoder is not None else None

    async def _cross_encoder_scores(self, query: str, nodes: Sequence[NodeWithScore]) -> np.ndarray:
        assert self.cross_encoder is not None
        limit = self.settings.tier2.ce_max_chars
        texts = [item.node.text[:limit] for item in nodes]  # R-T2-3
        titles = [
            str(item.node.metadata.get("title") or item.node.metadata.get("document_name") or "")
            for item in nodes
        ]
        return await self.cross_encoder.score(query, texts, titles)

    async def _stored_vector_scores(self, query: str, nodes: Sequence[NodeWithScore]) -> np.ndarray:
        """(n,) float32: the score of the query and each node's stored vector where the
        node's collection was embedded by ``stored_vector_role``; NaN elsewhere.

        ``cosine`` collections: the cosine. The dense leg already computed it against the
        plan's query vector (``vector_similarity``, R-HYB-2): reused as is. Only a node
        without it (none in the default flow) costs a query encoding.

        ``ip`` collections (MedCPT: its model card scores by the raw inner product of
        query and article embeddings): the raw inner product of the stored vector and the
        query encoded by the collection's *query* encoder, not the clipped cosine in
        ``vector_similarity``; the pool's scores are min-max normalised afterwards
        (R-T2-3), so the unbounded scale does not matter. A node without its stored
        vector stays NaN (it takes its first-stage evidence).
        """
        role = self.settings.tier2.stored_vector_role
        scores = np.full(len(nodes), np.nan, dtype=np.float32)
        missing = []
        inner_product: dict[str, list[int]] = {}
        for index, item in enumerate(nodes):
            spec = self.settings.collections.get(item.collection or "")
            if spec is None or spec.document_encoder != role:
                continue
            if spec.metric == "ip":
                if item.node.embedding is not None:
                    inner_product.setdefault(spec.query_encoder, []).append(index)
            elif item.vector_similarity is not None:
                scores[index] = item.vector_similarity
            elif item.node.embedding is not None:
                missing.append(index)
        if missing:
            query_vector = np.asarray(await self.embeddings.query_vector(role, query))
            matrix = np.asarray([nodes[i].node.embedding for i in missing], dtype=np.float32)
            scores[missing] = matrix @ query_vector
        for query_role, indexes in inner_product.items():
            query_vector = np.asarray(await self.embeddings.query_vector(query_role, query))
            matrix = np.asarray([nodes[i].node.embedding for i in indexes], dtype=np.float32)
            scores[indexes] = matrix @ query_vector
        if not np.isfinite(scores).any():
            # No node of this scorer's space (a chemistry-only window): a constant score
            # leaves the order to the first stage and the entity / section terms.
            return np.zeros(len(nodes), dtype=np.float32)
        return scores

    def _chemical_scores(
        self, context: SearchContext
    ) -> Callable[[Sequence[NodeWithScore]], Awaitable[np.ndarray]] | None:
        role = self.chemical_role
        if role is None:
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
        self, nodes: list[NodeWithScore], trace: list[StageTrace], deadline: float
    ) -> list[NodeWithScore]:
        """R-T2-10: fill missing ``file_name`` / ``document_name`` from the registry, within
        the plan budget and the deadline (a slow registry leaves them missing)."""
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
        if self.registry is None or not missing:
            return nodes
        stage = Stage("backfill", items_in=len(missing))
        try:
            records = await bounded(
                self.registry.lookup_documents(missing), self.settings.budgets.plan_ms, deadline
            )
        except (OSError, BackendUnavailable, RuntimeError, TimeoutError) as error:
            trace.append(stage.failed(error))
            return nodes
        filled = []
        for item in nodes:
            record = records.get(str(item.node.metadata.get("document_id")))
            if record is None:
                filled.append(item)
                continue
            metadata = dict(item.node.metadata)
            metadata["file_name"] = metadata.get("file_name") or record.file_name
            metadata["document_name"] = metadata.get("document_name") or record.name
            node = item.node.model_copy(update={"metadata": metadata})
            filled.append(item.model_copy(update={"node": node}))
        trace.append(stage.done(len(records)))
        return filled
