"""CLIP-style vision-language encoders through open_clip (family ``open-clip``).

Model card followed: ``microsoft/BiomedCLIP-PubMedBERT_256-vit_base_patch16_224``:
``open_clip.create_model_from_pretrained('hf-hub:...')`` gives the model and its image
preprocessing, ``open_clip.get_tokenizer('hf-hub:...')`` the text tokenizer (context length
256); ``model.encode_image`` / ``model.encode_text`` give 512-d features, L2-normalised.
Text queries go through the text tower and are compared with image-tower vectors by inner
product (R-XM-1).

Offline loading: the hub id is resolved to its cached snapshot and opened as
``local-dir:<snapshot>``; a text tower named by hub id inside ``open_clip_config.json``
(BiomedCLIP's ``hf_model_name``) is resolved from the cache too, never downloaded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import open_clip
import torch

from models.images import blank_image_bytes, embed_in_chunks, encode_image_bytes
from models.inputs import text_list
from models.runtime import (
    check_dimension,
    configure_threads,
    load_pretrained,
    model_dtype,
    model_stage,
    resolve_device,
)
from models.sources import SourceKind, not_available, parse_source, resolve_hub_id, resolve_source
from models.specs import EncoderSpec, ModelProfile

__all__ = ["OpenClipEncoder", "load_open_clip_encoder"]

CONFIG_FILE = "open_clip_config.json"
_PRECISIONS = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}
_WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pth")  # what open_clip looks for


def _check_weights_file(folder: Path, spec: EncoderSpec) -> None:
    """open_clip initialises a ``local-dir:`` model randomly (with a log warning) when the
    folder holds no checkpoint; refuse that instead.

    Raises:
        ModelNotAvailableError: no ``*.safetensors`` / ``*.bin`` / ``*.pth`` in ``folder``.
    """
    if not any(next(folder.glob(pattern), None) for pattern in _WEIGHT_PATTERNS):
        raise not_available(
            spec,
            f"no weights file (open_clip_pytorch_model.bin or *.safetensors) in {str(folder)!r}",
        )


class OpenClipEncoder:
    """A CLIP model with both towers.

    ``encode_images(images) -> (n, d)`` float32 L2-normalised from encoded image bytes;
    ``encode_texts(texts) -> (n, d)`` the same from the text tower (truncated to the
    tokenizer's context length); ``encode(texts, titles=None)`` is ``encode_texts`` so the
    role also serves as a text query encoder (titles are ignored).
    """

    def __init__(
        self,
        spec: EncoderSpec,
        model: torch.nn.Module,
        preprocess: Any,
        tokenizer: Any,
        chunk_size: int,
    ):
        self.spec = spec
        self.dimension = int(spec.dimension or 0)
        self.model = model
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.chunk_size = chunk_size

    def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        """Image bytes -> ``(n, d)`` float32, L2-normalised.

        Raises:
            ModelInputError: an item is not decodable image bytes.
        """
        return encode_image_bytes(
            images,
            self.preprocess,
            self.model.encode_image,
            self.model.visual,
            self.chunk_size,
            self.dimension,
        )

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Texts -> ``(n, d)`` float32, L2-normalised, from the text tower.

        Raises:
            ModelInputError: ``texts`` is not a list of str.
        """
        items = text_list(texts)
        device = next(self.model.parameters()).device
        tokens = self.tokenizer(items) if items else None

        def embed_chunk(indices: range) -> torch.Tensor:
            assert tokens is not None
            return self.model.encode_text(tokens[indices.start : indices.stop].to(device))

        return embed_in_chunks(len(items), self.chunk_size, self.dimension, embed_chunk)

    def encode(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """The text tower as a text encoder (R-XM-1); titles are ignored."""
        return self.encode_texts(texts)


def _cached_or_local(name: str, spec: EncoderSpec, profile: ModelProfile) -> str:
    """A tower name from ``open_clip_config.json`` as a local path: kept when it is a
    folder, resolved from the hub cache when it is a hub id.

    Raises:
        ModelNotAvailableError: a hub id that is not cached.
    """
    if Path(name).expanduser().is_dir():
        return name
    reference = parse_source(name)
    if reference.kind is not SourceKind.HUB:
        raise not_available(spec, f"its text tower folder {name!r} does not exist")
    folder = resolve_hub_id(reference.value, profile.hf_cache_dir)
    if folder is None:
        raise not_available(
            spec,
            f"its text tower {reference.value!r} (named in {CONFIG_FILE}) is not in the "
            f"local Hugging Face cache; download that repository too",
        )
    return str(folder)


def _text_tower_overrides(folder: Path, spec: EncoderSpec, profile: ModelProfile) -> dict[str, Any]:
    """``create_model`` keyword overrides pointing an HF text tower at local files (the full
    CLIP checkpoint then supplies its weights, so the tower is not loaded pretrained)."""
    config_path = folder / CONFIG_FILE
    if not config_path.is_file():
        raise not_available(spec, f"no {CONFIG_FILE} in {str(folder)!r}")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    text_config = dict(config.get("model_cfg", config).get("text_cfg", {}))
    if "hf_model_name" not in text_config:
        return {}
    text_config["hf_model_name"] = _cached_or_local(text_config["hf_model_name"], spec, profile)
    text_config["hf_model_pretrained"] = False
    return {"text_cfg": text_config}


def _cast_hf_text_tower(model: torch.nn.Module, dtype: torch.dtype) -> None:
    """Run an HF text tower wholly in ``dtype``. open_clip's mixed precision
    (``precision='fp16'`` / ``'bf16'``) converts only the linear and convolution weights of
    a model without a timm tower (``open_clip.model.convert_weights_to_lp``), so an HF
    tower's embeddings and norms stay float32 and feed half-precision weights ("mat1 and
    mat2 must have the same dtype"; a native ViT with an HF text tower, as laion's
    xlm-roberta CLIPs, seen on an H200). open_clip casts a timm-based model whole; this
    does the same for the text tower alone."""
    text = getattr(model, "text", None)
    if dtype is not torch.float32 and isinstance(text, open_clip.hf_model.HFTextEncoder):
        text.to(dtype)


def _tokenizer(
    folder: Path, overrides: dict[str, Any], spec: EncoderSpec, profile: ModelProfile
) -> Any:
    """open_clip's tokenizer for the model; an HF text tower whose tokenizer files are not
    in the CLIP folder takes them from its own (local or cached) folder."""
    text_config = overrides.get("text_cfg", {})
    tokenizer_name = text_config.get("hf_tokenizer_name")
    if not tokenizer_name or (folder / "tokenizer_config.json").is_file():
        return open_clip.get_tokenizer(f"local-dir:{folder}")
    return open_clip.tokenizer.HFTokenizer(
        _cached_or_local(tokenizer_name, spec, profile),
        context_length=text_config.get("context_length", 77),
        **(text_config.get("tokenizer_kwargs") or {}),
    )


def load_open_clip_encoder(spec: EncoderSpec, profile: ModelProfile) -> OpenClipEncoder:
    """Load an ``open-clip`` role with ``open_clip.create_model_from_pretrained`` from the
    resolved local folder (``open_clip_config.json`` + weights); ``spec.model_kwargs`` go
    to ``create_model``. Precision: :func:`models.runtime.model_dtype` as open_clip's
    ``precision`` (``fp16`` / ``bf16``: open_clip's mixed precision, which keeps some
    parameters of a native ViT in float32; pixels are cast to the patch embedding's dtype).

    Raises:
        ModelNotAvailableError: weights, config or text tower not available locally,
            loading or the warm-up forward pass failed (the original exception is the
            ``__cause__``), or the model's output width is not ``spec.dimension``.
    """
    folder = resolve_source(spec, profile.hf_cache_dir)
    _check_weights_file(folder, spec)
    configure_threads(profile)
    device = resolve_device(profile)
    dtype = model_dtype(device, profile, spec)
    precision = _PRECISIONS[dtype]
    with model_stage(spec, "reading the config"):
        overrides = _text_tower_overrides(folder, spec, profile)

    def create() -> tuple[torch.nn.Module, Any]:
        return open_clip.create_model_from_pretrained(
            f"local-dir:{folder}",
            device=device,
            precision=precision,
            **overrides,
            **spec.model_kwargs,
        )

    model, preprocess = load_pretrained(spec, create)
    _cast_hf_text_tower(model, dtype)
    tokenizer = load_pretrained(spec, lambda: _tokenizer(folder, overrides, spec, profile))
    encoder = OpenClipEncoder(spec, model.eval(), preprocess, tokenizer, profile.max_batch_size)
    with model_stage(spec, "warm-up"):
        check_dimension(spec, encoder.encode_images([blank_image_bytes()]).shape[1])
        encoder.encode_texts(["warm-up"])
    return encoder
