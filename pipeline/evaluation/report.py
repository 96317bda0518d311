"""Report writers: JSON (everything, per-query rows included), a Markdown table (metric by
ablation, plus the misses of the last row with their failure class) and a PNG chart
(metric by ablation; matplotlib with the Agg backend, no display needed)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.evaluation.runner import AblationSummary, EvalRun, QueryRow

__all__ = [
    "markdown_answerable_table",
    "markdown_misses",
    "markdown_report",
    "markdown_stage_timings",
    "markdown_table",
    "metric_names",
    "write_chart",
    "write_reports",
]

_ORDER = ("ndcg@", "mrr@", "hit@", "recall@", "section_hit", "term_coverage")


def _metric_key(name: str) -> tuple[int, str]:
    for position, prefix in enumerate(_ORDER):
        if name.startswith(prefix):
            return position, name
    return len(_ORDER), name


def metric_names(summaries: Sequence[AblationSummary]) -> list[str]:
    """Every metric any row reports, in a fixed reading order (nDCG, MRR, Hit, Recall,
    section hits, term coverage)."""
    names = {name for summary in summaries for name in summary.metrics}
    return sorted(names, key=_metric_key)


def _cell(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


def markdown_answerable_table(run: EvalRun) -> str:
    """Metric by ablation over the answerable queries only (something relevant is
    stored); empty when every query is answerable or the corpus was not probed."""
    summaries = [s for s in run.summaries if s.answerable is not None]
    if not summaries or all(s.answerable == s.queries for s in summaries):
        return ""
    names = metric_names(run.summaries)
    lines = [
        f"On the {summaries[0].answerable} of {summaries[0].queries} queries whose relevant "
        "documents are stored (the others are corpus gaps):",
        "",
        "| ablation | " + " | ".join(names) + " |",
        "|" + "---|" * (len(names) + 1),
    ]
    for summary in summaries:
        cells = [_cell(summary.answerable_metrics.get(name)) for name in names]
        lines.append(f"| {summary.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown_table(run: EvalRun) -> str:
    """One line per ablation: every metric, miss classes, latency (mean / p95 ms) and
    the wall time of the row."""
    names = metric_names(run.summaries)
    header = ["ablation", *names, "misses (corpus/route/recall/ranking)", "ms mean", "ms p95",
              "wall s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for summary in run.summaries:
        failures = summary.failures
        misses = "/".join(
            str(failures.get(name, 0))
            for name in ("corpus_gap", "route_gap", "recall_gap", "ranking_gap")
        )
        if failures.get("error"):
            misses += f" (+{failures['error']} errors)"
        if summary.degraded_queries:
            misses += f" ({summary.degraded_queries} degraded)"
        cells = [
            f"{summary.name} ({summary.description})",
            *(_cell(summary.metrics.get(name)) for name in names),
            misses,
            f"{summary.latency_ms_mean:.0f}",
            f"{summary.latency_ms_p95:.0f}",
            f"{summary.wall_s:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown_stage_timings(run: EvalRun) -> str:
    """Mean milliseconds per pipeline stage (from the response traces) by ablation;
    ``plans`` is the slowest plan of each query (plans run concurrently)."""
    stages = list(dict.fromkeys(name for s in run.summaries for name in s.stage_ms_mean))
    if not stages:
        return ""
    lines = ["| ablation | " + " | ".join(stages) + " | total |",
             "|" + "---|" * (len(stages) + 2)]
    for summary in run.summaries:
        cells = [f"{summary.stage_ms_mean.get(name, 0.0):.1f}" for name in stages]
        lines.append(f"| {summary.name} | " + " | ".join(cells)
                     + f" | {summary.latency_ms_mean:.1f} |")
    return "\n".join(lines)


def _rank(row: QueryRow) -> str:
    if row.first_relevant_rank is not None:
        return str(row.first_relevant_rank)
    return "—"


def markdown_misses(run: EvalRun, ablation: str | None = None, limit: int = 200) -> str:
    """The queries that missed (no relevant result within k) under ``ablation`` (default:
    the last row), with rank of the first relevant result, route, workflow and class."""
    name = ablation or (run.summaries[-1].name if run.summaries else "")
    misses = [row for row in run.rows_of(name) if row.failure != "hit"]
    if not misses:
        return f"No misses under `{name}`."
    lines = [
        f"Misses under `{name}` ({len(misses)}):",
        "",
        "| query | k | first relevant rank | name-only rank | workflow | route | class | why |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in misses[:limit]:
        query = row.query if len(row.query) <= 70 else row.query[:67] + "..."
        name_rank = str(row.first_name_rank) if row.first_name_rank is not None else "—"
        why = row.failure_detail.replace("|", "/")
        lines.append(
            f"| {row.query_id}: {query} | {row.k} | {_rank(row)} | {name_rank} | "
            f"{row.workflow} | {', '.join(row.route)} | {row.failure} | {why} |"
        )
    if len(misses) > limit:
        lines.append(f"| ... {len(misses) - limit} more in the JSON | | | | | | | |")
    return "\n".join(lines)


def markdown_report(run: EvalRun) -> str:
    """The whole Markdown report: heading, options, table, misses, extras."""
    options = run.options
    parts = [
        f"# Evaluation: {run.dataset or run.query_set}",
        "",
        f"- queries: {run.summaries[0].queries if run.summaries else 0} from `{run.source}` "
        f"(judgement: {run.judgement})",
        f"- request: page_size {options.get('page_size')}, similarity_threshold "
        f"{options.get('similarity_threshold')}, kb {options.get('kb')!r}",
    ]
    for key, value in run.extra.get("notes", {}).items():
        parts.append(f"- {key}: {value}")
    parts += ["", markdown_table(run), ""]
    answerable = markdown_answerable_table(run)
    if answerable:
        parts += [answerable, ""]
    timings = markdown_stage_timings(run)
    if timings:
        parts += ["Mean ms per stage (response trace):", "", timings, ""]
    parts.append(markdown_misses(run))
    eagle = run.extra.get("eagle")
    if eagle:
        parts += [
            "",
            "## EagleRAG route hints (full pipeline)",
            "",
            f"- entity recall: {_cell(eagle.get('entity_recall'))} "
            f"({eagle['counts']['with_entity_hint']} queries with `umls` hints)",
            f"- route accuracy: {_cell(eagle.get('route_accuracy'))} "
            f"({eagle['counts']['with_collection_hint']} queries with `collections` hints)",
            f"- workflow agreement: {_cell(eagle.get('workflow_agreement'))} "
            f"({eagle['counts']['with_workflow_mapping']} queries)",
        ]
    return "\n".join(parts) + "\n"


def write_chart(run: EvalRun, path: Path, metrics: Sequence[str] | None = None) -> Path:
    """Grouped bars: one group per ablation, one bar per metric (values in [0, 1])."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(metrics or metric_names(run.summaries))
    ablations = [summary.name for summary in run.summaries]
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(ablations) + 2), 4.5))
    width = 0.8 / max(1, len(names))
    for index, name in enumerate(names):
        values = [summary.metrics.get(name, 0.0) for summary in run.summaries]
        positions = [a + (index - (len(names) - 1) / 2) * width for a in range(len(ablations))]
        bars = axes.bar(positions, values, width, label=name)
        axes.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=6, padding=1)
    axes.set_xticks(range(len(ablations)), ablations)
    axes.set_ylim(0, 1.1)
    axes.set_ylabel("score")
    axes.set_title(f"{run.dataset or run.query_set}: metric by ablation")
    axes.legend(fontsize=7, ncols=min(6, max(1, len(names))), loc="upper center",
                bbox_to_anchor=(0.5, -0.08), frameon=False)
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def write_reports(run: EvalRun, out_dir: Path, stem: str | None = None) -> dict[str, Path]:
    """Write ``<stem>.json``, ``<stem>.md`` and ``<stem>.png`` under ``out_dir``.

    Returns:
        ``{"json": path, "markdown": path, "chart": path}``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = stem or (run.dataset or run.query_set)
    paths = {
        "json": out_dir / f"{stem}.json",
        "markdown": out_dir / f"{stem}.md",
        "chart": out_dir / f"{stem}.png",
    }
    paths["json"].write_text(
        json.dumps(run.to_dict(), indent=1, default=_json_default), encoding="utf-8"
    )
    paths["markdown"].write_text(markdown_report(run), encoding="utf-8")
    write_chart(run, paths["chart"])
    return paths
