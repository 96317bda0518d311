"""Device, precision, threads and the forward-pass engines (PyTorch, ONNX Runtime).

A family wraps its model in an ``nn.Module`` whose positional inputs are int64 token
arrays and whose output is the final float32 result (pooled L2-normalised vectors, or one
logit per pair). :func:`build_forward` turns that module into a :data:`models.batching.Forward`
that runs it with torch (``inference_mode``, in the profile's dtype: see
:func:`model_dtype`) or exports it once to ONNX and runs it with ONNX Runtime (CPU or CUDA
provider).

Every failure while loading, moving, or warming up a model (the first forward pass that
checks its width) comes out as the one :class:`ModelNotAvailableError` naming the role, the
source and how to provide it (:func:`load_pretrained`, :func:`model_stage`); the original
exception is kept as ``__cause__``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from transformers import AutoTokenizer

from models.batching import BatchLimits, Forward
from models.errors import ModelNotAvailableError
from models.sources import not_available, resolve_source
from models.specs import Device, Dtype, EncoderSpec, ModelProfile, Runtime

__all__ = [
    "TorchForward",
    "batch_limits_for",
    "build_forward",
    "check_dimension",
    "configure_threads",
    "configure_tokenizer_threads",
    "input_dtype",
    "load_pretrained",
    "model_dtype",
    "model_stage",
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


def batch_limits_for(profile: ModelProfile) -> BatchLimits:
    """The forward-pass limits of a model that runs where ``profile`` resolves to
    (:func:`resolve_device`): on the CPU the token cap is also at most
    ``cpu_max_tokens_per_forward``.

    Raises:
        ModelNotAvailableError: ``device: cuda`` but torch sees no GPU.
    """
    return BatchLimits.from_profile(profile, on_cpu=resolve_device(profile).type == "cpu")


def torch_device_for(spec: EncoderSpec, profile: ModelProfile) -> torch.device:
    """Where the torch model lives: the profile's device, except that the ONNX runtime
    loads and exports on the CPU (the export is float32; ONNX Runtime then picks the
    provider)."""
    if profile.runtime_for(spec).is_onnx:
        return torch.device("cpu")
    return resolve_device(profile)


def model_dtype(
    device: torch.device, profile: ModelProfile, spec: EncoderSpec | None = None
) -> torch.dtype:
    """The dtype a torch model runs in on ``device`` (:class:`models.specs.Dtype`).

    ``profile.dtype``: ``bf16`` -> bfloat16 on any device; ``fp16`` -> float16 on CUDA,
    float32 on the CPU; ``fp32`` -> float32; ``auto`` -> float16 on CUDA when
    ``profile.fp16``, else float32. Always float32 when ``spec`` runs on the ONNX runtime
    (the export is float32).
    """
    if spec is not None and profile.runtime_for(spec).is_onnx:
        return torch.float32
    if profile.dtype is Dtype.BF16:
        return torch.bfloat16
    if profile.dtype is Dtype.FP32:
        return torch.float32
    half = profile.dtype is Dtype.FP16 or profile.fp16
    return torch.float16 if device.type == "cuda" and half else torch.float32


def input_dtype(consumer: torch.nn.Module) -> torch.dtype:
    """The dtype ``consumer`` expects its floating-point input in: that of the weight of
    its first convolution or linear layer (the patch embedding of a vision tower), else
    of its first floating-point parameter, else float32.

    Not simply the first parameter: open_clip's mixed precision (``precision='fp16'``)
    keeps embeddings and norms in float32 but its ``conv1`` in float16.
    """
    for module in consumer.modules():
        if isinstance(module, torch.nn.Conv2d | torch.nn.Conv1d | torch.nn.Linear):
            return module.weight.dtype
    for parameter in consumer.parameters():
        if parameter.is_floating_point():
            return parameter.dtype
    return torch.float32


def _first_line(error: BaseException) -> str:
    text = (str(error).strip().splitlines() or [""])[0].strip().rstrip(".")
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _fix_hint(error: BaseException) -> str:
    if isinstance(error, ImportError):
        return (
            " (the model's code imports a Python package that is not installed here: "
            "install it, or use a source whose code runs with the installed packages)"
        )
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return " (not enough GPU memory: free the GPU, set dtype fp16, or use device: cpu)"
    return ""


@contextmanager
def model_stage(spec: EncoderSpec, stage: str) -> Iterator[None]:
    """Turn any failure inside the block into :func:`models.sources.not_available` for
    ``spec`` ("``stage`` failed: <type>: <first line>"), the original kept as
    ``__cause__``. A :class:`ModelNotAvailableError` passes through unchanged.

    Stages used: ``loading`` (library loaders, remote code), ``moving to the device``,
    ``warm-up`` (the first forward pass, which also checks the output width).
    """
    try:
        yield
    except ModelNotAvailableError:
        raise
    except Exception as error:
        reason = f"{stage} failed: {_first_line(error)}{_fix_hint(error)}"
        raise not_available(spec, reason) from error


def configure_threads(profile: ModelProfile) -> None:
    """Set torch's intra-op threads and the tokenizers' threads to ``profile.cpu_threads``
    (process-wide; no-op if None: a model replica sets it, ``DeploymentSettings.threads_for``).

    Tokenising is most of a cross-encoder call on a GPU: 256 pairs of ~320 tokens took
    325 ms on one thread against an 82 ms forward pass in fp16 on an H200, 32 ms on 16
    threads (``bench/gpu_stages.py``, bench/README.md "On a lent H200")."""
    if profile.cpu_threads is None:
        return
    if torch.get_num_threads() != profile.cpu_threads:
        torch.set_num_threads(profile.cpu_threads)
    configure_tokenizer_threads(profile.cpu_threads)


def configure_tokenizer_threads(threads: int) -> None:
    """Let the Rust tokenizers (``tokenizers``) split a batch over ``threads`` threads (1:
    none). They read ``TOKENIZERS_PARALLELISM`` at each call and size their Rayon pool
    from ``RAYON_NUM_THREADS`` once, at its first parallel use; an operator's
    ``RAYON_NUM_THREADS`` is kept. Called while a model loads (a replica's constructor),
    before anything in the process tokenises."""
    os.environ["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
    os.environ.setdefault("RAYON_NUM_THREADS", str(threads))


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
    """Call a library loader, turning any failure (missing file, bad config, size
    mismatch, remote-code ``ImportError``) into one :class:`ModelNotAvailableError`
    naming the role, the source and the fix; the original is its ``__cause__``.

    Raises:
        ModelNotAvailableError: the loader raised.
    """
    with model_stage(spec, "loading"):
        return load()


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
    runtime = profile.runtime_for(spec)
    if runtime is Runtime.TORCH:
        return TorchForward(module, input_names, next(module.parameters()).device)
    from models.onnx_runtime import OnnxForward, export_cached, quantized_cached

    path = export_cached(module, spec, profile, input_names, example_inputs, folder, extra_key)
    if runtime is Runtime.ONNX_INT8:
        path = quantized_cached(path)
    return OnnxForward(path, input_names, resolve_device(profile), profile.cpu_threads)
