"""The HTTP API (FastAPI), independent of Ray: route handlers only resolve, await and
shape; errors map to status codes in one place.

``create_app()`` builds the app; the handlers find the ``SearchService`` in
``app.state.service`` (set by the Serve ingress replica, or by tests in-process).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import FastAPI, File, Form, Header, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from deployments.body_limit import BodyLimitMiddleware
from deployments.ui import mount_ui
from pipeline.errors import BiomedSearchError, InvalidRequest, Overloaded
from pipeline.image_types import IMAGE_TYPES
from pipeline.schema import SearchRequest, SearchResponse

__all__ = ["IMAGE_TYPES", "create_app"]

logger = logging.getLogger(__name__)

#: Room for the multipart framing and form fields around an uploaded image (bytes).
MULTIPART_ROOM = 64 * 1024


def _serve_settings(scope: Any) -> Any:
    """The attached service's ``serve`` settings; None before a service is attached."""
    found = getattr(scope["app"].state, "service", None)
    return None if found is None else found.config.serve


def _body_limit(scope: Any) -> int | None:
    """The body cap of a request: ``serve.max_request_bytes``, or for an image search
    ``serve.max_image_bytes`` plus :data:`MULTIPART_ROOM`; None before a service is
    attached."""
    settings = _serve_settings(scope)
    if settings is None:
        return None
    if scope["path"].rstrip("/").endswith("/v1/search/image"):  # under any route prefix
        return settings.max_image_bytes + MULTIPART_ROOM
    return settings.max_request_bytes


def _body_timeout(scope: Any) -> float | None:
    """How long a request body may take to arrive whole (then a 408 naming ``body``):
    ``serve.body_timeout_s`` for a JSON body (a client that sends headers and stalls
    holds an ingress slot that long), ``serve.request_timeout_s`` for an image upload,
    never more than ``request_timeout_s``; None before a service is attached."""
    settings = _serve_settings(scope)
    if settings is None:
        return None
    if scope["path"].rstrip("/").endswith("/v1/search/image"):
        return settings.request_timeout_s
    return min(settings.body_timeout_s, settings.request_timeout_s)


_LOCATIONS = frozenset({"body", "query", "path", "header", "cookie"})


def _field_errors(errors: list[dict[str, Any]]) -> list[dict[str, str]]:
    """FastAPI / pydantic validation errors as ``{"field", "message"}``: the field's dotted
    path without FastAPI's location prefix; ``body`` for a body that is not JSON (whose
    error location is the character offset, given in the message)."""
    result = []
    for error in errors:
        if error.get("type") == "json_invalid":
            offset = error.get("loc", ("body", "?"))[-1]
            reason = (error.get("ctx") or {}).get("error") or error.get("msg")
            result.append({"field": "body",
                           "message": f"not valid JSON at character {offset}: {reason}"})
            continue
        location = [str(part) for part in error.get("loc", ())]
        if location and location[0] in _LOCATIONS:  # FastAPI prefixes where the field was
            location = location[1:]
        result.append({"field": ".".join(location) or "body", "message": str(error.get("msg"))})
    return result


def _error(status: int, kind: str, message: str, **extra: Any) -> JSONResponse:
    headers = {}
    if "retry_after" in extra:
        headers["Retry-After"] = str(extra.pop("retry_after"))
    return JSONResponse(
        status_code=status, content={"error": kind, "message": message, **extra}, headers=headers
    )


