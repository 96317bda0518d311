"""Session fixtures: a real Milvus Lite server process and a real embedded PostgreSQL.

Each server is started once per test session in a temporary data directory and stopped
at the end; the teardown asserts that no server process is left behind (zombies waiting
for init to reap them count as gone).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psutil
import pytest

from deployments.runtime import EmbeddedPostgres, MilvusLiteServer
from deployments.stores import StoreEndpoints
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


@pytest.fixture(scope="module")
def endpoints(milvus_server: MilvusLiteServer, module_dsn: str) -> StoreEndpoints:
    """Where a module's application finds its stores: the session's Milvus Lite server
    and the module's own PostgreSQL database."""
    return StoreEndpoints(milvus_uri=milvus_server.uri, postgres_dsn=module_dsn)


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


@pytest.fixture(scope="module")
def module_dsn(postgres_server: EmbeddedPostgres, request: pytest.FixtureRequest) -> str:
    """A new database of this test module's own on the session server
    (``t_<module>_<random>``), so that no module sees documents another registered (the
    same demo ids recur). New on every set-up: in a shuffled run a module's fixtures are
    set up again when its tests come back, and must not see their own earlier rows."""
    module = request.module.__name__.rsplit(".", 1)[-1]
    name = re.sub(r"\W", "_", module)[:48]
    database = f"t_{name}_{uuid.uuid4().hex[:8]}"
    return EmbeddedPostgres(postgres_server.data_dir, database=database).start().dsn


@pytest.fixture(scope="module")
async def registry(module_dsn: str) -> AsyncIterator[PostgresDocumentRegistry]:
    """A migrated ``PostgresDocumentRegistry`` on this module's database."""
    async with PostgresDocumentRegistry(module_dsn, max_size=4) as opened:
        yield opened


# -- Ray Serve: one local instance per test session ---------------------------------------

import os  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@dataclass
class ServeCluster:
    """A local Ray + Serve with the HTTP proxy on ``url``; ``metrics_url`` is the node's
    Prometheus endpoint (Ray's metrics agent on the metrics export port)."""

    url: str
    port: int
    metrics_url: str = ""


@pytest.fixture(scope="session")
def serve_cluster() -> Iterator[ServeCluster]:
    """Start Ray (8 logical CPUs on the 2 real ones: replicas mostly wait) and Serve once;
    shut both down at the end of the session."""
    lock = _only_worker_with_serve()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    from ray import serve

    from deployments.runtime import find_free_port

    port = find_free_port()
    for attempt in range(3):  # Ray gives its raylet 30 s to register: a busy machine can miss
        try:
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
            break
        except Exception:
            ray.shutdown()
            if attempt == 2:
                raise
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    before = {child.pid for child in psutil.Process().children(recursive=True)}
    try:
        metrics_port = ray.nodes()[0]["MetricsExportPort"]
        yield ServeCluster(
            url=f"http://127.0.0.1:{port}",
            port=port,
            metrics_url=f"http://127.0.0.1:{metrics_port}/metrics",
        )
    finally:
        serve.shutdown()
        ray.shutdown()
        if lock is not None:
            lock.unlink(missing_ok=True)
        # Like the store fixtures: Ray's processes (raylet, GCS, workers) must be gone.
        spawned = [
            child
            for child in psutil.Process().children(recursive=True)
            if child.pid not in before or "ray" in " ".join(_cmdline(child))
        ]
        # 90 s: on 2 busy cores (an evaluation run beside the suite) GCS and the raylet
        # once took longer than 30 s to exit after ray.shutdown()
        deadline = time.monotonic() + 90.0
        while _alive(spawned) and time.monotonic() < deadline:
            time.sleep(0.2)
        # GCS and the raylet once stayed asleep past that on a quiet CI machine: stop them
        # as `ray stop --force` would, so no later module meets them, and say so
        stuck = _alive(spawned)
        for process in stuck:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(stuck, timeout=10)
        if stuck:
            print(f"killed Ray processes left after shutdown: {[p.pid for p in stuck]}")
        left = _alive(spawned)
        assert not left, f"Ray processes still running: {[p.pid for p in left]}"


def _only_worker_with_serve() -> Path | None:
    # Under pytest-xdist one worker runs the Ray Serve modules (tests/conftest.py's
    # scheduler); a second Ray on two cores would slow both to time-outs, so say so
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return None
    lock = Path(tempfile.gettempdir()) / f"biomed-search-serve-{run}"
    try:
        lock.open("x").close()
    except FileExistsError:
        pytest.fail(
            f"a second xdist worker ({os.environ.get('PYTEST_XDIST_WORKER')}) started the "
            "session's Ray Serve: the scheduler in tests/conftest.py did not keep its "
            "modules on one worker"
        )
    return lock


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []
