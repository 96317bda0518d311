"""Process helpers shared by the managed local servers (Milvus Lite, PostgreSQL, the
Milvus 2.3 standalone): free ports, liveness, waiting for exit, log tails, an
inter-process lock and the JSON state file each server records its pid and port in."""

from __future__ import annotations

import contextlib
import fcntl
import json
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import psutil

__all__ = [
    "ManagedServer",
    "file_lock",
    "find_free_port",
    "live_process",
    "log_tail",
    "port_answers",
    "raise_interrupt",
    "read_state",
    "sigint_as_interrupt",
    "sigterm_as_interrupt",
    "sigterm_deferred",
    "sigterm_kept",
    "wait_gone",
    "write_state",
]

LOG_TAIL_CHARS = 4000


def raise_interrupt(signum: int, frame: Any) -> None:
    """A signal handler: raise ``KeyboardInterrupt`` (what Ctrl-C does), so ``finally``
    blocks and context managers run; Python's default SIGTERM ends the process without
    them, and the embedded stores a command started would outlive it."""
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def _signal_handler(signum: int, handler: Any) -> Iterator[bool]:
    """``handler`` for ``signum`` within the block, the previous one after it; yields
    False (and changes nothing) outside the main thread, where Python cannot set
    handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    previous = signal.signal(signum, handler)
    try:
        yield True
    finally:  # None: a handler not set from Python; the default is the nearest
        signal.signal(signum, signal.SIG_DFL if previous is None else previous)


def _sigterm_handler(handler: Any) -> contextlib.AbstractContextManager[bool]:
    return _signal_handler(signal.SIGTERM, handler)


@contextlib.contextmanager
def sigint_as_interrupt() -> Iterator[None]:
    """Within the block SIGINT has Python's own handler (``KeyboardInterrupt``), also where
    the process was started with SIGINT ignored (a script's ``cmd &``, which POSIX shells
    start so): ``biomed-search serve`` then stops on Ctrl-C while it starts as it does
    once serving, where its event loop's handler has always taken SIGINT. Python's own,
    not :func:`raise_interrupt`: ``asyncio.run`` (the demo ingest) takes SIGINT over only
    from it, and then cancels its task at the next ``await`` instead of cutting a
    synchronous step in half. Outside the main thread it changes nothing."""
    with _signal_handler(signal.SIGINT, signal.default_int_handler):
        yield


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block SIGTERM raises ``KeyboardInterrupt`` (:func:`raise_interrupt`) in
    the main thread; the previous handler comes back after it. Outside the main thread
    (where Python cannot set handlers) it changes nothing. ``ray.init`` replaces the
    handler: call it under :func:`sigterm_kept`."""
    with _sigterm_handler(raise_interrupt):
        yield


@contextlib.contextmanager
def sigterm_kept() -> Iterator[None]:
    """SIGTERM's handler as it was before the block, again after it. For ``ray.init``,
    which installs a C++ failure handler that aborts the process on SIGTERM (exit 134):
    no ``finally`` ran, and a serve killed while Ray started left its stores running.
    During ``ray.init`` itself Ray's Python handler ends the command with exit code 15,
    through its ``finally`` blocks."""
    current = signal.getsignal(signal.SIGTERM)
    with _sigterm_handler(signal.SIG_DFL if current is None else current):
        yield


@contextlib.contextmanager
def sigterm_deferred() -> Iterator[None]:
    """Within the block a SIGTERM is held, and raised again (to the handler in place
    before) when the block ends: for a step a kill must not cut in half (initdb: a
    cluster killed half-way cannot start again). Main thread only; elsewhere it changes
    nothing."""
    received: list[int] = []
    with _sigterm_handler(lambda signum, frame: received.append(signum)):
        yield
    if received:
        signal.raise_signal(signal.SIGTERM)


def find_free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def port_answers(host: str, port: int, timeout_s: float = 0.5) -> bool:
    """True when a TCP connection to ``host:port`` opens within ``timeout_s`` (s)."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def live_process(pid: int | None) -> psutil.Process | None:
    """The live (non-zombie) process ``pid``, else None (also for a pid <= 0: while
    initdb runs, ``postmaster.pid`` holds minus the pid of its single-user backend, and
    psutil raises on it)."""
    if pid is None or pid <= 0:
        return None
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return process
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def wait_gone(processes: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """Wait until every process has exited (zombies count as exited); return those left."""
    deadline = time.monotonic() + timeout_s
    alive = list(processes)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if live_process(p.pid) is not None]
        if alive:
            time.sleep(0.05)
    return alive


def log_tail(path: Path) -> str:
    """The last 4,000 characters of the log at ``path`` (or why there are none)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return text[-LOG_TAIL_CHARS:] or "(empty log)"


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive inter-process lock on ``path`` (serialises start/stop)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_state(path: Path) -> dict[str, Any] | None:
    """The JSON object a server recorded at ``path``; None when missing or unreadable."""
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def write_state(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` to ``path`` atomically (a temporary file, then a rename)."""
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(state, indent=2))
    temporary.replace(path)


class ManagedServer:
    """What the managed servers share: their state and log files in ``data_dir``
    (``STATE_FILE``, ``LOG_FILE``), and use as a context manager that starts on enter and,
    on exit, stops only a server this object started (``started_here``)."""

    STATE_FILE = "server.json"
    LOG_FILE = "server.log"
    data_dir: Path
    started_here: bool = False

    @property
    def state_path(self) -> Path:
        """The server's JSON state file, ``data_dir / STATE_FILE``."""
        return self.data_dir / self.STATE_FILE

    @property
    def log_path(self) -> Path:
        """The server's log file, ``data_dir / LOG_FILE``."""
        return self.data_dir / self.LOG_FILE

    def start(self) -> Self:
        """Start or reuse the server; return ``self``. Subclasses implement it.

        Raises:
            NotImplementedError: here, in the base class.
        """
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the server. Subclasses implement it.

        Raises:
            NotImplementedError: here, in the base class.
        """
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.started_here:
            self.stop()
