"""The product end to end: real Milvus Lite + PostgreSQL, the offline models, the Ray Serve
application over real HTTP (issue 5 acceptance)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from deployments.config import load_config
from deployments.serve_cli import wait_ready
from tests.support.budgets import SLOW_MACHINE_BUDGETS
from tests.support.faulty import FailingCrossEncoder, StoppedEncoder
from tests.support.slices import ingest_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STAGES = {
    "intent",
    "routing",
    "plan:biomed_text",
    "plan:chemical",
    "supplement",
    "rrf",
    "injection",
    "tier2",
    "assembly",
}
DRUGS = [
    "osimertinib",
    "gefitinib",
    "olaparib",
    "rivaroxaban",
    "cabozantinib",
    "Tagrisso",
    "Iressa",
    "Lynparza",
    "Xarelto",
    "Cabometyx",
]
ASPECTS = ["side effects", "dosage", "warnings", "storage"]


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return load_config(
        "default",
        data_dir=tmp_path_factory.mktemp("e2e"),
        overrides={
            "stores": {"collection_prefix": "e2e_"},
            # Production's paths: the served cross-encoder (the default profile scores
            # Tier-2 from stored vectors and deploys none), the supplement and R-RT-5's
            # chemical plan for drug questions (both off in the default profile).
            "pipeline": {
                "tier2": {"scorer": "cross_encoder"},
                "stages": {"supplement": True},
                "routing": {"chemical_for_drug_queries": True},
                "budgets": SLOW_MACHINE_BUDGETS,  # paths, not speed
            },
            "serve": {
                "encoder": {"num_cpus": 0.5, "max_batch_size": 32, "batch_wait_timeout_s": 0.02},
                "cross_encoder": {"num_cpus": 0.5},
            },
        },
    )


@pytest.fixture(scope="module")
def corpus(config, endpoints):
    """A slice of the demo corpus, ingested once with the in-process runner."""
    report = asyncio.run(ingest_slice(config, endpoints, "demo"))
    assert report.documents_written > 0 and not report.failures
    return report


@pytest.fixture(scope="module")
def apps(serve_cluster, config, endpoints, corpus):
    """The real application at ``/`` and one with injected faults at ``/faulty``."""
    from ray import serve

    from deployments.app import build_application

    serve.run(build_application(config, endpoints), name="main", route_prefix="/")
    faulty = build_application(
        config,
        endpoints,
        overrides={
            "cross-encoder": FailingCrossEncoder.bind(),
            "Encoder-molformer": StoppedEncoder.bind(),
        },
    )
    serve.run(faulty, name="faulty", route_prefix="/faulty")
    wait_ready(serve_cluster.url, timeout_s=300)
    yield serve_cluster.url
    serve.delete("faulty")
    serve.delete("main")


def search(url: str, query: str, **fields):
    response = httpx.post(f"{url}/v1/search", json={"query": query, **fields}, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()


def stage(body, name):
    return next(entry for entry in body["trace"] if entry["name"] == name)


def test_osimertinib_side_effects_returns_a_tagrisso_chunk(apps):
    body = search(apps, "osimertinib side effects")
    top5 = body["chunks"][:5]
    tagrisso = [c for c in top5 if "Tagrisso" in c["document_name"]]
    assert tagrisso, [c["document_name"] for c in top5]
    assert all(c["biomed_section"] for c in tagrisso)
    assert {"adverse_reactions"} & {c["biomed_section"] for c in tagrisso}
    assert {entry["name"] for entry in body["trace"]} >= STAGES
    assert body["doc_aggs"] and body["total"] >= len(body["chunks"])


def test_smiles_query_routes_to_the_chemical_collection(apps):
    smiles = "COc1cc2ncnc(Nc3ccc(F)c(Cl)c3)c2cc1OCCCN1CCOCC1"  # gefitinib
    body = search(apps, smiles)
    assert [plan["collection"] for plan in body["route"]] == ["chemical"]
    assert body["intent"]["workflow"] == "chemical"
    assert body["chunks"] and {c["collection"] for c in body["chunks"]} == {"chemical"}


async def test_32_concurrent_requests_succeed_and_batches_form(apps):
    queries = [f"{drug} {aspect}" for drug in DRUGS for aspect in ASPECTS][:32]
    async with httpx.AsyncClient(timeout=180) as client:
        responses = await asyncio.gather(
            *(client.post(f"{apps}/v1/search", json={"query": q}) for q in queries)
        )
        stats = (await client.get(f"{apps}/v1/stats")).json()["deployments"]
    assert [r.status_code for r in responses] == [200] * 32
    encoder = stats["Encoder-pubmedbert"]
    assert encoder["max"] > 1, encoder
    assert stats["cross-encoder"]["max"] > 1


async def test_merged_encoder_calls_answer_as_separate_calls(apps, config):
    """The ingress's port merges concurrent encode calls (``deployments.call_coalescing``)
    into fewer handle calls to the real deployment: each caller gets the vectors the
    model gives its texts, and a caller with an input the model rejects fails alone."""
    import numpy as np
    from ray import serve

    from deployments.call_coalescing import MergeSettings
    from deployments.handles import HandleTextEncoder, merged_encoder_calls
    from models.loader import load_role
    from pipeline.errors import InvalidInput

    handle = serve.get_deployment_handle("Encoder-pubmedbert", app_name="main")
    merged = merged_encoder_calls(handle, MergeSettings(4, 2, max_in_flight=2))
    port = HandleTextEncoder(handle, "pubmedbert", 384, merged)
    texts = [f"{drug} {aspect}" for drug in DRUGS[:5] for aspect in ASPECTS[:2]]
    answers = await asyncio.gather(*(port.encode([text]) for text in texts))
    # 10 callers, at most 4 texts a call: two calls out (4 + 3 texts), the last 3 callers
    # in one call when one answers, or spread over two when both answered in the same
    # loop iteration (both slots free): 3 or 4 calls, never one per caller
    assert merged.calls_sent in (3, 4)
    expected = load_role("pubmedbert", config.models).encode(texts)
    np.testing.assert_allclose(np.concatenate(answers), expected, atol=1e-4)
    mixed = await asyncio.gather(
        port.encode([texts[0]]), port.encode([None]), port.encode([texts[1]]),
        return_exceptions=True,
    )
    assert isinstance(mixed[1], InvalidInput), mixed[1]
    np.testing.assert_allclose(np.concatenate([mixed[0], mixed[2]]), expected[:2], atol=1e-4)
    # a bare string is refused before it is merged (it would go out as one text per
    # character), and titles must line up with texts
    sent = merged.calls_sent
    with pytest.raises(InvalidInput, match="single string"):
        await port.encode(texts[0])
    with pytest.raises(InvalidInput, match="2 titles for 1 texts"):
        await port.encode([texts[0]], ["a", "b"])
    assert merged.calls_sent == sent


def test_failed_cross_encoder_falls_back_and_is_recorded(apps):
    body = search(f"{apps}/faulty", "osimertinib side effects")
    tier2 = stage(body, "tier2")
    assert tier2["degraded"] is True
    assert "rerank_t2_fallback_existing_scores" in tier2["decisions"]
    assert "crashed" in tier2["error"]
    assert body["chunks"]


def test_stopped_encoder_skips_its_plans_with_a_trace_entry(apps):
    body = search(f"{apps}/faulty", "osimertinib side effects")
    chemical = stage(body, "plan:chemical")
    assert chemical["degraded"] is True and "plan_failed" in chemical["decisions"]
    assert "stopped" in chemical["error"]
    assert stage(body, "plan:biomed_text")["degraded"] is False
    smiles = httpx.post(
        f"{apps}/faulty/v1/search", timeout=120, json={"query": "CC(=O)Oc1ccccc1C(=O)O"}
    )
    assert smiles.status_code == 503  # its only plan needs the stopped encoder
    assert smiles.json()["error"] == "BackendUnavailable"


def test_readyz_and_collections(apps):
    ready = httpx.get(f"{apps}/readyz", timeout=60)
    assert ready.status_code == 200 and ready.json()["ready"] is True
    collections = httpx.get(f"{apps}/v1/collections", timeout=60).json()["collections"]
    rows = {c["name"]: c["rows"] for c in collections}
    assert rows["biomed_text"] > 0 and rows["chemical"] > 0
    faulty = httpx.get(f"{apps}/faulty/readyz", timeout=60)
    assert faulty.status_code == 503


def test_embeddings_application_answers_http_itself(serve_cluster, config):
    """The lean embeddings paths (issue 16): the text encoder deployed as its own
    application answers ``POST /v1/embeddings`` through Serve's proxy (no ingress hop),
    and with ``serve.embeddings_port`` each of its two replicas also answers on that one
    shared port itself, with the same vectors as the in-process model and the replica's
    Server-Timing."""
    import base64
    import socket

    import numpy as np
    from ray import serve

    from deployments.app import build_embeddings_application
    from deployments.embeddings_http import MAX_BODY_BYTES
    from models.loader import load_role

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    encoder = config.serve.encoder.model_copy(update={"num_replicas": 2})
    lean = config.model_copy(
        update={
            "serve": config.serve.model_copy(
                update={
                    "embeddings_route": "/e2e/v1/embeddings",
                    "embeddings_port": port,
                    "encoder": encoder,
                }
            )
        }
    )
    serve.run(
        build_embeddings_application(lean), name="embeddings-e2e", route_prefix="/e2e/v1/embeddings"
    )
    try:
        texts = ["osimertinib side effects", "rivaroxaban dose in renal impairment"]
        expected = load_role("pubmedbert", config.models).encode(texts)
        for url in (
            f"{serve_cluster.url}/e2e/v1/embeddings",
            f"http://127.0.0.1:{port}/v1/embeddings",
        ):
            for _ in range(4):  # fresh connections: the kernel spreads them over both replicas
                response = httpx.post(url, json={"input": texts}, timeout=60)
                assert response.status_code == 200, (url, response.text)
                vectors = np.asarray([item["embedding"] for item in response.json()["data"]])
                np.testing.assert_allclose(vectors, expected, atol=1e-4)
                assert "forward;dur=" in response.headers["server-timing"]
            bad = httpx.post(url, json={"input": []}, timeout=60)
            assert bad.status_code == 422 and bad.json()["fields"][0]["field"] == "input"
            # a body past the cap is refused before it is read through (Serve's proxy too)
            huge = httpx.post(url, content=b"x" * (MAX_BODY_BYTES + 1), timeout=60)
            assert huge.status_code == 413 and huge.json()["fields"][0]["field"] == "body"
            packed = httpx.post(url, json={"input": texts, "encoding_format": "base64"}, timeout=60)
            assert packed.status_code == 200
            decoded = [
                np.frombuffer(base64.b64decode(item["embedding"]), dtype="<f4")
                for item in packed.json()["data"]
            ]
            np.testing.assert_allclose(np.stack(decoded), expected, atol=1e-4)
    finally:
        serve.delete("embeddings-e2e")
