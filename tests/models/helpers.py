"""Shared constants and spec builders for the model tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from models.specs import EncoderSpec, ModelProfile
from tests.models.tiny_models import HIDDEN

__all__ = [
    "DEFAULT_PROFILE",
    "PRODUCTION_PROFILE",
    "REPOSITORY",
    "ProfileFactory",
    "tiny_text_spec",
]

REPOSITORY = Path(__file__).resolve().parents[2]
DEFAULT_PROFILE = REPOSITORY / "configs" / "profiles" / "default.yaml"
PRODUCTION_PROFILE = REPOSITORY / "configs" / "profiles" / "production.yaml"

ProfileFactory = Callable[..., ModelProfile]
"""The ``make_profile`` fixture: ``make_profile(**fields) -> ModelProfile``."""


def tiny_text_spec(source: str | Path, **fields: Any) -> EncoderSpec:
    """An ``hf-text`` spec over a tiny model (32-d, mean pooling unless overridden)."""
    base: dict[str, Any] = {
        "role": "pubmedbert",
        "family": "hf-text",
        "source": str(source),
        "dimension": HIDDEN,
        "pooling": "mean",
        "max_tokens": 512,
    }
    return EncoderSpec(**{**base, **fields})
