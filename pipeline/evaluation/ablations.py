"""The ablation ladder: which pipeline stages each evaluation row runs (issue 6).

Each row adds one stage to the row before it, from the single legs to the full pipeline,
so the difference between neighbouring rows is the gain of one stage:

| row | dense ANN | BM25 leg | R-HYB-1 fusion | Tier-1 | supplement + injection | Tier-2 |
|---|---|---|---|---|---|---|
| ``bm25`` | | x | | | | |
| ``dense`` | x | | | | | |
| ``rrf`` | x | x | | | | |
| ``hybrid`` | x | x | x | | | |
| ``tier1`` | x | x | x | x | | |
| ``supplement`` | x | x | x | x | x | |
| ``full`` | x | x | x | x | x | x |

``rrf`` joins the two legs by reciprocal rank fusion only (R-RRF-1); ``hybrid`` also
re-scores that union with ``alpha * dense + (1 - alpha) * sparse`` (R-HYB-1), as the
pipeline does. Routing, intent and RRF across plans run in every row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.settings import PipelineSettings, StageSwitches

__all__ = ["ABLATIONS", "Ablation", "resolve_ablations", "settings_for"]


@dataclass(frozen=True)
class Ablation:
    """One row: a name, a description, and the stage switches it runs with."""

    name: str
    description: str
    stages: StageSwitches


def _stages(**on: bool) -> StageSwitches:
    off = dict.fromkeys(StageSwitches.model_fields, False)
    return StageSwitches(**{**off, **on})


ABLATIONS: tuple[Ablation, ...] = (
    Ablation("bm25", "BM25 only", _stages(lexical=True)),
    Ablation("dense", "dense only", _stages(dense=True)),
    Ablation("rrf", "dense + BM25 (RRF)", _stages(dense=True, lexical=True)),
    Ablation(
        "hybrid",
        "+ R-HYB-1 fusion",
        _stages(dense=True, lexical=True, hybrid_fusion=True),
    ),
    Ablation(
        "tier1",
        "+ Tier-1",
        _stages(dense=True, lexical=True, hybrid_fusion=True, tier1=True),
    ),
    Ablation(
        "supplement",
        "+ supplement & injection",
        _stages(dense=True, lexical=True, hybrid_fusion=True, tier1=True, supplement=True),
    ),
    Ablation("full", "+ Tier-2 (full)", StageSwitches()),
)


def resolve_ablations(spec: str | Sequence[str] | None) -> list[Ablation]:
    """Rows named by ``spec``: ``"all"`` (or None), ``"full"``, or a comma-separated
    list of names, kept in ladder order.

    Raises:
        ValueError: an unknown name (the message lists the valid ones).
    """
    if spec is None:
        return list(ABLATIONS)
    names = [part.strip() for part in spec.split(",")] if isinstance(spec, str) else list(spec)
    names = [name for name in names if name]
    if not names or names == ["all"]:
        return list(ABLATIONS)
    known = {ablation.name: ablation for ablation in ABLATIONS}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(
            f"unknown ablation(s) {unknown}; valid: all, {', '.join(known)}"
        )
    return [ablation for ablation in ABLATIONS if ablation.name in names]


def settings_for(settings: PipelineSettings, ablation: Ablation) -> PipelineSettings:
    """``settings`` (a copy) running the stages of ``ablation`` that the configuration
    also leaves on: a stage switched off in the configuration (``pipeline.stages``) is
    off in every row, so ``--config`` can measure e.g. the full pipeline without Tier-1."""
    configured = settings.stages.model_dump()
    stages = StageSwitches(
        **{name: on and configured[name] for name, on in ablation.stages.model_dump().items()}
    )
    return settings.model_copy(update={"stages": stages})
