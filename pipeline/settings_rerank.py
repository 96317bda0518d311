"""Settings of the rerank stages: the Tier-1 cosine rerank (R-T1-1..3) and the Tier-2
fused rerank (R-T2-1..11, A-2, A-4) with its policy, scorer, weight presets and weights.
Re-exported by ``pipeline.settings``.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, model_validator

from pipeline.settings_base import _Frozen, choice_for_scope

__all__ = [
    "TIER2_PRESETS",
    "CrossDrugTerms",
    "ProfileWeights",
    "RerankPolicy",
    "Tier1Settings",
    "Tier2Preset",
    "Tier2Scorer",
    "Tier2Settings",
    "preset_weights",
]


class RerankPolicy(StrEnum):
    """Tier-2 rerank policy (R-T2-11)."""

    DOMAIN = "domain"
    GENERAL = "general"
    NONE = "none"


class Tier1Settings(_Frozen):
    """Per-plan cosine rerank (R-T1-1..3)."""

    encoders: dict[str, str] = Field(
        default_factory=lambda: {"biomed_text": "pubmedbert", "chemical": "molformer"}
    )
    max_chars: int = Field(2048, ge=1)
    entity_window_chars: int = Field(512, ge=1)
    #: R-T1-3 re-sorts each plan's list by one encoder's cosine. Off keeps the plan's
    #: fused order (the entity filter still runs); profiles choose from the ablation.
    cosine_sort: bool = True
    #: R-T1-2's entity filter (the seed drops the candidates that do not name the
    #: question's entity; A-33 below ranks them last); on by default (the seed).
    entity_filter: bool = True
    #: Knowledge base -> entity filter on/off, for a kb whose own development set chose;
    #: applies when every kb of the request's scope names the same choice here.
    entity_filter_by_kb: dict[str, bool] = Field(default_factory=dict)
    #: A-31: a question that asks what reverses a drug (A-11, ``pipeline.reversal``), or
    #: says an overdose and asks what treats it (A-34), skips R-T1-2: its answer is
    #: another product, whose label may name the drug's class or its overdose, not the
    #: drug (naloxone's "opioid overdose" for fentanyl). True: the filter runs for it too
    #: (the seed).
    entity_filter_on_reversal: bool = False
    #: A-33: R-T1-2 puts the candidates that name the question's entity first and keeps
    #: the rest after them, in the plan's order: a question that names a drug as the
    #: cause ("topiramate knocks me out ... what other preventive treatments") or the
    #: one it left is answered by a label that need not name it. False drops the rest
    #: (the seed).
    entity_filter_keeps_rest: bool = True

    def entity_filter_for(self, kb_names: Sequence[str]) -> bool:
        """Whether R-T1-2 runs for a request scoped to ``kb_names`` (``()``: unscoped)."""
        return choice_for_scope(self.entity_filter, self.entity_filter_by_kb, kb_names)


class ProfileWeights(_Frozen):
    """Tier-2 fusion weights of one profile (R-T2-8, A-4). ``w_first`` weighs the
    first-stage evidence (rank in the post-RRF list, A-4); ``w_topic`` the share of the
    question's topic terms a chunk holds (A-7, ``pipeline.scoring.topic_terms``); the
    seed has neither (0.0)."""

    w_ce: float
    w_entity: float
    w_sec: float
    w_xdrug: float
    w_first: float = 0.0
    w_topic: float = 0.0


class Tier2Preset(StrEnum):
    """Named Tier-2 weight tables (A-4).

    ``seed``: the weights of SPEC.md R-T2-8, no first-stage term, written for a real MedCPT
    cross-encoder. ``tuned``: chosen by the development-set ablation for the offline
    stand-in scorer (configs/profiles/default.yaml says how).
    """

    SEED = "seed"
    TUNED = "tuned"


#: (w_ce, w_entity, w_sec, w_xdrug, w_first[, w_topic]) per workflow and preset.
TIER2_PRESETS: dict[Tier2Preset, dict[str, tuple[float, ...]]] = {
    Tier2Preset.SEED: {
        "default": (0.50, 0.25, 0.15, 2.0, 0.0),
        "regulatory": (0.30, 0.20, 0.35, 2.5, 0.0),
        "drug_entity": (0.35, 0.35, 0.10, 3.0, 0.0),
        "chemical": (0.25, 0.40, 0.10, 3.0, 0.0),
        "combination": (0.35, 0.35, 0.10, 2.5, 0.0),
    },
    # The seed's table with w_ce halved and a first-stage term of 0.25 (first_stage_k
    # 10): the best of 19 variants on the even half of the development sets
    # (scripts/tune_ranking.py, scripts/ranking_variants.yaml; README "Ranking").
    # General questions: w_ce 0, w_first 0.5. The dev sets cannot tell 0, 0.125 and 0.25
    # apart (equal Hit@5 / MRR on both halves), and with the stored-vector scorer the ce
    # part is the dense leg's own cosine, already counted in the first stage.
    # w_topic 0.1: of 0, 0.1, 0.2, 0.3, 0.5 on the even half the smallest with the
    # best MRR@10 (drug_kb_dev_more 0.934 -> 0.961, the others equal); odd half 0.929 ->
    # 0.926 (a question already missed moves from rank 7 to 10), the others equal
    # (scripts/ranking_topic_variants.yaml, eval-results/2026-12-04-topic/).
    # drug_entity w_sec 0.2: of 0.1, 0.2, 0.3, 0.5 on the even half the smallest with the
    # best MRR@10 (drug_kb_dev_more 0.947 -> 0.974, the others equal), odd half equal
    # (scripts/ranking_section_variants.yaml, eval-results/2026-12-04-section-weight/).
    Tier2Preset.TUNED: {
        "default": (0.0, 0.25, 0.15, 2.0, 0.5, 0.1),
        "regulatory": (0.15, 0.20, 0.35, 2.5, 0.25, 0.1),
        "drug_entity": (0.175, 0.35, 0.20, 3.0, 0.25, 0.1),
        "chemical": (0.125, 0.40, 0.10, 3.0, 0.25, 0.1),
        "combination": (0.175, 0.35, 0.10, 2.5, 0.25, 0.1),
    },
}


def preset_weights(preset: Tier2Preset | str) -> dict[str, ProfileWeights]:
    """The weight table of ``preset`` (A-4)."""
    table = TIER2_PRESETS[Tier2Preset(preset)]
    fields = ("w_ce", "w_entity", "w_sec", "w_xdrug", "w_first", "w_topic")
    return {
        name: ProfileWeights(**dict(zip(fields, row, strict=False)))
        for name, row in table.items()
    }


def _default_profile_weights() -> dict[str, ProfileWeights]:
    return preset_weights(Tier2Preset.SEED)


class CrossDrugTerms(StrEnum):
    """Which drugs the R-T2-7 cross-drug penalty protects.

    ``query_drugs`` (the default since 2026-12-04, an amendment): only the drugs the
    question names; a class or gene question penalises no chunk (its related drugs
    still earn the entity score). ``boost_terms`` (the seed's R-T2-7): the R-T2-5 boost
    terms, which for a question naming no drug are the related drugs of its class or
    gene (``anticoagulant``: the members the leaflets list, apixaban ... rivaroxaban), so
    a chunk about a member the list leaves out (warfarin) was penalised below the
    threshold. Same Hit@5 / MRR@10 on the three dev sets
    (``eval-results/2026-12-04-cross-drug/``).

    ``query_drugs_in_pool`` (the default, a second amendment): the named drugs that are a
    ``primary_drugs`` value of some candidate in the window. A drug with no document of
    its own in the kb ("atorvastatin muscle pain" on the demo) has nothing to protect:
    ``query_drugs`` penalised every candidate, the fused scores fell to 0 and the page
    came back empty at the default threshold, though leaflets mention atorvastatin.
    """

    BOOST_TERMS = "boost_terms"
    QUERY_DRUGS = "query_drugs"
    QUERY_DRUGS_IN_POOL = "query_drugs_in_pool"


class Tier2Scorer(StrEnum):
    """Where Tier-2's ``ce`` part comes from.

    ``cross_encoder``: the cross-encoder port (R-T2-3). ``stored_vectors``: the cosine (the
    raw inner product on an ``ip`` collection, as its model card scores) of the query
    vector and the stored document vector of ``stored_vector_role`` (the
    offline stand-in scorer is that same bi-encoder, so this is its score without
    re-encoding a single candidate); nodes without such a vector take their first-stage
    evidence instead.
    """

    CROSS_ENCODER = "cross_encoder"
    STORED_VECTORS = "stored_vectors"


class Tier2Settings(_Frozen):
    """Fused rerank (R-T2-1..11, A-2, A-4). ``preset`` names the weight table
    (``seed``: R-T2-8); ``profile_weights`` given in config overrides it."""

    policy: RerankPolicy = RerankPolicy.DOMAIN
    preset: Tier2Preset = Tier2Preset.SEED
    profile_weights: dict[str, ProfileWeights] = Field(default_factory=_default_profile_weights)
    scorer: Tier2Scorer = Tier2Scorer.CROSS_ENCODER
    stored_vector_role: str = "pubmedbert"
    #: k of the first-stage evidence ``(k + 1) / (k + rank)`` (A-4); rank from 1.
    first_stage_k: float = Field(10.0, gt=0.0)
    ce_max_chars: int = Field(2048, ge=1)
    ce_max_tokens: int = Field(512, ge=8)
    entity_window_chars: int = Field(512, ge=1)
    summary_window_chars: int = Field(200, ge=1)
    related_drugs_limit: int = Field(6, ge=0)
    #: A-51: how many members of a drug class (an entity typed ``class``) are boost terms,
    #: in the class's order; R-T2-5's ``related_drugs_limit`` for the other types. A class
    #: is its members: past the limit, a member's own label takes R-T2-7's cross-drug
    #: penalty ("benzodiazepine for insomnia": temazepam is the ninth member). It counts for
    #: the leaflets' broad classes too ("antibiotics", "antivirals").
    class_members_limit: int = Field(12, ge=0)
    #: entity types whose related drugs are boost terms of a question that names no drug
    #: (R-T2-5); None: every type (the seed)
    related_drug_types: tuple[str, ...] | None = None
    #: How a chunk of a related drug (a boost term of a question that names no drug but a
    #: class, gene or condition, R-T2-5) earns the entity score. ``whole``: as a named
    #: drug's chunk does (the seed). ``by_topic`` (A-15): times the fraction of the
    #: question's topic words (``pipeline.scoring.member_topic_terms``) the chunk holds:
    #: the class names its members, the question's condition chooses among them
    #: ("antifungal for toenail fungus" is not answered by every antifungal alike). Not
    #: in the chemical workflow (R-T2-9 picks its nodes by entity score).
    member_entity: Literal["whole", "by_topic"] = "whole"
    #: A-36: a question that names no drug and no class or condition with related drugs
    #: has no boost terms, so no chunk earns the entity score; with this on, a question
    #: that names conditions and no medicine has them for its terms (``pipeline.scoring.
    #: condition_terms``: "what treats drug-induced methemoglobinemia", the methylene
    #: blue label names it), where a chunk of the window names one; not in the chemical
    #: workflow (R-T2-9 picks by entity score). ``false``: no entity score for such a
    #: question (the seed).
    condition_entity: bool = False
    #: Knowledge base -> ``condition_entity``, for a request whose every kb names the
    #: same choice here (``pipeline.settings_base.choice_for_scope``).
    condition_entity_by_kb: dict[str, bool] = Field(default_factory=dict)
    cross_drug_terms: CrossDrugTerms = CrossDrugTerms.QUERY_DRUGS_IN_POOL
    #: A-10: a question that names two or more drugs with their own chunks in the window
    #: ("gleevec vs tasigna") gets each one's best chunk in its first places, in fused
    #: order, before the rest; ``false`` orders by the fused score alone (the seed). No
    #: dev-set question moved (their multi-drug questions already led with both).
    cover_named_drugs: bool = True
    #: A-11: a question that asks what reverses a drug ("antidote for dabigatran"), or
    #: since A-34 says an overdose and asks what treats it, scores entity 1.0 for other
    #: products' chunks that name the drug (Praxbind) or its class's overdose (Narcan's
    #: "opioid overdose", A-34) and 0.5 for the drug's own, scores no section part
    #: ("overdose" names the case) and skips A-10 (``pipeline.reversal``); ``false``:
    #: R-T2-5..6 as for any question (the seed).
    reversal_agents: bool = True
    #: A-22: a question that names the substances of a fixed combination in the window
    #: (no comparison, no "can I take X with Y") caps every other chunk's entity score at
    #: 0.75 (``pipeline.drug_coverage.combination_entity_caps``); ``false``: R-T2-5.
    fixed_combinations: bool = True
    #: A-38: a question that names a product by its brand, where a chunk of the window is
    #: that product's, caps the other products of its substance at entity 0.75
    #: (``pipeline.brand_products.brand_entity_caps``); ``false``: R-T2-5.
    brand_products: bool = True
    max_candidates: int = Field(128, ge=1, description="cap on pairs sent to the cross-encoder")

    @model_validator(mode="before")
    @classmethod
    def _weights_from_preset(cls, data: Any) -> Any:
        # The preset fills the table; weights written in config win, per workflow.
        if isinstance(data, dict) and "preset" in data:
            table = preset_weights(data["preset"])
            given = data.get("profile_weights") or {}
            data = {**data, "profile_weights": {**table, **given}}
        return data

    def weights_for(self, workflow: str) -> ProfileWeights:
        """Weights of ``workflow``; ``general`` and unknown workflows use ``default``."""
        return self.profile_weights.get(workflow, self.profile_weights["default"])

    def for_scope(self, kb_names: Sequence[str]) -> Tier2Settings:
        """These settings with ``condition_entity`` chosen for a request scoped to
        ``kb_names`` (``()``: unscoped; A-36)."""
        chosen = choice_for_scope(self.condition_entity, self.condition_entity_by_kb, kb_names)
        if chosen == self.condition_entity:
            return self
        return self.model_copy(update={"condition_entity": chosen})
