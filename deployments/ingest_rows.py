"""The rows the Ray Data ingest engine sends through its encoders (an Arrow block layout)
and the encoder actor that fills their vectors (:mod:`deployments.ingest_ray`)."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from deployments.roles import load_shared
from models.specs import ModelProfile

__all__ = ["BatchEncoder", "rows_block"]


def rows_block(rows: list[dict[str, Any]], groups: int) -> pa.Table:
    """Rows to encode as an Arrow block: ``key``, ``group``, ``text``, ``title``, an empty
    ``vector``, and per group the pid, peak RSS (KiB) and finishing time (epoch ms) of
    the actor batch that encoded it."""
    columns: dict[str, pa.Array] = {
        "key": pa.array([row["key"] for row in rows], pa.int64()),
        "group": pa.array([row["group"] for row in rows], pa.int32()),
        "text": pa.array([row["text"] for row in rows], pa.large_string()),
        "title": pa.array([row["title"] for row in rows], pa.string()),
        "vector": pa.array([b""] * len(rows), pa.binary()),
    }
    for group in range(groups):
        for key in ("pid", "kib", "ms"):
            columns[f"{key}_{group}"] = pa.array([0] * len(rows), pa.int64())
    return pa.table(columns)


class BatchEncoder:
    """Ray Data callable class: loads one model group (roles sharing weights) with the
    deployments' loader and fills the ``vector`` (float32 bytes) of its group's rows.

    Args:
        profile: the parsed model profile.
        roles: the roles of this group (one shared model).
        group: the group number rows carry in their ``group`` column.

    Raises:
        models.errors.ModelNotAvailableError: the weights are not available (at start).
    """

    def __init__(self, profile: ModelProfile, roles: Sequence[str], group: int) -> None:
        self.model = load_shared(profile, roles)[roles[0]]
        self.group = group

    def encode(self, texts: list[str], titles: list[str]) -> np.ndarray:
        """(n, d) float32 vectors, as ``deployments.local.LocalTextEncoder`` gives them."""
        return np.asarray(self.model.encode(texts, titles), dtype=np.float32)

    def __call__(self, batch: pa.Table) -> pa.Table:
        mine = np.flatnonzero(batch.column("group").to_numpy() == self.group)
        if mine.size:
            indices = pa.array(mine)
            vectors = self.encode(
                batch.column("text").take(indices).to_pylist(),
                batch.column("title").take(indices).to_pylist(),
            )
            column = batch.column("vector").to_pylist()
            for position, vector in zip(mine.tolist(), vectors, strict=True):
                column[position] = vector.tobytes()
            batch = batch.set_column(
                batch.schema.get_field_index("vector"), "vector", pa.array(column, pa.binary())
            )
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            stats = {"pid": os.getpid(), "kib": peak, "ms": time.time_ns() // 1_000_000}
            for name, value in ((f"{key}_{self.group}", value) for key, value in stats.items()):
                index = batch.schema.get_field_index(name)
                batch = batch.set_column(
                    index, name, pa.array([value] * batch.num_rows, pa.int64())
                )
        return batch
