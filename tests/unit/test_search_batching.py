"""Dynamic batching of store searches (pipeline/stores/search_batching.py). The backend
search is the edge: a function that answers each query with its own value, slowly."""

import asyncio

import pytest

from pipeline.stores.search_batching import SearchBatcher

pytestmark = pytest.mark.unit


class SlowBackend:
    """Answers query q with ``q * 10``; records each call's queries."""

    def __init__(self, delay_s: float = 0.02, fail_on: int | None = None):
        self.calls: list[list[int]] = []
        self.delay_s = delay_s
        self.fail_on = fail_on

    async def __call__(self, queries):
        self.calls.append(list(queries))
        await asyncio.sleep(self.delay_s)
        if self.fail_on is not None and self.fail_on in queries:
            raise ConnectionError("store down")
        return [q * 10 for q in queries]


async def test_a_lone_search_goes_out_at_once_alone():
    batcher, backend = SearchBatcher(), SlowBackend()
    assert await batcher.search("k", 3, backend) == 30
    assert backend.calls == [[3]]


async def test_searches_of_one_moment_go_out_as_one_call():
    batcher, backend = SearchBatcher(), SlowBackend()
    results = await asyncio.gather(*(batcher.search("k", q, backend) for q in range(16)))
    assert results == [q * 10 for q in range(16)]  # each caller gets its own answer
    assert backend.calls == [list(range(16))]


async def test_searches_arriving_while_one_is_in_flight_go_out_together():
    batcher, backend = SearchBatcher(), SlowBackend()
    first = asyncio.ensure_future(batcher.search("k", 0, backend))
    await asyncio.sleep(0.005)  # in flight
    rest = await asyncio.gather(*(batcher.search("k", q, backend) for q in range(1, 16)))
    assert await first == 0 and rest == [q * 10 for q in range(1, 16)]
    assert backend.calls == [[0], list(range(1, 16))]
    assert batcher.batch_sizes == {1: 1, 15: 1}


async def test_different_keys_are_never_mixed_and_max_batch_is_kept():
    batcher, backend = SearchBatcher(max_batch=4), SlowBackend()
    calls = [batcher.search(("dense", q % 2), q, backend) for q in range(11)]
    assert await asyncio.gather(*calls) == [q * 10 for q in range(11)]
    for call in backend.calls:
        assert len(call) <= 4 and len({q % 2 for q in call}) == 1


async def test_a_failed_batch_fails_only_its_own_callers():
    batcher, backend = SearchBatcher(), SlowBackend(fail_on=5)
    first = asyncio.ensure_future(batcher.search("k", 1, backend))
    await asyncio.sleep(0)  # the first call is in flight
    failing = [asyncio.ensure_future(batcher.search("k", q, backend)) for q in (5, 6)]
    await asyncio.sleep(0.05)  # 5 and 6 went out together and failed
    later = await batcher.search("k", 7, backend)
    assert await first == 10 and later == 70
    for future in failing:
        with pytest.raises(ConnectionError):
            await future


async def test_a_backend_returning_the_wrong_count_is_an_error():
    async def short(queries):
        return [0]

    batcher = SearchBatcher()
    first = asyncio.ensure_future(batcher.search("k", 1, short))
    await asyncio.sleep(0)
    rest = asyncio.gather(*(batcher.search("k", q, short) for q in (2, 3)))
    assert await first == 0
    with pytest.raises(RuntimeError, match="2 queries"):
        await rest


async def test_a_cancelled_caller_leaves_the_others_answered():
    batcher, backend = SearchBatcher(), SlowBackend()
    first = asyncio.ensure_future(batcher.search("k", 1, backend))
    await asyncio.sleep(0)
    gone = asyncio.ensure_future(batcher.search("k", 2, backend))
    kept = asyncio.ensure_future(batcher.search("k", 3, backend))
    await asyncio.sleep(0)
    gone.cancel()
    assert await first == 10 and await kept == 30
    assert backend.calls == [[1], [3]]


def test_max_batch_is_validated():
    with pytest.raises(ValueError, match="max_batch"):
        SearchBatcher(max_batch=0)
