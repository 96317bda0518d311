"""The status ``RequestMetricsMiddleware`` records: the response's, 500 for an exception
escaping the app, and 499 (not 500) when the client went away and the request was
cancelled."""

import asyncio
import contextlib

import pytest

from deployments.metrics import CLIENT_CLOSED, RequestMetricsMiddleware

pytestmark = pytest.mark.unit


class Recorded(RequestMetricsMiddleware):
    """The middleware, keeping the status it would record (the Ray metrics are the
    sink, outside this test)."""

    statuses: list[int]

    def _record(self, scope, status):
        self.statuses.append(status)


async def run(app) -> list[int]:
    middleware = Recorded(app)
    middleware.statuses = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        return None

    with contextlib.suppress(asyncio.CancelledError, RuntimeError):  # re-raised: fine
        await middleware({"type": "http", "path": "/v1/search"}, receive, send)
    return middleware.statuses


async def answered(scope, receive, send):
    await send({"type": "http.response.start", "status": 422, "headers": []})


async def crashed(scope, receive, send):
    raise RuntimeError("a bug")


async def client_gone(scope, receive, send):
    raise asyncio.CancelledError


@pytest.mark.parametrize(("app", "status"), [(answered, 422), (crashed, 500),
                                             (client_gone, CLIENT_CLOSED)])
async def test_the_recorded_status(app, status):
    assert await run(app) == [status]
