"""Choose ranking settings on one half of the development sets (issue 12, A-4).

Every variant is a dict merged over the profile's ``pipeline`` settings; all variants
share one in-process service (stores, models), so a run costs one recall per query and
variant. Queries are split by their position in each file: ``--half even`` (0, 2, 4, ...)
tunes, ``--half odd`` and ``--half all`` report. NFCorpus is never tuned on.

    .venv/bin/python scripts/tune_ranking.py --data-dir /path/kb --half even \\
        --variants scripts/ranking_variants.yaml --out eval-results/tuning-even.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from biomed_search.evaluate import EVAL_BUDGETS
from deployments.config import load_config
from deployments.inprocess import in_process_service
from pipeline.evaluation.querysets import QuerySet, read_jsonl_queries
from pipeline.evaluation.recording import RecordingVectorStore
from pipeline.evaluation.runner import AblationTarget, EvalOptions, QueryRow, evaluate
from pipeline.ports import RetrieverPorts
from pipeline.retriever import Retriever
from pipeline.settings import PipelineSettings, deep_merge

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DEV_SETS = {
    "drug_kb_dev": SHARED / "drug_kb_dev.jsonl",
    "drug_kb_dev_more": SHARED / "drug_kb_dev_more.jsonl",
    "eaglerag": SHARED / "eaglerag_eval" / "eval_queries.aligned.jsonl",
}


def half(query_set: QuerySet, which: str) -> QuerySet:
    """The even- or odd-positioned queries of ``query_set`` (``all``: every query)."""
    if which == "all":
        return query_set
    parity = 0 if which == "even" else 1
    kept = tuple(q for i, q in enumerate(query_set.queries) if i % 2 == parity)
    return QuerySet(query_set.name, query_set.judgement, kept, query_set.source)


def changed_ranks(rows: list[QueryRow]) -> dict[str, dict[str, int | None]]:
    """Query id -> {variant: first relevant rank} for the queries whose rank differs
    between variants (the evidence behind a metric change)."""
    ranks: dict[str, dict[str, int | None]] = {}
    for row in rows:
        ranks.setdefault(f"{row.query_id}: {row.query[:60]}", {})[row.ablation] = (
            row.first_relevant_rank
        )
    return {key: value for key, value in ranks.items() if len(set(value.values())) > 1}


def _hit(metrics: dict[str, float]) -> float:
    # Name sets carry ``hit@<k>`` with the queries' own k (5 for the dev sets).
    return next(v for key, v in metrics.items() if key.startswith("hit@") and key[4:].isdigit())


async def run(args: argparse.Namespace) -> dict[str, Any]:
    config = load_config(args.profile, args.config, args.data_dir)
    variants: dict[str, dict[str, Any]] = yaml.safe_load(Path(args.variants).read_text())
    options = EvalOptions(page_size=20, kb=args.kb)
    results: dict[str, Any] = {}
    async with in_process_service(config) as running:
        base = running.service.retriever
        assert base is not None
        store = RecordingVectorStore(base.ports.store)
        base_settings = config.pipeline.model_dump(mode="json")
        targets = []
        for name, override in variants.items():
            defaults = base_settings
            if "preset" in (override or {}).get("tier2", {}):
                # A preset names a whole weight table: drop the profile's resolved one.
                tier2 = {k: v for k, v in defaults["tier2"].items() if k != "profile_weights"}
                defaults = {**defaults, "tier2": tier2}
            merged = deep_merge(defaults, override or {})
            settings = PipelineSettings.model_validate(merged).model_copy(
                update={"budgets": EVAL_BUDGETS}
            )
            retriever = Retriever(
                settings,
                RetrieverPorts(store=store, models=base.ports.models, registry=base.ports.registry),
                vocabulary=base.vocabulary,
            )
            targets.append(AblationTarget(name, name, retriever.search, store))
        for set_name, path in DEV_SETS.items():
            query_set = half(read_jsonl_queries(path, name=set_name), args.half)
            evaluation = await evaluate(query_set, targets, options, None, set_name)
            results[set_name] = {
                summary.name: {
                    "queries": summary.queries,
                    "hit@5": _hit(summary.metrics),
                    "mrr@10": summary.metrics.get("mrr@10"),
                    "p50_ms": summary.latency_ms_p50,
                }
                for summary in evaluation.summaries
            }
            print(f"\n{set_name} ({len(query_set)} queries, half {args.half})", file=sys.stderr)
            for name, row in results[set_name].items():
                print(
                    f"  {name:28s} hit@k {row['hit@5']:.3f}  mrr@10 {row['mrr@10']:.3f}  "
                    f"p50 {row['p50_ms']:.0f} ms",
                    file=sys.stderr,
                )
            for query_id, ranks in changed_ranks(evaluation.rows).items():
                print(f"    rank changed: {query_id} {ranks}", file=sys.stderr)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--profile", default="default")
    parser.add_argument("--config", default=None)
    parser.add_argument("--kb", default="drug-kb")
    parser.add_argument("--half", choices=["even", "odd", "all"], default="even")
    parser.add_argument("--variants", required=True, help="YAML: name -> pipeline override")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    results = asyncio.run(run(args))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
