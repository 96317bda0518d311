"""A managed Milvus Lite server (DESIGN.md "Data stores").

Milvus Lite is a directory that only one process may open, so the product runs it as a
local gRPC server process (``milvus-lite server``) and every process connects by URI. The
port and pid are recorded in the data directory (``milvus-server.json``); a second start
finds the running server and reuses it. It stops its server cleanly and leaves no process
behind.

Facts measured here (milvus-lite 3.2.2, 2 cores): the Lite server answers about 1.5-2 s
after the process starts. The ``milvus-lite`` CLI shuts down gracefully only on
``KeyboardInterrupt``, and a process started from a background shell inherits SIGINT as
*ignored*; so the server is launched through a two-line launcher that maps SIGTERM and
SIGINT to ``KeyboardInterrupt``. Data upserted before a SIGKILL was still there after a
restart.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from deployments.runtime.processes import (
    ManagedServer,
    file_lock,
    find_free_port,
    live_process,
    log_tail,
    port_answers,
    read_state,
    wait_gone,
    write_state,
)
from pipeline.errors import BackendUnavailable

__all__ = ["MilvusLiteServer"]

# SIGTERM and SIGINT -> KeyboardInterrupt, which the Lite server handles by draining
# requests and closing its database; then the ordinary CLI entry point.
_MILVUS_LAUNCHER = (
    "import signal, sys\n"
    "signal.signal(signal.SIGTERM, signal.default_int_handler)\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from milvus_lite.cmdline import main\n"
    "sys.exit(main())\n"
)
# Starts argv[1:] in a new session and prints its pid: the server becomes a grandchild of
# the caller, so it outlives a caller that kills its own children when it exits (a Ray
# worker does, RAY_kill_child_processes_on_worker_exit: the one that runs build_app).
# Not proof against a worker made a subreaper
# (RAY_kill_child_processes_on_worker_exit_with_raylet_subreaper=1, off by default).
_DETACHED_LAUNCHER = (
    "import subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=2, stderr=2,"
    " start_new_session=True)\n"
    "print(p.pid)\n"
)


class MilvusLiteServer(ManagedServer):
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
        return read_state(self.state_path)

    def _write_state(self, pid: int, port: int) -> None:
        state = {
            "pid": pid,
            "host": self.host,
            "port": port,
            "data_dir": str(self.milvus_dir),
            "started_at": time.time(),
        }
        write_state(self.state_path, state)

    def _is_our_server(self, pid: int | None) -> psutil.Process | None:
        """The live process ``pid`` if it is a Lite server over this data directory."""
        process = live_process(pid)
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
        return self._is_our_server(state.get("pid")) is not None and port_answers(
            str(state.get("host", self.host)), int(state.get("port", 0))
        )

    # -- start / stop ------------------------------------------------------------------
    def start(self) -> MilvusLiteServer:
        """Reuse the recorded server or start a new one; return ``self``.

        Raises:
            BackendUnavailable: the server did not answer within ``start_timeout_s``,
                exited, or (detached) could not be launched (the message carries the tail
                of its log).
        """
        if self.started_here and self.is_running():
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with file_lock(self.data_dir / self.LOCK_FILE):
            state = self._read_state()
            if state and self._is_our_server(state.get("pid")) is not None:
                host, port = str(state.get("host", self.host)), int(state.get("port", 0))
                if port_answers(host, port) or self._wait_port(host, port, None, 10.0):
                    self.host, self._port, self._pid = host, port, int(state["pid"])
                    self.started_here = False
                    return self
            self.state_path.unlink(missing_ok=True)
            attempts = 1 if self._requested_port else 3
            for attempt in range(attempts):
                port = self._requested_port or find_free_port(self.host)
                pid, popen = self._spawn(port)
                try:
                    ready = self._wait_port(self.host, port, popen, self.start_timeout_s, pid)
                except BaseException:  # interrupted while it comes up: not left unrecorded
                    if popen is not None or self._is_our_server(pid) is not None:
                        self._killlive_process(pid, popen)
                    raise
                if ready:
                    self._popen, self._pid, self._port = popen, pid, port
                    self.started_here = True
                    self._write_state(pid, port)
                    if self.stop_at_exit:
                        atexit.register(self._reap)
                    return self
                exited = live_process(pid) is None
                # a detached server's pid is not held for us once it exits: kill it only
                # while it is still our server
                if popen is not None or self._is_our_server(pid) is not None:
                    self._killlive_process(pid, popen)
                if not exited or attempt == attempts - 1:
                    break
        raise BackendUnavailable(
            f"Milvus Lite server on {self.host} did not start within "
            f"{self.start_timeout_s:.0f} s (data dir {self.milvus_dir}); log tail:\n"
            f"{log_tail(self.log_path)}"
        )

    def _spawn(self, port: int) -> tuple[int, subprocess.Popen[bytes] | None]:
        """Start the server on ``port``: its pid, and the ``Popen`` when it is our child
        (``stop_at_exit``); a server that must outlive this process is started detached
        (a grandchild in a session of its own, no ``Popen``)."""
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
            if not self.stop_at_exit:
                launched = subprocess.run(
                    [sys.executable, "-c", _DETACHED_LAUNCHER, *command],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                    env=environment, check=False,
                )
                pid = launched.stdout.decode(errors="replace").strip()
                if launched.returncode != 0 or not pid.isdigit():
                    raise BackendUnavailable(
                        f"Milvus Lite server launcher failed (exit {launched.returncode}, "
                        f"data dir {self.milvus_dir}); log tail:\n{log_tail(self.log_path)}")
                return int(pid), None
            popen = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                start_new_session=True,
            )
            return popen.pid, popen

    @staticmethod
    def _wait_port(
        host: str, port: int, popen: subprocess.Popen[bytes] | None, timeout_s: float,
        pid: int | None = None,
    ) -> bool:
        """True once ``host:port`` answers; False after ``timeout_s`` or when the server
        (``popen``, else the process ``pid`` when given) has exited."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if port_answers(host, port, 0.2):
                return True
            if popen is not None and popen.poll() is not None:
                return False
            if popen is None and pid is not None and live_process(pid) is None:
                return False
            time.sleep(0.05)
        return False

    def _killlive_process(self, pid: int, popen: subprocess.Popen[bytes] | None) -> bool:
        """SIGTERM, wait ``stop_timeout_s``, SIGKILL; reap our child. True when gone."""
        process = live_process(pid)
        if process is not None:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGTERM)
            if wait_gone([process], self.stop_timeout_s):
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
                wait_gone([process], 5.0)
        if popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=5.0)
        return live_process(pid) is None

    def stop(self) -> None:
        """Stop the server recorded in the data directory (whoever started it).

        Raises:
            RuntimeError: the process survived SIGKILL.
        """
        with file_lock(self.data_dir / self.LOCK_FILE):
            state = self._read_state() or {}
            pid = state.get("pid") or self._pid
            popen = self._popen if self._popen is not None and self._popen.pid == pid else None
            gone = True
            if self._is_our_server(pid) is not None:
                gone = self._killlive_process(int(pid), popen)
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
