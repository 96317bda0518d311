"""Session fixtures: a real Milvus Lite server process and a real embedded PostgreSQL.

Each server is started once per test session in a temporary data directory and stopped
at the end; the teardown asserts that no server process is left behind (zombies waiting
for init to reap them count as gone).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psutil
import pytest

from deployments.runtime import EmbeddedPostgres, MilvusLiteServer
from pipeline.stores.milvus import MilvusVectorStore
from pipeline.stores.registry import PostgresDocumentRegistry


def _alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    left = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                left.append(process)
        except psutil.NoSuchProcess:
            pass
    return left


@pytest.fixture(scope="session")
def server_dir() -> Iterator[Path]:
    """Data directories of the session's servers, outside pytest's basetemp: pytest keeps
    only its last three basetemp directories, so a concurrent pytest run elsewhere on the
    machine could delete a running server's data from under it."""
    path = Path(tempfile.mkdtemp(prefix="biomed-search-tests-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def milvus_server(server_dir: Path) -> Iterator[MilvusLiteServer]:
    """A managed ``milvus-lite server`` on a free port; stopped and checked at the end."""
    server = MilvusLiteServer(server_dir / "milvus-data").start()
    assert server.pid is not None
    process = psutil.Process(server.pid)
    try:
        yield server
    finally:
        server.stop()
        assert not _alive([process]), f"Milvus Lite server {process.pid} still running"


@pytest.fixture(scope="session")
async def milvus_store(milvus_server: MilvusLiteServer) -> AsyncIterator[MilvusVectorStore]:
    """A ``MilvusVectorStore`` on the session server (collections prefixed ``it_``)."""
    store = MilvusVectorStore(milvus_server.uri, collection_prefix="it_")
    yield store
    await store.close()


@pytest.fixture(scope="session")
def postgres_server(server_dir: Path) -> Iterator[EmbeddedPostgres]:
    """An embedded PostgreSQL with a ``biomed_search`` database; stopped and checked."""
    server = EmbeddedPostgres(server_dir / "postgres-data").start()
    assert server.pid is not None
    postmaster = psutil.Process(server.pid)
    processes = [postmaster, *postmaster.children(recursive=True)]
    try:
        yield server
    finally:
        server.stop()
        left = _alive(processes)
        assert not left, f"PostgreSQL processes still running: {[p.pid for p in left]}"


@pytest.fixture(scope="session")
async def registry(postgres_server: EmbeddedPostgres) -> AsyncIterator[PostgresDocumentRegistry]:
    """A migrated ``PostgresDocumentRegistry`` on the session server."""
    async with PostgresDocumentRegistry(postgres_server.dsn, max_size=4) as opened:
        yield opened


# -- Ray Serve: one local instance per test session ---------------------------------------

import os  # noqa: E402
from dataclasses import dataclass  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@dataclass
class ServeCluster:
    """A local Ray + Serve with the HTTP proxy on ``url``."""

    url: str
    port: int


@pytest.fixture(scope="session")
def serve_cluster() -> Iterator[ServeCluster]:
    """Start Ray (8 logical CPUs on the 2 real ones: replicas mostly wait) and Serve once;
    shut both down at the end of the session."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    from ray import serve

    from deployments.runtime import find_free_port

    port = find_free_port()
    ray.init(
        address="local",
        num_cpus=8,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {
                "PYTHONPATH": str(REPO),
                "HF_HUB_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false",
            }
        },
    )
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    try:
        yield ServeCluster(url=f"http://127.0.0.1:{port}", port=port)
    finally:
        serve.shutdown()
        ray.shutdown()
