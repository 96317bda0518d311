"""In-process model ports: the ``models`` families behind ``pipeline.ports``' async
protocols, for the CLI (ingest, eval), tests and the in-process benchmark baseline.

Blocking forward passes run in a worker thread; model errors map to pipeline errors
(``ModelInputError`` -> ``InvalidInput``, ``ModelNotAvailableError`` ->
``BackendUnavailable``). Roles whose specs are identical share one loaded model.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from deployments.roles import load_shared
from models.errors import ModelInputError, ModelNotAvailableError
from models.inputs import text_batch, text_list
from models.protocols import ImageEmbedder, PairScorer, TextEmbedder
from models.specs import Modality, ModelProfile
from pipeline.errors import BackendUnavailable, InvalidInput

__all__ = [
    "LocalCrossEncoder",
    "LocalImageEncoder",
    "LocalModels",
    "LocalTextEncoder",
    "load_local_models",
]

T = TypeVar("T")


async def _call(lock: threading.Lock, function: Callable[..., T], *args: Any) -> T:
    def locked() -> T:
        # One forward pass at a time per model: torch already uses every core, and
        # concurrent passes on one module only thrash the caches.
        with lock:
            return function(*args)

    try:
        return await asyncio.to_thread(locked)
    except ModelInputError as error:
        raise InvalidInput(str(error)) from error
    except ModelNotAvailableError as error:
        raise BackendUnavailable(str(error)) from error


@dataclass
class LocalTextEncoder:
    """``pipeline.ports.TextEncoder`` over a loaded ``TextEmbedder``: (n, d) float32."""

    model: TextEmbedder
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def dimension(self) -> int:
        """The model's output dimension ``d``."""
        return self.model.dimension

    async def encode(self, texts: Sequence[str], titles: Sequence[str] | None = None) -> np.ndarray:
        """``(n, d)`` float32 vectors of ``texts``, in order (L2-normalised for a cosine
        role, raw for an ip role); run in a worker thread.

        Raises:
            InvalidInput: the model rejected an input.
            BackendUnavailable: the model is not available.
        """
        return await _call(self.lock, lambda: self.model.encode(*text_batch(texts, titles)))


@dataclass
class LocalImageEncoder:
    """``pipeline.ports.ImageEncoder`` over a loaded ``ImageEmbedder``."""

    model: ImageEmbedder
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def dimension(self) -> int:
        """The model's output dimension ``d``."""
        return self.model.dimension

    async def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        """``(n, d)`` float32 L2-normalised vectors of encoded ``images``, in order.

        Raises:
            InvalidInput: bytes that do not decode as an image.
            BackendUnavailable: the model is not available.
        """
        return await _call(self.lock, self.model.encode_images, list(images))

    async def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, d)`` float32 L2-normalised vectors of ``texts`` from the text tower
        (R-XM-1), in order.

        Raises:
            InvalidInput: the model has no text tower (R-XM-2), or a bad input.
            BackendUnavailable: the model is not available.
        """
        return await _call(self.lock, lambda: self.model.encode_texts(text_list(texts)))


@dataclass
class LocalCrossEncoder:
    """``pipeline.ports.CrossEncoder`` over a loaded ``PairScorer``: (n,) float32."""

    model: PairScorer
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        """One score per ``[query, "title. text"]`` pair, ``(n,)`` float32, in order
        (R-T2-3).

        Raises:
            InvalidInput: the model rejected an input.
            BackendUnavailable: the model is not available.
        """
        return await _call(self.lock, lambda: self.model.score(query, *text_batch(texts, titles)))


@dataclass
class LocalModels:
    """The loaded ports of a profile, by role."""

    encoders: dict[str, LocalTextEncoder] = field(default_factory=dict)
    image_encoders: dict[str, LocalImageEncoder] = field(default_factory=dict)
    cross_encoder: LocalCrossEncoder | None = None
    cross_encoder_role: str = "medcpt-rerank"


def load_local_models(
    profile: ModelProfile,
    roles: Sequence[str] | None = None,
    cross_encoder_role: str = "medcpt-rerank",
) -> LocalModels:
    """Load the enabled ``roles`` of ``profile`` (all enabled roles when None).

    Raises:
        ModelNotAvailableError: a role's weights are not available locally (the message
            names the model and how to provide it).
    """
    wanted = list(roles) if roles is not None else profile.enabled_roles()
    models = load_shared(profile, wanted)
    locks: dict[int, threading.Lock] = {}  # one lock per shared model object
    result = LocalModels(cross_encoder_role=cross_encoder_role)
    for role in wanted:
        spec = profile.spec(role)
        model = models[role]
        lock = locks.setdefault(id(model), threading.Lock())
        if spec.is_scorer:
            result.cross_encoder = LocalCrossEncoder(model, lock)
        elif spec.modality == Modality.IMAGE:
            result.image_encoders[role] = LocalImageEncoder(model, lock)
        else:
            result.encoders[role] = LocalTextEncoder(model, lock)
    return result
