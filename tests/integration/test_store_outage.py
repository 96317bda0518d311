"""Issue 8: Milvus or PostgreSQL going away gives 503 on /readyz and clear errors on
search; the service recovers when the server returns (same port / socket)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from deployments.config import config_from_data, load_config_data
from deployments.inprocess import local_model_ports
from deployments.runtime import EmbeddedPostgres, MilvusLiteServer
from deployments.service import SearchService
from deployments.stores import StoreEndpoints
from tests.support.http import app_client

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
    # The supplement (off in the default profile, on in production) is what reads the
    # registry at query time: on here, so a PostgreSQL outage has something to degrade.
    data = load_config_data(
        "default",
        data_dir=root,
        overrides={"pipeline": {"tier2": {"policy": "none"}, "stages": {"supplement": True}}},
    )
    config = config_from_data(data)
    ports, _ = local_model_ports(config)
    service = SearchService(config, StoreEndpoints(milvus.uri, postgres.dsn), ports)
    await service.start()  # stores opened while both answer: each test starts from there
    async with app_client(service) as opened:
        yield opened
    await service.close()


RECOVERY_S = 30.0  # generous: a loaded CI machine; measured ~0.5 s here


async def _ready_within(client: httpx.AsyncClient, seconds: float) -> httpx.Response:
    """Poll ``/readyz`` every 0.25 s until it answers 200 or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while True:
        ready = await client.get("/readyz")
        if ready.status_code == 200 or time.monotonic() > deadline:
            return ready
        await asyncio.sleep(0.25)


def _diagnosis(milvus: MilvusLiteServer, response: httpx.Response) -> str:
    """What a failed readiness assertion prints: the checks and the server's log tail."""
    log = milvus.log_path.read_text(errors="replace")[-2000:] if milvus.log_path.exists() else ""
    return f"{response.text}; milvus running={milvus.is_running()}; log tail:\n{log}"


async def test_milvus_outage_is_503_and_recovers(servers, client):
    root, milvus, _ = servers
    ready = await client.get("/readyz")
    assert ready.status_code == 200, _diagnosis(milvus, ready)
    port = milvus.port
    MilvusLiteServer(root, port=port).stop()
    try:
        ready = await client.get("/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["milvus"] != "ok"
        search = await client.post("/v1/search", json={"query": "osimertinib side effects"})
        assert search.status_code == 503
        assert search.json()["error"] == "BackendUnavailable"
        assert search.headers["retry-after"] == "1"
    finally:  # the next test needs the server whatever happened here
        MilvusLiteServer(root, port=port).start()
    ready = await _ready_within(client, RECOVERY_S)
    assert ready.status_code == 200, _diagnosis(milvus, ready)
    again = await client.post("/v1/search", json={"query": "osimertinib side effects"})
    assert again.status_code == 200, again.text


async def test_postgres_outage_is_503_and_recovers(servers, client):
    root, _, _ = servers
    ready = await _ready_within(client, RECOVERY_S)
    assert ready.status_code == 200, ready.text
    EmbeddedPostgres(root).stop()
    try:
        ready = await client.get("/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["postgres"] != "ok"
        search = await client.post("/v1/search", json={"query": "osimertinib side effects"})
        # the registry feeds the supplement only: the search degrades, it does not fail
        assert search.status_code == 200
        supplement = next(s for s in search.json()["trace"] if s["name"] == "supplement")
        assert supplement["degraded"] is True
    finally:  # the next test needs the server whatever happened here
        EmbeddedPostgres(root).start()
    ready = await _ready_within(client, RECOVERY_S)
    assert ready.status_code == 200, ready.text
