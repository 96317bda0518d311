"""Dynamic batching that forms the next batch when the model is free (continuous batching).

Why not ``@serve.batch``: in Ray Serve 2.60 its loop (``_BatchQueue._process_batches``)
takes a batch out of the queue every ``batch_wait_timeout_s`` and only then waits for the
``max_concurrent_batches`` semaphore, so while one forward pass runs, the requests that
arrive are cut into many small batches that wait in line behind it. Measured on the
MiniLM encoder deployment, one text per request at 32 concurrent callers: 1-3 texts per
forward pass and 0.52 of the in-process batched limit (``bench/README.md``, issue 16).

Here one worker task per replica owns the model: it waits for the first request, then
for at most ``batch_wait_timeout_s`` more while the batch is not full, runs the batch,
and only then takes the next one, so whatever arrived during a forward pass goes into the
next pass whole (up to ``max_batch_size`` items). This is the scheduling of infinity-emb's
and vLLM's batch loops. Plain asyncio: no Ray import; tests drive it directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["ContinuousBatcher"]

Request = TypeVar("Request")
Result = TypeVar("Result")


@dataclass
class _Pending(Generic[Request, Result]):
    request: Request
    size: int
    queued_at: float  # event-loop time (s)
    future: asyncio.Future[Result] = field(repr=False)


class ContinuousBatcher(Generic[Request, Result]):
    """Collects concurrent ``submit`` calls into batches for ``run``.

    Args:
        run: ``run(requests) -> results`` for one batch, one result per request, in
            order (a coroutine; run blocking work in a thread inside it). An exception
            fails every request of that batch, not the batcher, unless it is one of
            ``isolate``.
        size_of: items a request counts for (texts, pairs, images); default 1.
        max_batch_size: most items per batch (>= 1). A request larger than this runs
            alone (callers split large calls first: ``model_replica.gather_split``).
        batch_wait_timeout_s: at most how long a batch waits to fill, counted from its
            first request's arrival (s, >= 0): a batch formed from what queued during the
            previous forward pass does not wait.
        isolate: exception types that one request's input can cause (the model
            rejecting an input): a batch of several requests that fails with one is run
            again request by request, so only the request at fault fails.
    """

    def __init__(
        self,
        run: Callable[[list[Request]], Awaitable[Sequence[Result]]],
        size_of: Callable[[Request], int] = lambda _: 1,
        max_batch_size: int = 32,
        batch_wait_timeout_s: float = 0.005,
        isolate: tuple[type[Exception], ...] = (),
    ) -> None:
        self._run = run
        self._isolate = isolate
        self._size_of = size_of
        self.max_batch_size = max_batch_size
        self.batch_wait_timeout_s = batch_wait_timeout_s
        self._queue: deque[_Pending[Request, Result]] = deque()
        self._arrived = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None

    def set_max_batch_size(self, size: int) -> None:
        """Items per batch from the next batch on.

        Raises:
            ValueError: ``size`` < 1.
        """
        if size < 1:
            raise ValueError("max_batch_size must be >= 1")
        self.max_batch_size = size

    def set_batch_wait_timeout_s(self, seconds: float) -> None:
        """How long an idle model waits for a partial batch (s).

        Raises:
            ValueError: ``seconds`` < 0.
        """
        if seconds < 0:
            raise ValueError("batch_wait_timeout_s must be >= 0")
        self.batch_wait_timeout_s = seconds

    async def submit(self, request: Request) -> Result:
        """Queue ``request``; its result once the batch that carried it has run.

        Raises:
            Exception: whatever ``run`` raised for that batch.
        """
        loop = asyncio.get_running_loop()
        if self._worker is None or self._worker.done():
            # a fresh context: the worker must not carry the first caller's request id
            self._worker = loop.create_task(self._loop(), context=contextvars.Context())
        pending = _Pending(request, self._size_of(request), loop.time(), loop.create_future())
        self._queue.append(pending)
        self._arrived.set()
        return await pending.future

    async def _next_batch(self) -> list[_Pending[Request, Result]]:
        while not self._queue:
            self._arrived.clear()
            await self._arrived.wait()
        batch = [self._queue.popleft()]
        size = batch[0].size
        # counted from the first request's arrival: a backlog that queued during the last
        # forward pass is past its deadline and goes at once
        deadline = batch[0].queued_at + self.batch_wait_timeout_s
        while size < self.max_batch_size:
            if not self._queue:
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    break
                self._arrived.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._arrived.wait(), remaining)
                continue
            if size + self._queue[0].size > self.max_batch_size:
                break  # it leads the next batch: arrival order is kept
            item = self._queue.popleft()
            batch.append(item)
            size += item.size
        return [item for item in batch if not item.future.done()]  # drop cancelled callers

    @staticmethod
    def _fail(items: Sequence[_Pending[Request, Result]], error: BaseException) -> None:
        for item in items:
            if not item.future.done():
                item.future.set_exception(error)

    async def _loop(self) -> None:
        while True:
            batch = await self._next_batch()
            if not batch:
                continue
            if not await self._answer(batch):  # it failed on one request's input
                try:
                    for item in batch:
                        if not item.future.done():
                            await self._answer([item])
                except BaseException:  # stopped between reruns: the rest are answered too
                    self._fail(batch, RuntimeError("the batcher was stopped"))
                    raise

    async def _answer(self, batch: list[_Pending[Request, Result]]) -> bool:
        """Run ``batch`` and answer its callers; False (nobody answered) when it failed
        with an ``isolate`` error and holds several requests."""
        try:
            results = await self._run([item.request for item in batch])
            if len(results) != len(batch):
                raise RuntimeError(
                    f"batch function returned {len(results)} results for {len(batch)}"
                )
        except Exception as error:  # fails this batch's callers, not the loop
            if len(batch) > 1 and isinstance(error, self._isolate):
                return False
            self._fail(batch, error)
            return True
        except BaseException:  # cancelled (replica shutdown): nobody may wait forever
            self._fail([*batch, *self._queue], RuntimeError("the batcher was stopped"))
            self._queue.clear()
            raise
        for item, result in zip(batch, results, strict=True):
            if not item.future.done():
                item.future.set_result(result)
        return True
