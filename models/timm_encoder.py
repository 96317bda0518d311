"""Image-only encoders through timm (family ``timm``), e.g. UNI2 for pathology (R-XM-2).

Model card followed: ``MahmoodLab/UNI2-h``: ``timm.create_model('hf-hub:MahmoodLab/UNI2-h',
pretrained=True, **timm_kwargs)`` with the card's ``timm_kwargs`` (``img_size`` 224,
``patch_size`` 14, ``depth`` 24, ``num_heads`` 24, ``init_values`` 1e-5, ``embed_dim`` 1536,
``mlp_ratio`` 5.33334, ``num_classes`` 0, ``no_embed_class``, ``mlp_layer``
``timm.layers.SwiGLUPacked``, ``act_layer`` ``torch.nn.SiLU``, ``reg_tokens`` 8,
``dynamic_img_size``), preprocessing from ``resolve_data_config`` + ``create_transform``;
the model output (1536-d) is the embedding, L2-normalised here. The kwargs live in the
profile's ``model_kwargs``; layer classes are written as dotted names (``*_layer`` keys,
``timm.`` or ``torch.`` only) and imported here. The hub id is resolved to its cached
snapshot and opened as ``local-dir:<snapshot>``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import timm
import torch
from timm.data import create_transform, resolve_data_config

from models.errors import ModelInputError
from models.images import blank_image_bytes, encode_image_bytes
from models.runtime import (
    check_dimension,
    configure_threads,
    load_pretrained,
    model_dtype,
    model_stage,
    resolve_device,
)
from models.sources import not_available, resolve_source
from models.specs import EncoderSpec, ModelProfile

__all__ = ["TimmImageEncoder", "load_timm_encoder", "resolve_layer_references"]

_IMPORTABLE_PREFIXES = ("timm.", "torch.")


def resolve_layer_references(model_kwargs: Mapping[str, Any], spec: EncoderSpec) -> dict[str, Any]:
    """``model_kwargs`` with ``*_layer`` values given as dotted names (``torch.nn.SiLU``)
    replaced by the classes they name; other values unchanged.

    Raises:
        ModelNotAvailableError: a dotted name outside ``timm.`` / ``torch.`` or not found.
    """
    resolved: dict[str, Any] = {}
    for key, value in model_kwargs.items():
        if key.endswith("_layer") and isinstance(value, str):
            module_name, _, attribute = value.rpartition(".")
            if not value.startswith(_IMPORTABLE_PREFIXES) or not module_name:
                raise not_available(spec, f"model_kwargs.{key}={value!r} is not a timm/torch class")
            try:
                value = getattr(importlib.import_module(module_name), attribute)
            except (ImportError, AttributeError):
                raise not_available(spec, f"model_kwargs.{key}={value!r} does not exist") from None
        resolved[key] = value
    return resolved


class TimmImageEncoder:
    """An image-only role: ``encode_images(images) -> (n, d)`` float32 L2-normalised from
    encoded image bytes. It has no text tower: ``encode_texts`` / ``encode`` raise
    :class:`ModelInputError` (R-XM-2: image -> image only)."""

    def __init__(self, spec: EncoderSpec, model: torch.nn.Module, preprocess: Any, chunk_size: int):
        self.spec = spec
        self.dimension = int(spec.dimension or 0)
        self.model = model
        self.preprocess = preprocess
        self.chunk_size = chunk_size

    def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        """Image bytes -> ``(n, d)`` float32, L2-normalised.

        Raises:
            ModelInputError: an item is not decodable image bytes.
        """
        return encode_image_bytes(
            images, self.preprocess, self.model, self.model, self.chunk_size, self.dimension
        )

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Always raises: this model embeds images only (R-XM-2).

        Raises:
            ModelInputError: always.
        """
        raise ModelInputError(
            f"role {self.spec.role!r} embeds images only (no text tower); send an image"
        )

    def encode(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """Always raises, as :meth:`encode_texts`."""
        return self.encode_texts(texts)


def load_timm_encoder(spec: EncoderSpec, profile: ModelProfile) -> TimmImageEncoder:
    """Load a ``timm`` role: ``timm.create_model('local-dir:<folder>', pretrained=True,
    **model_kwargs)`` and its data-config transform, in :func:`models.runtime.model_dtype`
    (the whole model; pixels are cast to its patch embedding's dtype).

    Raises:
        ModelNotAvailableError: weights or config not available locally, loading, moving
            to the device or the warm-up forward pass failed (the original exception is the
            ``__cause__``), or the output width is not ``spec.dimension``.
    """
    folder = resolve_source(spec, profile.hf_cache_dir)
    configure_threads(profile)
    device = resolve_device(profile)
    kwargs = resolve_layer_references(spec.model_kwargs, spec)

    model = load_pretrained(
        spec, lambda: timm.create_model(f"local-dir:{folder}", pretrained=True, **kwargs)
    )
    with model_stage(spec, "moving to the device"):
        model = model.to(device=device, dtype=model_dtype(device, profile, spec)).eval()
    with model_stage(spec, "reading the data config"):
        preprocess = create_transform(**resolve_data_config(model=model))
    encoder = TimmImageEncoder(spec, model, preprocess, profile.max_batch_size)
    with model_stage(spec, "warm-up"):
        check_dimension(spec, encoder.encode_images([blank_image_bytes()]).shape[1])
    return encoder
