"""A real Milvus engine for scale tests without Docker: the ``milvus`` 2.3.5 wheel's
standalone server, kept inside a network namespace of its own (DESIGN.md "Data stores").

The PyPI package ``milvus`` (2.3.5, Linux) ships the Milvus server binary and starts it
with ``milvus.MilvusServer``. That binary listens on every interface on nine ports
(gRPC proxy 19530, metrics/health 9091, embedded etcd, the coordinators), so it is only
ever run here inside a fresh network namespace (``unshare -n``, root only) whose sole
interface is loopback. Clients reach it by joining that namespace
(``nsenter -n -t PID <command>``, see :meth:`MilvusStandalone.client_command`), where
its URI is ``http://127.0.0.1:19530``; nothing is reachable from outside the namespace.

Limits of the 2.3 engine, measured here with pymilvus 3.0.2:

- dense vectors with FLAT / HNSW / IVF indexes, scalar filters (``document_id in
  [...]``), upsert, delete, query and count work through ``MilvusVectorStore``;
- no sparse vectors and no BM25 function (they arrived in 2.4/2.5): creating a *hybrid*
  collection (``MilvusVectorStore.ensure_collection(..., hybrid=True)``) fails on the
  server ("create index on 104 field is not supported") and the store raises
  ``BackendUnavailable`` naming ``create_collection``, leaving the collection created
  without its indexes behind. Keep the lexical leg on Milvus Lite or switch it off for
  collections on a 2.3 server;
- the store's collections are ``Strong``: each search waits for the server's next time
  tick, about 200 ms on 2.3.5, where a ``Bounded`` search answers in about 5 ms;
- the binary ignores SIGTERM: :meth:`MilvusStandalone.stop` sends SIGKILL (data
  written before survives a restart); background compaction rebuilds indexes for
  minutes on two cores after large ingests.

No ray, no torch: this module only manages a process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from deployments.runtime.processes import (
    LOG_TAIL_CHARS,
    ManagedServer,
    live_process,
    read_state,
)
from pipeline.errors import BackendUnavailable

__all__ = ["MILVUS_SERVER_PORT", "MilvusStandalone", "milvus_server_available"]

MILVUS_SERVER_PORT = 19530
"""The gRPC port the server's proxy listens on inside its namespace (its default)."""

# Runs inside the new network namespace: bring loopback up (a fresh namespace has it
# down), start the server binary through the wheel, record pids and port, then wait for
# SIGTERM / SIGINT and SIGKILL the binary (it ignores SIGTERM).
_LAUNCHER = r"""
import fcntl, json, os, signal, socket, struct, sys, time
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
request = struct.pack("16sH14s", b"lo", 0, bytes(14))
flags = struct.unpack("16sH14s", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, bytes(14)))
probe.close()
data_dir, state_path, timeout_s = sys.argv[1], sys.argv[2], float(sys.argv[3])
from milvus import MilvusServer, MilvusServerConfig
server = MilvusServer(MilvusServerConfig(data_dir=data_dir), wait_for_started=False)
server.start()
binary = server.server_proc
def finish(*_):
    if binary.poll() is None:
        binary.kill()
        binary.wait(timeout=30)
    sys.exit(0)
signal.signal(signal.SIGTERM, finish)
signal.signal(signal.SIGINT, finish)
server.wait_started(timeout=int(timeout_s * 1000))
state = {"pid": os.getpid(), "server_pid": binary.pid, "port": server.listen_port,
         "health_port": server.webservice_port, "data_dir": data_dir}
with open(state_path + ".tmp", "w") as handle:
    json.dump(state, handle)
os.replace(state_path + ".tmp", state_path)
while binary.poll() is None:
    time.sleep(0.5)
sys.exit(1)
"""


def milvus_server_available() -> str | None:
    """Why the namespaced server cannot run here, or None when it can.

    Needs: Linux, root (``unshare -n``), the ``unshare`` and ``nsenter`` programs and the
    ``milvus`` wheel (``pip install milvus==2.3.5``).
    """
    if not sys.platform.startswith("linux"):
        return "the milvus wheel's server binary runs on Linux only"
    if os.geteuid() != 0:
        return "unshare -n needs root"
    for program in ("unshare", "nsenter"):
        if shutil.which(program) is None:
            return f"{program} (util-linux) is not installed"
    try:
        import milvus  # noqa: F401
    except ImportError:
        return "the 'milvus' wheel is not installed (pip install milvus==2.3.5)"
    return None


def _alive(pid: int) -> bool:
    return live_process(pid) is not None


