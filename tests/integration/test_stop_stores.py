"""``biomed-search stop-stores``: ``build_app`` (``serve run`` / ``serve deploy``) leaves
the embedded servers of its data directory running (started detached, to outlive its
Ray worker); the command stops them, whoever started them, keeps the data, names what it
did, and never takes a process that reused a dead server's pid for the server."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from biomed_search.cli import main
from deployments.config import load_config
from deployments.runtime import EmbeddedPostgres, MilvusLiteServer
from deployments.stores import stop_embedded_servers

pytestmark = pytest.mark.integration

LEAFLETS = (
    Path(__file__).resolve().parents[3] / "shared/data/drug_labels/ema_leaflet_sections.jsonl"
)


@pytest.mark.slow
def test_stop_stores_stops_servers_left_running_and_then_finds_none(tmp_path, capsys):
    with contextlib.ExitStack() as cleanup:  # a failed assertion leaves no server behind
        cleanup.callback(MilvusLiteServer(tmp_path).stop)
        cleanup.callback(EmbeddedPostgres(tmp_path).stop)
        milvus = MilvusLiteServer(tmp_path, stop_at_exit=False).start()
        postgres = EmbeddedPostgres(tmp_path).start()
        other = tmp_path / "other"  # another data directory's server stays up
        cleanup.callback(MilvusLiteServer(other).stop)
        MilvusLiteServer(other, stop_at_exit=False).start()
        assert milvus.is_running() and postgres.is_running()

        assert main(["stop-stores", "--data-dir", str(tmp_path)]) == 0
        assert json.loads(capsys.readouterr().out) == {"milvus": "stopped",
                                                       "postgres": "stopped"}
        assert not MilvusLiteServer(tmp_path).is_running()
        assert not EmbeddedPostgres(tmp_path).is_running()
        assert MilvusLiteServer(other).is_running()
        assert (tmp_path / "postgres" / "PG_VERSION").exists()  # the data stays
        assert main(["stop-stores", "--data-dir", str(tmp_path)]) == 0
        assert json.loads(capsys.readouterr().out) == {"milvus": "not running",
                                                       "postgres": "not running"}


def test_a_stale_postmaster_pid_naming_another_process_is_not_stopped(tmp_path, capsys):
    """A server that died leaves ``postmaster.pid``; its pid may now be anyone's."""
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        pgdata = tmp_path / "postgres"
        pgdata.mkdir()
        (pgdata / "postmaster.pid").write_text(
            f"{bystander.pid}\n{pgdata}\n{int(time.time())}\n5432\n/tmp\n\n")
        assert EmbeddedPostgres(tmp_path).pid is None  # not a postgres process
        assert main(["stop-stores", "--data-dir", str(tmp_path)]) == 0
        assert json.loads(capsys.readouterr().out)["postgres"] == "not running"
        assert bystander.poll() is None  # still alive
    finally:
        bystander.kill()
        bystander.wait()


def test_a_missing_data_dir_is_left_uncreated_and_an_external_store_alone(tmp_path):
    missing = tmp_path / "typo"
    config = load_config("default", data_dir=missing)
    assert stop_embedded_servers(config) == {"milvus": "not running", "postgres": "not running"}
    assert not missing.exists()
    config = load_config("default", data_dir=tmp_path,
                         overrides={"stores": {"milvus_uri": "http://127.0.0.1:1"}})
    assert stop_embedded_servers(config) == {"milvus": "external", "postgres": "not running"}


