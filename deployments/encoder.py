"""``EncoderDeployment``: one Ray Serve deployment class for every embedding role (text and
SMILES); which model it loads comes from its bound arguments (the parsed ``ModelProfile``
and its roles). Dynamic batching with
``@serve.batch`` across concurrent callers, counted in texts, tunable at run time."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
from ray import serve

from deployments.batching import BatchStats, EncodeRequest, encode_batch, items_in
from deployments.model_replica import BatchSettings, gather_split
from deployments.roles import load_shared
from models.specs import ModelProfile

__all__ = ["EncoderDeployment"]


@serve.deployment(name="EncoderDeployment", max_ongoing_requests=64)
class EncoderDeployment:
    """Serves ``encode(role, texts, titles=None) -> (n, d) float32`` for its roles.

    Args:
        models: the parsed model profile (``AppConfig.models``: paths already resolved,
            e.g. ``onnx_cache_dir`` absolute under the data directory).
        roles: the roles this deployment serves (they share one model).
    """

    def __init__(self, models: ModelProfile, roles: Sequence[str]) -> None:
        self.models = load_shared(models, roles)
        self.roles = list(roles)
        self.batch = BatchSettings()
        self.stats = BatchStats()

    def reconfigure(self, user_config: dict[str, Any]) -> None:
        """Run-time batch settings (``max_batch_size``, ``batch_wait_timeout_s``)."""
        self.batch.update(user_config)
        self._encode_batch.set_max_batch_size(self.batch.max_batch_size)
        self._encode_batch.set_batch_wait_timeout_s(self.batch.batch_wait_timeout_s)

    async def encode(
        self, role: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        """(n, d) float32 L2-normalised vectors of ``texts`` by ``role``, in order.

        Raises:
            KeyError: a role this deployment does not serve.
            models.errors.ModelInputError: an input the model cannot take.
        """
        if role not in self.models:
            raise KeyError(f"role {role!r} not served here (roles: {', '.join(self.roles)})")
        text_list = list(texts)
        title_list = list(titles) if titles is not None else None

        async def piece(part: Sequence[str], offset: int) -> np.ndarray:
            part_titles = (
                tuple(title_list[offset : offset + len(part)]) if title_list is not None else None
            )
            return await self._encode_batch(EncodeRequest(role, tuple(part), part_titles))

        parts = await gather_split(text_list, self.batch.max_batch_size, piece)
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    @serve.batch(max_batch_size=32, batch_wait_timeout_s=0.005, batch_size_fn=items_in)
    async def _encode_batch(self, requests: list[EncodeRequest]) -> list[np.ndarray]:
        self.stats.record(items_in(requests), len(requests))
        return await asyncio.to_thread(encode_batch, self.models, requests)

    def dimensions(self) -> dict[str, int]:
        """Output dimension per role."""
        return {role: int(model.dimension) for role, model in self.models.items()}

    def batch_stats(self) -> dict[str, Any]:
        """Recent batch sizes (items per forward call) and requests per batch."""
        return {"roles": self.roles, **self.stats.snapshot()}

    def check_health(self) -> None:
        """Fails when the model cannot run a forward pass."""
        role = self.roles[0]
        vectors = encode_batch(self.models, [EncodeRequest(role, ("health check",))])[0]
        if vectors.shape[0] != 1 or not np.isfinite(vectors).all():
            raise RuntimeError(f"encoder {role} returned an invalid vector")
