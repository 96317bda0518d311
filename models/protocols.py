"""The batch-first interfaces every family implements (synchronous; the deployment layer
runs them in a thread and exposes ``pipeline.ports``' async protocols).

Vectors are numpy float32, shape ``(n, d)``: each row L2-normalised where the role's
``EncoderSpec.normalize`` is true (every ``cosine`` role), the model's raw output for an
``ip`` role that turns it off (MedCPT query / article); scores are float32 ``(n,)``.
Outputs are in input order; an empty input gives an empty array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from models.specs import EncoderSpec

__all__ = ["ImageEmbedder", "PairScorer", "TextEmbedder"]


@runtime_checkable
class TextEmbedder(Protocol):
    """An embedding role over text or SMILES: ``encode(texts, titles=None) -> (n, d)``."""

    spec: EncoderSpec
    dimension: int

    def encode(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """Embed ``texts`` (with ``titles``, one per text, where the role pairs them):
        ``(n, d)`` float32, L2-normalised for a cosine role, raw for an ip role; ``(0, d)``
        for no texts.

        Raises:
            models.errors.ModelInputError: texts not a list of str, or titles misaligned.
        """
        ...


@runtime_checkable
class ImageEmbedder(Protocol):
    """An image embedding role: ``encode_images(bytes list) -> (n, d)``; ``encode_texts``
    only where the model has a text tower (R-XM-1), otherwise it raises
    :class:`models.errors.ModelInputError` (R-XM-2)."""

    spec: EncoderSpec
    dimension: int

    def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        """Embed encoded image files (bytes): ``(n, d)`` float32, L2-normalised.

        Raises:
            models.errors.ModelInputError: an item is not decodable image bytes.
        """
        ...

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts with the text tower into the image space (R-XM-1): ``(n, d)``
        float32, L2-normalised.

        Raises:
            models.errors.ModelInputError: texts not a list of str, or the model has no
                text tower (R-XM-2).
        """
        ...


@runtime_checkable
class PairScorer(Protocol):
    """The cross-encoder role: ``score(query, texts, titles=None) -> (n,)`` float32."""

    spec: EncoderSpec

    def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """Score each ``"title. text"`` against ``query`` (R-T2-3): ``(n,)`` float32 in
        input order, higher is more relevant (raw logits for a cross-encoder, not
        bounded); ``(0,)`` for no texts.

        Raises:
            models.errors.ModelInputError: query not a str, texts not a list of str, or
                titles misaligned.
        """
        ...
