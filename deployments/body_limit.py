"""A cap on request bodies for an ASGI app: past it a ``413`` naming ``body`` (the
product's error shape), decided from ``Content-Length`` or while the body streams in, so
nothing past the cap is read or parsed. FastAPI reads a route's JSON body whole before
any check of ours runs, and turns an error raised while reading into its own ``400``;
so the cap answers the client itself and then tells the app the client left."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.responses import JSONResponse

__all__ = ["BodyLimitMiddleware", "too_large"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def too_large(limit: int) -> JSONResponse:
    """The ``413`` for a body over ``limit`` bytes."""
    message = f"larger than {limit} bytes"
    return JSONResponse(
        {
            "error": "payload_too_large",
            "message": f"body: {message}",
            "fields": [{"field": "body", "message": message}],
        },
        status_code=413,
    )


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length" and value.isdigit():
            return int(value)
    return None


class BodyLimitMiddleware:
    """Refuse request bodies over ``limit_for(scope)`` bytes (None: no cap) with
    :func:`too_large`. After answering, the app's ``receive`` reports a disconnect and
    whatever the app still sends is dropped."""

    def __init__(
        self, app: Callable[..., Awaitable[None]], limit_for: Callable[[Scope], int | None]
    ):
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.limit_for(scope) if scope["type"] == "http" else None
        if limit is None:
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            await too_large(limit)(scope, receive, send)
            return
        received, refused = 0, False

        async def capped_receive() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    await too_large(limit)(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, capped_receive, guarded_send)
