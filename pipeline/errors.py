"""Typed errors, mapped to HTTP status codes in one place (the ingress).

``InvalidRequest`` -> 422 (names the field), ``Unauthorized`` -> 401, ``Forbidden`` -> 403,
``Overloaded`` -> 503 with Retry-After, ``BackendUnavailable`` -> 503,
``DeadlineExceeded`` -> 504.
"""

from __future__ import annotations

__all__ = [
    "BackendUnavailable",
    "BiomedSearchError",
    "DeadlineExceeded",
    "Forbidden",
    "InvalidInput",
    "InvalidRequest",
    "Overloaded",
    "Unauthorized",
]


class BiomedSearchError(Exception):
    """Base class of the errors the service maps to HTTP answers."""

    status_code = 500


class InvalidRequest(BiomedSearchError):
    """A request field is invalid. ``field`` names it (e.g. ``"page_size"``)."""

    status_code = 422

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class InvalidInput(BiomedSearchError):
    """A model input the model cannot take (bad image bytes, unparsable SMILES)."""

    status_code = 422


class Unauthorized(BiomedSearchError):
    """The API key is missing or unknown (HTTP 401)."""

    status_code = 401


class Forbidden(BiomedSearchError):
    """The API key may not do this: not an admin key, or a knowledge base it may not
    read (HTTP 403)."""

    status_code = 403


class Overloaded(BiomedSearchError):
    """Too many requests in flight; retry after ``retry_after_s`` seconds."""

    status_code = 503

    def __init__(self, message: str = "overloaded", retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class BackendUnavailable(BiomedSearchError):
    """A model deployment or store does not answer."""

    status_code = 503


class DeadlineExceeded(BiomedSearchError):
    """The request deadline passed before an answer was ready."""

    status_code = 504
