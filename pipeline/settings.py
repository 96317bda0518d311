"""Typed settings for the retrieval pipeline: every number of SPEC.md, with the spec's default.

Parsed once at the edge (CLI, ``build_app``) from YAML and handed to the pipeline as
constructor arguments; nothing in ``pipeline/`` reads the environment.

The sections live in ``settings_base`` (the frozen base model, ``choice_for_scope``),
``settings_search`` (collections, routing, hybrid, lexical, RRF, supplement),
``settings_rerank`` (Tier-1, Tier-2 presets and weights) and ``settings_request``
(request, budgets, stage switches, ingest); this module re-exports them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, model_validator

from pipeline.settings_base import _Frozen, choice_for_scope
from pipeline.settings_request import IngestSettings, RequestSettings, StageBudgets, StageSwitches
from pipeline.settings_rerank import (
    TIER2_PRESETS,
    CrossDrugTerms,
    ProfileWeights,
    RerankPolicy,
    Tier1Settings,
    Tier2Preset,
    Tier2Scorer,
    Tier2Settings,
    preset_weights,
)
from pipeline.settings_search import (
    CollectionSpec,
    HybridSettings,
    LexicalSettings,
    RoutingSettings,
    RrfSettings,
    SupplementSettings,
    default_collections,
)

__all__ = [
    "TIER2_PRESETS",
    "CollectionSpec",
    "CrossDrugTerms",
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
    """Recursive dict merge: mappings merge key by key, everything else is replaced. An
    empty mapping in ``override`` therefore changes nothing (it clears no profile
    mapping); a list or scalar replaces the base value whole."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