def create_app() -> FastAPI:
    """The FastAPI application with every route and error mapping."""
    app = FastAPI(
        title="biomed-search",
        description="Biomedical hybrid retrieval: dense + BM25, RRF, fused cross-encoder rerank.",
        version="0.1.0",
    )

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, error: RequestValidationError) -> JSONResponse:
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        unread = any(  # a body FastAPI did not read as JSON (it reads only JSON bodies)
            tuple(item.get("loc", ())) == ("body",)
            and item.get("type") not in ("missing", "json_invalid")
            for item in error.errors()
        )
        if unread and media_type != "application/json" and request.url.path.endswith("/search"):
            said = f"is {media_type!r}" if media_type else "is missing"
            message = f"Content-Type {said}; send the body as application/json"
            return _error(415, "unsupported_media_type", message,
                          fields=[{"field": "content-type", "message": message}])
        fields = _field_errors(list(error.errors()))
        names = ", ".join(item["field"] for item in fields)
        return _error(422, "invalid_request", f"invalid field(s): {names}", fields=fields)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, error: StarletteHTTPException) -> JSONResponse:
        if error.status_code == 400:  # FastAPI / Starlette could not read the body at all
            # (not UTF-8, nested past the parser's depth, compressed, multipart without a
            # boundary): a 422 naming ``body``, as for a body that is not JSON
            message = f"not readable: {error.detail}"
            return _error(422, "invalid_request", f"invalid field(s): body ({message})",
                          fields=[{"field": "body", "message": message}])
        # unknown paths and methods answer in the service's error shape too
        kind = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        response = _error(error.status_code, kind, str(error.detail))
        response.headers.update(error.headers or {})
        return response

    @app.exception_handler(BiomedSearchError)
    async def _domain(_: Request, error: BiomedSearchError) -> JSONResponse:
        if isinstance(error, InvalidRequest):
            return _error(
                422,
                "invalid_request",
                str(error),
                fields=[{"field": error.field, "message": error.message}],
            )
        if isinstance(error, Overloaded):
            return _error(503, "overloaded", str(error), retry_after=error.retry_after_s)
        kind = type(error).__name__
        if error.status_code >= 500:
            logger.warning("request failed: %s: %s", kind, error)
        extra = {"retry_after": 1} if error.status_code == 503 else {}
        return _error(error.status_code, kind, str(error), **extra)

    def service(request: Request) -> Any:
        found = getattr(request.app.state, "service", None)
        if found is None:
            raise BiomedSearchError("service not initialised")
        return found

    @app.post("/v1/search", response_model=SearchResponse, response_model_by_alias=True)
    async def search(
        body: SearchRequest,
        request: Request,
        authorization: Annotated[str | None, Header()] = None,
    ) -> SearchResponse:
        """Hybrid search (SPEC.md section 1)."""
        svc = service(request)
        principal = svc.authenticate(authorization)
        result = await svc.search(body, principal)
        request.state.search_response = result  # read by deployments.metrics' middleware
        return result

    @app.post("/v1/search/image", response_model=SearchResponse, response_model_by_alias=True)
    async def search_image(
        request: Request,
        image: Annotated[UploadFile, File(description="PNG, JPEG, TIFF, BMP or WebP")],
        query: Annotated[str, Form()] = "image search",
        page_size: Annotated[int | None, Form()] = None,
        kb_ids: Annotated[list[str] | None, Form()] = None,
        authorization: Annotated[str | None, Header()] = None,
    ) -> SearchResponse:
        """Search with an uploaded image (R-RT-8, R-XM-1..3) and optional text."""
        svc = service(request)
        principal = svc.authenticate(authorization)
        limit = svc.config.serve.max_image_bytes
        data = await image.read(limit + 1)
        if not data:
            raise InvalidRequest("image", "empty upload")
        if len(data) > limit:
            raise InvalidRequest("image", f"larger than {limit} bytes")
        content_type = (image.content_type or "").lower()
        if content_type not in IMAGE_TYPES:
            raise InvalidRequest(
                "image", f"unsupported type {content_type!r}; one of {', '.join(IMAGE_TYPES)}"
            )
        if not data.startswith(IMAGE_TYPES[content_type]):
            raise InvalidRequest(
                "image", f"the bytes are not {content_type} (wrong file signature)"
            )
        try:
            body = SearchRequest(query=query, page_size=page_size, kb_ids=kb_ids or [])
        except ValidationError as error:
            first = _field_errors(list(error.errors()))[0]
            raise InvalidRequest(first["field"], first["message"]) from None
        result = await svc.search(body, principal, image=data)
        request.state.search_response = result  # read by deployments.metrics' middleware
        return result

    @app.get("/v1/collections")
    async def collections(
        request: Request, authorization: Annotated[str | None, Header()] = None
    ) -> dict[str, Any]:
        """Enabled collections: names, encoders, row counts (with scoped API keys: the rows
        of the key's knowledge bases only, listed in ``kb_ids``; null: every row)."""
        svc = service(request)
        principal = svc.authenticate(authorization)
        return {
            "collections": await svc.collections(principal),
            "kb_ids": svc.count_scope(principal),
        }

    @app.get("/v1/stats")
    async def stats(
        request: Request, authorization: Annotated[str | None, Header()] = None
    ) -> dict[str, Any]:
        """Batch sizes observed by each model deployment (dynamic batching at work). With
        API keys configured: an admin key only (401 without a key, 403 with another)."""
        svc = service(request)
        svc.require_admin(svc.authenticate(authorization))
        return {"deployments": await svc.model_stats()}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the ingress process answers."""
        return {"status": "ok"}

    # load balancers probe with HEAD; a route of its own keeps the OpenAPI ids unique
    app.add_api_route("/healthz", healthz, methods=["HEAD"], include_in_schema=False)

    @app.get("/readyz")
    async def readyz(request: Request) -> JSONResponse:
        """Readiness: every enabled model deployment and both stores answer."""
        report = await service(request).readiness()
        return JSONResponse(status_code=200 if report["ready"] else 503, content=report)

    mount_ui(app)  # the retrieval-testing page: GET / and /ui/* only
    # innermost of the middlewares: the request metrics (added by the ingress) see its 413
    app.add_middleware(BodyLimitMiddleware, limit_for=_body_limit, timeout_for=_body_timeout)
    return app
