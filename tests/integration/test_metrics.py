"""Prometheus metrics through Ray Serve's metrics API (issue 18): a real Serve application
answers a few searches, then Ray's metrics agent endpoint (the node's metrics export port)
carries every ``biomed_search_*`` series, tagged with this module's application.

The application's cross-encoder is a fake that crashes (``tests.support.faulty``), so every
Tier-2 rerank degrades and falls back to the first-stage order: the degraded and fallback
counters then have something to count. The encoders, stores and ingress are real.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from deployments.config import load_config
from deployments.roles import model_deployments
from tests.support.faulty import FailingCrossEncoder
from tests.support.slices import ingest_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

APP = "metrics"
PREFIX = "/metrics-it"
#: Ray reports metrics to its agent every few seconds (``metrics_report_interval_ms``,
#: 10 s by default); a busy two-core machine can take a few rounds.
EXPORT_DEADLINE_S = 120.0
QUERIES = ["osimertinib side effects", "Tagrisso dosage", "osimertinib side effects"]
DASHBOARD = Path(__file__).resolve().parents[2] / "configs" / "grafana" / "biomed-search.json"


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return load_config(
        "default",
        data_dir=tmp_path_factory.mktemp("metrics"),
        overrides={
            "stores": {"collection_prefix": "metrics_"},
            # Tier-2 through the cross-encoder deployment (replaced by a failing fake)
            "pipeline": {"tier2": {"scorer": "cross_encoder"}},
            "serve": {
                "encoder": {"num_cpus": 0.5, "max_batch_size": 32, "batch_wait_timeout_s": 0.02},
                "cross_encoder": {"num_cpus": 0.25},
            },
        },
    )


@pytest.fixture(scope="module")
def app_url(serve_cluster, config, endpoints):
    """A small demo slice, ingested in-process, served as the application ``metrics``."""
    from ray import serve

    from deployments.app import build_application

    report = asyncio.run(
        ingest_slice(config, endpoints, "demo", products=("tagrisso",), compounds=("OSIMERTINIB",))
    )
    assert report.documents_written > 0 and not report.failures
    application = build_application(
        config, endpoints, overrides={"cross-encoder": FailingCrossEncoder.bind()}
    )
    serve.run(application, name=APP, route_prefix=PREFIX)  # returns once RUNNING
    yield f"{serve_cluster.url}{PREFIX}"
    serve.delete(APP)


@pytest.fixture(scope="module")
def traffic(app_url) -> dict[str, Any]:
    """A few searches (one repeated: a query-cache hit) and one invalid request."""
    bodies = []
    for query in QUERIES:
        response = httpx.post(f"{app_url}/v1/search", json={"query": query}, timeout=120)
        assert response.status_code == 200, response.text
        bodies.append(response.json())
    invalid = httpx.post(f"{app_url}/v1/search", json={"query": ""}, timeout=60)
    assert invalid.status_code == 422, invalid.text
    return {"bodies": bodies}


Samples = dict[str, list[tuple[dict[str, str], float]]]


def scrape(metrics_url: str) -> Samples:
    """Every ``ray_biomed_search_*`` sample of application ``APP``: name -> (labels, value)."""
    text = httpx.get(metrics_url, timeout=30).text
    samples: Samples = defaultdict(list)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("ray_biomed_search_") and (
                sample.labels.get("application") == APP
            ):
                samples[sample.name].append((sample.labels, sample.value))
    return samples


def total(samples: Samples, name: str, **labels: str) -> float:
    """Sum of ``name``'s samples whose labels include ``labels``."""
    return sum(
        value
        for found, value in samples.get(name, [])
        if all(found.get(key) == wanted for key, wanted in labels.items())
    )


def expectations(traffic: dict[str, Any]) -> dict[str, tuple[str, dict, float]]:
    """What the endpoint must show after ``traffic``: check -> (sample, labels, value)."""
    bodies = traffic["bodies"]
    workflows: dict[str, int] = defaultdict(int)
    for body in bodies:
        workflows[body["intent"]["workflow"]] += 1
    checks: dict[str, tuple[str, dict, float]] = {}
    for workflow, count in workflows.items():
        checks[f"requests {workflow} 200"] = (
            "ray_biomed_search_requests_total",
            {"endpoint": "/v1/search", "workflow": workflow, "status": "200"},
            count,
        )
    checks["requests none 422"] = (
        "ray_biomed_search_requests_total",
        {"endpoint": "/v1/search", "workflow": "none", "status": "422"},
        1,
    )
    stage_runs: dict[str, int] = defaultdict(int)
    for body in bodies:
        for entry in body["trace"]:
            stage_runs[entry["name"]] += 1
    for stage, count in stage_runs.items():
        checks[f"stage latency {stage}"] = (
            "ray_biomed_search_stage_latency_ms_count",
            {"stage": stage, "deployment": "SearchIngress"},
            count,
        )
    degraded = sum(entry["degraded"] for body in bodies for entry in body["trace"])
    checks["degraded tier2"] = (
        "ray_biomed_search_stage_degraded_total",
        {"stage": "tier2"},
        sum(
            entry["degraded"]
            for body in bodies
            for entry in body["trace"]
            if entry["name"] == "tier2"
        ),
    )
    checks["degraded all"] = ("ray_biomed_search_stage_degraded_total", {}, degraded)
    checks["fallback tier2"] = (
        "ray_biomed_search_stage_fallbacks_total",
        {"stage": "tier2", "decision": "rerank_t2_fallback_existing_scores"},
        len(bodies),
    )
    return checks


def test_every_metric_series_reaches_the_prometheus_endpoint(serve_cluster, config, traffic):
    encoder = next(d.name for d in model_deployments(config) if d.kind == "encoder")
    checks = expectations(traffic)
    # every search here degrades at Tier-2 (the cross-encoder crashes) and falls back
    for body in traffic["bodies"]:
        tier2 = next(entry for entry in body["trace"] if entry["name"] == "tier2")
        assert tier2["degraded"] and "rerank_t2_fallback_existing_scores" in tier2["decisions"]

    deadline = time.monotonic() + EXPORT_DEADLINE_S
    while True:
        samples = scrape(serve_cluster.metrics_url)
        missing = {
            check: (name, labels, wanted, total(samples, name, **labels))
            for check, (name, labels, wanted) in checks.items()
            if total(samples, name, **labels) != wanted
        }
        batches = total(samples, "ray_biomed_search_batch_items_count", deployment=encoder)
        hits = total(samples, "ray_biomed_search_query_cache_hits_total")
        misses = total(samples, "ray_biomed_search_query_cache_misses_total")
        exported = not missing and batches >= 1 and hits >= 1 and misses >= 1
        if exported or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    assert not missing, f"series missing or off (check: name, labels, wanted, found): {missing}"
    assert batches >= 1, f"no batch-size histogram for {encoder}: {sorted(samples)}"
    assert hits >= 1 and misses >= 1, (hits, misses)
    # one histogram sample per forward call: as many requests-per-batch as items samples
    assert total(samples, "ray_biomed_search_batch_requests_count", deployment=encoder) == batches
    # the repeated query's vector came from the cache; the first one needed the encoder
    assert misses >= len(set(QUERIES))
    # the Grafana dashboard queries only series the endpoint really has
    referenced = set(re.findall(r"ray_biomed_search_\w+", DASHBOARD.read_text()))
    assert referenced and referenced <= set(samples), sorted(referenced - set(samples))
