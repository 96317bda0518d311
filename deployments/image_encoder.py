"""``ImageEncoderDeployment``: BiomedCLIP (open_clip) / UNI2 (timm) behind Ray Serve, when
the profile enables them. Image bytes in, L2-normalised vectors out; the text tower where
the model has one (R-XM-1)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
from ray import serve

from deployments.batching import BatchStats, ImageRequest, items_in
from deployments.metrics import observe_batch
from deployments.model_replica import BatchSettings
from deployments.roles import load_shared
from models.specs import ModelProfile

__all__ = ["ImageEncoderDeployment", "encode_image_batch"]


def encode_image_batch(
    models: dict[str, Any], requests: Sequence[ImageRequest]
) -> list[np.ndarray]:
    """Run a batch: one model call per (role, images or texts) group over every request's
    items, split back per request, in order. ``(n_i, d)`` float32 each, L2-normalised.

    Raises:
        KeyError: a role this replica does not serve.
        models.errors.ModelInputError: bytes that do not decode as an image, or texts for
            a model with no text tower (R-XM-2); the batcher then runs the batch again
            request by request, so only the caller at fault fails.
    """
    groups: dict[tuple[str, bool], list[int]] = {}
    for index, request in enumerate(requests):
        groups.setdefault((request.role, bool(request.images)), []).append(index)
    results: list[np.ndarray] = [np.zeros((0, 0), np.float32)] * len(requests)
    for (role, of_images), indexes in groups.items():
        model = models[role]
        if of_images:
            vectors = model.encode_images([image for i in indexes for image in requests[i].images])
        else:
            vectors = model.encode_texts([text for i in indexes for text in requests[i].texts])
        vectors = np.asarray(vectors, np.float32)
        start = 0
        for i in indexes:
            count = len(requests[i].images) or len(requests[i].texts)
            results[i] = vectors[start : start + count]
            start += count
    return results


@serve.deployment(name="ImageEncoderDeployment", max_ongoing_requests=16)
class ImageEncoderDeployment:
    """Serves ``encode_images(role, images)`` and ``encode_texts(role, texts)``.

    Args:
        models: the parsed model profile (``AppConfig.models``: paths already resolved,
            e.g. ``onnx_cache_dir`` absolute under the data directory).
        roles: the image roles this deployment serves (they share one model).
    """

    def __init__(self, models: ModelProfile, roles: Sequence[str]) -> None:
        self.models = load_shared(models, roles)
        self.roles = list(roles)
        self.batch = BatchSettings(max_batch_size=16, batch_wait_timeout_s=0.01)
        self.stats = BatchStats(observe=observe_batch)
        self._batcher = self.batch.batcher(self._encode_batch, lambda r: items_in([r]))

    def reconfigure(self, user_config: dict[str, Any]) -> None:
        """Run-time batch settings (``max_batch_size``, ``batch_wait_timeout_s``)."""
        self.batch.update(user_config)
        self.batch.apply(self._batcher)

    async def encode_images(self, role: str, images: Sequence[bytes]) -> np.ndarray:
        """(n, d) float32 L2-normalised vectors of encoded ``images`` (PNG, JPEG, ...) by
        ``role``, in order, batched with the other callers' images.

        Raises:
            models.errors.ModelInputError: bytes that do not decode as an image.
        """
        return await self._batcher.submit(ImageRequest(role, images=tuple(images)))

    async def encode_texts(self, role: str, texts: Sequence[str]) -> np.ndarray:
        """(n, d) float32 L2-normalised vectors of ``texts`` by ``role``'s text tower
        (BiomedCLIP, R-XM-1), in order.

        Raises:
            models.errors.ModelInputError: the role's model has no text tower (UNI2, R-XM-2).
        """
        return await self._batcher.submit(ImageRequest(role, texts=tuple(texts)))

    async def _encode_batch(self, requests: list[ImageRequest]) -> list[np.ndarray]:
        self.stats.record(items_in(requests), len(requests))
        return await asyncio.to_thread(encode_image_batch, self.models, requests)

    def batch_stats(self) -> dict[str, Any]:
        """The roles, and recent batch sizes (items per forward call) and requests per
        batch."""
        return {"roles": self.roles, **self.stats.snapshot()}

    def dimensions(self) -> dict[str, int]:
        """Output dimension per role."""
        return {role: int(model.dimension) for role, model in self.models.items()}
