"""Shared steps of the image families: decode, preprocess, run in chunks, normalise.

Images are fixed-size tensors after preprocessing, so they are cut into chunks of
``profile.max_batch_size`` without sorting (:func:`models.batching.chunk_ranges`).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch.nn.functional as functional
from PIL import Image

from models.batching import chunk_ranges
from models.inputs import decode_images
from models.runtime import input_dtype

__all__ = ["blank_image_bytes", "embed_in_chunks", "encode_image_bytes"]


def blank_image_bytes(size: int = 16) -> bytes:
    """A grey PNG, for the warm-up call that checks a model's output width."""
    buffer = io.BytesIO()
    Image.new("RGB", (size, size), (128, 128, 128)).save(buffer, format="PNG")
    return buffer.getvalue()


def embed_in_chunks(
    count: int,
    chunk_size: int,
    dimension: int,
    embed_chunk: Callable[[range], torch.Tensor],
) -> np.ndarray:
    """Run ``embed_chunk`` over ``range(count)`` in chunks under ``torch.inference_mode``;
    each result row is L2-normalised and cast to float32. Returns ``(count, dimension)``."""
    if count == 0:
        return np.zeros((0, dimension), dtype=np.float32)
    parts = []
    with torch.inference_mode():
        for indices in chunk_ranges(count, chunk_size):
            vectors = embed_chunk(indices).float()
            parts.append(functional.normalize(vectors, p=2.0, dim=-1).cpu().numpy())
    return np.concatenate(parts).astype(np.float32, copy=False)


def encode_image_bytes(
    images: Sequence[bytes],
    preprocess: Callable[[Image.Image], torch.Tensor],
    forward: Callable[[torch.Tensor], torch.Tensor],
    consumer: torch.nn.Module,
    chunk_size: int,
    dimension: int,
) -> np.ndarray:
    """Decode image bytes, preprocess each into a ``(3, H, W)`` float tensor, and embed in
    chunks: ``(n, dimension)`` float32, L2-normalised.

    ``consumer`` is the module that takes the pixel batch (``model.visual`` of a CLIP, the
    timm model itself): batches go to its device, in the dtype of its first convolution or
    linear layer (:func:`models.runtime.input_dtype`), so a tower in float16 / bfloat16
    gets half-precision pixels even when other parameters stay float32 (open_clip's
    mixed precision).

    Raises:
        ModelInputError: an item is not decodable image bytes (all are decoded first, so a
            bad item fails the call before any forward pass).
    """
    # decoding and resizing are most of an image call's time (a GPU waits on them): they
    # run on a pool of as many threads as torch has, which a model replica sets to its own
    workers = torch.get_num_threads()
    pictures = decode_images(images, workers)
    device = next(consumer.parameters()).device
    dtype = input_dtype(consumer)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:

        def embed_chunk(indices: range) -> torch.Tensor:
            pixels = list(pool.map(preprocess, (pictures[index] for index in indices)))
            return forward(torch.stack(pixels).to(device=device, dtype=dtype))

        return embed_in_chunks(len(pictures), chunk_size, dimension, embed_chunk)
