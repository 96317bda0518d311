"""Load a role's model: a table from family to loader, imported only when used.

``load_encoder`` gives an embedding role (:class:`models.protocols.TextEmbedder`, or
:class:`models.protocols.ImageEmbedder` for the image families); ``load_cross_encoder``
gives the scorer role (:class:`models.protocols.PairScorer`); ``load_role`` picks by the
spec. Heavy libraries (open_clip, timm, rdkit) are imported only by the families that
need them.

Any failure of a family loader (a library that does not import, a loader error the family
did not name itself) comes out as the one :class:`ModelNotAvailableError` naming the role,
the source and how to provide it, the original exception as its ``__cause__``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from models.errors import ModelNotAvailableError
from models.protocols import ImageEmbedder, PairScorer, TextEmbedder
from models.specs import EncoderFamily, EncoderSpec, ModelProfile

__all__ = ["FAMILY_LOADERS", "load_cross_encoder", "load_encoder", "load_role"]

FAMILY_LOADERS: dict[EncoderFamily, str] = {
    EncoderFamily.HF_TEXT: "models.text:load_hf_text_encoder",
    EncoderFamily.SMILES_BERT: "models.smiles:load_smiles_bert_encoder",
    EncoderFamily.MOLFORMER: "models.molformer:load_molformer_encoder",
    EncoderFamily.OPEN_CLIP: "models.open_clip_encoder:load_open_clip_encoder",
    EncoderFamily.TIMM: "models.timm_encoder:load_timm_encoder",
    EncoderFamily.CROSS_ENCODER: "models.cross_encoder:load_cross_encoder_scorer",
    EncoderFamily.BI_ENCODER_SCORER: "models.bi_encoder_scorer:load_bi_encoder_scorer",
}
"""Family -> ``module:function`` taking ``(spec, profile)``."""


def _family_loader(family: EncoderFamily) -> Callable[[EncoderSpec, ModelProfile], Any]:
    module_name, _, function_name = FAMILY_LOADERS[family].partition(":")
    return getattr(importlib.import_module(module_name), function_name)


def _load(spec: EncoderSpec, profile: ModelProfile) -> Any:
    from models.runtime import model_stage

    with model_stage(spec, "loading"):
        return _family_loader(spec.family)(spec, profile)


def _check_enabled(spec: EncoderSpec) -> None:
    if not spec.enabled:
        raise ModelNotAvailableError(
            f"role {spec.role!r} is disabled in this model profile "
            f"(models.roles.{spec.role}.enabled); enable it and point its source at local weights"
        )


def load_encoder(spec: EncoderSpec, profile: ModelProfile) -> TextEmbedder | ImageEmbedder:
    """Load an embedding role (text, SMILES or image family), ready to ``encode``.

    Raises:
        ModelNotAvailableError: the role is disabled, its weights are not available
            locally, or its output width differs from ``spec.dimension``.
        ValueError: the spec is a scorer role (use :func:`load_cross_encoder`).
    """
    if spec.is_scorer:
        raise ValueError(
            f"role {spec.role!r} is a {spec.family.value} role: use load_cross_encoder"
        )
    _check_enabled(spec)
    return _load(spec, profile)


def load_cross_encoder(spec: EncoderSpec, profile: ModelProfile) -> PairScorer:
    """Load the cross-encoder role (``cross-encoder`` or the offline ``bi-encoder-scorer``).

    Raises:
        ModelNotAvailableError: the role is disabled or its weights are not available locally.
        ValueError: the spec is an embedding role (use :func:`load_encoder`).
    """
    if not spec.is_scorer:
        raise ValueError(f"role {spec.role!r} is a {spec.family.value} role: use load_encoder")
    _check_enabled(spec)
    return _load(spec, profile)


def load_role(role: str, profile: ModelProfile) -> TextEmbedder | ImageEmbedder | PairScorer:
    """Load the model filling ``role`` in ``profile``, embedder or scorer as the spec says.

    Raises:
        ModelNotAvailableError: the role is missing or disabled, or its weights are not
            available locally.
    """
    spec = profile.spec(role)
    return load_cross_encoder(spec, profile) if spec.is_scorer else load_encoder(spec, profile)
