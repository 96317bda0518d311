"""Device, precision, threads and the forward-pass engines (PyTorch, ONNX Runtime).

A family wraps its model in an ``nn.Module`` whose positional inputs are int64 token
arrays and whose output is the final float32 result (pooled L2-normalised vectors, or one
logit per pair). :func:`build_forward` turns that module into a :data:`models.batching.Forward`
that runs it with torch (``inference_mode``, fp16 on CUDA when the profile says so) or
exports it once to ONNX and runs it with ONNX Runtime (CPU or CUDA provider).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from transformers import AutoTokenizer

from models.batching import Forward
from models.errors import ModelNotAvailableError
from models.sources import not_available, resolve_source
from models.specs import Device, EncoderSpec, ModelProfile, Runtime

__all__ = [
    "TorchForward",
    "build_forward",
    "check_dimension",
    "configure_threads",
    "load_pretrained",
    "model_dtype",
    "resolve_device",
    "torch_device_for",
]

Loaded = TypeVar("Loaded")


def resolve_device(profile: ModelProfile) -> torch.device:
    """``cuda`` when the profile asks for it (or ``auto`` and torch sees a GPU), else CPU.

    Raises:
        ModelNotAvailableError: ``device: cuda`` but torch sees no GPU.
    """
    if profile.device is Device.CUDA:
        if not torch.cuda.is_available():
            raise ModelNotAvailableError(
                "the model profile sets device: cuda but torch sees no GPU; set device: auto or cpu"
            )
        return torch.device("cuda")
    if profile.device is Device.AUTO and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def torch_device_for(spec: EncoderSpec, profile: ModelProfile) -> torch.device:
    """Where the torch model lives: the profile's device, except that the ONNX runtime
    loads and exports on the CPU (the export is float32; ONNX Runtime then picks the
    provider)."""
    if profile.runtime_for(spec) is Runtime.ONNX:
        return torch.device("cpu")
    return resolve_device(profile)


def model_dtype(device: torch.device, profile: ModelProfile) -> torch.dtype:
    """float16 on CUDA when ``profile.fp16``, float32 otherwise."""
    return torch.float16 if device.type == "cuda" and profile.fp16 else torch.float32


def configure_threads(profile: ModelProfile) -> None:
    """Set torch's intra-op threads to ``profile.cpu_threads`` (process-wide; no-op if None)."""
    if profile.cpu_threads is not None and torch.get_num_threads() != profile.cpu_threads:
        torch.set_num_threads(profile.cpu_threads)


def check_dimension(spec: EncoderSpec, width: int) -> None:
    """Compare a loaded model's output width (from a warm-up call) with the profile.

    Raises:
        ModelNotAvailableError: ``width`` is not ``spec.dimension``.
    """
    if width != spec.dimension:
        raise ModelNotAvailableError(
            f"role {spec.role!r}: the profile says dimension {spec.dimension} but "
            f"{spec.source!r} gives {width}-d vectors; fix models.roles.{spec.role}.dimension"
        )


def load_pretrained(spec: EncoderSpec, load: Callable[[], Loaded]) -> Loaded:
    """Call a library loader, turning its missing-file / bad-config errors into one
    :class:`ModelNotAvailableError` naming the role (no transformers traceback attached).

    Raises:
        ModelNotAvailableError: the loader raised ``OSError`` or ``ValueError``.
    """
    try:
        return load()
    except (OSError, ValueError) as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise not_available(spec, f"loading failed: {reason}") from None


def load_tokenizer_and_model(
    spec: EncoderSpec, profile: ModelProfile, model_class: Any
) -> tuple[Path, Any, Any]:
    """``(folder, tokenizer, model)`` for a Hugging Face role: ``AutoTokenizer`` and
    ``model_class.from_pretrained`` (``AutoModel``, ``AutoModelForSequenceClassification``)
    from the resolved local folder, ``local_files_only=True``, ``trust_remote_code`` and
    ``spec.model_kwargs`` from the spec.

    Raises:
        ModelNotAvailableError: weights not available locally, or loading failed.
    """
    folder = resolve_source(spec, profile.hf_cache_dir)
    tokenizer = load_pretrained(
        spec,
        lambda: AutoTokenizer.from_pretrained(
            str(folder), local_files_only=True, trust_remote_code=spec.trust_remote_code
        ),
    )
    model = load_pretrained(
        spec,
        lambda: model_class.from_pretrained(
            str(folder),
            local_files_only=True,
            trust_remote_code=spec.trust_remote_code,
            **spec.model_kwargs,
        ),
    )
    return folder, tokenizer, model


class TorchForward:
    """Runs a module with ``torch.inference_mode`` on its device; returns float32 numpy."""

    def __init__(self, module: torch.nn.Module, input_names: Sequence[str], device: torch.device):
        self.module = module.eval()
        self.input_names = tuple(input_names)
        self.device = device

    def __call__(self, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        """Padded int64 arrays ``(b, s)`` by input name -> the module's output as float32."""
        with torch.inference_mode():
            tensors = [
                torch.from_numpy(np.ascontiguousarray(inputs[name])).to(self.device)
                for name in self.input_names
            ]
            output = self.module(*tensors)
            return output.float().cpu().numpy()


def build_forward(
    module: torch.nn.Module,
    spec: EncoderSpec,
    profile: ModelProfile,
    input_names: Sequence[str],
    example_inputs: Mapping[str, np.ndarray],
    folder: Path,
    extra_key: Mapping[str, Any] | None = None,
) -> Forward:
    """The forward engine for a role: torch, or ONNX Runtime on a cached export of ``module``.

    ``module`` must already be on :func:`torch_device_for` with its dtype. For ONNX the
    export is keyed by the model folder's files, the spec fields that shape the graph and
    ``extra_key``; see :mod:`models.onnx_runtime`.
    """
    if profile.runtime_for(spec) is Runtime.TORCH:
        return TorchForward(module, input_names, next(module.parameters()).device)
    from models.onnx_runtime import OnnxForward, export_cached

    path = export_cached(module, spec, profile, input_names, example_inputs, folder, extra_key)
    return OnnxForward(path, input_names, resolve_device(profile), profile.cpu_threads)
