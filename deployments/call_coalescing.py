"""Caller-side merging of encode calls: the search ingress keeps at most a few calls
out to a model deployment (``max_in_flight``; by default one per replica,
``serve.encoder.caller_calls_per_replica``); the encode calls that come while those are
out queue, and go as fewer handle calls as soon as one answers: of about ``max_items``
texts at most, spread over up to one call per replica (``min_calls``). Calls made in
the same loop iteration merge the same way. With ``send_full_calls`` (the search
ingress's setting) a queue that reaches ``max_items`` texts goes out past the bound,
without taking a slot: a call that is already full gains nothing by waiting, and under
autoscaling the replicas, whose texts the autoscaler counts, then hold all but less than
one call's worth per queue (role, with titles or without) and caller.

Why: on a CPU a Ray handle call costs the caller and the replica about as much CPU as
an int8 forward pass of one short query (issue 16), so one call per text spends the
cores on calls. Below the bound a call goes out in the next loop iteration (before, at
once); at the bound a caller waits for an answer at the ingress instead of in the
replica's queue, where its call would have waited for the batch ahead of it anyway. The
replica's continuous batcher still combines the calls of every caller.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np

from pipeline.errors import BackendUnavailable, InvalidInput

__all__ = ["CallCoalescer", "EncodeCall", "MergeSettings", "split_callers", "take_full_calls"]

T = TypeVar("T", bound="_HasTexts")


class _HasTexts(Protocol):
    texts: Sequence[str]


#: ``send(role, texts, titles) -> (n, d) float32``: the call that reaches the deployment.
EncodeCall = Callable[[str, list[str], list[str] | None], Awaitable[np.ndarray]]
_Key = tuple[asyncio.AbstractEventLoop, str, bool]  # (loop, role, with titles)


@dataclass
class _Waiting:
    texts: list[str]
    titles: list[str] | None
    order: int  # arrival order, across roles: the oldest queue is served first
    future: asyncio.Future[np.ndarray] = field(repr=False)


@dataclass(frozen=True)
class MergeSettings:
    """How an ingress merges its encode calls to one deployment.

    Attributes:
        max_items: texts per merged call, about at most (>= 1): the callers queued
            together are cut into ``ceil(texts / max_items)`` calls of near-equal size,
            each caller whole (one caller's longer call is sent as it is; the replica
            splits it to its batch size).
        min_calls: callers queued together are spread over up to this many calls (>= 1;
            the deployment's replica count, so each replica can get work; fewer when a
            long caller spans a share, or when fewer calls may go out).
        max_in_flight: calls to the deployment at once, all roles together (>= 1;
            full calls past it, below, not counted); callers that come while that many
            are out queue and go, merged, as soon as one answers. None: no bound (only
            calls made in the same loop iteration merge).
        send_full_calls: a queue (one role, with titles or without) of ``max_items``
            texts or more goes out at once, bound or not, in calls of at least
            ``max_items`` texts (its oldest callers first) that hold no slot of the
            bound; the free slots take the rest, and only what is left then waits. So
            after each loop iteration fewer than ``max_items`` texts per queue wait at
            this caller, unseen by the replicas (under ``autoscaling_config``, where the
            texts-in-flight policy counts the texts the replicas hold; calls past a
            replica's ``max_ongoing_requests`` wait in the handle's router, where it
            counts each as the mean call the replicas hold).

    Raises:
        ValueError: a value below 1.
    """

    max_items: int
    min_calls: int = 1
    max_in_flight: int | None = None
    send_full_calls: bool = False

    def __post_init__(self) -> None:
        in_flight = self.max_in_flight
        if self.max_items < 1 or self.min_calls < 1 or (in_flight is not None and in_flight < 1):
            raise ValueError(
                "max_items, min_calls and max_in_flight must be >= 1, got "
                f"{self.max_items}, {self.min_calls} and {self.max_in_flight}")


class CallCoalescer:
    """Merges concurrent ``encode(role, texts, titles)`` calls to one deployment into
    fewer ``send`` calls; one per deployment handle, shared by its roles.

    Args:
        send: the call that reaches the deployment.
        settings: sizes and bounds of the merged calls.

    Only calls of the same role, with titles or without, merge; all share
    ``max_in_flight`` (full calls past it hold no slot), and when a call that holds a
    slot answers, the queue whose first caller came first goes first. Merged calls run
    in a context of their own, not in the first caller's (a Serve request context would
    tie the merged call to that one request's cancellation). A merged call that fails
    with ``InvalidInput`` is re-sent caller by caller, so one caller's bad text fails
    only that caller; any other failure reaches every caller of the call. A call whose
    callers have all been cancelled is cancelled, so it gives its slot back.
    """

    def __init__(self, send: EncodeCall, settings: MergeSettings) -> None:
        self._send = send
        self.settings = settings
        self._queued: dict[_Key, list[_Waiting]] = {}
        self._scheduled: set[_Key] = set()
        self._in_flight: dict[asyncio.AbstractEventLoop, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._arrivals = itertools.count()
        self.calls_sent = 0
        self.callers = 0

    async def encode(self, role: str, texts: Sequence[str],
                     titles: Sequence[str] | None = None) -> np.ndarray:
        """(n, d) float32 vectors of ``texts`` by ``role``, in order (as ``send``
        returns them).

        Raises:
            InvalidInput: ``titles`` is not one title per text; or the deployment
                rejected one of these texts.
            BackendUnavailable: the deployment could not answer this caller's call
                (also when it answered a merged call with the wrong number of vectors,
                or the call was cancelled under it).
        """
        if titles is not None and len(titles) != len(texts):
            raise InvalidInput(f"got {len(titles)} titles for {len(texts)} texts")
        loop = asyncio.get_running_loop()
        key = (loop, role, titles is not None)
        waiting = _Waiting(list(texts), list(titles) if titles is not None else None,
                           next(self._arrivals), loop.create_future())
        self._queued.setdefault(key, []).append(waiting)
        self.callers += 1
        self._schedule(key)
        return await waiting.future

    def _schedule(self, key: _Key) -> None:
        if key not in self._scheduled and self._queued.get(key):
            self._scheduled.add(key)
            key[0].call_soon(self._flush, key, context=contextvars.Context())

    def _flush(self, key: _Key) -> None:
        self._scheduled.discard(key)
        loop = key[0]
        queue = [waiting for waiting in self._queued.pop(key, []) if not waiting.future.done()]
        bound = self.settings.max_in_flight
        free = len(queue) if bound is None else bound - self._in_flight.get(loop, 0)
        full: list[list[_Waiting]] = []
        if self.settings.send_full_calls:  # full calls first: the slots take the rest
            full, queue = take_full_calls(queue, self.settings.max_items)
        sent: list[list[_Waiting]] = []
        if free > 0 and queue:
            groups = split_callers(queue, self.settings.max_items,
                                   min(self.settings.min_calls, free))
            sent, queue = groups[:free], [waiting for group in groups[free:] for waiting in group]
        if queue:  # sent when a call answers
            self._queued[key] = queue
        for group in full:  # the oldest callers
            self._start(key, group, counted=False)
        for group in sent:
            self._start(key, group, counted=True)

    def _start(self, key: _Key, group: list[_Waiting], counted: bool) -> None:
        """Send ``group``'s call; ``counted``: it holds one of ``max_in_flight``'s slots
        (a full call past the bound does not, so it never keeps another queue waiting)."""
        loop = key[0]
        if counted:
            self._in_flight[loop] = self._in_flight.get(loop, 0) + 1
        task = loop.create_task(self._run(key[1], group), context=contextvars.Context())
        self._tasks.add(task)
        answered = ((lambda done, key=key: self._answered(done, key)) if counted
                    else self._tasks.discard)
        task.add_done_callback(answered, context=contextvars.Context())
        for waiting in group:
            waiting.future.add_done_callback(
                lambda _, task=task, group=group: _cancel_if_abandoned(task, group))

    def _answered(self, task: asyncio.Task[None], key: _Key) -> None:
        """A counted call answered: its slot goes to the queue whose first caller came first."""
        self._tasks.discard(task)
        loop = key[0]
        self._in_flight[loop] -= 1
        if not self._in_flight[loop]:
            del self._in_flight[loop]
        waiting = [k for k, queue in self._queued.items() if k[0] is loop and queue]
        for queued in sorted(waiting, key=lambda k: self._queued[k][0].order):
            self._schedule(queued)

    async def _run(self, role: str, group: list[_Waiting]) -> None:
        """Answer every caller of ``group``, whatever happens."""
        try:
            await self._call(role, group)
        except asyncio.CancelledError:
            for waiting in group:
                waiting.future.cancel()
            raise
        except Exception as error:  # reaches the callers, not the event loop
            failure = error if isinstance(error, BackendUnavailable) else BackendUnavailable(
                f"encoder {role}: {error!r}"[:500])
            for waiting in group:
                _fail(waiting, failure)
        finally:
            for waiting in group:
                _fail(waiting, BackendUnavailable(f"encoder {role}: the call ended unanswered"))

    async def _call(self, role: str, group: list[_Waiting]) -> None:
        texts = [text for waiting in group for text in waiting.texts]
        titles = ([title for waiting in group for title in waiting.titles or ()]
                  if group[0].titles is not None else None)
        self.calls_sent += 1
        try:
            vectors = await self._send(role, texts, titles)
        except InvalidInput as error:
            if len(group) == 1:
                _fail(group[0], error)
                return
            # the replica reruns a batch that fails on one input request by request,
            # so these may share its batches
            await asyncio.gather(*(self._call(role, [waiting]) for waiting in group
                                   if not waiting.future.done()))
            return
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            error = BackendUnavailable(f"encoder {role}: the call was cancelled")
            for waiting in group:
                _fail(waiting, error)
            return
        except Exception as error:  # every caller of the call gets it
            for waiting in group:
                _fail(waiting, error)
            return
        if len(vectors) != len(texts):
            raise BackendUnavailable(
                f"encoder {role} answered {len(vectors)} vectors for {len(texts)} texts")
        start = 0
        for waiting in group:
            count = len(waiting.texts)
            if not waiting.future.done():
                waiting.future.set_result(vectors[start : start + count])
            start += count


def _cancel_if_abandoned(task: asyncio.Task[None], group: list[_Waiting]) -> None:
    """Cancel ``task`` once every caller of its call has been cancelled."""
    if not task.done() and all(waiting.future.cancelled() for waiting in group):
        task.cancel()


def split_callers(queue: Sequence[T], max_items: int, min_calls: int) -> list[list[T]]:
    """Consecutive callers (anything with ``texts``) in ``k = max(ceil(texts /
    max_items), min(callers, min_calls))`` groups of near-equal text counts: a caller
    goes to group ``floor(texts before it * k / texts)``. Groups no caller starts in are
    left out (a long caller spans them), so there may be fewer than ``k``."""
    total = sum(len(caller.texts) for caller in queue)
    if total == 0:
        return [list(queue)] if queue else []
    calls = max(math.ceil(total / max_items), min(len(queue), min_calls))
    groups: list[list[T]] = [[] for _ in range(calls)]
    before = 0
    for caller in queue:
        groups[min(calls - 1, before * calls // total)].append(caller)
        before += len(caller.texts)
    return [group for group in groups if group]


def take_full_calls(queue: Sequence[T], max_items: int) -> tuple[list[list[T]], list[T]]:
    """``queue``'s consecutive callers (anything with ``texts``) cut, oldest first, into
    groups of at least ``max_items`` texts (each as few callers as reach it), and the
    callers left over (fewer than ``max_items`` texts in all)."""
    groups: list[list[T]] = []
    group: list[T] = []
    texts = 0
    for caller in queue:
        group.append(caller)
        texts += len(caller.texts)
        if texts >= max_items:
            groups.append(group)
            group, texts = [], 0
    return groups, group


def _fail(waiting: _Waiting, error: BaseException) -> None:
    if not waiting.future.done():
        waiting.future.set_exception(error)
