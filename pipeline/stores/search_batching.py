"""Dynamic batching of vector-store searches: concurrent searches that differ only in
their query are sent as one multi-query search (``nq`` > 1).

Milvus Lite runs one search at a time, and a brute-force dense search costs little more
for 16 query vectors than for one (measured on the 22k-chunk drug KB, 2 cores: nq=1
66 ms, nq=4 80 ms, nq=16 157 ms; BM25 nq=1 43 ms, nq=16 464 ms). The batching is
opportunistic, with no timer: the first search of a key goes out at once; searches of
the same key that arrive while it is in flight wait and go out together when it returns,
so a lone request pays nothing and a loaded one shares the store's time.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SearchBatcher"]

#: ``(queries) -> one result list per query``, in order.
BatchSearch = Callable[[list[Any]], Awaitable[Sequence[Any]]]


@dataclass
class _Queue:
    waiting: list[tuple[Any, asyncio.Future[Any]]] = field(default_factory=list)
    draining: bool = False


class SearchBatcher:
    """Coalesces searches by key (same collection, field, limit, filter and output).

    Args:
        max_batch: the most queries sent in one call (Milvus' ``nq``), 1..16384.

    Raises:
        ValueError: ``max_batch`` out of range.
    """

    def __init__(self, max_batch: int = 64) -> None:
        if not 1 <= max_batch <= 16384:
            raise ValueError(f"max_batch must be in [1, 16384], got {max_batch}")
        self.max_batch = max_batch
        self._queues: dict[Hashable, _Queue] = {}
        #: Batch size -> calls sent with it (bounded: at most ``max_batch`` keys).
        self.batch_sizes: Counter[int] = Counter()
        self._drains: set[asyncio.Task[None]] = set()  # held so none is collected early

    async def search(self, key: Hashable, query: Any, run: BatchSearch) -> Any:
        """The result of ``query``, searched together with every query of ``key`` that
        waits at the same time. ``run`` must return one result per query, in order; its
        exception reaches every query of that batch (and only those).

        Raises:
            whatever ``run`` raises; RuntimeError when it returns the wrong count.
        """
        queue = self._queues.setdefault(key, _Queue())
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        queue.waiting.append((query, future))
        if not queue.draining:
            queue.draining = True
            drain = asyncio.create_task(self._drain(key, queue, run))
            self._drains.add(drain)
            drain.add_done_callback(self._drains.discard)
        return await future

    async def _drain(self, key: Hashable, queue: _Queue, run: BatchSearch) -> None:
        try:
            while queue.waiting:
                batch = queue.waiting[: self.max_batch]
                del queue.waiting[: self.max_batch]
                batch = [(query, future) for query, future in batch if not future.cancelled()]
                if batch:
                    await self._send(batch, run)
        except BaseException as error:
            for _, future in queue.waiting:  # cancelled mid-drain: nobody may hang
                if not future.done():
                    future.set_exception(error)
            queue.waiting.clear()
            raise
        finally:
            queue.draining = False
            if not queue.waiting:
                self._queues.pop(key, None)

    async def _send(self, batch: list[tuple[Any, asyncio.Future[Any]]], run: BatchSearch) -> None:
        self.batch_sizes[len(batch)] += 1
        try:
            results = await run([query for query, _ in batch])
            if len(results) != len(batch):
                raise RuntimeError(
                    f"batched search returned {len(results)} results for {len(batch)} queries"
                )
        except BaseException as error:
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            if not isinstance(error, Exception):
                raise
            return
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)
