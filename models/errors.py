"""Errors raised by the model layer.

Another layer (the ingress) maps them to HTTP status codes; nothing here knows about HTTP.
"""

from __future__ import annotations

__all__ = ["ModelInputError", "ModelNotAvailableError"]


class ModelInputError(ValueError):
    """An input the model cannot take: undecodable image bytes, a text where a list of texts
    was expected, titles that do not line up with texts, an unusable SMILES string under
    ``invalid_smiles: error``, a text query sent to an image-only model."""


class ModelNotAvailableError(RuntimeError):
    """The weights for a role cannot be loaded here.

    The message names the role and the model source and says how to provide the weights:
    a local folder path in the profile (``models.roles.<role>.source``) or a populated
    Hugging Face cache. It never carries a traceback from inside transformers.
    """
