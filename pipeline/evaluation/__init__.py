"""Retrieval evaluation (issue 6): query-set readers, metrics, failure diagnosis, the
ablation ladder and its runner, report writers. Pure Python + numpy (+ matplotlib for
the chart); no ray, no torch. ``biomed_search/evaluate.py`` wires it to a running
pipeline."""

from pipeline.evaluation.ablations import ABLATIONS, Ablation, resolve_ablations, settings_for
from pipeline.evaluation.diagnosis import CorpusFacts, StoreCorpusProbe, classify_miss
from pipeline.evaluation.judging import JudgedRanking, ResultItem, judge
from pipeline.evaluation.querysets import EvalQuery, QuerySet, read_beir, read_jsonl_queries
from pipeline.evaluation.recording import RecordingVectorStore
from pipeline.evaluation.runner import (
    AblationSummary,
    AblationTarget,
    EvalOptions,
    EvalRun,
    QueryRow,
    evaluate,
)

__all__ = [
    "ABLATIONS",
    "Ablation",
    "AblationSummary",
    "AblationTarget",
    "CorpusFacts",
    "EvalOptions",
    "EvalQuery",
    "EvalRun",
    "JudgedRanking",
    "QueryRow",
    "QuerySet",
    "RecordingVectorStore",
    "ResultItem",
    "StoreCorpusProbe",
    "classify_miss",
    "evaluate",
    "judge",
    "read_beir",
    "read_jsonl_queries",
    "resolve_ablations",
    "settings_for",
]
