"""``POST .../embeddings`` answered by an encoder replica itself (no front deployment, no
handle hop): the OpenAI / infinity-emb request and response shape, with the product's
error shape (``{"error", "message", "fields"}``) and a ``Server-Timing`` header that says
where the replica's time went.

Request: ``{"input": str | [str, ...], "model": role?}`` (``model`` defaults to the
deployment's first role; 1 to :data:`MAX_INPUTS` non-empty strings). Response:
``{"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}],
"model": role, "usage": {...}}`` with float32 values, each written as the shortest
decimal that reads back as the same float32 (orjson's numpy serialisation: about half the
bytes of ``json``'s double repr).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from starlette.requests import Request
from starlette.responses import Response

__all__ = ["MAX_INPUTS", "EncodeTimings", "embeddings_call", "overloaded", "server_timing"]

#: Most texts one request may carry (larger calls are split into batches inside).
MAX_INPUTS = 2048


@dataclass(frozen=True)
class EncodeTimings:
    """Where one encode call's time went in the replica, in ms: waiting for its batch
    (``queue_ms``), that batch's forward pass (``forward_ms``), the whole call
    (``replica_ms``)."""

    queue_ms: float
    forward_ms: float
    replica_ms: float


def server_timing(timings: EncodeTimings) -> str:
    """The ``Server-Timing`` header value (W3C Server Timing) for ``timings``."""
    return (
        f"queue;dur={timings.queue_ms:.2f}, forward;dur={timings.forward_ms:.2f}, "
        f"replica;dur={timings.replica_ms:.2f}"
    )


def _json(status: int, content: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    body = orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def overloaded(bound: int, retry_after_s: float = 1.0) -> Response:
    """The fast ``503`` (``{"error": "overloaded", ...}`` with ``Retry-After`` in s) of a
    replica that already holds ``bound`` requests."""
    message = f"this replica holds {bound} requests already; retry later"
    return _json(
        503,
        {"error": "overloaded", "message": message},
        {"Retry-After": str(max(1, round(retry_after_s)))},
    )


def _invalid(field: str, message: str) -> Response:
    return _json(
        422,
        {
            "error": "invalid_request",
            "message": f"{field}: {message}",
            "fields": [{"field": field, "message": message}],
        },
    )


def _is_unicode(text: str) -> bool:
    # JSON can carry "\ud800"; the tokenizers cannot, and a batch would fail with it
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse(raw: bytes, roles: Sequence[str]) -> tuple[str, list[str]] | Response:
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return _invalid("body", "not valid JSON")
    if not isinstance(body, dict):
        return _invalid("body", "a JSON object is required")
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts:
        return _invalid("input", "a string or a non-empty list of strings is required")
    if len(texts) > MAX_INPUTS:
        return _invalid("input", f"at most {MAX_INPUTS} texts per request")
    if not all(isinstance(text, str) and text.strip() for text in texts):
        return _invalid("input", "every item must be a non-empty string")
    if not all(_is_unicode(text) for text in texts):
        return _invalid("input", "every item must be valid Unicode (no lone surrogates)")
    role = body.get("model") or roles[0]
    if role not in roles:
        return _invalid("model", f"unknown model {role!r}; served here: {', '.join(roles)}")
    return role, texts


async def embeddings_call(
    request: Request,
    roles: Sequence[str],
    encode_timed: Callable[[str, Sequence[str]], Awaitable[tuple[np.ndarray, EncodeTimings]]],
) -> Response:
    """Answer one HTTP request to an encoder replica: ``POST`` to a path ending in
    ``/embeddings`` (404 otherwise; 405 for another method; 422 naming the field for a
    bad body). Vectors are ``encode_timed``'s ``(n, d)`` float32 rows, in input order."""
    if not request.url.path.rstrip("/").endswith("/embeddings"):
        return _json(404, {"error": "not_found", "message": "POST .../embeddings"})
    if request.method != "POST":
        return _json(
            405,
            {"error": "method_not_allowed", "message": "POST .../embeddings"},
            {"Allow": "POST"},
        )
    parsed = _parse(await request.body(), roles)
    if isinstance(parsed, Response):
        return parsed
    role, texts = parsed
    vectors, timings = await encode_timed(role, texts)
    data = [
        {"object": "embedding", "index": index, "embedding": row}
        for index, row in enumerate(np.ascontiguousarray(vectors, dtype=np.float32))
    ]
    tokens = sum(len(text.split()) for text in texts)  # whitespace words: an estimate
    content = {
        "object": "list",
        "data": data,
        "model": role,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
    return _json(200, content, {"Server-Timing": server_timing(timings)})
