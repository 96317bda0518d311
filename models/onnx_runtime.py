"""ONNX export of a loaded model and its ONNX Runtime session, cached on disk.

The export is the family's own wrapper module (model + pooling + normalisation, or model +
logit), traced with ``torch.onnx.export`` (TorchScript exporter, ``dynamo=False``) with
dynamic batch and sequence axes, float32, on the CPU. It is written once to
``profile.onnx_cache_dir`` under a name keyed by a hash of the model folder's files (name,
size, modification time), the graph-shaping spec fields, the opset and the torch /
transformers versions, so a changed model or config gets a new export. Writes go to a
temporary file renamed into place, so concurrent processes never read a half-written file.
Outputs match torch within 1e-4 (tested).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
import torch
import transformers

from models.errors import ModelNotAvailableError
from models.specs import EncoderSpec, ModelProfile

__all__ = [
    "OnnxForward",
    "export_cached",
    "onnx_cache_key",
    "onnx_providers",
    "quantized_cached",
]

logger = logging.getLogger(__name__)
OUTPUT_NAME = "output"


def onnx_cache_key(
    spec: EncoderSpec,
    profile: ModelProfile,
    input_names: Sequence[str],
    folder: Path,
    extra_key: Mapping[str, Any] | None = None,
) -> str:
    """A hex sha256 naming one export: model files + graph-shaping config + versions.

    The role name is not part of it: roles filled by the same model share one export.
    """
    files = sorted(
        (entry.name, entry.stat().st_size, entry.stat().st_mtime_ns)
        for entry in folder.resolve().iterdir()
        if entry.is_file()
    )
    material = {
        "folder": str(folder.resolve()),
        "files": files,
        "family": spec.family.value,
        "pooling": spec.pooling.value,
        "model_kwargs": spec.model_kwargs,
        "trust_remote_code": spec.trust_remote_code,
        "input_names": list(input_names),
        "opset": profile.onnx_opset,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "extra": dict(extra_key or {}),
    }
    encoded = json.dumps(material, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


def export_cached(
    module: torch.nn.Module,
    spec: EncoderSpec,
    profile: ModelProfile,
    input_names: Sequence[str],
    example_inputs: Mapping[str, np.ndarray],
    folder: Path,
    extra_key: Mapping[str, Any] | None = None,
) -> Path:
    """Path of the ONNX export of ``module`` (float32, CPU), exporting it if not cached.

    ``example_inputs`` are padded int64 arrays used only to trace; batch (axis 0) and
    sequence (axis 1) are dynamic in the export.

    Raises:
        ModelNotAvailableError: no cached export and the ``onnx`` package (which
            ``torch.onnx.export`` needs) is not installed.
    """
    key = onnx_cache_key(spec, profile, input_names, folder, extra_key)
    stem = re.sub(r"[^A-Za-z0-9]+", "-", spec.source).strip("-")[-60:]
    cache_dir = Path(profile.onnx_cache_dir).expanduser()
    path = cache_dir / f"{stem}-{key[:16]}.onnx"
    if path.is_file():
        return path
    if importlib.util.find_spec("onnx") is None:
        raise ModelNotAvailableError(
            f"role {spec.role!r} runs on ONNX Runtime but there is no cached export at {path} "
            f"and exporting needs the 'onnx' package: pip install onnx, or set runtime: torch"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    module = module.eval()
    args = tuple(torch.from_numpy(example_inputs[name]) for name in input_names)
    dynamic_axes: dict[str, dict[int, str]] = {
        name: {0: "batch", 1: "sequence"} for name in input_names
    }
    dynamic_axes[OUTPUT_NAME] = {0: "batch"}
    logger.info("exporting %s (%s) to ONNX at %s", spec.role, spec.source, path)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            args,
            str(temporary),
            dynamo=False,
            input_names=list(input_names),
            output_names=[OUTPUT_NAME],
            dynamic_axes=dynamic_axes,
            opset_version=profile.onnx_opset,
            do_constant_folding=True,
        )
    os.replace(temporary, path)
    return path


def quantized_cached(float_path: Path) -> Path:
    """Path of the dynamic int8 quantisation of the float32 export ``float_path``
    (``<name>.int8-per-channel.onnx`` beside it), quantising it if not cached.

    ``onnxruntime.quantization.quantize_dynamic`` with signed int8 weights, one scale per
    output channel (``QuantType.QInt8``, ``per_channel=True``; activations are quantised
    per batch at run time). Per channel because per tensor lost too much: on MiniLM,
    200 NFCorpus queries, cosine to the float32 vectors mean 0.992 / min 0.980 per
    channel against 0.960 / 0.924 per tensor. Only
    ``MatMul`` / ``Gemm`` / ``Attention`` style nodes change; embeddings, LayerNorm and
    pooling stay float32. The quantised file inherits the float export's cache key, so a
    changed model gets a new one. Written to a temporary file renamed into place.

    Raises:
        ModelNotAvailableError: the float32 export does not exist.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    float_path = Path(float_path)
    path = float_path.with_name(f"{float_path.stem}.int8-per-channel.onnx")
    if path.is_file():
        return path
    if not float_path.is_file():
        raise ModelNotAvailableError(f"no float32 ONNX export at {float_path} to quantise")
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp.onnx")
    logger.info("quantising %s to dynamic int8 at %s", float_path.name, path)
    # quantize_dynamic logs advice meant for static quantisation on the root logger
    advice = _DropMessage("pre-processing before quantization")
    logging.getLogger().addFilter(advice)
    try:
        quantize_dynamic(
            str(float_path), str(temporary), weight_type=QuantType.QInt8, per_channel=True
        )
        os.replace(temporary, path)
    finally:  # a failed quantisation leaves no temporary file behind
        logging.getLogger().removeFilter(advice)
        temporary.unlink(missing_ok=True)
    return path


class _DropMessage(logging.Filter):
    """Drops log records whose message contains ``text``."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


def onnx_providers(device: torch.device) -> list[str]:
    """ONNX Runtime providers for a device: CUDA first when asked for and available."""
    available = onnxruntime.get_available_providers()
    if device.type == "cuda":
        if "CUDAExecutionProvider" in available:
            return ["CUDAExecutionProvider", "CPUExecutionProvider"]
        logger.warning(
            "device is cuda but this onnxruntime has no CUDAExecutionProvider "
            "(install onnxruntime-gpu); running ONNX on the CPU"
        )
    return ["CPUExecutionProvider"]


class OnnxForward:
    """Runs an exported model with ONNX Runtime; same call shape as ``TorchForward``."""

    def __init__(
        self,
        path: Path,
        input_names: Sequence[str],
        device: torch.device,
        cpu_threads: int | None = None,
    ):
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        if cpu_threads is not None:
            options.intra_op_num_threads = cpu_threads
        self.path = path
        self.input_names = tuple(input_names)
        self.session = onnxruntime.InferenceSession(
            str(path), sess_options=options, providers=onnx_providers(device)
        )

    def __call__(self, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        """Padded int64 arrays ``(b, s)`` by input name -> the model output, float32."""
        feeds = {
            name: np.ascontiguousarray(inputs[name], dtype=np.int64) for name in self.input_names
        }
        (output,) = self.session.run([OUTPUT_NAME], feeds)
        return np.asarray(output, dtype=np.float32)
