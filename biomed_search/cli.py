"""``biomed-search``: the command line (DESIGN.md "Interfaces").

Every command takes ``--data-dir`` (default ``./.biomed-search``), ``--profile`` and
``--config``. Heavy imports (torch, ray) happen inside the commands that need them.

Exit status:
  0   success;
  1   the command ran but reported failures (``ingest`` errors, a failed check);
  2   bad arguments, configuration or input files (the message says which);
  3   a model is not available: a role's weights are missing, or loading, warming up or
      the first forward pass failed, in this process or in a Ray Serve replica. The output
      is that one message (role, source, how to provide it), without a traceback;
  130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["EXIT_MODEL_NOT_AVAILABLE", "build_parser", "main"]

EXIT_MODEL_NOT_AVAILABLE = 3
"""Exit status when a role's model cannot be loaded (see the module docstring)."""


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(".biomed-search"),
        help="where embedded stores and caches live (default ./.biomed-search)",
    )
    parser.add_argument(
        "--profile",
        default="default",
        help="profile name under configs/profiles or a YAML path (default: default)",
    )
    parser.add_argument("--config", type=Path, default=None, help="YAML merged over the profile")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    parser = argparse.ArgumentParser(prog="biomed-search", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", help="ingest documents into the stores")
    _common(ingest)
    ingest.add_argument("source", type=Path, nargs="+", help="file or folder")
    ingest.add_argument("--kb", default="default", help="knowledge base name (default: default)")
    ingest.add_argument(
        "--format",
        default="auto",
        choices=["auto", "beir", "ema-leaflets", "fda-indications", "chembl", "jsonl", "markdown"],
    )
    ingest.add_argument("--no-progress", action="store_true")
    ingest.add_argument(
        "--engine",
        default="inprocess",
        choices=["inprocess", "ray"],
        help="inprocess (default): models in this process; ray: encoders on Ray Data actors",
    )
    ingest.add_argument(
        "--ray-address",
        default=None,
        help="Ray cluster for --engine ray (ray://head:10001, auto); default: a local Ray",
    )
    ingest.add_argument(
        "--ray-actors", type=int, default=1, help="encoder actors per model (default 1)"
    )
    ingest.add_argument(
        "--ray-batch-size",
        type=int,
        default=None,
        help="texts per encoder batch (default: pipeline.ingest.encode_batch)",
    )

    delete = commands.add_parser(
        "delete",
        help="remove documents (their registry rows, then their chunks from every "
        "collection): by id, or every document of --kb; run again if interrupted",
    )
    _common(delete)
    delete.add_argument("document_id", nargs="*", help="document ids (as ingested)")
    delete.add_argument("--kb", default=None, help="only documents of this knowledge base; "
                        "with no ids, all of them")

    serve = commands.add_parser("serve", help="run the service (embedded stores + Ray Serve)")
    _common(serve)
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    demo = serve.add_mutually_exclusive_group()
    demo.add_argument(
        "--demo",
        action="store_true",
        help="ingest the demo corpus (kb 'demo') even if the data dir holds documents",
    )
    demo.add_argument("--no-demo", action="store_true", help="do not ingest the demo corpus")

    query = commands.add_parser(
        "query",
        help="search a running service (or, with none reachable, the data dir in-process) "
        "and print the ranked results",
    )
    _common(query)
    query.add_argument("text", help="the question (or a SMILES string)")
    query.add_argument("--url", default="http://127.0.0.1:8000",
                       help="the service (default %(default)s); none there: searched in-process")
    query.add_argument("--kb", action="append", default=[],
                       help="search only this knowledge base (repeat for more)")
    query.add_argument("--page-size", type=int, default=5, help="results (default 5)")
    query.add_argument("--api-key", default=os.environ.get("BIOMED_SEARCH_API_KEY"),
                       help="bearer key (default: $BIOMED_SEARCH_API_KEY)")
    query.add_argument("--json", action="store_true", help="print the raw JSON response")

    evaluate = commands.add_parser("eval", help="retrieval quality with ablations")
    _common(evaluate)
    evaluate.add_argument(
        "--dataset", required=True, choices=["nfcorpus", "drug-kb", "eaglerag", "beir", "jsonl"]
    )
    evaluate.add_argument("--data", type=Path, default=None, help="BEIR folder")
    evaluate.add_argument("--queries", type=Path, default=None, help="JSONL query set")
    evaluate.add_argument("--kb", default=None, help="knowledge base to search")
    evaluate.add_argument("--url", default=None, help="evaluate a running service instead")
    evaluate.add_argument("--out", type=Path, default=Path("eval-results"))
    evaluate.add_argument("--limit", type=int, default=None, help="first N queries only")
    evaluate.add_argument(
        "--ablations", default="all", help="comma-separated ablation names, or 'all' / 'full'"
    )

    stop = commands.add_parser(
        "stop-stores",
        help="stop the embedded Milvus Lite / PostgreSQL servers of --data-dir (serve "
        "run / serve deploy leave them running; stop the service first; the data stays)",
    )
    _common(stop)

    plan = commands.add_parser("plan-gpus", help="derive a GPU sharding plan")
    _common(plan)
    plan.add_argument("--gpus", type=int, required=True)
    plan.add_argument("--mem-gib", type=float, required=True)
    plan.add_argument("--measurements", type=Path, default=None)
    return parser


def _load(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from deployments.config import load_config

    return load_config(args.profile, args.config, data_dir=args.data_dir)


def _ingest(args: argparse.Namespace) -> int:
    from deployments.ingest import ingest_sources

    config = _load(args)
    missing = [str(source) for source in args.source if not Path(source).exists()]
    if missing:  # before any model loads
        raise FileNotFoundError(f"no such file or folder: {', '.join(missing)}")
    ray_settings = None
    if args.engine == "ray":
        from deployments.ingest_ray import RayIngestSettings

        ray_settings = RayIngestSettings(
            address=args.ray_address, actors=args.ray_actors, batch_size=args.ray_batch_size
        )
    report = asyncio.run(
        ingest_sources(
            config,
            args.source,
            args.kb,
            args.format,
            progress=not args.no_progress,
            engine=args.engine,
            ray_settings=ray_settings,
        )
    )
    print(json.dumps(report, indent=2))
    if not report.get("documents_seen") and not report.get("failures"):  # IngestReport keys
        # an empty file or folder is most likely the wrong path or --format: say so
        sources = ", ".join(str(source) for source in args.source)
        print(f"ingest: no documents in {sources}; nothing was written", file=sys.stderr)
        return 1
    return 0 if not report.get("failures") else 1


def _delete(args: argparse.Namespace) -> int:
    from deployments.ingest import delete_sources

    outcome = asyncio.run(delete_sources(_load(args), args.document_id, args.kb))
    print(json.dumps(outcome, indent=2))
    if outcome["not_found"]:
        # not an error: nothing of these ids is left (a re-run after an interrupted or
        # finished delete lands here), but a mistyped id should not pass unseen
        print(f"delete: not registered (nothing of them is stored now): "
              f"{', '.join(outcome['not_found'])}", file=sys.stderr)
    if outcome["other_kb"]:
        print(f"delete: refused, registered in another kb than --kb {args.kb}: "
              f"{', '.join(outcome['other_kb'])}", file=sys.stderr)
    return 1 if outcome["other_kb"] else 0


def _serve(args: argparse.Namespace) -> int:
    from deployments.serve_cli import serve

    demo = True if args.demo else False if args.no_demo else None
    return serve(_load(args), host=args.host, port=args.port, demo=demo)


def _query(args: argparse.Namespace) -> int:
    from deployments.query_cli import query

    return query(
        args.url,
        args.text,
        kb_ids=args.kb,
        page_size=args.page_size,
        api_key=args.api_key,
        raw=args.json,
        config=_load(args),
    )


def _eval(args: argparse.Namespace) -> int:
    from biomed_search.evaluate import run_eval

    config = _load(args)
    return run_eval(config, args)


def _stop_stores(args: argparse.Namespace) -> int:
    from deployments.stores import stop_embedded_servers

    outcome = stop_embedded_servers(_load(args))
    print(json.dumps(outcome))
    return 1 if any(state.startswith("failed") for state in outcome.values()) else 0


def _plan(args: argparse.Namespace) -> int:
    from biomed_search.gpu_plan import print_plan

    config = _load(args)
    return print_plan(config, args.gpus, args.mem_gib, args.measurements, config_path=args.config)


_COMMANDS = {
    "ingest": _ingest,
    "delete": _delete,
    "serve": _serve,
    "query": _query,
    "eval": _eval,
    "plan-gpus": _plan,
    "stop-stores": _stop_stores,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``biomed-search`` console script."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from deployments.runtime.processes import sigterm_as_interrupt

    try:
        # a killed command (docker stop, a scheduler's timeout) stops the stores it
        # started, as Ctrl-C does
        with sigterm_as_interrupt():
            return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError) as error:
        print(f"biomed-search {args.command}: {error}", file=sys.stderr)
        return 2
    except Exception as error:
        from models.errors import find_model_error

        model_error = find_model_error(error)
        if model_error is None:
            raise
        print(str(model_error), file=sys.stderr)
        return EXIT_MODEL_NOT_AVAILABLE


if __name__ == "__main__":
    raise SystemExit(main())
