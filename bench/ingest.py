"""Ingest at scale (issue 17): chunks/s and peak memory of the in-process runner and of the
Ray Data engine with 1 and 2 encoder actors, on the same leaflet sections, against the
encoder's in-process limit (``model.encode`` on the same chunk texts in batches).

Each engine runs in a child process of its own (a fresh peak RSS), into its own Milvus
collection prefix and PostgreSQL database on one Milvus Lite server and one embedded
PostgreSQL started here; the Ray runs start a local Ray with enough logical CPUs for
their actors. Chunks/s is chunks stored over the engine's wall time; for Ray also after
the first stored batch ("steady": actors started, models loaded).

Usage: ``python -m bench.ingest [--limit 2000] [--source PATH] [--engines ...]``
Writes ``bench/results/ingest-<time>.{json,md}`` and prints the Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

from bench import REPOSITORY
from bench.queries import DEFAULT_PASSAGES

__all__ = ["ENGINES", "format_table", "main"]

#: Engine name -> Ray encoder actors per model (None: the in-process runner).
ENGINES: dict[str, int | None] = {"inprocess": None, "ray-1": 1, "ray-2": 2}
RESULTS = REPOSITORY / "bench" / "results"


def _records(source: Path, limit: int) -> list[Any]:
    from pipeline.ingest.readers import read_source
    from pipeline.vocabulary import default_vocabulary

    return list(itertools.islice(read_source(source, default_vocabulary()), limit))


def _peak_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


async def _child_ingest(args: argparse.Namespace) -> dict[str, Any]:
    """One engine's run (in a child process): the figures as a dict."""
    from deployments.config import load_config
    from deployments.ingest import connect_ray, document_roles, run_ingest
    from deployments.local import load_local_models
    from deployments.stores import StoreEndpoints, open_stores

    config = load_config("default", overrides={"stores": {"collection_prefix": args.prefix}})
    records = _records(args.source, args.limit)
    endpoints = StoreEndpoints(milvus_uri=args.uri, postgres_dsn=args.dsn)
    actors = ENGINES[args.child]
    result: dict[str, Any] = {"engine": args.child, "sections": len(records)}
    async with open_stores(endpoints, config.stores) as (store, registry):
        if actors is None:
            encoders = dict(load_local_models(config.models, document_roles(config)).encoders)
            report = await run_ingest(config, records, "bench", store, registry, encoders, False)
        else:
            from deployments.ingest_ray import RayIngestSettings, ingest_ray, model_groups

            connect_ray(None, num_cpus=actors * len(model_groups(config)))
            # writes of 256 rows: the steady rate is timed from the first write on
            settings = RayIngestSettings(actors=actors, write_rows=256)
            outcome = await ingest_ray(config, records, "bench", store, registry, settings, False)
            report = outcome.report
            result["steady_chunks_per_s"] = outcome.steady_chunks_per_s
            result["encode_chunks_per_s"] = outcome.encode_chunks_per_s
            result["encoder_peak_mib"] = list(outcome.encoder_peak_mib.values())
            result["driver_seconds"] = outcome.driver_seconds
    chunks = sum(report.chunks_written.values())
    result |= {
        "documents": report.documents_written,
        "chunks": chunks,
        "seconds": round(report.seconds, 2),
        "chunks_per_s": round(chunks / report.seconds, 2),
        "driver_peak_mib": _peak_mib(),
        "failures": len(report.failures),
    }
    return result


