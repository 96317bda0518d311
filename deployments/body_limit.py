"""Caps on request bodies for an ASGI app: past a size a ``413`` naming ``body`` (the
product's error shape), decided from ``Content-Length`` or while the body streams in, so
nothing past the cap is read or parsed; a body not received whole within a time a
``408`` naming ``body`` (a client that sends headers and then stalls would otherwise hold
an ingress slot for as long as it keeps the connection open: the request deadline only
starts once the body is parsed). FastAPI reads a route's JSON body whole before any check
of ours runs, and turns an error raised while reading into its own ``400``; so the cap
answers the client itself and then tells the app the client left."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.responses import JSONResponse

__all__ = ["BodyLimitMiddleware", "too_large", "too_slow"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _body_error(status: int, error: str, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": error, "message": f"body: {message}",
         "fields": [{"field": "body", "message": message}]},
        status_code=status,
    )


def too_large(limit: int) -> JSONResponse:
    """The ``413`` for a body over ``limit`` bytes."""
    return _body_error(413, "payload_too_large", f"larger than {limit} bytes")


def too_slow(timeout_s: float) -> JSONResponse:
    """The ``408`` for a body not received whole within ``timeout_s`` seconds."""
    return _body_error(408, "request_timeout", f"not received within {timeout_s:g} s")


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length" and value.isdigit():
            return int(value)
    return None


class BodyLimitMiddleware:
    """Refuse request bodies over ``limit_for(scope)`` bytes (None: no cap) with
    :func:`too_large`, and bodies not received whole within ``timeout_for(scope)``
    seconds from the app's first read (None: no bound) with :func:`too_slow`. Reads after
    the whole body (a disconnect watch) are not timed. After answering, the app's
    ``receive`` reports a disconnect and whatever the app still sends is dropped."""

    def __init__(
        self,
        app: Callable[..., Awaitable[None]],
        limit_for: Callable[[Scope], int | None],
        timeout_for: Callable[[Scope], float | None] = lambda _: None,
    ):
        self.app = app
        self.limit_for = limit_for
        self.timeout_for = timeout_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, timeout_s = self.limit_for(scope), self.timeout_for(scope)
        if limit is None and timeout_s is None:
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if limit is not None and declared is not None and declared > limit:
            await too_large(limit)(scope, receive, send)
            return
        received, refused, whole = 0, False, False
        deadline: float | None = None

        async def next_message() -> Message | None:
            """The next message, or None once the body's time is up."""
            nonlocal deadline
            if whole or timeout_s is None:
                return await receive()
            loop = asyncio.get_running_loop()
            deadline = deadline if deadline is not None else loop.time() + timeout_s
            try:
                async with asyncio.timeout_at(deadline):
                    return await receive()
            except TimeoutError:
                return None

        async def capped_receive() -> Message:
            nonlocal received, refused, whole
            if refused:
                return {"type": "http.disconnect"}
            message = await next_message()
            if message is None:
                refused = True
                await too_slow(timeout_s or 0.0)(scope, receive, send)
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                whole = not message.get("more_body", False)
                if limit is not None and received > limit:
                    refused = True
                    await too_large(limit)(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, capped_receive, guarded_send)
