"""What every model deployment replica shares: splitting large calls to fit
``max_batch_size``, the run-time batch settings (``reconfigure(user_config)``) and the
continuous batcher they configure.
Replicas load their roles with ``deployments.roles.load_shared`` from the parsed
``ModelProfile`` they are bound to."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from deployments.continuous_batching import ContinuousBatcher
from models.errors import ModelInputError

__all__ = ["BatchSettings", "gather_split"]

T = TypeVar("T")
R = TypeVar("R")


class BatchSettings:
    """``max_batch_size`` (items per forward call) and ``batch_wait_timeout_s`` of a
    replica, read from ``user_config`` so they change at run time without a redeploy."""

    def __init__(self, max_batch_size: int = 32, batch_wait_timeout_s: float = 0.005) -> None:
        self.max_batch_size = max_batch_size
        self.batch_wait_timeout_s = batch_wait_timeout_s

    def update(self, user_config: dict[str, Any] | None) -> None:
        """Apply ``{"max_batch_size": int >= 1, "batch_wait_timeout_s": float >= 0}``.

        Raises:
            ValueError: a value out of range.
        """
        config = user_config or {}
        size = int(config.get("max_batch_size", self.max_batch_size))
        wait = float(config.get("batch_wait_timeout_s", self.batch_wait_timeout_s))
        if size < 1 or wait < 0:
            raise ValueError("max_batch_size must be >= 1 and batch_wait_timeout_s >= 0")
        self.max_batch_size, self.batch_wait_timeout_s = size, wait

    def batcher(
        self,
        run: Callable[[list[Any]], Awaitable[Sequence[Any]]],
        size_of: Callable[[Any], int],
    ) -> ContinuousBatcher[Any, Any]:
        """A :class:`ContinuousBatcher` for ``run`` with these settings; :meth:`apply`
        passes later changes on to it. A batch the model fails on one caller's input
        (``ModelInputError``) is run again caller by caller, so only that caller fails."""
        return ContinuousBatcher(run, size_of, self.max_batch_size, self.batch_wait_timeout_s,
                                 isolate=(ModelInputError,))

    def apply(self, batcher: ContinuousBatcher[Any, Any]) -> None:
        """Set ``batcher``'s size and wait to these settings."""
        batcher.set_max_batch_size(self.max_batch_size)
        batcher.set_batch_wait_timeout_s(self.batch_wait_timeout_s)


async def gather_split(
    items: Sequence[T],
    limit: int,
    make: Callable[[Sequence[T], int], Awaitable[R]],
) -> list[R]:
    """Cut ``items`` into pieces of at most ``limit`` and await ``make(piece, offset)``
    for all pieces concurrently (so the batcher can still combine them with other
    callers' items), in order."""
    if len(items) <= limit:
        return [await make(items, 0)]
    pieces = [(items[i : i + limit], i) for i in range(0, len(items), limit)]
    return list(await asyncio.gather(*(make(piece, offset) for piece, offset in pieces)))
