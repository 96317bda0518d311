"""Smoke tests of the benchmark scripts (issue 7): each runs with tiny bounds against the
session's real stores and Ray Serve and writes well-formed output. Speed is measured by
the benchmarks, never asserted here."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from bench import baselines, encoders, load
from bench.infinity import DEFAULT_INFINITY_PYTHON
from bench.tables import markdown, targets, write_outputs
from deployments.config import load_config
from deployments.ingest import document_roles, run_ingest
from deployments.local import load_local_models
from deployments.serve_cli import wait_ready
from deployments.stores import open_stores
from pipeline.vocabulary import default_vocabulary
from tests.support.slices import demo_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PREFIX = "benchsmoke_"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bench-smoke")


@pytest.fixture(scope="module")
def smoke_config(data_dir) -> Path:
    """A config file over the default profile: own collections, a small Tier-2 pool
    scored by the cross-encoder deployment (the default profile scores from stored
    vectors and has none), so the benchmarks' cross-encoder paths run too."""
    path = data_dir / "bench-smoke.yaml"
    path.write_text(
        f"stores: {{collection_prefix: {PREFIX}}}\n"
        "pipeline: {tier2: {max_candidates: 8, scorer: cross_encoder}}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def corpus(endpoints, data_dir, smoke_config):
    """Two products and three compounds of the demo corpus, ingested once."""
    config = load_config("default", smoke_config, data_dir)

    async def ingest():
        models = load_local_models(config.models, document_roles(config))
        async with open_stores(endpoints, config.stores) as (store, registry):
            records = demo_slice(
                default_vocabulary(),
                products=("tagrisso", "xarelto"),
                compounds=("OSIMERTINIB", "RIVAROXABAN", "ASPIRIN"),
            )
            return await run_ingest(
                config, records, "demo", store, registry, dict(models.encoders), progress=False
            )

    report = asyncio.run(ingest())
    assert report.documents_written > 0 and not report.failures
    return report


@pytest.fixture(scope="module")
def smoke_app(serve_cluster, endpoints, data_dir, smoke_config, corpus):
    """The application at ``/bench-smoke``."""
    from ray import serve

    from deployments.app import build_application

    config = load_config("default", smoke_config, data_dir)
    serve.run(
        build_application(config, endpoints),
        name="bench-smoke",
        route_prefix="/bench-smoke",
    )
    url = f"{serve_cluster.url}/bench-smoke"
    wait_ready(url, timeout_s=300)
    yield url
    serve.delete("bench-smoke")


def test_bench_cli_writes_json_and_png_with_batches_and_stages(smoke_app, tmp_path):
    status = load.main(
        [
            smoke_app,
            "--concurrency",
            "1",
            "2",
            "--rates",
            "4",
            "--requests",
            "3",
            "--duration",
            "60",
            "--warmup",
            "1",
            "--stage-concurrency",
            "1",
            "--out",
            str(tmp_path),
            "--label",
            "smoke",
        ]
    )

    assert status == 0
    report = json.loads(next(tmp_path.glob("load-smoke-*.json")).read_text())
    assert [(lv["mode"], lv["concurrency"], lv["rate_rps"]) for lv in report["levels"]] == [
        ("closed", 1, None),
        ("closed", 2, None),
        ("open", None, 4.0),
    ]
    for level in report["levels"]:
        summary = level["summary"]
        assert summary["requests"] == 3 and summary["errors"] == 0
        assert summary["p50_ms"] <= summary["p99_ms"] <= summary["max_ms"]
        assert summary["throughput_rps"] > 0
    batches = report["levels"][0]["batches"]
    assert batches["Encoder-pubmedbert"]["batches"] >= 1
    assert sum(batches["cross-encoder"]["items_histogram"].values()) >= 1
    stages = report["levels"][0]["stages"]
    assert {"intent", "routing", "encode", "ann", "tier2", "outside stages"} <= set(stages)
    assert "stages" not in report["levels"][1]
    assert "stop-word suffix" in report["queries"]["unique_suffix"]
    assert next(tmp_path.glob("load-smoke-*.png")).read_bytes().startswith(PNG_MAGIC)


def test_bench_rejects_a_url_given_twice(smoke_app):
    with pytest.raises(SystemExit):
        load.parse_arguments([smoke_app, "--url", "http://127.0.0.1:1"])


def test_baselines_batch_wait_is_given_per_runtime():
    settings = baselines._arguments(["--encoder-batch-wait", "onnx-int8=0", "torch=0.005"])
    assert settings.encoder_batch_wait_s == {"onnx-int8": 0.0, "torch": 0.005}
    for bad in ("int8=0", "torch=-1", "torch=inf", "torch=soon", "torch"):
        with pytest.raises(SystemExit):
            baselines._arguments(["--encoder-batch-wait", bad])


def test_baselines_quick_run_writes_every_table(
    serve_cluster, endpoints, data_dir, smoke_config, corpus, tmp_path
):
    settings = baselines.quick(
        baselines.BaselineSettings(
            data_dir=data_dir,
            config=smoke_config,
            out_dir=tmp_path,
            route_prefix="/bench-base",
            steps=("in-process", "encoders", "service"),
            requests=2,
            encoder_batch_wait_s={"torch": 0.0},
        )
    )

    report = asdict(baselines.run_baselines(settings, endpoints, serve_url=serve_cluster.url))
    paths = write_outputs(report, tmp_path)

    assert [lv["concurrency"] for lv in report["in_process"]] == [1, 2]
    assert set(report["service"]) == {"batching on", "batching off"}  # quick()'s two
    off = report["service"]["batching off"]["levels"][0]["batches"]
    assert set(off["Encoder-pubmedbert"]["items_histogram"]) == {1}
    assert {row["deployment"] for row in report["encoders"]} == {
        "Encoder-pubmedbert",
        "Encoder-molformer",
        "CrossEncoder",
    }
    assert all(row["served_rate"] > 0 and row["limit_rate"] > 0 for row in report["encoders"])
    # the limit was measured before and after each deployment's levels; the higher counts
    assert all(len(row["limit_runs"]) == 2 and row["limit_rate"] == max(row["limit_runs"])
               for row in report["encoders"])
    assert all("batch wait 0 ms" in row["label"] for row in report["encoders"])
    http_rows = report["infinity"]["ours_over_http"]
    assert [(row["path"], row["concurrency"]) for row in http_rows] == [
        ("front + handle", 1),
        ("front + handle", 2),
        ("direct", 1),
        ("direct", 2),
    ]
    for row in http_rows:  # the replica's Server-Timing reached the client on both paths
        assert row["failures"] == 0 and row["texts_per_s"] > 0
        assert row["client_cpu_ms"] > 0  # the load generator's own cost is reported
        assert {"client", "queue", "forward", "replica"} <= set(row["hops_ms"])
        assert row["hops_ms"]["forward"] <= row["hops_ms"]["replica"] <= row["hops_ms"]["client"]
    assert "handle" in http_rows[0]["hops_ms"] and "handle" not in http_rows[2]["hops_ms"]
    assert json.loads(paths["json"].read_text())["service"]
    text = markdown(report)
    for title in (
        "### /v1/search load",
        "### Variants",
        "### Stage times",
        "### Model deployments",
        "### MiniLM over HTTP",
    ):
        assert title in text
    assert "limit (before / after)" in text
    assert any(item["target"] == "serving overhead at c=1" for item in targets(report))
    for name in ("load_png", "variants_png", "encoders_png"):
        assert paths[name].read_bytes().startswith(PNG_MAGIC)


def test_encoders_in_process_rows_keep_their_shape(tmp_path):
    out = tmp_path / "encoders.json"

    onnx = ["--onnx-cache-dir", str(tmp_path / "onnx")]
    assert encoders.main(["--quick", *onnx, "--out", str(out)]) == 0

    rows = json.loads(out.read_text())["in_process"]
    assert {row["engine"] for row in rows} >= {"torch unsorted", "torch length-sorted"}
    assert all(row["rate"] > 0 for row in rows)
    # the CPU token-budget sweep: one row per engine x budget x batch size, no scorer rows
    swept = tmp_path / "budgets.json"
    budgets = ["--token-budgets", "8", "--skip-scorer"]
    assert encoders.main(["--quick", *onnx, *budgets, "--out", str(swept)]) == 0
    engines = {row["engine"] for row in json.loads(swept.read_text())["in_process"]}
    assert engines == {
        f"{engine}, {budget} tok"
        for engine in ("torch unsorted", "torch length-sorted", "onnxruntime length-sorted",
                       "onnxruntime int8 length-sorted")
        for budget in (8,)
    }


@pytest.mark.skipif(
    not DEFAULT_INFINITY_PYTHON.exists(),
    reason=f"infinity-emb environment not installed ({DEFAULT_INFINITY_PYTHON}; bench/README.md)",
)
def test_infinity_emb_serves_the_same_minilm(tmp_path, data_dir, smoke_config):
    settings = replace(
        baselines.quick(
            baselines.BaselineSettings(data_dir=data_dir, config=smoke_config, out_dir=tmp_path)
        ),
        infinity_python=DEFAULT_INFINITY_PYTHON,
        infinity_port=_free_port(),
    )

    result = baselines.run_infinity(settings)

    assert "skipped" not in result, result.get("skipped")
    assert [(row["engine"], row["concurrency"]) for row in result["rows"]] == [
        ("torch", 1),
        ("torch", 2),
    ]
    assert all(row["texts_per_s"] > 0 and row["failures"] == 0 for row in result["rows"])


def _free_port() -> int:
    from deployments.runtime import find_free_port

    return find_free_port()
