"""A small typed HTTP client for the biomed-search service, sync and async (``httpx``).

    from biomed_search.client import BiomedSearchClient

    with BiomedSearchClient("http://127.0.0.1:8000", api_key="...") as client:
        response = client.search("osimertinib side effects", page_size=5)
        for chunk in response.chunks:
            print(chunk.similarity, chunk.document_name, chunk.biomed_section)

Responses parse into the service's own models (``pipeline.schema.SearchResponse``).
Every call is read-only, so it is safe to repeat: a response with a retryable status (the
service's 503 ``overloaded`` with ``Retry-After``; 429, 502, 504) and a connection error
are retried with exponential backoff, honouring ``Retry-After``, within a bounded number
of attempts and a bounded total wait (:class:`RetryPolicy`). Any other status >= 400
raises :class:`BiomedSearchAPIError` carrying the service's JSON error body (``error``,
``message``, ``fields``); a connection that keeps failing raises
:class:`BiomedSearchConnectionError`.
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, Any, Literal, Self, TypedDict, Unpack, cast

import httpx

from pipeline.schema import SearchResponse

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_URL",
    "AsyncBiomedSearchClient",
    "BiomedSearchAPIError",
    "BiomedSearchClient",
    "BiomedSearchClientError",
    "BiomedSearchConnectionError",
    "FieldError",
    "RetryPolicy",
    "SearchOptions",
    "check_options",
    "parse_retry_after",
    "search_body",
]

logger = logging.getLogger(__name__)

#: Where ``make serve`` (``biomed-search serve``) listens by default.
DEFAULT_URL = "http://127.0.0.1:8000"
#: Environment variable read for the API key when none is passed.
API_KEY_ENV = "BIOMED_SEARCH_API_KEY"
#: Transport failures after which a read-only request is safe to repeat: the connection
#: could not be made, or broke before a response came. Read timeouts are not retried (the
#: service may still be working on the request).
RETRYABLE_ERRORS: tuple[type[Exception], ...] = (
    httpx.NetworkError,
    httpx.ConnectTimeout,
    httpx.RemoteProtocolError,
)

ImageInput = bytes | str | os.PathLike[str] | IO[bytes]


@dataclass(frozen=True)
class FieldError:
    """One entry of a 422 body's ``fields``: which request field, and what is wrong."""

    field: str
    message: str


class BiomedSearchClientError(Exception):
    """Base of the errors this client raises."""


class BiomedSearchAPIError(BiomedSearchClientError):
    """The service answered with a status >= 400 (after any retries).

    Attributes:
        status_code: HTTP status (401 no/unknown key, 403 kb not allowed, 422 invalid
            field, 503 overloaded or not ready, ...).
        error: the body's ``error`` kind (``invalid_request``, ``Unauthorized``,
            ``overloaded``, ...); ``http_<status>`` when the body is not the service's JSON.
        message: the body's ``message`` (or the response text).
        fields: for 422, the offending fields (``FieldError(field, message)``).
        retry_after_s: the ``Retry-After`` header in seconds, when there was one.
    """

    def __init__(
        self,
        status_code: int,
        error: str,
        message: str,
        fields: Sequence[FieldError] = (),
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"{status_code} {error}: {message}")
        self.status_code = status_code
        self.error = error
        self.message = message
        self.fields = tuple(fields)
        self.retry_after_s = retry_after_s

    @property
    def field_names(self) -> list[str]:
        """The names in :attr:`fields` (``["page_size"]``)."""
        return [item.field for item in self.fields]

    @classmethod
    def from_response(cls, response: httpx.Response) -> BiomedSearchAPIError:
        """Read the service's error body ``{"error", "message", "fields": [{"field",
        "message"}]}``; FastAPI's ``{"detail": ...}`` and plain text are accepted too."""
        try:
            body = response.json()
        except ValueError:
            body = None
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        status = response.status_code
        if not isinstance(body, dict):
            text = response.text.strip()[:500] or response.reason_phrase
            return cls(status, f"http_{status}", text, retry_after_s=retry_after)
        fields = [
            FieldError(str(item.get("field", "")), str(item.get("message", "")))
            for item in body.get("fields") or ()
            if isinstance(item, dict)
        ]
        message = body.get("message") or body.get("detail") or response.reason_phrase
        return cls(
            status,
            str(body.get("error") or f"http_{status}"),
            str(message),
            fields,
            retry_after_s=retry_after,
        )


