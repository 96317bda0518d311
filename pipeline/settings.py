"""Typed settings for the retrieval pipeline: every number of SPEC.md, with the spec's default.

Parsed once at the edge (CLI, ``build_app``) from YAML and handed to the pipeline as
constructor arguments; nothing in ``pipeline/`` reads the environment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "TIER2_PRESETS",
    "CollectionSpec",
    "HybridSettings",
    "IngestSettings",
    "LexicalSettings",
    "PipelineSettings",
    "ProfileWeights",
    "RequestSettings",
    "RerankPolicy",
    "RoutingSettings",
    "RrfSettings",
    "StageBudgets",
    "StageSwitches",
    "SupplementSettings",
    "Tier1Settings",
    "Tier2Preset",
    "Tier2Scorer",
    "Tier2Settings",
    "choice_for_scope",
    "deep_merge",
    "default_collections",
    "load_yaml",
    "preset_weights",
]

T = TypeVar("T")


def choice_for_scope(default: T, by_kb: Mapping[str, T], kb_names: Sequence[str]) -> T:
    """A per-kb setting for a request scoped to ``kb_names``: the kbs' own choice when
    every kb of the scope names the same one in ``by_kb``, else ``default`` (also for an
    unscoped request, ``kb_names == ()``)."""
    chosen = {by_kb.get(kb) for kb in kb_names}
    if kb_names and len(chosen) == 1 and None not in chosen:
        return chosen.pop()  # type: ignore[return-value]
    return default


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RerankPolicy(StrEnum):
    """Tier-2 rerank policy (R-T2-11)."""

    DOMAIN = "domain"
    GENERAL = "general"
    NONE = "none"


class CollectionSpec(_Frozen):
    """One vector collection (SPEC.md section 0).

    ``query_encoder`` / ``document_encoder`` are encoder *roles*; the model profile decides
    which weights fill a role. ``modality`` is what the document side embeds: ``text``,
    ``smiles`` or ``image``. ``hybrid`` adds the BM25 leg and R-HYB-1 fusion (R-HYB-4).
    """

    name: str
    query_encoder: str
    document_encoder: str
    modality: str = "text"
    hybrid: bool = False
    enabled: bool = True


def default_collections() -> dict[str, CollectionSpec]:
    """The seven collections of SPEC.md section 0, keyed by their logical name."""
    rows = [
        ("biomed_text", "pubmedbert", "pubmedbert", "text", True),
        ("medcpt_text", "medcpt-query", "medcpt-article", "text", True),
        ("general_text", "general-text", "general-text", "text", False),
        ("chemical", "molformer", "molformer", "smiles", False),
        ("radiology", "biomedclip", "biomedclip", "image", False),
        ("pathology", "uni2", "uni2", "image", False),
        ("visual", "general-vl", "general-vl", "image", False),
    ]
    return {
        name: CollectionSpec(
            name=name,
            query_encoder=query,
            document_encoder=document,
            modality=modality,
            hybrid=hybrid,
        )
        for name, query, document, modality, hybrid in rows
    }


class RoutingSettings(_Frozen):
    """Routing configuration (R-RT-2..9). Collection names are logical keys of
    ``PipelineSettings.collections``."""

    default_dual_text_search: bool = False
    medcpt_dual_search: bool = False
    exploratory_search_collections: tuple[str, ...] = ()
    collection_recall_top_k: int = Field(20, ge=1, le=1024)
    #: A-5: section cues from the table of section words, lay phrasing included (see
    #: intent.section_cues_for); False is R-INT-6 as the seed wrote it.
    extended_section_cues: bool = True
    #: R-RT-5: a text question that names a drug also searches the chemical collection.
    #: False routes it to text only (a structure question still goes to chemistry, R-RT-3).
    chemical_for_drug_queries: bool = True
    #: R-RT-12: ``all`` adds every collection the scope's documents are in (the seed);
    #: ``query_modalities`` only those whose modality the question carries: text
    #: collections always, SMILES collections for a structure or chemical question,
    #: image collections with an image or in visual mode.
    scope_union: Literal["all", "query_modalities"] = "all"
    biomed_text_collection: str = "biomed_text"
    medcpt_text_collection: str = "medcpt_text"
    general_text_collection: str = "general_text"
    chemical_collection: str = "chemical"
    radiology_collection: str = "radiology"
    pathology_collection: str = "pathology"
    visual_collection: str = "visual"
    radiology_keywords: tuple[str, ...] = (
        "radiology",
        "radiograph",
        "x-ray",
        "xray",
        "chest film",
        "ct scan",
        "computed tomography",
        "mri",
        "magnetic resonance",
        "ultrasound",
        "mammogram",
        "mammography",
        "pet scan",
        "imaging finding",
        "opacity",
        "nodule on ct",
    )
    pathology_keywords: tuple[str, ...] = (
        "pathology",
        "histology",
        "histopathology",
        "biopsy slide",
        "h&e",
        "whole slide",
        "tissue section",
        "immunohistochemistry",
        "ihc stain",
        "cytology",
    )


class HybridSettings(_Frozen):
    """Dense + sparse fusion (R-HYB-1..4). ``alpha`` is the dense weight; a request's
    ``vector_similarity_weight`` overrides it (R-REQ-1 names the same knob)."""

    alpha: float = Field(0.3, ge=0.0, le=1.0)
    hybrid_text_collections: tuple[str, ...] = ("biomed_text", "medcpt_text")
    lexical_leg: bool = True
    #: ``replace``: the plan is ordered by the R-HYB-1 score (the seed). ``rrf``: the
    #: R-HYB-1 ranking joins the dense and BM25 rankings as a third RRF vote, so it
    #: refines the legs' evidence instead of replacing it (A-4's rule, one stage earlier).
    fusion: Literal["replace", "rrf"] = "replace"
    #: The R-HYB-1 ranking's weight in ``rrf`` fusion (each leg weighs 1.0): weighted
    #: RRF; large weights approach ``replace`` with the legs breaking its ties.
    rrf_weight: float = Field(1.0, ge=0.0, le=100.0)
    #: Knowledge base -> fusion, for a kb whose own development set chose differently.
    #: Applies when every kb of the request's scope names the same fusion here.
    fusion_by_kb: dict[str, Literal["replace", "rrf"]] = Field(default_factory=dict)

    def fusion_for(self, kb_names: Sequence[str]) -> Literal["replace", "rrf"]:
        """The fusion of a request scoped to ``kb_names`` (``()``: unscoped)."""
        return choice_for_scope(self.fusion, self.fusion_by_kb, kb_names)


class LexicalSettings(_Frozen):
    """BM25 leg (R-REQ-6): domain dictionary, synonyms, section-title weight, minimum
    should match."""

    title_weight: int = Field(2, ge=1, le=5)
    minimum_should_match: float = Field(0.0, ge=0.0, le=1.0)
    synonyms: bool = True


class RrfSettings(_Frozen):
    """Reciprocal rank fusion (R-RRF-1)."""

    k: int = Field(60, ge=1)


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
    #: R-T1-2's entity filter drops candidates; on by default (the seed).
    entity_filter: bool = True
    #: Knowledge base -> entity filter on/off, for a kb whose own development set chose;
    #: applies when every kb of the request's scope names the same choice here.
    entity_filter_by_kb: dict[str, bool] = Field(default_factory=dict)

    def entity_filter_for(self, kb_names: Sequence[str]) -> bool:
        """Whether R-T1-2 runs for a request scoped to ``kb_names`` (``()``: unscoped)."""
        return choice_for_scope(self.entity_filter, self.entity_filter_by_kb, kb_names)


class SupplementSettings(_Frozen):
    """Entity-anchored supplementary recall (R-SUP-1..4) and injection (R-INJ-1)."""

    enabled: bool = True
    related_drugs_limit: int = Field(4, ge=0)
    per_document_limit: int = Field(4, ge=1)
    min_limit: int = Field(8, ge=1)
    entity_weight: float = 2.0
    lexical_weight: float = 1.0
    dense_weight: float = 0.1
    max_document_ids: int = Field(512, ge=1)
    inject_min_new: int = Field(2, ge=0)
    inject_boost: float = 100.0


class ProfileWeights(_Frozen):
    """Tier-2 fusion weights of one profile (R-T2-8, A-4). ``w_first`` weighs the
    first-stage evidence (rank in the post-RRF list, A-4); the seed has none (0.0)."""

    w_ce: float
    w_entity: float
    w_sec: float
    w_xdrug: float
    w_first: float = 0.0


class Tier2Preset(StrEnum):
    """Named Tier-2 weight tables (A-4).

    ``seed``: the weights of SPEC.md R-T2-8, no first-stage term, written for a real MedCPT
    cross-encoder. ``tuned``: chosen by the development-set ablation for the offline
    stand-in scorer (configs/profiles/default.yaml says how).
    """

    SEED = "seed"
    TUNED = "tuned"


#: (w_ce, w_entity, w_sec, w_xdrug, w_first) per workflow and preset.
TIER2_PRESETS: dict[Tier2Preset, dict[str, tuple[float, float, float, float, float]]] = {
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
    Tier2Preset.TUNED: {
        "default": (0.0, 0.25, 0.15, 2.0, 0.5),
        "regulatory": (0.15, 0.20, 0.35, 2.5, 0.25),
        "drug_entity": (0.175, 0.35, 0.10, 3.0, 0.25),
        "chemical": (0.125, 0.40, 0.10, 3.0, 0.25),
        "combination": (0.175, 0.35, 0.10, 2.5, 0.25),
    },
}


def preset_weights(preset: Tier2Preset | str) -> dict[str, ProfileWeights]:
    """The weight table of ``preset`` (A-4)."""
    table = TIER2_PRESETS[Tier2Preset(preset)]
    return {
        name: ProfileWeights(w_ce=ce, w_entity=ent, w_sec=sec, w_xdrug=xdrug, w_first=first)
        for name, (ce, ent, sec, xdrug, first) in table.items()
    }


def _default_profile_weights() -> dict[str, ProfileWeights]:
    return preset_weights(Tier2Preset.SEED)


class Tier2Scorer(StrEnum):
    """Where Tier-2's ``ce`` part comes from.

    ``cross_encoder``: the cross-encoder port (R-T2-3). ``stored_vectors``: the cosine of
    the query vector and the stored document vector of ``stored_vector_role`` (the
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


class RequestSettings(_Frozen):
    """Request defaults and limits (R-REQ-1..5)."""

    similarity_threshold: float = Field(0.2, ge=0.0, le=1.0)
    vector_similarity_weight: float = Field(0.3, ge=0.0, le=1.0)
    page_size: int = Field(5, ge=1)
    max_page_size: int = Field(100, ge=1)
    max_page: int = Field(1000, ge=1)
    top_k: int = Field(1024, ge=1)
    candidate_min: int = Field(128, ge=1)
    rerank_page_limit: int = Field(3, ge=0)
    max_query_chars: int = Field(2000, ge=1)


class StageBudgets(_Frozen):
    """Time budget per stage, in ms. A plan or the supplement over budget contributes
    nothing and is recorded as degraded; the cross-encoder over budget falls back (R-T2-4)."""

    plan_ms: float = Field(5000.0, gt=0)
    supplement_ms: float = Field(5000.0, gt=0)
    rerank_ms: float = Field(10000.0, gt=0)
    request_ms: float = Field(30000.0, gt=0)


class StageSwitches(_Frozen):
    """Which stages run; all on in production. Evaluation turns them off one by one for
    its ablations (BM25 only, dense only, hybrid, + Tier-1, + supplement, + Tier-2)."""

    dense: bool = True
    lexical: bool = True
    hybrid_fusion: bool = True
    tier1: bool = True
    supplement: bool = True
    tier2: bool = True


class IngestSettings(_Frozen):
    """Chunking and ingest batching (R-ING-1..6). Tokens are word tokens (letters/digits
    runs), a model-independent stand-in for sub-word tokens (about 1.3 sub-words each)."""

    chunk_tokens: int = Field(200, ge=16, le=2000)
    chunk_overlap: int = Field(30, ge=0, le=500)
    batch_documents: int = Field(64, ge=1)
    encode_batch: int = Field(64, ge=1)
    #: R-ING-4: biomedical entity hits per 100 words below which a user document counts
    #: as general text (labels, leaflets, papers and compounds are biomedical by kind).
    biomedical_density: float = Field(1.0, ge=0.0)
    max_primary_drugs: int = Field(5, ge=1)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> IngestSettings:
        if self.chunk_overlap >= self.chunk_tokens:
            raise ValueError("chunk_overlap must be smaller than chunk_tokens")
        return self


class PipelineSettings(_Frozen):
    """Everything the retrieval pipeline reads, in one object."""

    namespace: str = "biomed"
    final_top_k: int = Field(5, ge=1)
    collections: dict[str, CollectionSpec] = Field(default_factory=default_collections)
    routing: RoutingSettings = Field(default_factory=RoutingSettings)
    hybrid: HybridSettings = Field(default_factory=HybridSettings)
    lexical: LexicalSettings = Field(default_factory=LexicalSettings)
    rrf: RrfSettings = Field(default_factory=RrfSettings)
    tier1: Tier1Settings = Field(default_factory=Tier1Settings)
    supplement: SupplementSettings = Field(default_factory=SupplementSettings)
    tier2: Tier2Settings = Field(default_factory=Tier2Settings)
    request: RequestSettings = Field(default_factory=RequestSettings)
    budgets: StageBudgets = Field(default_factory=StageBudgets)
    stages: StageSwitches = Field(default_factory=StageSwitches)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    parallel_plans: bool = True
    query_cache_size: int = Field(1024, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _merge_collection_overrides(cls, data: Any) -> Any:
        # YAML may override single fields of a collection (e.g. `enabled: false`)
        # without restating the whole row.
        if isinstance(data, dict) and isinstance(data.get("collections"), dict):
            merged = {name: spec.model_dump() for name, spec in default_collections().items()}
            for name, override in data["collections"].items():
                if isinstance(override, CollectionSpec):
                    override = override.model_dump()
                base = merged.get(name, {"name": name})
                merged[name] = {**base, **(override or {}), "name": name}
            data = {**data, "collections": merged}
        return data

    def enabled_collections(self) -> dict[str, CollectionSpec]:
        """Collections the profile enables, in section-0 order."""
        return {name: spec for name, spec in self.collections.items() if spec.enabled}

    def collection_for_role(self, role: str) -> CollectionSpec | None:
        """The first enabled collection whose query or document encoder is ``role``."""
        for spec in self.enabled_collections().values():
            if role in (spec.query_encoder, spec.document_encoder):
                return spec
        return None

    @classmethod
    def from_yaml(cls, path: str | Path) -> PipelineSettings:
        """Load from a YAML file whose top level (or ``pipeline:`` key) holds these fields.

        Raises:
            FileNotFoundError: the file does not exist.
            pydantic.ValidationError: a value is out of range or a key is unknown.
        """
        data = load_yaml(path)
        return cls.model_validate(data.get("pipeline", data))


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping (an empty file gives ``{}``).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the top level is not a mapping.
    """
    with open(path, encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: top level must be a mapping, got {type(data).__name__}")
    return data


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Recursive dict merge: mappings merge key by key, everything else is replaced."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
