"""``CrossEncoderDeployment``: the cross-encoder role behind Ray Serve. A request carries
many pairs; batches form across concurrent requests (``deployments.continuous_batching``)
and are counted in pairs, not requests; scores come back one per pair, in order."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from ray import serve

from deployments.batching import BatchStats, ScoreRequest, items_in, score_batch, score_call
from deployments.metrics import observe_batch
from deployments.model_replica import BatchSettings
from deployments.roles import load_shared
from models.inputs import text_batch
from models.specs import ModelProfile

__all__ = ["CrossEncoderDeployment"]


@serve.deployment(name="CrossEncoderDeployment", max_ongoing_requests=64)
class CrossEncoderDeployment:
    """Serves ``score(query, texts, titles=None) -> (n,) float32``.

    Args:
        models: the parsed model profile (``AppConfig.models``: paths already resolved,
            e.g. ``onnx_cache_dir`` absolute under the data directory).
        role: the cross-encoder role (default ``medcpt-rerank``).
    """

    def __init__(self, models: ModelProfile, role: str = "medcpt-rerank") -> None:
        self.role = role
        self.model = load_shared(models, [role])[role]
        # the forward pass never queues behind tokenising: each has its own threads, the
        # tokenising as many as the replica's (models.cpu_threads, set by threads_for)
        self._forward_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="forward")
        self._tokenize_pool = ThreadPoolExecutor(
            max_workers=models.cpu_threads or 1, thread_name_prefix="tokenise"
        )
        self.batch = BatchSettings(max_batch_size=256)
        self.stats = BatchStats(observe=observe_batch)
        self._batcher = self.batch.batcher(self._score_batch, lambda r: items_in([r]))

    def reconfigure(self, user_config: dict[str, Any]) -> None:
        """Run-time batch settings (``max_batch_size`` in pairs, ``batch_wait_timeout_s``)."""
        self.batch.update(user_config)
        self.batch.apply(self._batcher)

    async def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        """One raw score per ``[query, "title. text"]`` pair, (n,) float32, in order; each
        piece is tokenised as it arrives, while the model runs the batch before
        (``deployments.batching.score_call``).

        Raises:
            ModelInputError: ``texts`` or ``titles`` is a single string, holds a
                non-string, or the counts differ (:func:`models.inputs.text_batch`).
        """
        text_list, title_list = text_batch(texts, titles)
        return await score_call(
            self.model,
            self._batcher.submit,
            self.batch.max_batch_size,
            query,
            text_list,
            title_list,
            self._tokenize_pool,
        )

    async def _score_batch(self, requests: list[ScoreRequest]) -> list[np.ndarray]:
        self.stats.record(items_in(requests), len(requests))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._forward_pool, score_batch, self.model, requests)

    def batch_stats(self) -> dict[str, Any]:
        """Recent batch sizes (pairs per forward call) and requests per batch."""
        return {"roles": [self.role], **self.stats.snapshot()}

    def check_health(self) -> None:
        """Fails when the model cannot score a pair."""
        scores = score_batch(self.model, [ScoreRequest("health", ("check",))])[0]
        if scores.shape != (1,) or not np.isfinite(scores).all():
            raise RuntimeError("cross-encoder returned an invalid score")
