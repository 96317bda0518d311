"""``deployments.body_limit.BodyLimitMiddleware`` driven as the ASGI server drives it: a
client that sends headers and part of a body and then stalls gets a 408 naming ``body``
once the body's time is up (it held a search-ingress slot for as long as it kept the
connection open), while a whole body and the app's later disconnect watch are never
timed. The stalled client is the edge fake here: a ``receive`` that never returns."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fastapi import FastAPI, Request
from starlette.requests import ClientDisconnect

from deployments.body_limit import BodyLimitMiddleware

pytestmark = pytest.mark.unit

TIMEOUT_S = 0.2


def _app(watch_disconnect: bool = False) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/search")
    async def search(request: Request) -> dict[str, Any]:
        body = await request.json()
        if watch_disconnect:  # as a streaming route would: wait for the client to leave
            await request.receive()
        return {"query": body["query"]}

    app.add_middleware(BodyLimitMiddleware, limit_for=lambda _: 1024,
                       timeout_for=lambda _: TIMEOUT_S)
    return app


async def _call(app: FastAPI, chunks: list[bytes], then_stall: bool, wait_s: float
                ) -> list[dict[str, Any]]:
    """The messages the app sent within ``wait_s``: ``chunks`` arrive at once (the last
    one ends the body unless ``then_stall``), then ``receive`` never returns."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for index, chunk in enumerate(chunks):
        last = index == len(chunks) - 1 and not then_stall
        queue.put_nowait({"type": "http.request", "body": chunk, "more_body": not last})
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/search", "raw_path": b"/v1/search",
             "query_string": b"", "root_path": "", "scheme": "http", "http_version": "1.1",
             "server": ("testserver", 80), "client": ("127.0.0.1", 1234),
             "headers": [(b"content-type", b"application/json")]}
    try:
        await asyncio.wait_for(app(scope, queue.get, send), wait_s)
    except TimeoutError:
        pass
    except ClientDisconnect:  # the route's read after the answer: the server drops it
        pass
    return sent


def _status_and_body(sent: list[dict[str, Any]]) -> tuple[int | None, dict[str, Any] | None]:
    start = next((m for m in sent if m["type"] == "http.response.start"), None)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return (start["status"] if start else None), (json.loads(body) if body else None)


async def test_a_stalled_body_is_a_408_naming_body_once_its_time_is_up():
    sent = await _call(_app(), [b'{"query": "apix'], then_stall=True, wait_s=5 * TIMEOUT_S)
    status, body = _status_and_body(sent)
    assert status == 408
    assert body["error"] == "request_timeout"
    assert body["fields"] == [{"field": "body", "message": f"not received within {TIMEOUT_S:g} s"}]


async def test_a_body_sent_whole_is_answered_and_a_later_disconnect_watch_is_not_timed():
    sent = await _call(_app(), [b'{"query": ', b'"apixaban"}'], then_stall=False, wait_s=2.0)
    assert _status_and_body(sent) == (200, {"query": "apixaban"})
    # the route waits on receive() after the body, past the body's time: no 408 comes
    watched = await _call(_app(watch_disconnect=True), [b'{"query": "x"}'], then_stall=False,
                          wait_s=5 * TIMEOUT_S)
    assert _status_and_body(watched) == (None, None)


async def test_the_size_cap_still_answers_413_before_the_time_is_up():
    sent = await _call(_app(), [b'{"query": "' + b"x" * 2048], then_stall=True, wait_s=2.0)
    assert _status_and_body(sent)[0] == 413
