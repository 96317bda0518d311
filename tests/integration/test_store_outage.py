"""Issue 8: Milvus or PostgreSQL going away gives 503 on /readyz and clear errors on
search; the service recovers when the server returns (same port / socket)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import httpx
import pytest

from deployments.api import create_app
from deployments.config import config_from_data, load_config_data
from deployments.inprocess import local_model_ports
from deployments.service import SearchService
from deployments.stores import StoreEndpoints
from pipeline.stores.embedded import EmbeddedPostgres, MilvusLiteServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def servers():
    """Dedicated servers: this module stops and restarts them."""
    root = Path(tempfile.mkdtemp(prefix="biomed-outage-"))
    milvus = MilvusLiteServer(root).start()
    postgres = EmbeddedPostgres(root).start()
    try:
        yield root, milvus, postgres
    finally:
        MilvusLiteServer(root, port=milvus.port).stop()
        EmbeddedPostgres(root).stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
async def client(servers):
    root, milvus, postgres = servers
    data = load_config_data(
        "default", data_dir=root, overrides={"pipeline": {"tier2": {"policy": "none"}}}
    )
    config = config_from_data(data)
    ports, _ = local_model_ports(config)
    service = SearchService(config, StoreEndpoints(milvus.uri, postgres.dsn), ports)
    app = create_app()
    app.state.service = service
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://biomed", timeout=120
    ) as opened:
        yield opened
    await service.close()


async def test_milvus_outage_is_503_and_recovers(servers, client):
    root, milvus, _ = servers
    assert (await client.get("/readyz")).status_code == 200
    port = milvus.port
    MilvusLiteServer(root, port=port).stop()
    ready = await client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["checks"]["milvus"] != "ok"
    search = await client.post("/v1/search", json={"query": "osimertinib side effects"})
    assert search.status_code == 503
    assert search.json()["error"] == "BackendUnavailable"
    assert search.headers["retry-after"] == "1"
    MilvusLiteServer(root, port=port).start()
    for _ in range(30):
        if (await client.get("/readyz")).status_code == 200:
            break
    assert (await client.get("/readyz")).status_code == 200
    again = await client.post("/v1/search", json={"query": "osimertinib side effects"})
    assert again.status_code == 200, again.text


async def test_postgres_outage_is_503_and_recovers(servers, client):
    root, _, _ = servers
    EmbeddedPostgres(root).stop()
    ready = await client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["checks"]["postgres"] != "ok"
    search = await client.post("/v1/search", json={"query": "osimertinib side effects"})
    # the registry feeds the supplement only: the search degrades, it does not fail
    assert search.status_code == 200
    supplement = next(s for s in search.json()["trace"] if s["name"] == "supplement")
    assert supplement["degraded"] is True
    EmbeddedPostgres(root).start()
    for _ in range(30):
        if (await client.get("/readyz")).status_code == 200:
            break
    assert (await client.get("/readyz")).status_code == 200