class MilvusStandalone(ManagedServer):
    """The ``milvus`` 2.3.5 standalone server in its own network namespace.

    :meth:`start` runs ``unshare -n python -c <launcher>`` (a new session, so it never
    takes the caller's signals), waits until the server's health endpoint answers inside
    the namespace, and returns ``self``. :meth:`client_command` prefixes a command with
    ``nsenter -n -t PID`` so that it runs in the namespace, where :attr:`uri` reaches the
    server. :meth:`stop` ends the launcher, which SIGKILLs the server binary.

    Files in ``data_dir``: ``server/`` (the wheel's base dir: binary, config, logs,
    data), ``milvus-standalone.json`` (pids and port) and ``milvus-standalone.log``.

    Args:
        data_dir: folder for the server's files (created if missing).
        start_timeout_s: seconds to wait for the health endpoint (the first start
            unpacks the 150 MB binary; about 20-40 s on two cores).

    Raises:
        RuntimeError: (constructor) the server cannot run here; the message says why
            (see :func:`milvus_server_available`).
    """

    STATE_FILE = "milvus-standalone.json"
    LOG_FILE = "milvus-standalone.log"

    def __init__(self, data_dir: str | os.PathLike[str], *, start_timeout_s: float = 180.0):
        reason = milvus_server_available()
        if reason is not None:
            raise RuntimeError(f"cannot run the Milvus 2.3.5 server here: {reason}")
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.start_timeout_s = start_timeout_s
        self._popen: subprocess.Popen[bytes] | None = None
        self._state: dict[str, int | str] = {}

    # -- state ---------------------------------------------------------------------------
    @property
    def namespace_pid(self) -> int:
        """Pid of a process in the server's network namespace (the launcher).

        Raises:
            RuntimeError: before :meth:`start`.
        """
        if not self._state:
            raise RuntimeError("MilvusStandalone is not started")
        return int(self._state["pid"])

    @property
    def server_pid(self) -> int:
        """Pid of the Milvus server binary. Raises RuntimeError before :meth:`start`."""
        if not self._state:
            raise RuntimeError("MilvusStandalone is not started")
        return int(self._state["server_pid"])

    @property
    def uri(self) -> str:
        """``http://127.0.0.1:PORT``: the server's URI *inside* its namespace."""
        port = (
            int(self._state.get("port", MILVUS_SERVER_PORT))
            if self._state
            else (MILVUS_SERVER_PORT)
        )
        return f"http://127.0.0.1:{port}"

    def client_command(self, command: list[str]) -> list[str]:
        """``command`` run inside the server's network namespace (``nsenter -n -t PID``).

        Raises:
            RuntimeError: before :meth:`start`.
        """
        return ["nsenter", "-n", "-t", str(self.namespace_pid), *command]

    def log_tail(self) -> str:
        """The end of the launcher's log and of the server's own stderr log."""
        parts = []
        for path in (self.log_path, self.data_dir / "server" / "logs" / "milvus-stderr.log"):
            with contextlib.suppress(OSError):
                text = path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
                parts.append(f"== {path.name}\n{text}")
        return "\n".join(parts) or "(no log)"

    # -- start / stop ----------------------------------------------------------------------
    def start(self) -> MilvusStandalone:
        """Start the namespace and the server; return ``self`` once it answers.

        Raises:
            BackendUnavailable: it exited or did not answer within ``start_timeout_s``
                (the message holds the log tails).
        """
        if self._popen is not None and self._popen.poll() is None:
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.state_path.unlink(missing_ok=True)
        command = [
            "unshare",
            "-n",
            sys.executable,
            "-c",
            _LAUNCHER,
            str(self.data_dir / "server"),
            str(self.state_path),
            str(self.start_timeout_s),
        ]
        with self.log_path.open("ab") as log:
            self._popen = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + self.start_timeout_s + 10.0
        while time.monotonic() < deadline:
            state = read_state(self.state_path)
            if state is not None:
                self._state = state
                self.started_here = True  # never reused: every start is this object's
                return self
            if self._popen.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise BackendUnavailable(
            f"Milvus 2.3.5 server did not start within {self.start_timeout_s:.0f} s "
            f"(data dir {self.data_dir}):\n{self.log_tail()}"
        )

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM the launcher (it SIGKILLs the server binary); SIGKILL both if still
        alive after ``timeout_s``. Idempotent.

        Raises:
            RuntimeError: a process survived SIGKILL.
        """
        popen, self._popen = self._popen, None
        server_pid = int(self._state.get("server_pid", 0)) if self._state else 0
        if popen is not None and popen.poll() is None:
            popen.send_signal(signal.SIGTERM)
            try:
                popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait(timeout=10.0)
        if server_pid and _alive(server_pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(server_pid, signal.SIGKILL)
            deadline = time.monotonic() + 10.0
            while _alive(server_pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _alive(server_pid):
                raise RuntimeError(f"Milvus server {server_pid} survived SIGKILL")
        self._state = {}
        self.started_here = False
