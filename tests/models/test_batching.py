"""Token-budgeted sub-batching (models/batching.py)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from models.batching import (
    BatchLimits,
    chunk_ranges,
    pad_rows,
    plan_sub_batches,
    run_in_sub_batches,
)

pytestmark = pytest.mark.unit

LENGTHS = [5, 40, 3, 17, 40, 9, 1, 22]


class TestPlanSubBatches:
    @pytest.mark.parametrize("sort_by_length", [True, False])
    def test_every_row_appears_once(self, sort_by_length: bool) -> None:
        limits = BatchLimits(
            max_batch_size=3, max_tokens_per_forward=60, sort_by_length=sort_by_length
        )
        plan = plan_sub_batches(LENGTHS, limits)
        assert sorted(index for batch in plan for index in batch) == list(range(len(LENGTHS)))

    def test_caps_rows_and_padded_tokens(self) -> None:
        limits = BatchLimits(max_batch_size=3, max_tokens_per_forward=60)
        for batch in plan_sub_batches(LENGTHS, limits):
            assert len(batch) <= 3
            assert max(LENGTHS[i] for i in batch) * len(batch) <= 60 or len(batch) == 1

    def test_sorted_longest_first(self) -> None:
        plan = plan_sub_batches(LENGTHS, BatchLimits(max_batch_size=2))
        flat = [LENGTHS[index] for batch in plan for index in batch]
        assert flat == sorted(LENGTHS, reverse=True)

    def test_row_over_the_token_cap_runs_alone(self) -> None:
        plan = plan_sub_batches([500, 2, 2], BatchLimits(max_tokens_per_forward=100))
        assert plan[0] == [0]


def test_pad_rows_pads_right_with_pad_id_and_zero_mask() -> None:
    rows = [
        {"input_ids": [101, 7, 102], "attention_mask": [1, 1, 1]},
        {"input_ids": [101, 102], "attention_mask": [1, 1]},
    ]
    arrays = pad_rows(rows, ["input_ids", "attention_mask"], pad_token_id=9)
    assert arrays["input_ids"].tolist() == [[101, 7, 102], [101, 102, 9]]
    assert arrays["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0]]
    assert arrays["input_ids"].dtype == np.int64


def test_run_in_sub_batches_returns_outputs_in_input_order() -> None:
    rows = [
        {"input_ids": list(range(length)), "attention_mask": [1] * length} for length in LENGTHS
    ]

    def lengths_forward(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
        return arrays["attention_mask"].sum(axis=1).astype(np.float32)

    output = run_in_sub_batches(
        rows,
        ["input_ids", "attention_mask"],
        0,
        lengths_forward,
        BatchLimits(max_batch_size=3, max_tokens_per_forward=50),
    )
    assert output.tolist() == LENGTHS
    assert output.dtype == np.float32


def test_chunk_ranges() -> None:
    assert chunk_ranges(5, 2) == [range(0, 2), range(2, 4), range(4, 5)]
    assert chunk_ranges(0, 2) == []


def test_on_the_cpu_the_token_cap_is_the_lower_cpu_cap() -> None:
    from models.specs import ModelProfile

    profile = ModelProfile(max_tokens_per_forward=16384, cpu_max_tokens_per_forward=256)
    assert BatchLimits.from_profile(profile, on_cpu=True).max_tokens_per_forward == 256
    assert BatchLimits.from_profile(profile).max_tokens_per_forward == 16384
    small = ModelProfile(max_tokens_per_forward=64, cpu_max_tokens_per_forward=256)
    assert BatchLimits.from_profile(small, on_cpu=True).max_tokens_per_forward == 64