class BiomedSearchConnectionError(BiomedSearchClientError):
    """The service could not be reached (connection refused, reset or timed out on
    connect) within the retry policy; the last ``httpx`` error is the ``__cause__``."""


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (RFC 9110: delay-seconds or an
    HTTP-date); ``None`` when absent or unreadable; never negative."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before repeating a request.

    Attempt ``n`` (1-based) that failed retryably is followed by a wait of the response's
    ``Retry-After`` when it has one, else ``initial_backoff_s * 2**(n-1)`` capped at
    ``max_backoff_s`` and stretched by up to ``jitter`` (a fraction) at random. No retry
    once ``max_attempts`` requests were made or when the wait would bring the total slept
    past ``max_total_wait_s`` (seconds); the last response (or error) is then final.
    ``RetryPolicy(max_attempts=1)`` never retries.

    Raises:
        ValueError: a negative time, ``max_attempts < 1`` or ``jitter`` outside [0, 1].
    """

    max_attempts: int = 4
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    max_total_wait_s: float = 30.0
    jitter: float = 0.1
    retry_statuses: frozenset[int] = field(default_factory=lambda: frozenset({429, 502, 503, 504}))

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if min(self.initial_backoff_s, self.max_backoff_s, self.max_total_wait_s) < 0:
            raise ValueError("backoff and wait times must be >= 0 seconds")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError("jitter must be in [0, 1]")

    def next_delay(
        self, attempt: int, retry_after_s: float | None, waited_s: float
    ) -> float | None:
        """Seconds to sleep before attempt ``attempt + 1``, or ``None`` to stop.

        Args:
            attempt: requests made so far (1-based).
            retry_after_s: the failed response's ``Retry-After`` in seconds, if any.
            waited_s: seconds already slept for this call.
        """
        if attempt >= self.max_attempts:
            return None
        if retry_after_s is not None:
            delay = max(0.0, retry_after_s)
        else:
            backoff = min(self.max_backoff_s, self.initial_backoff_s * 2 ** (attempt - 1))
            delay = backoff * (1.0 + random.uniform(0.0, self.jitter))
        if waited_s + delay > self.max_total_wait_s:
            return None
        return delay


class SearchOptions(TypedDict, total=False):
    """The ``POST /v1/search`` fields besides ``query`` (the service's names); a field
    left out, or ``None``, gets the service's default. Values are checked by the service,
    which answers 422 naming the field: the client does not second-guess its limits."""

    kb_ids: Sequence[str] | None
    document_ids: Sequence[str] | None
    tags: Sequence[str] | None
    page: int
    page_size: int | None
    top_k: int | None
    similarity_threshold: float | None
    vector_similarity_weight: float | None
    rerank: bool | None
    highlight: bool | None
    route_mode: Literal["hybrid", "text", "visual"] | None
    collections: Sequence[str] | None
    namespace: str | None


def check_options(options: Mapping[str, Any]) -> SearchOptions:
    """``options`` as :class:`SearchOptions`, its names checked.

    Raises:
        TypeError: a name that is not a search field (the valid ones are listed).
    """
    unknown = sorted(set(options) - SearchOptions.__optional_keys__)
    if unknown:
        valid = ", ".join(sorted(SearchOptions.__optional_keys__))
        raise TypeError(f"unknown search option(s) {', '.join(unknown)}; valid: {valid}")
    return cast(SearchOptions, dict(options))


def search_body(query: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body of ``POST /v1/search``: ``query`` and the options that are set
    (sequences as lists).

    Raises:
        TypeError: an unknown option name.
    """
    body: dict[str, Any] = {"query": query}
    for name, value in check_options(options).items():
        if value is None:
            continue
        is_list = isinstance(value, Sequence) and not isinstance(value, str)
        body[name] = list(value) if is_list else value
    return body


class _RetryState:
    """The retry bookkeeping of one call, shared by the sync and async loops."""

    def __init__(self, policy: RetryPolicy, what: str) -> None:
        self.policy = policy
        self.what = what
        self.attempt = 0
        self.waited_s = 0.0

    def start(self) -> None:
        self.attempt += 1

    def after_response(self, response: httpx.Response) -> float | None:
        """Seconds to wait before repeating, or ``None``: ``response`` is final."""
        if response.status_code not in self.policy.retry_statuses:
            return None
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        delay = self.policy.next_delay(self.attempt, retry_after, self.waited_s)
        if delay is not None:
            self._record(delay, f"status {response.status_code}")
        return delay

    def after_error(self, error: Exception) -> float:
        """Seconds to wait before repeating after a transport ``error``.

        Raises:
            BiomedSearchConnectionError: the policy allows no further attempt.
        """
        delay = self.policy.next_delay(self.attempt, None, self.waited_s)
        if delay is None:
            raise BiomedSearchConnectionError(
                f"{self.what}: {type(error).__name__}: {error} (after {self.attempt} attempts)"
            ) from error
        self._record(delay, type(error).__name__)
        return delay

    def _record(self, delay: float, reason: str) -> None:
        logger.info("%s: %s, retry %d in %.2f s", self.what, reason, self.attempt, delay)
        self.waited_s += delay


def _image_part(
    image: ImageInput, filename: str | None, content_type: str | None
) -> tuple[str, bytes, str]:
    """``(filename, bytes, content type)`` for the multipart ``image`` field."""
    if isinstance(image, bytes):
        data, name = image, filename or "image"
    elif isinstance(image, (str, os.PathLike)):
        path = Path(image)
        data, name = path.read_bytes(), filename or path.name
    else:
        data, name = image.read(), filename or Path(getattr(image, "name", "image")).name
    kind = content_type or mimetypes.guess_type(name)[0] or _sniff_image_type(data)
    return (name, data, kind)


def _sniff_image_type(data: bytes) -> str:
    from pipeline.image_types import IMAGE_TYPES  # the service's own table of accepted types

    for kind, magics in IMAGE_TYPES.items():
        if data.startswith(magics):
            return kind
    return "application/octet-stream"


class _ClientBase:
    """Settings shared by both clients."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        timeout: float,
        retry: RetryPolicy | None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.timeout = httpx.Timeout(timeout, connect=min(timeout, 10.0))
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        self.headers = {"Accept": "application/json", "User-Agent": "biomed-search-client"}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"

    @staticmethod
    def _checked(response: httpx.Response) -> httpx.Response:
        if response.status_code >= 400:
            raise BiomedSearchAPIError.from_response(response)
        return response

    @staticmethod
    def _image_request(
        image: ImageInput,
        query: str | None,
        kb_ids: Sequence[str] | None,
        page_size: int | None,
        filename: str | None,
        content_type: str | None,
    ) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if query is not None:
            data["query"] = query
        if page_size is not None:
            data["page_size"] = str(page_size)
        if kb_ids:
            data["kb_ids"] = list(kb_ids)
        return {"data": data, "files": {"image": _image_part(image, filename, content_type)}}


class BiomedSearchClient(_ClientBase):
    """Blocking client; use as a context manager or call :meth:`close`.

    Args:
        base_url: the service (``make serve``: ``http://127.0.0.1:8000``).
        api_key: sent as ``Authorization: Bearer <key>``; default: the
            ``BIOMED_SEARCH_API_KEY`` environment variable, else none.
        timeout: seconds per request (connect: at most 10 s).
        retry: the :class:`RetryPolicy` (default: 4 attempts, 30 s total wait).
        transport: an ``httpx`` transport (proxies, tests); default: httpx's.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout, retry)
        self._http = httpx.Client(
            base_url=self.base_url, headers=self.headers, timeout=self.timeout, transport=transport
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def _request(self, method: str, path: str, retry: bool = True, **kwargs: Any) -> httpx.Response:
        state = _RetryState(
            self.retry if retry else RetryPolicy(max_attempts=1), f"{method} {path}"
        )
        while True:
            state.start()
            try:
                response = self._http.request(method, path, **kwargs)
            except RETRYABLE_ERRORS as error:
                time.sleep(state.after_error(error))
                continue
            delay = state.after_response(response)
            if delay is None:
                return response
            response.close()
            time.sleep(delay)

    def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchResponse:
        """``POST /v1/search``: the ranked chunks for ``query``.

        Args:
            query: the question (1..2000 visible characters).
            **options: any :class:`SearchOptions` field: ``kb_ids``, ``document_ids``,
                ``tags``, ``page`` (1), ``page_size``, ``top_k``, ``similarity_threshold``,
                ``vector_similarity_weight``, ``rerank``, ``highlight``, ``route_mode``,
                ``collections``, ``namespace``.

        Returns:
            The parsed response: ``chunks`` (``similarity`` non-increasing), ``doc_aggs``,
            ``total``, ``intent``, ``route``, ``trace``, ``warnings`` (e.g. a ``kb_ids``
            value with no documents when nothing was found).

        Raises:
            TypeError: an unknown option name.
            BiomedSearchAPIError: 401/403 (key), 422 (``fields`` names the bad field), or a
                retryable status that outlasted the retry policy.
            BiomedSearchConnectionError: the service could not be reached.
        """
        body = search_body(query, options)
        response = self._checked(self._request("POST", "/v1/search", json=body))
        return SearchResponse.model_validate(response.json())

    def search_image(
        self,
        image: ImageInput,
        *,
        query: str | None = None,
        kb_ids: Sequence[str] | None = None,
        page_size: int | None = None,
        filename: str | None = None,
        content_type: str | None = None,
    ) -> SearchResponse:
        """``POST /v1/search/image``: search with an image (bytes, a path or a binary
        file) and optional text. ``content_type`` defaults to a guess from the file name,
        then from the leading bytes (PNG, JPEG, TIFF, BMP, WebP are accepted).

        Raises:
            OSError: ``image`` is a path that cannot be read.
            BiomedSearchAPIError: as :meth:`search` (422 ``image`` for a bad upload).
            BiomedSearchConnectionError: the service could not be reached.
        """
        parts = self._image_request(image, query, kb_ids, page_size, filename, content_type)
        response = self._checked(self._request("POST", "/v1/search/image", **parts))
        return SearchResponse.model_validate(response.json())

    def collections(self) -> dict[str, Any]:
        """``GET /v1/collections``: the enabled collections, their encoders and row counts
        (the JSON body as a dict). Raises as :meth:`search`."""
        return self._checked(self._request("GET", "/v1/collections")).json()

    def health(self) -> dict[str, Any]:
        """``GET /healthz``: ``{"status": "ok"}`` while the ingress answers. Raises as
        :meth:`search`."""
        return self._checked(self._request("GET", "/healthz")).json()

    def ready(self) -> dict[str, Any]:
        """``GET /readyz``: the readiness report (``ready`` true or false, per model and
        store); a not-ready service's 503 is returned as its report, not retried."""
        response = self._request("GET", "/readyz", retry=False)
        if response.status_code not in (200, 503):
            raise BiomedSearchAPIError.from_response(response)
        return response.json()


class AsyncBiomedSearchClient(_ClientBase):
    """The asyncio twin of :class:`BiomedSearchClient` (same arguments, same errors);
    use ``async with`` or ``await`` :meth:`aclose`. One instance belongs to one event
    loop."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout, retry)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=self.headers, timeout=self.timeout, transport=transport
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def _request(
        self, method: str, path: str, retry: bool = True, **kwargs: Any
    ) -> httpx.Response:
        state = _RetryState(
            self.retry if retry else RetryPolicy(max_attempts=1), f"{method} {path}"
        )
        while True:
            state.start()
            try:
                response = await self._http.request(method, path, **kwargs)
            except RETRYABLE_ERRORS as error:
                await asyncio.sleep(state.after_error(error))
                continue
            delay = state.after_response(response)
            if delay is None:
                return response
            await response.aclose()
            await asyncio.sleep(delay)

    async def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchResponse:
        """``POST /v1/search``; see :meth:`BiomedSearchClient.search`."""
        body = search_body(query, options)
        response = self._checked(await self._request("POST", "/v1/search", json=body))
        return SearchResponse.model_validate(response.json())

    async def search_image(
        self,
        image: ImageInput,
        *,
        query: str | None = None,
        kb_ids: Sequence[str] | None = None,
        page_size: int | None = None,
        filename: str | None = None,
        content_type: str | None = None,
    ) -> SearchResponse:
        """``POST /v1/search/image``; see :meth:`BiomedSearchClient.search_image`."""
        parts = self._image_request(image, query, kb_ids, page_size, filename, content_type)
        response = self._checked(await self._request("POST", "/v1/search/image", **parts))
        return SearchResponse.model_validate(response.json())

    async def collections(self) -> dict[str, Any]:
        """``GET /v1/collections``; see :meth:`BiomedSearchClient.collections`."""
        return self._checked(await self._request("GET", "/v1/collections")).json()

    async def health(self) -> dict[str, Any]:
        """``GET /healthz``; see :meth:`BiomedSearchClient.health`."""
        return self._checked(await self._request("GET", "/healthz")).json()

    async def ready(self) -> dict[str, Any]:
        """``GET /readyz``; see :meth:`BiomedSearchClient.ready`."""
        response = await self._request("GET", "/readyz", retry=False)
        if response.status_code not in (200, 503):
            raise BiomedSearchAPIError.from_response(response)
        return response.json()
