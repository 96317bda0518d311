"""An HTTP client on the FastAPI app in process (no Ray, no socket), for API tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from deployments.api import create_app
from deployments.service import SearchService


@asynccontextmanager
async def app_client(service: SearchService) -> AsyncIterator[httpx.AsyncClient]:
    """``httpx.AsyncClient`` on ``create_app()`` serving ``service`` over ASGI (120 s
    timeout: a search on two CPU cores can take seconds)."""
    app = create_app()
    app.state.service = service
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://biomed", timeout=120
    ) as client:
        yield client