def _hold_lock(path, seconds: float) -> subprocess.Popen:
    """Another process holding ``path``'s lock for ``seconds`` (as a start or stop in
    progress there would); returns once it holds it. Just before it lets go it prints
    the time (epoch s): :func:`_released_at` reads it."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, sys, time\n"
         "handle = open(sys.argv[1], 'a')\n"
         "fcntl.flock(handle, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\n"
         "time.sleep(float(sys.argv[2]))\n"
         "print(time.time(), flush=True)\n"
         "fcntl.flock(handle, fcntl.LOCK_UN)\n", str(path), str(seconds)],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def _released_at(holder: subprocess.Popen) -> float:
    return float(holder.stdout.readline())


@pytest.mark.slow
def test_postgres_start_and_stop_wait_for_another_process_start_or_stop(tmp_path):
    """A stop that ran between another process's server start and its first connection
    would fail that start: starts and stops of one data dir take turns. (Compared by the
    holder's own release time: its process can outlive its lock by a moment.)"""
    lock = tmp_path / EmbeddedPostgres.LOCK_FILE
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(EmbeddedPostgres(tmp_path).stop)
        EmbeddedPostgres(tmp_path).start()
        # a start that reuses the running server takes ~0.1 s unlocked, well inside 2 s
        holder = _hold_lock(lock, 2.0)
        cleanup.callback(holder.kill)
        EmbeddedPostgres(tmp_path).start()
        returned = time.time()
        assert _released_at(holder) <= returned  # it went on only once the holder let go
        assert EmbeddedPostgres(tmp_path).is_running()

        holder = _hold_lock(lock, 2.0)
        cleanup.callback(holder.kill)
        EmbeddedPostgres(tmp_path).stop()
        returned = time.time()
        assert _released_at(holder) <= returned  # it stopped only once the holder let go
        assert not EmbeddedPostgres(tmp_path).is_running()


def _kill_ingest_when(tmp_path, cleanup, ready, poll_s: float) -> None:
    """Run ``biomed-search ingest`` of the leaflets into ``tmp_path``, SIGTERM it once
    ``ready()`` holds, and check it ended as interrupted, leaving no store running."""
    cleanup.callback(MilvusLiteServer(tmp_path).stop)  # a failed assertion leaves none
    cleanup.callback(EmbeddedPostgres(tmp_path).stop)
    command = [sys.executable, "-m", "biomed_search.cli", "ingest", "--no-progress",
               "--data-dir", str(tmp_path), "--kb", "killed", str(LEAFLETS)]
    ingest = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    cleanup.callback(ingest.kill)
    deadline = time.monotonic() + 180
    while not ready():
        assert ingest.poll() is None, ingest.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the ingest never got there"
        time.sleep(poll_s)
    ingest.send_signal(signal.SIGTERM)
    _, errors = ingest.communicate(timeout=120)
    assert ingest.returncode == 130, errors[-2000:]  # interrupted, not killed outright
    assert not MilvusLiteServer(tmp_path).is_running()
    assert not EmbeddedPostgres(tmp_path).is_running()


@pytest.mark.slow
def test_a_killed_ingest_stops_the_stores_it_started(tmp_path):
    """SIGTERM (docker stop, a scheduler's timeout) ends a command as Ctrl-C does: the
    embedded stores it started stop with it. With Python's default SIGTERM the ingest died
    at once and left Milvus Lite running."""
    with contextlib.ExitStack() as cleanup:
        _kill_ingest_when(tmp_path, cleanup, lambda: (
            MilvusLiteServer(tmp_path).is_running() and EmbeddedPostgres(tmp_path).is_running()
        ), poll_s=0.2)


@pytest.mark.slow
def test_an_ingest_killed_during_its_first_start_leaves_a_data_dir_that_starts(tmp_path):
    """SIGTERM while PostgreSQL is first set up (initdb) waits until initdb is done, then
    stops what started: no store is left running, and the next start finds a cluster it
    can run (a half-written one would fail every later start)."""
    with contextlib.ExitStack() as cleanup:
        # the postgres folder appears when initdb begins
        _kill_ingest_when(tmp_path, cleanup, (tmp_path / "postgres").exists, poll_s=0.02)
        assert EmbeddedPostgres(tmp_path).start().is_running()  # the cluster is whole


def test_a_running_server_is_known_whatever_start_time_its_pid_file_gives(tmp_path):
    """After the machine sleeps, a process's start time as the OS reports it moves away
    from the one ``postmaster.pid`` records: the live server must still be taken for the
    server (it is told by ``-D``), or Ctrl-C and ``stop-stores`` leave it running."""
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(EmbeddedPostgres(tmp_path).stop)
        EmbeddedPostgres(tmp_path).start()
        pid_file = tmp_path / "postgres" / "postmaster.pid"
        lines = pid_file.read_text().split("\n")
        lines[2] = str(int(lines[2]) - 60)  # as after a minute of sleep
        pid_file.write_text("\n".join(lines))
        assert EmbeddedPostgres(tmp_path).is_running()
        EmbeddedPostgres(tmp_path).stop()
        assert not EmbeddedPostgres(tmp_path).is_running()
