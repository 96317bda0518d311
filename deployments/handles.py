"""``pipeline.ports`` over Ray Serve deployment handles: the ingress's model ports.

Calls are awaited (never ``.result()``). Failures map to pipeline errors: an input the
model rejects -> ``InvalidInput``; a replica that is down, unreachable or overloaded ->
``BackendUnavailable``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

import numpy as np
from ray import exceptions as ray_exceptions
from ray.serve import exceptions as serve_exceptions
from ray.serve.handle import DeploymentHandle

from deployments.call_coalescing import CallCoalescer, MergeSettings
from models.errors import ModelInputError
from models.inputs import text_batch
from pipeline.errors import BackendUnavailable, InvalidInput

__all__ = [
    "HandleCrossEncoder",
    "HandleImageEncoder",
    "HandleTextEncoder",
    "batch_stats",
    "call_handle",
    "merged_encoder_calls",
]

T = TypeVar("T")


def _cause(error: BaseException) -> BaseException:
    cause = getattr(error, "cause", None)
    return cause if isinstance(cause, BaseException) else error


async def call_handle(name: str, call: Awaitable[T]) -> T:
    """Await a handle call and translate its failures.

    Raises:
        InvalidInput: the model rejected an input.
        BackendUnavailable: the deployment could not answer.
    """
    try:
        return await call
    except (
        ray_exceptions.RayTaskError,
        ray_exceptions.RayError,
        serve_exceptions.BackPressureError,
        serve_exceptions.DeploymentUnavailableError,
        serve_exceptions.ReplicaUnavailableError,
        serve_exceptions.RequestCancelledError,
    ) as error:
        cause = _cause(error)
        if isinstance(cause, (ModelInputError, InvalidInput)):
            raise InvalidInput(str(cause)) from error
        raise BackendUnavailable(f"{name}: {type(cause).__name__}: {cause}"[:500]) from error


def _lists(
    texts: Sequence[str], titles: Sequence[str] | None = None
) -> tuple[list[str], list[str] | None]:
    """:func:`models.inputs.text_batch` before a handle call, so a bare string fails here
    rather than crossing to the replica as a list of characters.

    Raises:
        InvalidInput: ``texts`` or ``titles`` is a single string, holds a non-string, or
            the counts differ.
    """
    try:
        return text_batch(texts, titles)
    except ModelInputError as error:
        raise InvalidInput(str(error)) from error


async def _encode(handle: DeploymentHandle, role: str, texts: list[str],
                  titles: list[str] | None) -> np.ndarray:
    """One ``encode`` handle call of checked lists (:func:`_lists`), its failures
    translated (:func:`call_handle`)."""
    return await call_handle(f"encoder {role}", handle.encode.remote(role, texts, titles))


def merged_encoder_calls(handle: DeploymentHandle, settings: MergeSettings) -> CallCoalescer:
    """One :class:`~deployments.call_coalescing.CallCoalescer` for an
    ``EncoderDeployment``'s handle, shared by the ports of its roles."""
    return CallCoalescer(lambda role, texts, titles: _encode(handle, role, texts, titles),
                         settings)


class HandleTextEncoder:
    """``TextEncoder`` port for one role of an ``EncoderDeployment``.

    Args:
        handle: the deployment's handle.
        role: the role this port encodes with.
        dimension: the role's output dimension.
        merged: the deployment's :func:`merged_encoder_calls` (shared by its roles):
            concurrent encode calls go as fewer handle calls; None: one handle call per
            encode call.
    """

    def __init__(
        self,
        handle: DeploymentHandle,
        role: str,
        dimension: int,
        merged: CallCoalescer | None = None,
    ) -> None:
        self.handle = handle
        self.role = role
        self.dimension = dimension
        self.merged = merged

    async def encode(self, texts: Sequence[str], titles: Sequence[str] | None = None) -> np.ndarray:
        """(n, d) float32 vectors of ``texts``, in order.

        Raises:
            InvalidInput: the model rejected one of these texts, or ``texts`` /
                ``titles`` is not a sequence of strings (:func:`_lists`).
            BackendUnavailable: the deployment could not answer.
        """
        texts, titles = _lists(texts, titles)
        if self.merged is not None:
            return await self.merged.encode(self.role, texts, titles)
        return await _encode(self.handle, self.role, texts, titles)


class HandleCrossEncoder:
    """``CrossEncoder`` port over a ``CrossEncoderDeployment``."""

    def __init__(self, handle: DeploymentHandle) -> None:
        self.handle = handle

    async def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        """One raw score per ``[query, "title. text"]`` pair, ``(n,)`` float32, in order
        (R-T2-3).

        Raises:
            InvalidInput: the model rejected an input.
            BackendUnavailable: the deployment could not answer.
        """
        return await call_handle(
            "cross-encoder",
            self.handle.score.remote(query, *_lists(texts, titles)),
        )


class HandleImageEncoder:
    """``ImageEncoder`` port for one role of an ``ImageEncoderDeployment``."""

    def __init__(self, handle: DeploymentHandle, role: str, dimension: int) -> None:
        self.handle = handle
        self.role = role
        self.dimension = dimension

    async def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        """``(n, d)`` float32 L2-normalised vectors of encoded ``images``, in order.

        Raises:
            InvalidInput: bytes that do not decode as an image.
            BackendUnavailable: the deployment could not answer.
        """
        return await call_handle(
            f"image encoder {self.role}", self.handle.encode_images.remote(self.role, list(images))
        )

    async def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, d)`` float32 L2-normalised vectors of ``texts`` from the role's text tower
        (R-XM-1), in order.

        Raises:
            InvalidInput: the role has no text tower (R-XM-2), or a bad input.
            BackendUnavailable: the deployment could not answer.
        """
        texts, _ = _lists(texts)
        return await call_handle(
            f"image encoder {self.role}", self.handle.encode_texts.remote(self.role, texts)
        )


async def batch_stats(handle: DeploymentHandle, name: str) -> Any:
    """The deployment's batch-size statistics."""
    return await call_handle(name, handle.batch_stats.remote())
