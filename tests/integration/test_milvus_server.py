"""``MilvusVectorStore`` against a real Milvus 2.3.5 engine (the ``milvus`` wheel) in its
own network namespace: a dense-only collection with an HNSW index, upsert, count and a
search with a ``document_id in [...]`` filter; and what a hybrid collection does there.

The server is only reachable inside its namespace, so the client part of each test runs
as ``nsenter -n -t PID python -c ...`` calling :func:`run_client_checks` in this module,
which prints one JSON object. Skips when the wheel, root or ``unshare`` is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from deployments.runtime.milvus_standalone import MilvusStandalone, milvus_server_available

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
DIMENSION = 16
ROWS = 60
DOCUMENTS = 12


def _vectors() -> np.ndarray:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(ROWS, DIMENSION)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


async def _checks(uri: str) -> dict[str, Any]:
    from pymilvus import MilvusClient

    from pipeline.schema import Node, ScopeFilter
    from pipeline.stores.milvus import DenseIndex, MilvusVectorStore

    result: dict[str, Any] = {}
    vectors = _vectors()
    nodes = [
        Node(
            node_id=f"chunk-{i}",
            text=f"chunk {i}",
            metadata={"document_id": f"doc-{i % DOCUMENTS}", "kb_name": "kb"},
        )
        for i in range(ROWS)
    ]
    async with MilvusVectorStore(uri, index=DenseIndex.hnsw(), collection_prefix="it_") as store:
        await store.drop_collection("dense")
        await store.ensure_collection("dense", DIMENSION, hybrid=False)
        result["written"] = await store.upsert("dense", nodes, vectors)
        result["count"] = await store.count("dense")
        client = MilvusClient(uri=uri)
        index = client.describe_index(store.physical_name("dense"), index_name="dense")
        result["index_type"] = index.get("index_type")
        result["server_version"] = client.get_server_version()
        hits = await store.search_dense("dense", vectors[5], 5)
        result["top_hit"] = hits[0].node.node_id
        result["top_score"] = hits[0].score
        wanted = ["doc-3", "doc-7"]
        filtered = await store.search_dense(
            "dense", vectors[5], 20, scope=ScopeFilter(document_ids=wanted)
        )
        result["filtered_documents"] = sorted({h.node.metadata["document_id"] for h in filtered})
        result["filtered_hits"] = len(filtered)
        # A hybrid collection needs sparse vectors and the BM25 function (Milvus >= 2.5).
        await store.drop_collection("hybrid")
        try:
            await store.ensure_collection("hybrid", DIMENSION, hybrid=True)
            result["hybrid"] = "created"
        except ValueError as error:
            result["hybrid"] = f"ValueError: {error}"
        result["hybrid_left_behind"] = client.has_collection(store.physical_name("hybrid"))
        await store.drop_collection("hybrid")
        await store.drop_collection("dense")
        client.close()
    return result


def run_client_checks(uri: str) -> None:
    """Client side (run inside the server's namespace): print the checks as JSON."""
    print(json.dumps(asyncio.run(_checks(uri))))


@pytest.fixture(scope="module")
def milvus_standalone() -> Iterator[MilvusStandalone]:
    """The server in a temporary folder outside pytest's basetemp (a concurrent pytest
    run may prune old basetemps while this server still writes there)."""
    reason = milvus_server_available()
    if reason is not None:
        pytest.skip(f"Milvus 2.3.5 server unavailable: {reason}")
    folder = Path(tempfile.mkdtemp(prefix="biomed-search-milvus-2.3-"))
    server = MilvusStandalone(folder).start()
    try:
        yield server
    finally:
        server_pid = server.server_pid
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
        assert not Path(f"/proc/{server_pid}").exists() or (
            Path(f"/proc/{server_pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        ), f"Milvus server {server_pid} still running"


@pytest.fixture(scope="module")
def client_result(milvus_standalone: MilvusStandalone) -> dict[str, Any]:
    code = (
        "import sys; from tests.integration.test_milvus_server import run_client_checks; "
        "run_client_checks(sys.argv[1])"
    )
    completed = subprocess.run(
        milvus_standalone.client_command([sys.executable, "-c", code, milvus_standalone.uri]),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


class TestMilvusServer23:
    def test_server_is_only_reachable_inside_its_namespace(
        self, milvus_standalone: MilvusStandalone
    ) -> None:
        import socket

        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", 19530), timeout=1):
            pass

    def test_dense_collection_uses_hnsw_and_counts_every_row(
        self, client_result: dict[str, Any]
    ) -> None:
        assert client_result["server_version"].startswith("v2.3.5")
        assert client_result["index_type"] == "HNSW"
        assert client_result["written"] == ROWS
        assert client_result["count"] == ROWS

    def test_search_finds_the_query_vector_itself_first(
        self, client_result: dict[str, Any]
    ) -> None:
        assert client_result["top_hit"] == "chunk-5"
        assert client_result["top_score"] == pytest.approx(1.0, abs=1e-3)

    def test_document_id_filter_keeps_only_and_all_of_those_documents(
        self, client_result: dict[str, Any]
    ) -> None:
        assert client_result["filtered_documents"] == ["doc-3", "doc-7"]
        assert client_result["filtered_hits"] == 2 * ROWS // DOCUMENTS

    def test_hybrid_collection_is_refused_with_a_clear_error_and_nothing_left(
        self, client_result: dict[str, Any]
    ) -> None:
        assert client_result["hybrid"].startswith("ValueError: this Milvus server cannot create")
        assert "lexical_leg" in client_result["hybrid"]
        assert client_result["hybrid_left_behind"] is False
