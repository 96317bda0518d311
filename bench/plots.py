"""PNG charts of the benchmark reports (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

__all__ = ["plot_comparison", "plot_load"]

PERCENTILES = (("p50_ms", "p50"), ("p90_ms", "p90"), ("p99_ms", "p99"))


def _levels(report: Mapping[str, Any], mode: str) -> list[Mapping[str, Any]]:
    return [level for level in report.get("levels", []) if level.get("mode") == mode]


def _latency_and_throughput(
    axes_latency: Any, axes_throughput: Any, levels: Sequence[Mapping[str, Any]], key: str,
    label: str,
) -> None:
    xs = [level[key] for level in levels]
    for field, name in PERCENTILES:
        axes_latency.plot(xs, [level["summary"][field] for level in levels], marker="o",
                          label=name)
    axes_latency.set_xlabel(label)
    axes_latency.set_ylabel("latency (ms)")
    values = [level["summary"][f] for level in levels for f, _ in PERCENTILES]
    if min(values, default=0) > 0 and max(values) / min(values) >= 10:
        axes_latency.set_yscale("log")
    axes_latency.grid(True, which="both", alpha=0.3)
    axes_latency.legend()
    axes_throughput.plot(xs, [level["summary"]["throughput_rps"] for level in levels],
                         marker="o", color="tab:green")
    axes_throughput.set_xlabel(label)
    axes_throughput.set_ylabel("throughput (requests/s)")
    axes_throughput.grid(True, alpha=0.3)
    for axes in (axes_latency, axes_throughput):
        if len(xs) > 1 and min(xs) > 0 and max(xs) / min(xs) >= 8:
            axes.set_xscale("log", base=2)
        axes.set_xticks(xs)
        axes.set_xticklabels([f"{x:g}" for x in xs])


def plot_load(report: Mapping[str, Any], path: Path) -> Path:
    """Latency percentiles and throughput by concurrency (closed loop) and, when the
    report has open-loop levels, by offered rate; written to ``path``."""
    closed = _levels(report, "closed")
    opened = _levels(report, "open")
    rows = (1 if closed else 0) + (1 if opened else 0)
    figure, axes = plt.subplots(max(rows, 1), 2, figsize=(11, 4 * max(rows, 1)), squeeze=False)
    row = 0
    if closed:
        _latency_and_throughput(axes[row][0], axes[row][1], closed, "concurrency",
                                "concurrency (closed loop)")
        row += 1
    if opened:
        _latency_and_throughput(axes[row][0], axes[row][1], opened, "rate_rps",
                                "offered rate, requests/s (open loop, Poisson)")
    figure.suptitle(f"/v1/search load: {report.get('label', '')} ({report.get('url', '')})")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def plot_comparison(
    groups: Mapping[str, Mapping[str, float]], path: Path, title: str, unit: str
) -> Path:
    """Grouped bars: ``groups[group][series] = value`` (e.g. throughput per variant and
    concurrency); written to ``path``."""
    names = list(groups)
    series = sorted({s for values in groups.values() for s in values})
    figure, axes = plt.subplots(figsize=(max(6, 1.6 * len(names) * max(len(series), 1)), 4.5))
    width = 0.8 / max(len(series), 1)
    for index, name in enumerate(series):
        xs = [g + index * width for g in range(len(names))]
        axes.bar(xs, [groups[g].get(name, 0.0) for g in names], width, label=name)
    axes.set_xticks([g + width * (len(series) - 1) / 2 for g in range(len(names))])
    axes.set_xticklabels(names, rotation=15, ha="right")
    axes.set_ylabel(unit)
    axes.set_title(title)
    axes.grid(True, axis="y", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
