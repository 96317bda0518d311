"""Fakes at the edge for fault tests: model deployments that fail (a crashed model, a
stopped encoder). They stand where a real model would; nothing we ship is replaced."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from ray import serve


@serve.deployment(name="FailingCrossEncoder")
class FailingCrossEncoder:
    """A cross-encoder whose model crashes on every call."""

    async def score(self, query: str, texts: Sequence[str], titles: Any = None) -> np.ndarray:
        raise RuntimeError("cross-encoder model crashed (injected fault)")

    async def batch_stats(self) -> dict[str, Any]:
        return {"batches": 0}


@serve.deployment(name="StoppedEncoder")
class StoppedEncoder:
    """An encoder deployment whose model is unavailable."""

    async def encode(self, role: str, texts: Sequence[str], titles: Any = None) -> np.ndarray:
        raise ConnectionError(f"encoder for {role} is stopped (injected fault)")

    async def batch_stats(self) -> dict[str, Any]:
        return {"batches": 0}
