"""Loading a MoLFormer checkpoint folder in the published ``ibm/MoLFormer-XL-both-10pct``
layout into :class:`models.molformer_model.MolformerModel`, strictly (nothing left random).

The published folder (model card https://huggingface.co/ibm/MoLFormer-XL-both-10pct) holds
``config.json`` (``model_type: molformer``) and the weights as ``model.safetensors`` and
``pytorch_model.bin``, saved from ``MolformerForMaskedLM``: encoder keys under the
``molformer.`` prefix, the MLM head under ``lm_head.``. ``save_pretrained`` of
:class:`MolformerModel` writes the same encoder keys without the prefix; both load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from models.molformer_model import BASE_MODEL_PREFIX, MolformerConfig, MolformerModel

__all__ = ["HEAD_PREFIXES", "WEIGHT_FILES", "encoder_state_dict", "load_molformer_model"]

HEAD_PREFIXES = ("lm_head.", "classifier.")
"""Task-head keys a published checkpoint may carry; the encoder ignores them."""

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
"""Weight files the hub publishes, in the order they are tried."""


def _read_weights(folder: Path) -> dict[str, torch.Tensor]:
    for name in WEIGHT_FILES:
        path = folder / name
        if not path.is_file():
            continue
        if name.endswith(".safetensors"):
            from safetensors.torch import load_file

            return load_file(str(path), device="cpu")
        return torch.load(path, map_location="cpu", weights_only=True)
    raise FileNotFoundError(f"no MoLFormer weights in {str(folder)!r} (looked for {WEIGHT_FILES})")


def encoder_state_dict(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The encoder's keys of a checkpoint: ``molformer.``-prefixed (published, from
    ``MolformerForMaskedLM``) or bare (``save_pretrained`` of :class:`MolformerModel`);
    task-head keys (:data:`HEAD_PREFIXES`) dropped."""
    prefix = BASE_MODEL_PREFIX + "."
    prefixed = any(key.startswith(prefix) for key in state)
    kept: dict[str, torch.Tensor] = {}
    for key, tensor in state.items():
        if key.startswith(HEAD_PREFIXES):
            continue
        if prefixed and key.startswith(prefix):
            key = key[len(prefix) :]
        kept[key] = tensor
    return kept


def load_molformer_model(folder: str | Path, **config_overrides: Any) -> MolformerModel:
    """A :class:`MolformerModel` from a published-layout folder (``config.json`` +
    ``model.safetensors`` or ``pytorch_model.bin``), in eval mode, float32, on the CPU.
    ``config_overrides`` (the profile's ``model_kwargs``, e.g. ``deterministic_eval``)
    update the config. Every encoder weight must be present: nothing is left random.

    Raises:
        FileNotFoundError: no ``config.json`` or no weight file.
        ValueError: the config is not a MoLFormer one, or the weights miss encoder keys
            or carry keys this architecture does not have (the names are listed).
    """
    folder = Path(folder)
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"no config.json in {str(folder)!r}")
    raw = json.loads(config_file.read_text(encoding="utf-8"))
    if raw.get("model_type") != MolformerConfig.model_type:
        raise ValueError(
            f"{str(config_file)!r} has model_type {raw.get('model_type')!r}, not 'molformer'"
        )
    config = MolformerConfig.from_dict({**raw, **config_overrides})
    model = MolformerModel(config)
    state = encoder_state_dict(_read_weights(folder))
    result = model.load_state_dict(state, strict=False)
    if result.missing_keys or result.unexpected_keys:
        raise ValueError(
            f"MoLFormer weights in {str(folder)!r} do not match the architecture: missing "
            f"{sorted(result.missing_keys)[:8]}, unexpected {sorted(result.unexpected_keys)[:8]}"
        )
    return model.eval()
