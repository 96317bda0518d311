"""Errors raised by the model layer.

Another layer (the ingress) maps them to HTTP status codes; nothing here knows about HTTP.
"""

from __future__ import annotations

__all__ = ["ModelInputError", "ModelNotAvailableError", "find_model_error"]

_MARKER = "ModelNotAvailableError: "


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


def find_model_error(error: BaseException) -> ModelNotAvailableError | None:
    """The :class:`ModelNotAvailableError` behind ``error``, or None.

    Looks at ``error`` and its ``__cause__`` / ``__context__`` chain; then, for an error
    that crossed a process boundary as text (Ray Serve's ``RuntimeError("Deploying
    application ... failed: <replica traceback>")``), at the last line of the text that
    reads ``...ModelNotAvailableError: <message>``, rebuilt as a new error with that
    message (the message is one line: see :func:`models.sources.not_available`).
    """
    seen: set[int] = set()
    current: BaseException | None = error
    chain: list[BaseException] = []
    while current is not None and id(current) not in seen:
        if isinstance(current, ModelNotAvailableError) and _MARKER not in str(current):
            return current  # (Ray's RayTaskError subclasses the cause; its text is a trace)
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    for link in chain:
        found = [line for line in str(link).splitlines() if _MARKER in line]
        if found:
            message = found[-1].split(_MARKER, 1)[1].strip()
            if message:
                return ModelNotAvailableError(message)
    return None
