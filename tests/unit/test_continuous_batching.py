"""The continuous batcher (deployments.continuous_batching): batches form when the model
is free, hold at most max_batch_size items, keep arrival order, and a failing batch fails
only its own callers."""

from __future__ import annotations

import asyncio

import pytest

from deployments.continuous_batching import ContinuousBatcher


class SlowModel:
    """Records each batch; every forward pass takes ``seconds``."""

    def __init__(self, seconds: float = 0.05, fail_on: int | None = None) -> None:
        self.seconds = seconds
        self.batches: list[list[int]] = []
        self.fail_on = fail_on

    async def run(self, requests: list[int]) -> list[int]:
        self.batches.append(list(requests))
        await asyncio.sleep(self.seconds)
        if self.fail_on is not None and len(self.batches) == self.fail_on:
            raise RuntimeError("forward pass failed")
        return [r * 10 for r in requests]


async def test_requests_arriving_during_a_forward_pass_share_the_next_batch():
    model = SlowModel(seconds=0.0)
    running = asyncio.Event()
    release = asyncio.Event()

    async def gated(requests: list[int]) -> list[int]:
        # the first forward pass holds until the test has sent the others: no timing
        if not model.batches:
            running.set()
            model.batches.append(list(requests))
            await release.wait()
            return [r * 10 for r in requests]
        return await model.run(requests)

    batcher = ContinuousBatcher(gated, max_batch_size=32, batch_wait_timeout_s=0.001)
    first = asyncio.ensure_future(batcher.submit(0))
    await running.wait()  # the first batch (one item) is running now
    rest = [asyncio.ensure_future(batcher.submit(i)) for i in range(1, 21)]
    await asyncio.sleep(0)  # let the 20 callers queue
    release.set()
    results = await asyncio.gather(first, *rest)
    assert results == [i * 10 for i in range(21)]
    # @serve.batch (Ray 2.60) would cut these 20 into many small batches waiting in line
    assert model.batches == [[0], list(range(1, 21))]


async def test_batches_hold_at_most_max_batch_size_items_in_arrival_order():
    model = SlowModel(seconds=0.01)
    batcher = ContinuousBatcher(
        model.run, size_of=lambda r: 2, max_batch_size=6, batch_wait_timeout_s=0.0
    )
    results = await asyncio.gather(*(batcher.submit(i) for i in range(7)))
    assert results == [i * 10 for i in range(7)]
    assert all(len(batch) * 2 <= 6 for batch in model.batches)
    assert [item for batch in model.batches for item in batch] == list(range(7))


async def test_an_idle_model_waits_for_a_partial_batch_to_fill():
    model = SlowModel(seconds=0.0)
    batcher = ContinuousBatcher(model.run, max_batch_size=8, batch_wait_timeout_s=0.2)
    first = asyncio.ensure_future(batcher.submit(1))
    await asyncio.sleep(0.02)
    second = asyncio.ensure_future(batcher.submit(2))
    assert await asyncio.gather(first, second) == [10, 20]
    assert model.batches == [[1, 2]]


async def test_a_failing_batch_fails_its_callers_and_the_next_batch_runs():
    model = SlowModel(seconds=0.02, fail_on=1)
    batcher = ContinuousBatcher(model.run, max_batch_size=4, batch_wait_timeout_s=0.0)
    with pytest.raises(RuntimeError, match="forward pass failed"):
        await batcher.submit(1)
    assert await batcher.submit(2) == 20


async def test_settings_are_validated_and_change_the_next_batch():
    model = SlowModel(seconds=0.0)
    batcher = ContinuousBatcher(model.run, max_batch_size=4, batch_wait_timeout_s=0.0)
    with pytest.raises(ValueError):
        batcher.set_max_batch_size(0)
    with pytest.raises(ValueError):
        batcher.set_batch_wait_timeout_s(-1)
    batcher.set_max_batch_size(1)
    await asyncio.gather(*(batcher.submit(i) for i in range(3)))
    assert all(len(batch) == 1 for batch in model.batches)


async def test_a_cancelled_worker_fails_its_batch_and_the_queue_instead_of_hanging():
    model = SlowModel(seconds=10.0)
    batcher = ContinuousBatcher(model.run, max_batch_size=1, batch_wait_timeout_s=0.0)
    running = asyncio.ensure_future(batcher.submit(1))
    queued = asyncio.ensure_future(batcher.submit(2))
    await asyncio.sleep(0.05)
    batcher._worker.cancel()  # what a replica shutdown does to the worker task
    for caller in (running, queued):
        with pytest.raises(RuntimeError, match="stopped"):
            await asyncio.wait_for(caller, 2.0)
    model.seconds = 0.0
    assert await batcher.submit(3) == 30  # a new worker starts for later callers


class PickyModel:
    """Rejects request 13 as a model rejects an input it cannot take (edge fake)."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []

    async def run(self, requests: list[int]) -> list[int]:
        self.batches.append(list(requests))
        await asyncio.sleep(0)
        if 13 in requests:
            raise ValueError("request 13 is not a text")
        return [r * 10 for r in requests]


async def test_a_batch_failing_on_one_input_is_rerun_so_only_that_caller_fails():
    model = PickyModel()
    batcher = ContinuousBatcher(model.run, max_batch_size=32, batch_wait_timeout_s=0.01,
                                isolate=(ValueError,))
    results = await asyncio.gather(*(batcher.submit(i) for i in (12, 13, 14)),
                                   return_exceptions=True)
    assert results[0] == 120 and results[2] == 140
    assert isinstance(results[1], ValueError)
    assert model.batches == [[12, 13, 14], [12], [13], [14]]


async def test_errors_not_named_in_isolate_still_fail_the_whole_batch():
    model = PickyModel()
    batcher = ContinuousBatcher(model.run, max_batch_size=32, batch_wait_timeout_s=0.01,
                                isolate=(KeyError,))
    results = await asyncio.gather(*(batcher.submit(i) for i in (12, 13)),
                                   return_exceptions=True)
    assert all(isinstance(result, ValueError) for result in results)
    assert model.batches == [[12, 13]]


async def test_a_stop_during_the_reruns_answers_the_rest_of_the_batch():
    class StopsOnRerun(PickyModel):
        async def run(self, requests):
            if len(self.batches) == 1:  # the first rerun: the replica stops meanwhile
                self.batches.append(list(requests))
                await asyncio.sleep(10)
            return await super().run(requests)

    model = StopsOnRerun()
    batcher = ContinuousBatcher(model.run, max_batch_size=32, batch_wait_timeout_s=0.01,
                                isolate=(ValueError,))
    callers = [asyncio.ensure_future(batcher.submit(i)) for i in (12, 13, 14)]
    for _ in range(20):
        await asyncio.sleep(0.005)
        if len(model.batches) >= 2:
            break
    batcher._worker.cancel()
    results = await asyncio.wait_for(asyncio.gather(*callers, return_exceptions=True), 5)
    assert all(isinstance(result, RuntimeError) for result in results), results
