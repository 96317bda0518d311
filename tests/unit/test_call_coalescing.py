"""Caller-side merging of encode calls (``deployments.call_coalescing``): calls queued in
the same loop iteration share handle calls, spread over the replicas; a lone call is
sent alone; one caller's bad input fails only that caller."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from deployments.call_coalescing import (
    CallCoalescer,
    MergeSettings,
    split_callers,
    take_full_calls,
)
from pipeline.errors import BackendUnavailable, InvalidInput

pytestmark = pytest.mark.unit

ROLE = "pubmedbert"


class RecordingDeployment:
    """The edge the coalescer calls (a stand-in for a handle call): vector = [len(text),
    len(title)], recording each call's texts; ``bad`` texts are rejected as a model
    would reject them."""

    def __init__(self, fail_with: Exception | None = None) -> None:
        self.calls: list[list[str]] = []
        self.roles: list[str] = []
        self.fail_with = fail_with

    async def send(self, role, texts, titles):
        self.calls.append(list(texts))
        self.roles.append(role)
        await asyncio.sleep(0)
        if self.fail_with is not None:
            raise self.fail_with
        if "bad" in texts:
            raise InvalidInput("texts[0] is not a text")
        titles = titles or [""] * len(texts)
        return np.array([[len(t), len(ti)] for t, ti in zip(texts, titles, strict=True)],
                        dtype=np.float32)


def expected(texts, titles=None):
    titles = titles or [""] * len(texts)
    return np.array([[len(t), len(ti)] for t, ti in zip(texts, titles, strict=True)],
                    dtype=np.float32)


async def two_callers_through(send):
    """What two callers merged into one call get from ``send`` (answers or errors)."""
    coalescer = CallCoalescer(send, MergeSettings(16))
    return await asyncio.wait_for(asyncio.gather(
        coalescer.encode(ROLE, ["a"]), coalescer.encode(ROLE, ["b"]), return_exceptions=True),
        timeout=5)


async def test_concurrent_calls_share_handle_calls_one_per_replica():
    deployment = RecordingDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(16, 2))
    texts = [f"query {'x' * i}" for i in range(8)]
    results = await asyncio.gather(*(coalescer.encode(ROLE, [t]) for t in texts))
    for text, vectors in zip(texts, results, strict=True):
        np.testing.assert_array_equal(vectors, expected([text]))
    # 8 callers, 2 replicas: two calls of four, in order
    assert deployment.calls == [texts[:4], texts[4:]]
    assert coalescer.calls_sent == 2 and coalescer.callers == 8


async def test_many_callers_are_cut_to_max_items():
    deployment = RecordingDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(16, 2))
    texts = [f"t{i}" for i in range(40)]
    results = await asyncio.gather(*(coalescer.encode(ROLE, [t]) for t in texts))
    assert [len(call) for call in deployment.calls] == [14, 13, 13]
    assert [row for vectors in results for row in vectors.tolist()] == expected(texts).tolist()


async def test_calls_in_different_loop_iterations_are_sent_separately():
    deployment = RecordingDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(16, 1))
    for text in ("one", "two", "three"):
        np.testing.assert_array_equal(await coalescer.encode(ROLE, [text]), expected([text]))
    assert deployment.calls == [["one"], ["two"], ["three"]]


async def test_titles_are_merged_only_with_titles_and_stay_aligned():
    deployment = RecordingDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(16, 1))
    plain, titled_a, titled_b = await asyncio.gather(
        coalescer.encode(ROLE, ["aa"]),
        coalescer.encode(ROLE, ["bbb", "c"], ["title", "t"]),
        coalescer.encode(ROLE, ["dddd"], ["long title"]),
    )
    np.testing.assert_array_equal(plain, expected(["aa"]))
    np.testing.assert_array_equal(titled_a, expected(["bbb", "c"], ["title", "t"]))
    np.testing.assert_array_equal(titled_b, expected(["dddd"], ["long title"]))
    assert sorted(deployment.calls) == [["aa"], ["bbb", "c", "dddd"]]


async def test_one_callers_bad_input_fails_only_that_caller():
    deployment = RecordingDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(16, 1))
    results = await asyncio.gather(
        *(coalescer.encode(ROLE, [text]) for text in ("good", "bad", "fine")),
        return_exceptions=True,
    )
    np.testing.assert_array_equal(results[0], expected(["good"]))
    assert isinstance(results[1], InvalidInput)
    np.testing.assert_array_equal(results[2], expected(["fine"]))
    # the merged call, then each caller alone
    assert deployment.calls[0] == ["good", "bad", "fine"]
    assert sorted(deployment.calls[1:]) == [["bad"], ["fine"], ["good"]]


async def test_a_deployment_failure_reaches_every_merged_caller():
    deployment = RecordingDeployment(fail_with=BackendUnavailable("encoder: replica died"))
    coalescer = CallCoalescer(deployment.send, MergeSettings(16, 1))
    results = await asyncio.gather(*(coalescer.encode(ROLE, [f"q{i}"]) for i in range(3)),
                                   return_exceptions=True)
    assert all(isinstance(result, BackendUnavailable) for result in results)
    assert len(deployment.calls) == 1


async def test_a_wrong_number_of_vectors_is_a_backend_failure():
    async def short(role, texts, titles):
        return np.zeros((len(texts) - 1, 2), np.float32)

    results = await two_callers_through(short)
    assert all(isinstance(result, BackendUnavailable) for result in results)


async def test_a_cancelled_caller_leaves_the_others_their_answers():
    deployment = RecordingDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(16))
    keep = asyncio.ensure_future(coalescer.encode(ROLE, ["kept"]))
    drop = asyncio.ensure_future(coalescer.encode(ROLE, ["dropped"]))
    await asyncio.sleep(0)  # both queued and flushed into one call
    drop.cancel()
    np.testing.assert_array_equal(await keep, expected(["kept"]))
    assert drop.cancelled()


def test_settings_below_one_are_refused():
    for bad in ({"max_items": 0}, {"max_items": 4, "min_calls": 0},
                {"max_items": 4, "max_in_flight": 0}):
        with pytest.raises(ValueError, match="must be >= 1"):
            MergeSettings(**bad)


class GatedDeployment(RecordingDeployment):
    """Answers a call only when the test opens its gate (a slow replica, edge fake)."""

    def __init__(self) -> None:
        super().__init__()
        self.gates: list[asyncio.Event] = []

    async def send(self, role, texts, titles):
        gate = asyncio.Event()
        self.gates.append(gate)
        await gate.wait()
        return await super().send(role, texts, titles)


async def settle():
    for _ in range(5):
        await asyncio.sleep(0)


async def test_callers_past_the_in_flight_bound_wait_and_go_merged():
    deployment = GatedDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(16, 1, max_in_flight=2))
    callers = []
    for text in ("a0", "a1", "b0", "b1"):  # each in a loop iteration of its own
        callers.append(asyncio.ensure_future(coalescer.encode(ROLE, [text])))
        await settle()
    assert len(deployment.gates) == 2  # a0 and a1 are out; b0 and b1 wait at the caller
    deployment.gates[0].set()  # one answer frees one slot: both waiting callers go together
    await settle()
    assert deployment.calls == [["a0"]]
    assert len(deployment.gates) == 3 and coalescer.calls_sent == 3
    for gate in deployment.gates:
        gate.set()
    results = await asyncio.gather(*callers)
    assert [r.tolist() for r in results] == [expected([t]).tolist()
                                             for t in ("a0", "a1", "b0", "b1")]
    assert sorted(deployment.calls) == [["a0"], ["a1"], ["b0", "b1"]]


async def test_at_the_bound_a_full_call_still_goes_and_fewer_texts_wait():
    """``send_full_calls`` (the search ingress's mode, fixed or autoscaled replicas):
    callers past the bound wait only while their role's queue holds fewer than
    ``max_items`` texts, so the replicas see all but a partial call's worth of texts."""
    deployment = GatedDeployment()
    coalescer = CallCoalescer(deployment.send,
                              MergeSettings(4, 1, max_in_flight=1, send_full_calls=True))
    first = asyncio.ensure_future(coalescer.encode(ROLE, ["a0"]))
    await settle()
    waiting = []
    for texts in (["b0"], ["b1", "b2"], ["b3", "b4"], ["c0"]):  # loop iterations apart
        waiting.append(asyncio.ensure_future(coalescer.encode(ROLE, texts)))
        await settle()
    # b0..b4 reached 4 texts with the third caller: they went past the bound as one call
    # (whole callers, so 5 texts); c0 alone waits for a slot
    assert deployment.calls == [] and len(deployment.gates) == 2
    assert coalescer.calls_sent == 2
    deployment.gates[1].set()
    await settle()
    assert deployment.calls == [["b0", "b1", "b2", "b3", "b4"]]
    assert len(deployment.gates) == 2  # a0 still holds the one slot: c0 waits
    deployment.gates[0].set()
    await settle()
    assert len(deployment.gates) == 3  # a0's answer freed it
    for gate in deployment.gates:
        gate.set()
    results = await asyncio.wait_for(asyncio.gather(first, *waiting), timeout=5)
    assert [r.tolist() for r in results] == [expected(t).tolist() for t in (
        ["a0"], ["b0"], ["b1", "b2"], ["b3", "b4"], ["c0"])]
    assert sorted(deployment.calls) == [["a0"], ["b0", "b1", "b2", "b3", "b4"], ["c0"]]


async def test_full_calls_hold_no_slot_so_another_roles_caller_is_not_starved():
    """Full calls past the bound do not count against it: while one role keeps sending
    full calls, a slot that frees still goes to another role's waiting caller."""
    deployment = GatedDeployment()
    coalescer = CallCoalescer(deployment.send,
                              MergeSettings(2, 1, max_in_flight=1, send_full_calls=True))
    first = asyncio.ensure_future(coalescer.encode("pubmedbert", ["a0"]))
    await settle()
    other = asyncio.ensure_future(coalescer.encode("general-text", ["g0"]))
    await settle()
    full = [asyncio.ensure_future(coalescer.encode("pubmedbert", ["p0", "p1"]))
            for _ in range(3)]
    await settle()
    assert len(deployment.gates) == 4  # a0 in the slot, 3 full calls past it; g0 waits
    deployment.gates[0].set()  # a0 answers while the full calls are still out
    await settle()
    assert len(deployment.gates) == 5  # the freed slot went to g0, the full calls are out
    deployment.gates[4].set()
    await asyncio.wait_for(other, timeout=5)
    assert list(zip(deployment.roles, deployment.calls, strict=True)) == [
        ("pubmedbert", ["a0"]), ("general-text", ["g0"])]
    for gate in deployment.gates:
        gate.set()
    await asyncio.wait_for(asyncio.gather(first, other, *full), timeout=5)
    assert deployment.calls.count(["g0"]) == 1


async def test_full_calls_go_first_and_the_free_slots_take_the_rest():
    deployment = GatedDeployment()
    coalescer = CallCoalescer(deployment.send,
                              MergeSettings(2, 1, max_in_flight=1, send_full_calls=True))
    # one loop iteration: 5 single-text callers; two full calls of 2 hold no slot, the
    # one free slot takes t4: nothing waits
    callers = [asyncio.ensure_future(coalescer.encode(ROLE, [f"t{i}"])) for i in range(5)]
    await settle()
    assert len(deployment.gates) == 3
    late = asyncio.ensure_future(coalescer.encode(ROLE, ["t5"]))
    await settle()
    assert len(deployment.gates) == 3  # the slot is t4's: t5 waits
    for gate in deployment.gates[:2]:  # the full calls answer: no slot frees
        gate.set()
    await settle()
    assert len(deployment.gates) == 3
    deployment.gates[2].set()  # t4 answers: t5 goes
    await settle()
    assert len(deployment.gates) == 4
    deployment.gates[3].set()
    results = await asyncio.wait_for(asyncio.gather(*callers, late), timeout=5)
    assert [r.tolist() for r in results] == [expected([f"t{i}"]).tolist() for i in range(6)]
    assert sorted(deployment.calls) == [["t0", "t1"], ["t2", "t3"], ["t4"], ["t5"]]


async def test_without_send_full_calls_a_full_queue_waits_for_the_bound():
    deployment = GatedDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(2, 1, max_in_flight=1))
    first = asyncio.ensure_future(coalescer.encode(ROLE, ["a0"]))
    await settle()
    queued = asyncio.ensure_future(coalescer.encode(ROLE, ["b0", "b1", "b2"]))
    await settle()
    assert len(deployment.gates) == 1
    deployment.gates[0].set()
    await settle()
    assert len(deployment.gates) == 2  # sent only once a0 answered
    deployment.gates[1].set()
    await asyncio.wait_for(asyncio.gather(first, queued), timeout=5)
    assert deployment.calls == [["a0"], ["b0", "b1", "b2"]]


