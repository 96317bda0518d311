"""What every stage of one search reads (the request context, R-INT-7), a stopwatch and
the one helper that bounds a stage by its budget and the request deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from pipeline.schema import QueryRetrievalIntent, ScopeFilter, SearchRequest, StageTrace

__all__ = ["SearchContext", "Stopwatch", "bounded", "degraded_stage"]

T = TypeVar("T")


@dataclass(frozen=True)
class SearchContext:
    """One request as the stages see it: the query, the intent computed once (R-INT-7),
    the scope, the dense weight ``alpha`` (R-HYB-1), the page size, an uploaded image and
    the ``time.monotonic()`` deadline (s)."""

    request: SearchRequest
    query: str
    intent: QueryRetrievalIntent
    scope: ScopeFilter | None
    alpha: float
    page_size: int
    image: bytes | None
    deadline: float


class Stopwatch:
    """Elapsed wall time since construction, in ms (3 decimals)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def ms(self) -> float:
        return round((time.perf_counter() - self.start) * 1000.0, 3)


async def bounded(awaitable: Awaitable[T], budget_ms: float, deadline: float) -> T:
    """Await ``awaitable`` for at most ``budget_ms`` and never past ``deadline``.

    Raises:
        TimeoutError: the budget or the deadline ran out (the awaitable is cancelled).
    """
    remaining = deadline - time.monotonic()
    timeout = min(budget_ms / 1000.0, remaining)
    if timeout <= 0:
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        raise TimeoutError("request deadline passed")
    return await asyncio.wait_for(awaitable, timeout)


def degraded_stage(name: str, clock: Stopwatch, error: BaseException) -> StageTrace:
    """The trace entry of a stage that failed and was skipped: its time and the error."""
    return StageTrace(
        name=name, ms=clock.ms, degraded=True, error=f"{type(error).__name__}: {error}"
    )
