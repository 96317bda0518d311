"""``EncoderDeployment``: one Ray Serve deployment class for every embedding role (text and
SMILES); which model it loads comes from its bound arguments (the parsed ``ModelProfile``
and its roles). Dynamic batching with
a continuous batcher across concurrent callers (``deployments.continuous_batching``:
the next batch forms when the model is free), counted in texts, tunable at run time.

Deployed as the ingress of an application of its own, it also answers HTTP directly
(``POST <route>/embeddings``, the OpenAI / infinity-emb request shape; see
:mod:`deployments.embeddings_http`): one hop fewer than a front deployment calling it
through a handle. With ``http_port`` each replica also answers on that port itself, past
Serve's proxy (:mod:`deployments.embeddings_port`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Sequence
from typing import Any

import numpy as np
from ray import serve
from starlette.requests import Request
from starlette.responses import Response

from deployments.autoscaling import TEXTS_IN_FLIGHT
from deployments.batching import BatchStats, EncodeRequest, encode_batch, items_in
from deployments.embeddings_http import EncodeTimings, embeddings_call
from deployments.embeddings_port import EmbeddingsPort
from deployments.metrics import observe_batch
from deployments.model_replica import BatchSettings, gather_split
from deployments.roles import load_shared
from models.inputs import text_batch
from models.specs import ModelProfile

__all__ = ["EncoderDeployment"]


@serve.deployment(name="EncoderDeployment", max_ongoing_requests=64)
class EncoderDeployment:
    """Serves ``encode(role, texts, titles=None) -> (n, d) float32`` for its roles.

    Args:
        models: the parsed model profile (``AppConfig.models``: paths already resolved,
            e.g. ``onnx_cache_dir`` absolute under the data directory).
        roles: the roles this deployment serves (they share one model).
        http_port: also answer ``POST .../embeddings`` on this port of the replica's host
            (``serve.embeddings_port``; every replica on a node shares it); None: not.
        http_host: the address to bind ``http_port`` to.
        http_max_concurrency: requests in flight on ``http_port`` past which it answers
            503; None: no bound.
        http_timeout_s: seconds an embeddings request (on ``http_port`` or through
            Serve's proxy) may take before it is answered 504
            (``serve.request_timeout_s``); None: no deadline.

    Raises:
        OSError: ``http_port`` cannot be bound.
    """

    def __init__(
        self,
        models: ModelProfile,
        roles: Sequence[str],
        http_port: int | None = None,
        http_host: str = "127.0.0.1",
        http_max_concurrency: int | None = None,
        http_timeout_s: float | None = None,
    ) -> None:
        self.models = load_shared(models, roles)
        self.roles = list(roles)
        self.batch = BatchSettings()
        self.stats = BatchStats(observe=observe_batch)
        self._texts_in_flight = 0  # entered encode_timed, not yet answered
        self._batcher = self.batch.batcher(self._encode_batch, lambda r: items_in([r]))
        self.http_timeout_s = http_timeout_s
        self.port: EmbeddingsPort | None = None
        if http_port is not None:  # Serve runs the constructor on the replica's loop
            self.port = EmbeddingsPort(
                self.dimensions(),
                self.encode_timed,
                http_host,
                http_port,
                http_max_concurrency,
                http_timeout_s,
            )
            self.port.start()

    def __del__(self) -> Coroutine[Any, Any, None] | None:
        # Serve calls this when the replica stops, on the replica's loop, and awaits a
        # returned coroutine: the port stops accepting and its requests in flight finish
        port = getattr(self, "port", None)
        if port is None or not port.serving:
            return None
        return port.aclose()

    def reconfigure(self, user_config: dict[str, Any]) -> None:
        """Run-time batch settings (``max_batch_size``, ``batch_wait_timeout_s``)."""
        self.batch.update(user_config)
        self.batch.apply(self._batcher)

    async def encode(
        self, role: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        """(n, d) float32 vectors of ``texts`` by ``role``, in order: L2-normalised for
        a ``cosine`` role, as the model gives them for an ``ip`` role (MedCPT;
        ``EncoderSpec.normalize``).

        Raises:
            KeyError: a role this deployment does not serve.
            models.errors.ModelInputError: an input the model cannot take.
        """
        vectors, _ = await self.encode_timed(role, texts, titles)
        return vectors

    async def encode_timed(
        self, role: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> tuple[np.ndarray, EncodeTimings]:
        """:meth:`encode` and where its time went in this replica: waiting for a batch
        to form and run (``queue_ms``), the forward pass of the batch that carried the
        texts (``forward_ms``), and the replica's whole call (``replica_ms``). When the
        texts are split over several batches, the slowest piece's times.

        Raises:
            KeyError: a role this deployment does not serve.
            ModelInputError: ``texts`` or ``titles`` is a single string, holds a
                non-string, or the counts differ (:func:`models.inputs.text_batch`).
        """
        if role not in self.models:
            raise KeyError(f"role {role!r} not served here (roles: {', '.join(self.roles)})")
        entered = time.perf_counter()
        text_list, title_list = text_batch(texts, titles)

        async def piece(part: Sequence[str], offset: int) -> tuple[np.ndarray, float, float]:
            part_titles = (
                tuple(title_list[offset : offset + len(part)]) if title_list is not None else None
            )
            return await self._batcher.submit(EncodeRequest(role, tuple(part), part_titles))

        self._texts_in_flight += len(text_list)
        try:
            parts = await gather_split(text_list, self.batch.max_batch_size, piece)
        finally:
            self._texts_in_flight -= len(text_list)
        vectors = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
        started = max(p[1] for p in parts)
        timings = EncodeTimings(
            queue_ms=(started - entered) * 1000,
            forward_ms=max(p[2] for p in parts),
            replica_ms=(time.perf_counter() - entered) * 1000,
        )
        return vectors, timings

    async def __call__(self, request: Request) -> Response:
        """HTTP entry when this deployment is an application's ingress: ``POST
        .../embeddings`` (see :func:`deployments.embeddings_http.embeddings_call`)."""
        return await embeddings_call(
            request, self.dimensions(), self.encode_timed, self.http_timeout_s
        )

    async def _encode_batch(
        self, requests: list[EncodeRequest]
    ) -> list[tuple[np.ndarray, float, float]]:
        """Each request's ``(vectors, batch start (perf_counter s), forward ms)``."""
        self.stats.record(items_in(requests), len(requests))
        started = time.perf_counter()
        vectors = await asyncio.to_thread(encode_batch, self.models, requests)
        forward_ms = (time.perf_counter() - started) * 1000
        return [(v, started, forward_ms) for v in vectors]

    def record_autoscaling_stats(self) -> dict[str, float]:
        """Serve's custom autoscaling metric (``deployments.autoscaling``): texts this
        replica holds now, queued in its batcher or in the forward pass."""
        return {TEXTS_IN_FLIGHT: float(self._texts_in_flight)}

    def dimensions(self) -> dict[str, int]:
        """Output dimension per role."""
        return {role: int(model.dimension) for role, model in self.models.items()}

    def batch_stats(self) -> dict[str, Any]:
        """Recent batch sizes (items per forward call) and requests per batch."""
        return {"roles": self.roles, **self.stats.snapshot()}

    def check_health(self) -> None:
        """Fails when the model cannot run a forward pass, or ``http_port`` stopped."""
        if self.port is not None:
            self.port.check()
        role = self.roles[0]
        vectors = encode_batch(self.models, [EncodeRequest(role, ("health check",))])[0]
        if vectors.shape[0] != 1 or not np.isfinite(vectors).all():
            raise RuntimeError(f"encoder {role} returned an invalid vector")