def _child_encoder(args: argparse.Namespace) -> dict[str, Any]:
    """The encoder's in-process limit: ``encode`` texts/s on the same chunk texts."""
    from deployments.config import load_config
    from deployments.roles import load_shared
    from pipeline.ingest.chunker import chunk_document
    from pipeline.ingest.documents import stream_documents
    from pipeline.ingest.runner import encoder_inputs
    from pipeline.vocabulary import default_vocabulary

    config = load_config("default")
    spec = config.pipeline.enabled_collections()[config.pipeline.routing.biomed_text_collection]
    vocabulary = default_vocabulary()
    drafts = [
        draft
        for _, section in stream_documents(_records(args.source, args.limit), [])
        for draft in chunk_document(section, "bench", vocabulary, config.pipeline.ingest)
    ]
    texts, titles = encoder_inputs(spec, drafts)
    model = load_shared(config.models, [spec.document_encoder])[spec.document_encoder]
    size = config.pipeline.ingest.encode_batch
    model.encode(texts[:size], titles[:size])  # warm-up
    started = time.perf_counter()
    for start in range(0, len(texts), size):
        model.encode(texts[start : start + size], titles[start : start + size])
    seconds = time.perf_counter() - started
    return {
        "engine": "encoder-limit",
        "chunks": len(texts),
        "seconds": round(seconds, 2),
        "chunks_per_s": round(len(texts) / seconds, 2),
        "driver_peak_mib": _peak_mib(),
        "batch": size,
    }


def format_table(rows: list[dict[str, Any]], limit: int) -> str:
    """The Markdown table of ``rows`` (one per engine), rates against the encoder's limit
    (the in-process runner's wall rate; the Ray encoders' rate after their first batch)."""
    ceiling = next((r["chunks_per_s"] for r in rows if r["engine"] == "encoder-limit"), None)
    lines = [
        f"{limit} leaflet sections, offline profile (MiniLM), CPU only, {os.cpu_count()} cores.",
        "",
        "| engine | chunks | wall s | chunks/s (wall) | chunks/s stored after 1st write "
        "| encoder chunks/s after 1st batch | / encoder limit | driver busy s (plan + store) "
        "| peak RSS driver MiB | peak RSS encoder actors MiB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        encode = row.get("encode_chunks_per_s")
        rate = encode if encode is not None else row["chunks_per_s"]
        ratio = f"{rate / ceiling:.2f}" if ceiling else "-"
        busy = row.get("driver_seconds")
        busy_text = f"{busy['plan']} + {busy['store']}" if busy else "-"
        actors = " + ".join(f"{m:.0f}" for m in row.get("encoder_peak_mib", [])) or "-"
        lines.append(
            f"| {row['engine']} | {row['chunks']} | {row['seconds']} | {row['chunks_per_s']} "
            f"| {row.get('steady_chunks_per_s') or '-'} | {encode or '-'} | {ratio} "
            f"| {busy_text} | {row['driver_peak_mib']:.0f} | {actors} |"
        )
    return "\n".join(lines)


def _run_child(args: argparse.Namespace, child: str, uri: str, dsn: str) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "bench.ingest", "--child", child, "--limit", str(args.limit),
        "--source", str(args.source), "--uri", uri, "--dsn", dsn, "--prefix", f"bi_{child[:5]}_",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run(
        command, cwd=REPOSITORY, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{child} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (or, with ``--child``, one engine of it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_PASSAGES)
    parser.add_argument("--limit", type=int, default=2000, help="leaflet sections (2000)")
    parser.add_argument(
        "--engines", nargs="+", default=[*ENGINES, "encoder-limit"], help="what to run"
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--uri", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--dsn", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--prefix", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child == "encoder-limit":
        print(json.dumps(_child_encoder(args)))
        return 0
    if args.child is not None:
        print(json.dumps(asyncio.run(_child_ingest(args))))
        return 0

    from deployments.runtime import EmbeddedPostgres, MilvusLiteServer

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as folder:
        milvus = MilvusLiteServer(Path(folder) / "milvus").start()
        postgres = EmbeddedPostgres(Path(folder) / "postgres").start()
        try:
            for child in args.engines:
                dsn = postgres.dsn
                if child in ENGINES:
                    database = f"bench_{child.replace('-', '_')}"
                    dsn = EmbeddedPostgres(postgres.data_dir, database=database).start().dsn
                rows.append(_run_child(args, child, milvus.uri, dsn))
                print(json.dumps(rows[-1]), flush=True)
        finally:
            milvus.stop()
            postgres.stop()
    table = format_table(rows, args.limit)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (RESULTS / f"ingest-{stamp}.json").write_text(json.dumps(rows, indent=2))
    (RESULTS / f"ingest-{stamp}.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
