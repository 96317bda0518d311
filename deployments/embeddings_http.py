"""``POST .../embeddings`` answered by an encoder replica itself (no front deployment, no
handle hop): the OpenAI / infinity-emb request and response shape, with the product's
error shape (``{"error", "message", "fields"}``) and a ``Server-Timing`` header that says
where the replica's time went.

Request: ``{"input": str | [str, ...], "model": role?, "encoding_format": "float" |
"base64"?, "dimensions": int?}`` (``model`` defaults to the deployment's first role; 1 to
:data:`MAX_INPUTS` non-empty strings of at most :data:`MAX_TEXT_CHARS` characters; a body
of at most :data:`MAX_BODY_BYTES`, received within :data:`BODY_TIMEOUT_S`;
``dimensions``, when given, must be the model's width, checked before any work:
no model served here is trained for shorter vectors; other OpenAI fields such as ``user``
are ignored). Response: ``{"object": "list", "data": [{"object": "embedding", "index": i,
"embedding": [...]}], "model": role, "usage": {...}}`` with float32 values, each written
as the shortest decimal that reads back as the same float32 (orjson's numpy
serialisation: about half the bytes of ``json``'s double repr), or with
``encoding_format: "base64"`` each vector as the base64 of its little-endian float32
bytes (OpenAI's encoding).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

__all__ = [
    "BODY_TIMEOUT_S",
    "MAX_BODY_BYTES",
    "MAX_INPUTS",
    "MAX_TEXT_CHARS",
    "EmbeddingsRequest",
    "EncodeTimings",
    "answer_embeddings",
    "deadline_exceeded",
    "embeddings_call",
    "overloaded",
    "read_embeddings_request",
    "server_timing",
]

#: Most texts one request may carry (larger calls are split into batches inside).
MAX_INPUTS = 2048
#: Longest text, in characters (OpenAI's 8,192-token input limit at about 4 characters a
#: token). The model reads only its first ``max_tokens`` tokens, but the tokenizer reads
#: the whole text first: without a cap one request of megabytes holds a replica for
#: seconds (a 20 MB text held one for 21 s).
MAX_TEXT_CHARS = 32_768
#: Largest request body, in bytes (answered 413 before it is parsed).
MAX_BODY_BYTES = 8 * 1024 * 1024
#: Seconds a request body may take to arrive (then 408): a client that sends headers
#: and stalls must not hold the replica's request slots until the deadline.
BODY_TIMEOUT_S = 10.0
ENCODING_FORMATS = ("float", "base64")


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


def deadline_exceeded(timeout_s: float) -> Response:
    """The ``504`` (``{"error": "DeadlineExceeded", ...}``, the search ingress's answer) of a
    request that had no answer within ``timeout_s`` seconds."""
    message = f"no answer within {timeout_s:g} s (serve.request_timeout_s)"
    return _json(504, {"error": "DeadlineExceeded", "message": message})


_STATUS_ERRORS = {408: "request_timeout", 413: "payload_too_large"}


def _invalid(field: str, message: str, status: int = 422) -> Response:
    return _json(
        status,
        {
            "error": _STATUS_ERRORS.get(status, "invalid_request"),
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


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The body, or None when it is over ``limit`` bytes (by its ``Content-Length`` or
    while it streams in: nothing past the limit is read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass(frozen=True)
class EmbeddingsRequest:
    """A checked ``POST .../embeddings`` body: the role, its texts, the output encoding."""

    role: str
    texts: list[str]
    encoding_format: str


def _parse(raw: bytes, roles: Mapping[str, int]) -> EmbeddingsRequest | Response:
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
    longest = max(len(text) for text in texts)
    if longest > MAX_TEXT_CHARS:
        return _invalid("input", f"at most {MAX_TEXT_CHARS} characters per text ({longest})")
    role = body.get("model") or next(iter(roles))
    if not isinstance(role, str) or role not in roles:
        return _invalid("model", f"unknown model {role!r}; served here: {', '.join(roles)}")
    encoding_format = body.get("encoding_format")  # absent or null: the default
    if encoding_format is None:
        encoding_format = "float"
    if not isinstance(encoding_format, str) or encoding_format not in ENCODING_FORMATS:
        return _invalid("encoding_format", f"one of {', '.join(ENCODING_FORMATS)}")
    dimensions = body.get("dimensions")
    width = roles[role]
    if dimensions is not None and (
        isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions != width
    ):
        return _invalid("dimensions", f"{role} gives {width}-dimensional vectors only")
    return EmbeddingsRequest(role, texts, encoding_format)


def _embedding(row: np.ndarray, encoding_format: str) -> np.ndarray | str:
    if encoding_format == "base64":
        return base64.b64encode(row.astype("<f4").tobytes()).decode("ascii")
    return row


async def read_embeddings_request(
    request: Request, roles: Mapping[str, int]
) -> EmbeddingsRequest | Response:
    """Read and check one request to an encoder replica: ``POST`` to a path ending in
    ``/embeddings``. ``roles`` maps each role served to its output width (the first is
    the default ``model``). Returns the request, or the error answer: 404 for another
    path, 405 for another method, 400 for a client gone mid-upload, 408 for a body not
    received within :data:`BODY_TIMEOUT_S`, 413 for a body over :data:`MAX_BODY_BYTES`,
    422 naming the field for a bad body."""
    if not request.scope["path"].rstrip("/").endswith("/embeddings"):
        return _json(404, {"error": "not_found", "message": "POST .../embeddings"})
    if request.method != "POST":
        return _json(
            405,
            {"error": "method_not_allowed", "message": "POST .../embeddings"},
            {"Allow": "POST"},
        )
    try:  # asyncio.timeout: on Python 3.11 wait_for makes a task, this does not
        async with asyncio.timeout(BODY_TIMEOUT_S):
            raw = await _read_body(request, MAX_BODY_BYTES)
    except TimeoutError:
        return _invalid("body", f"not received within {BODY_TIMEOUT_S:g} s", status=408)
    except ClientDisconnect:  # gone mid-upload: an answer nobody reads, not a 500
        return _invalid("body", "the client disconnected before sending it all", status=400)
    if raw is None:
        return _invalid("body", f"larger than {MAX_BODY_BYTES} bytes", status=413)
    return _parse(raw, roles)


async def answer_embeddings(
    parsed: EmbeddingsRequest,
    encode_timed: Callable[[str, Sequence[str]], Awaitable[tuple[np.ndarray, EncodeTimings]]],
    timeout_s: float | None = None,
) -> Response:
    """Encode a checked request and answer it: 200 with ``encode_timed``'s ``(n, d)``
    float32 rows in input order, or 504 when they are not ready within ``timeout_s``
    seconds (None: no deadline; the request's texts leave the batcher's queue, a
    forward pass already running finishes)."""
    try:
        async with asyncio.timeout(timeout_s):
            vectors, timings = await encode_timed(parsed.role, parsed.texts)
    except TimeoutError:
        assert timeout_s is not None
        return deadline_exceeded(timeout_s)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    encoding = parsed.encoding_format
    data = [
        {"object": "embedding", "index": index, "embedding": _embedding(row, encoding)}
        for index, row in enumerate(vectors)
    ]
    tokens = sum(len(text.split()) for text in parsed.texts)  # whitespace words: an estimate
    content = {
        "object": "list",
        "data": data,
        "model": parsed.role,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
    return _json(200, content, {"Server-Timing": server_timing(timings)})


async def embeddings_call(
    request: Request,
    roles: Mapping[str, int],
    encode_timed: Callable[[str, Sequence[str]], Awaitable[tuple[np.ndarray, EncodeTimings]]],
    timeout_s: float | None = None,
) -> Response:
    """Answer one HTTP request to an encoder replica: :func:`read_embeddings_request`,
    then :func:`answer_embeddings` with the deadline ``timeout_s`` (s; None: none)."""
    parsed = await read_embeddings_request(request, roles)
    if isinstance(parsed, Response):
        return parsed
    return await answer_embeddings(parsed, encode_timed, timeout_s)
