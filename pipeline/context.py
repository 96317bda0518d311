"""What every stage of one search reads (the request context, R-INT-7), the one helper
that times a stage and writes its trace entry (:class:`Stage`), and the one that bounds a
stage by its budget and the request deadline (:func:`bounded`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from pipeline.schema import QueryRetrievalIntent, ScopeFilter, SearchRequest, StageTrace

__all__ = ["SearchContext", "Stage", "Stopwatch", "bounded"]

T = TypeVar("T")


@dataclass(frozen=True)
class SearchContext:
    """One request as the stages see it: the query (with ``routing.search_corrected_query``,
    misspelt drug names written as the names they were read as, A-12), the intent computed
    once (R-INT-7), the scope, the dense weight ``alpha`` (R-HYB-1), the page size, an
    uploaded image and the ``time.monotonic()`` deadline (s)."""

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
        """Wall time since construction (ms, rounded to 3 decimals)."""
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


class Stage:
    """One stage of a search being timed from construction; :meth:`done` and
    :meth:`failed` write its ``StageTrace`` (the response trace entry: ms, items in /
    out, audit decisions, degradation, detail). Every stage of the pipeline records
    itself through this class.

    Args:
        name: the trace name (``intent``, ``plan:biomed_text``, ``tier2``, ...).
        items_in: items the stage received.
        detail: stage-specific numbers, written into the trace as they are at the end
            (the stage may fill it while it runs).
    """

    def __init__(self, name: str, items_in: int = 0, detail: dict[str, Any] | None = None):
        self.name = name
        self.items_in = items_in
        self.detail: dict[str, Any] = {} if detail is None else detail
        self.clock = Stopwatch()

    def done(
        self,
        items_out: int = 0,
        decisions: Iterable[str] = (),
        *,
        items_in: int | None = None,
        degraded: bool = False,
        error: str | None = None,
    ) -> StageTrace:
        """The trace entry of a stage that ran (``degraded`` when it ran only in part)."""
        return StageTrace(
            name=self.name,
            ms=self.clock.ms,
            items_in=self.items_in if items_in is None else items_in,
            items_out=items_out,
            decisions=list(decisions),
            degraded=degraded,
            error=error,
            detail=self.detail,
        )

    def failed(self, error: BaseException | str, *decisions: str) -> StageTrace:
        """The trace entry of a stage that failed and was skipped: its time, the error
        (``Type: message`` for an exception) and the fallback ``decisions``."""
        message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        return StageTrace(
            name=self.name,
            ms=self.clock.ms,
            items_in=self.items_in,
            decisions=list(decisions),
            degraded=True,
            error=message,
            detail=self.detail,
        )
