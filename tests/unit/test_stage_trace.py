"""pipeline.context.Stage: the one helper that writes every stage's trace entry."""

import time

import pytest

from pipeline.context import Stage

pytestmark = pytest.mark.unit


def test_done_times_the_stage_and_keeps_its_detail_as_filled():
    stage = Stage("rrf", items_in=7, detail={"k": 60})
    time.sleep(0.002)
    stage.detail["lists"] = 2  # filled while the stage runs
    entry = stage.done(5, ["rrf_k:60"])
    assert entry.name == "rrf" and entry.items_in == 7 and entry.items_out == 5
    assert entry.ms >= 2.0
    assert entry.decisions == ["rrf_k:60"] and entry.detail == {"k": 60, "lists": 2}
    assert not entry.degraded and entry.error is None
    assert stage.done(1, items_in=3).items_in == 3


def test_failed_marks_degraded_with_the_error_and_fallback_decisions():
    entry = Stage("scope", items_in=1).failed(OSError("registry down"), "skipped")
    assert entry.degraded and entry.error == "OSError: registry down"
    assert entry.decisions == ["skipped"] and entry.items_out == 0
    assert Stage("plan:x").failed("over budget (5 ms)").error == "over budget (5 ms)"