class Caller:
    def __init__(self, size: int) -> None:
        self.texts = ["x"] * size


@given(st.lists(st.integers(0, 40), max_size=60), st.integers(1, 64), st.integers(1, 8))
def test_split_keeps_every_caller_once_in_order(sizes, max_items, min_calls):
    callers = [Caller(size) for size in sizes]
    groups = split_callers(callers, max_items, min_calls)
    assert [caller for group in groups for caller in group] == callers
    assert all(groups)
    total = sum(sizes)
    if total:
        # near-equal shares: a group passes its share only by its last caller's texts
        share = total / max(-(-total // max_items), min(len(callers), min_calls))
        for group in groups:
            assert sum(len(c.texts) for c in group[:-1]) < share + 1e-9


@given(st.integers(1, 200), st.integers(1, 64), st.integers(1, 8))
def test_split_of_single_text_callers_is_balanced(callers, max_items, min_calls):
    groups = split_callers([Caller(1) for _ in range(callers)], max_items, min_calls)
    assert len(groups) == max(-(-callers // max_items), min(callers, min_calls))
    assert max(map(len, groups)) - min(map(len, groups)) <= 1
    assert max(map(len, groups)) <= max_items


@given(st.lists(st.integers(0, 40), max_size=60), st.integers(1, 64))
def test_full_calls_keep_every_caller_once_and_leave_less_than_one_call(sizes, max_items):
    callers = [Caller(size) for size in sizes]
    full, rest = take_full_calls(callers, max_items)
    assert [caller for group in full for caller in group] + rest == callers
    assert sum(len(c.texts) for c in rest) < max_items
    for group in full:  # at least max_items texts, and not one caller more than that needs
        assert sum(len(c.texts) for c in group) >= max_items
        assert sum(len(c.texts) for c in group[:-1]) < max_items


async def test_roles_of_one_deployment_merge_apart_and_share_the_bound():
    deployment = GatedDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(16, 1, max_in_flight=1))
    first = asyncio.ensure_future(coalescer.encode("pubmedbert", ["a"]))
    await settle()
    queued = [asyncio.ensure_future(coalescer.encode(role, [text]))
              for role, text in (("general-text", "g1"), ("pubmedbert", "p1"),
                                 ("general-text", "g2"))]
    await settle()
    assert len(deployment.gates) == 1  # one call out: the rest wait, whatever the role
    deployment.gates[0].set()
    await settle()
    # the oldest queue (general-text) goes first, merged; pubmedbert's after it answers
    assert len(deployment.gates) == 2
    deployment.gates[1].set()
    await settle()
    deployment.gates[2].set()
    await asyncio.gather(first, *queued)
    assert list(zip(deployment.roles, deployment.calls, strict=True)) == [
        ("pubmedbert", ["a"]), ("general-text", ["g1", "g2"]), ("pubmedbert", ["p1"])]


async def test_titles_not_one_per_text_are_refused_before_merging():
    coalescer = CallCoalescer(RecordingDeployment().send, MergeSettings(16))
    with pytest.raises(InvalidInput, match="2 titles for 1 texts"):
        await coalescer.encode(ROLE, ["a"], ["t1", "t2"])


async def test_merged_calls_run_in_a_context_of_their_own():
    """A Serve request context (its request id) must not follow the merged call."""
    import contextvars

    request = contextvars.ContextVar("request", default=None)
    seen: list[object] = []

    async def send(role, texts, titles):
        seen.append(request.get())
        return np.zeros((len(texts), 2), np.float32)

    coalescer = CallCoalescer(send, MergeSettings(16, 1, max_in_flight=1))

    async def caller(name):
        request.set(name)
        return await coalescer.encode(ROLE, [name])

    await asyncio.gather(*(caller(name) for name in "ABCDE"))
    assert seen and all(value is None for value in seen)


async def test_an_answer_without_vectors_fails_the_callers_instead_of_hanging():
    async def broken(role, texts, titles):
        return None

    results = await two_callers_through(broken)
    assert all(isinstance(result, BackendUnavailable) for result in results)


async def test_a_call_cancelled_under_its_callers_fails_them_as_backend_errors():
    """Serve re-raises a bare CancelledError when a request is cancelled elsewhere; the
    callers were not cancelled, so they get BackendUnavailable."""
    async def cancelled(role, texts, titles):
        raise asyncio.CancelledError

    results = await two_callers_through(cancelled)
    assert all(isinstance(result, BackendUnavailable) for result in results)


async def test_a_call_whose_callers_all_left_gives_its_slot_back():
    deployment = GatedDeployment()
    coalescer = CallCoalescer(deployment.send, MergeSettings(16, 1, max_in_flight=1))
    stuck = asyncio.ensure_future(coalescer.encode(ROLE, ["wedged"]))
    await settle()
    stuck.cancel()  # the only caller gives up (its request deadline)
    await settle()
    after = asyncio.ensure_future(coalescer.encode(ROLE, ["next"]))
    await settle()
    assert len(deployment.gates) == 2  # the wedged call was cancelled, its slot reused
    deployment.gates[1].set()
    np.testing.assert_array_equal(await after, expected(["next"]))


async def test_a_stop_during_the_per_caller_retries_answers_every_caller():
    calls = 0

    async def rejects_then_stops(role, texts, titles):
        nonlocal calls
        calls += 1
        if calls == 1:
            raise InvalidInput("one bad text")
        await asyncio.sleep(10)

    coalescer = CallCoalescer(rejects_then_stops, MergeSettings(16))
    callers = [asyncio.ensure_future(coalescer.encode(ROLE, [t])) for t in "abc"]
    await settle()
    for task in list(coalescer._tasks):  # the ingress replica stops
        task.cancel()
    results = await asyncio.wait_for(asyncio.gather(*callers, return_exceptions=True), 5)
    assert all(isinstance(result, asyncio.CancelledError) for result in results)
