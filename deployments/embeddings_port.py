"""``POST /v1/embeddings`` on a port of the encoder replica itself (``serve.embeddings_port``,
issue 16): a uvicorn server in the replica's event loop, in front of the same continuous
batcher as the replica's Serve methods, so a request skips Serve's proxy and Serve's
per-request work in the replica (request wrapping, metrics, the disconnect watcher): the
path infinity-emb's one uvicorn process has.

Every replica of the deployment on a node binds the same port with ``SO_REUSEPORT``, and
the kernel spreads incoming connections over them (Linux), so ``num_replicas`` x
``intra_op_threads`` can fit the cores without a balancer in front. Backpressure, the
deployment's Serve bounds (``max_ongoing_requests`` + ``max_queued_requests``, none when
the queue is unbounded): past that many requests in flight in one replica, the port
answers a fast 503 with ``Retry-After`` (counted per request once its body is in, not
per connection: neither a client's idle keep-alive connections nor a stalled upload,
which gets a 408 after ``BODY_TIMEOUT_S``, holds a slot). A request with no answer
within ``serve.request_timeout_s`` gets a 504, as on the search ingress (its texts leave
the batcher's queue; a forward pass already running finishes); so does a request whose
client hangs up before its answer. On shutdown the replica
stops accepting and lets requests in flight finish (up to ``SHUTDOWN_GRACE_S``). What
Serve's path gives and this one does not: Serve's request metrics and its default
autoscaling signal (requests on the port are not counted as ongoing; the texts-in-flight
policy, ``deployments.autoscaling``, does count their texts, which the replica reports as
it reports any others) and the search ingress's API-key check (the configuration refuses
the port where ``auth.api_keys`` is set). Request and
response shapes and errors are :func:`deployments.embeddings_http.embeddings_call`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping, Sequence
from typing import Any

import numpy as np
import uvicorn
from starlette.requests import Request
from starlette.responses import Response

from deployments.embeddings_http import (
    EncodeTimings,
    answer_embeddings,
    overloaded,
    read_embeddings_request,
)

__all__ = ["SHUTDOWN_GRACE_S", "EmbeddingsPort", "reuse_port_socket"]

#: How long a stopping replica waits for the port's requests in flight (s); below Serve's
#: default ``graceful_shutdown_timeout_s`` (20 s).
SHUTDOWN_GRACE_S = 15

EncodeTimed = Callable[[str, Sequence[str]], Awaitable[tuple[np.ndarray, EncodeTimings]]]


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEADDR`` and ``SO_REUSEPORT`` (so
    each replica on the node binds the same port and the kernel balances connections).
    Made with ``proto=IPPROTO_TCP``: asyncio's own loop sets ``TCP_NODELAY`` only on
    such sockets' connections, and without it each answer waited for the client's
    delayed ACK (about 40 ms; uvloop, Ray's default, sets it either way).

    Raises:
        OSError: the port is taken by a process without ``SO_REUSEPORT``, or the
            platform has no ``SO_REUSEPORT``.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


async def _unless_disconnected(
    answer: Coroutine[Any, Any, Response], receive: Callable[[], Awaitable[dict[str, Any]]]
) -> Response | None:
    """``answer``'s response, or None when the client hangs up first: then ``answer`` is
    cancelled (its texts leave the batcher's queue; a forward pass already running
    finishes). With the body read, the next ASGI ``receive`` returns only on a
    disconnect."""
    task = asyncio.ensure_future(answer)
    watcher = asyncio.ensure_future(receive())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done() and watcher.result().get("type") == "http.disconnect":
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return None
        return await task
    finally:
        watcher.cancel()
        task.cancel()  # this coroutine itself cancelled (shutdown): the answer goes too


class _EmbeddedServer(uvicorn.Server):
    """A uvicorn server that runs as a task in a loop it does not own: the replica's
    process keeps its signal handlers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class EmbeddingsPort:
    """The embeddings endpoint of one replica on ``host:port``.

    Args:
        roles: the roles the replica serves, each with its output width (``model`` in a
            request; default the first).
        encode_timed: ``(role, texts) -> ((n, d) float32 vectors, EncodeTimings)``, the
            replica's batched encode.
        host, port: where to listen (the port shared by the node's replicas).
        max_concurrency: requests in flight in this replica past which the port answers
            503 (:func:`deployments.embeddings_http.overloaded`); None: no bound.
        request_timeout_s: seconds a request may take before it is answered 504
            (:func:`deployments.embeddings_http.deadline_exceeded`); None: no deadline.
    """

    def __init__(
        self,
        roles: Mapping[str, int],
        encode_timed: EncodeTimed,
        host: str,
        port: int,
        max_concurrency: int | None = None,
        request_timeout_s: float | None = None,
    ) -> None:
        self.roles = dict(roles)
        self.encode_timed = encode_timed
        self.host, self.port = host, port
        self.max_concurrency = max_concurrency
        self.request_timeout_s = request_timeout_s
        self._in_flight = 0
        self._socket: socket.socket | None = None
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None

    async def _app(self, scope, receive, send) -> None:  # ASGI 3
        if scope["type"] != "http":
            return
        parsed = await read_embeddings_request(Request(scope, receive), self.roles)
        if isinstance(parsed, Response):
            await parsed(scope, receive, send)
        elif self.max_concurrency is not None and self._in_flight >= self.max_concurrency:
            await overloaded(self.max_concurrency)(scope, receive, send)
        else:  # counted once its body is in: a stalled upload holds no slot
            self._in_flight += 1
            try:
                response = await _unless_disconnected(
                    answer_embeddings(parsed, self.encode_timed, self.request_timeout_s),
                    receive,
                )
            finally:
                self._in_flight -= 1
            if response is not None:
                await response(scope, receive, send)

    def start(self) -> None:
        """Bind the port and serve from the running event loop (call from the replica's
        loop, e.g. its constructor).

        Raises:
            RuntimeError: no running event loop.
            OSError: the port cannot be bound (see :func:`reuse_port_socket`).
        """
        loop = asyncio.get_running_loop()
        config = uvicorn.Config(
            self._app,
            interface="asgi3",
            lifespan="off",
            proxy_headers=False,
            access_log=False,
            log_level="warning",
            log_config=None,  # the replica's logging stays Ray's
            http="httptools",
            timeout_keep_alive=30,
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        )
        try:
            self._socket = reuse_port_socket(self.host, self.port)
        except OSError as error:
            raise OSError(
                error.errno, f"serve.embeddings_port {self.port} on {self.host}: {error}"
            ) from error
        self._server = _EmbeddedServer(config)
        self._task = loop.create_task(self._server.serve(sockets=[self._socket]))

    @property
    def serving(self) -> bool:
        """True once the server listens and until it stops."""
        return bool(self._server and self._server.started and not self._task.done())

    def check(self) -> None:
        """For the replica's health check.

        Raises:
            RuntimeError: the server stopped or failed (with its error as the cause).
        """
        if self._task is not None and self._task.done():
            error = None if self._task.cancelled() else self._task.exception()
            raise RuntimeError(f"embeddings port {self.port} is not serving") from error

    def stop(self) -> None:
        """Ask the server to finish: it stops accepting within about 0.1 s and lets the
        requests in flight finish (up to ``SHUTDOWN_GRACE_S``); idempotent."""
        if self._server is not None:
            self._server.should_exit = True
        if self._socket is not None and (self._task is None or self._task.done()):
            self._socket.close()

    async def aclose(self, timeout_s: float = SHUTDOWN_GRACE_S) -> None:
        """:meth:`stop`, then wait (at most ``timeout_s``) until the server has finished
        its requests in flight and closed the port."""
        self.stop()
        if self._task is not None and not self._task.done():
            with contextlib.suppress(Exception):  # its outcome is the health check's
                await asyncio.wait_for(asyncio.shield(self._task), timeout_s)
