"""Token-budgeted sub-batching: the one place that decides what goes into a forward pass.

A call's inputs (already tokenised, unpadded) are ordered longest first, cut into
sub-batches that respect both a row cap and a padded-token cap (rows x longest row), padded
per sub-batch on the right, run, and put back in input order. Sorting means short texts
are not padded to the length of a long neighbour; the token cap bounds activation memory.
Every family calls :func:`run_in_sub_batches` for single and batched calls alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from models.specs import ModelProfile

__all__ = [
    "BatchLimits",
    "Forward",
    "chunk_ranges",
    "pad_rows",
    "plan_sub_batches",
    "run_in_sub_batches",
]

Forward = Callable[[Mapping[str, np.ndarray]], np.ndarray]
"""A forward pass: padded int64 arrays ``(b, s)`` by input name -> float32 ``(b, ...)``."""


@dataclass(frozen=True)
class BatchLimits:
    """Caps on one forward pass: rows, padded tokens (rows x longest row), and whether
    rows are sorted by length before cutting."""

    max_batch_size: int = 128
    max_tokens_per_forward: int = 16384
    sort_by_length: bool = True

    @classmethod
    def from_profile(cls, profile: ModelProfile, on_cpu: bool = False) -> BatchLimits:
        """The limits a model profile sets for a model that runs on a CPU (``on_cpu``:
        the token cap is also at most ``cpu_max_tokens_per_forward``) or an accelerator."""
        tokens = profile.max_tokens_per_forward
        if on_cpu:
            tokens = min(tokens, profile.cpu_max_tokens_per_forward)
        return cls(
            max_batch_size=profile.max_batch_size,
            max_tokens_per_forward=tokens,
            sort_by_length=profile.sort_by_length,
        )


def plan_sub_batches(lengths: Sequence[int], limits: BatchLimits) -> list[list[int]]:
    """Cut row indices into sub-batches, longest rows first when ``limits.sort_by_length``.

    Each sub-batch has at most ``max_batch_size`` rows and at most
    ``max_tokens_per_forward`` padded tokens; a single row over the token cap runs alone.
    Every index in ``range(len(lengths))`` appears exactly once.
    """
    order = list(range(len(lengths)))
    if limits.sort_by_length:
        order.sort(key=lambda index: lengths[index], reverse=True)
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        widest = max(longest, lengths[index])
        too_many_rows = len(current) + 1 > limits.max_batch_size
        too_many_tokens = widest * (len(current) + 1) > limits.max_tokens_per_forward
        if current and (too_many_rows or too_many_tokens):
            batches.append(current)
            current, widest = [], lengths[index]
        current.append(index)
        longest = widest
    if current:
        batches.append(current)
    return batches


def pad_rows(
    rows: Sequence[Mapping[str, Sequence[int]]], input_names: Sequence[str], pad_token_id: int
) -> dict[str, np.ndarray]:
    """Right-pad tokenised rows to the longest row: int64 arrays ``(b, s)`` by input name.

    ``input_ids`` pad with ``pad_token_id``; ``attention_mask`` and ``token_type_ids`` (and
    any other input) pad with 0. Right padding keeps absolute positions of real tokens.
    """
    width = max(len(row["input_ids"]) for row in rows)
    arrays: dict[str, np.ndarray] = {}
    for name in input_names:
        fill = pad_token_id if name == "input_ids" else 0
        array = np.full((len(rows), width), fill, dtype=np.int64)
        for position, row in enumerate(rows):
            values = row[name]
            array[position, : len(values)] = values
        arrays[name] = array
    return arrays


def run_in_sub_batches(
    rows: Sequence[Mapping[str, Sequence[int]]],
    input_names: Sequence[str],
    pad_token_id: int,
    forward: Forward,
    limits: BatchLimits,
) -> np.ndarray:
    """Run tokenised rows through ``forward`` in token-budgeted sub-batches.

    Returns the per-row outputs stacked in input order, float32, shape ``(n, ...)`` as
    ``forward`` gives per row; ``(0,)`` for no rows.
    """
    if not rows:
        return np.zeros((0,), dtype=np.float32)
    lengths = [len(row["input_ids"]) for row in rows]
    output: np.ndarray | None = None
    for indices in plan_sub_batches(lengths, limits):
        arrays = pad_rows([rows[index] for index in indices], input_names, pad_token_id)
        result = np.asarray(forward(arrays), dtype=np.float32)
        if output is None:
            output = np.empty((len(rows), *result.shape[1:]), dtype=np.float32)
        output[indices] = result
    assert output is not None
    return output


def chunk_ranges(count: int, size: int) -> list[range]:
    """``range(count)`` cut into consecutive ranges of at most ``size`` (for fixed-size
    inputs such as images and CLIP token tensors, where sorting gains nothing)."""
    return [range(start, min(start + size, count)) for start in range(0, count, size)]
