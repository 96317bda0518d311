"""The request bounds that come from configuration (R-REQ-1), checked before any store or
model is asked: the schema (``pipeline.schema.SearchRequest``) holds only the static ones,
so that a client is told the limit this deployment enforces."""

from __future__ import annotations

from pipeline.errors import InvalidRequest
from pipeline.schema import SearchRequest
from pipeline.settings import PipelineSettings

__all__ = ["check_request"]


def check_request(
    settings: PipelineSettings, request: SearchRequest, has_image: bool = False
) -> SearchRequest:
    """Check ``request`` against ``settings.request`` (query length in characters,
    page, page_size, top_k) and the enabled collections, and that an image search (an
    upload, ``has_image``, or ``route_mode: visual``) has an image collection to search.

    Returns:
        ``request`` with ``top_k`` set to the configured cap when the client left it out
        (the schema's default, 1024, would otherwise fail a lower cap).

    Raises:
        InvalidRequest: naming the field that is out of range; ``image`` or
            ``route_mode`` when the profile enables no image collection (the image would
            otherwise be ignored and the answer be a text search's, or none).
    """
    limits = settings.request
    if "top_k" not in request.model_fields_set:
        request = request.model_copy(update={"top_k": limits.top_k})
    if len(request.query) > limits.max_query_chars:
        raise InvalidRequest(
            "query", f"longer than {limits.max_query_chars} characters ({len(request.query)})"
        )
    page_size = request.page_size or settings.final_top_k
    if page_size > limits.max_page_size:
        raise InvalidRequest("page_size", f"must be <= {limits.max_page_size}")
    if request.page > limits.max_page:
        raise InvalidRequest("page", f"must be <= {limits.max_page}")
    if request.top_k > limits.top_k:
        raise InvalidRequest("top_k", f"must be <= {limits.top_k}")
    enabled = settings.enabled_collections()
    if request.collections == []:
        raise InvalidRequest(
            "collections", "empty: name at least one collection, or leave it out (as routed)"
        )
    if request.collections is not None:
        unknown = sorted(set(request.collections) - set(enabled))
        if unknown:
            raise InvalidRequest(
                "collections",
                f"unknown or disabled: {', '.join(unknown)}; enabled: {', '.join(enabled)}",
            )
    wants_images = "image" if has_image else None
    if request.route_mode == "visual" and not has_image:
        wants_images = "route_mode"
    if wants_images and not any(spec.modality == "image" for spec in enabled.values()):
        raise InvalidRequest(
            wants_images,
            "image search is off: this deployment's profile enables no image collection "
            "(visual, radiology or pathology)",
        )
    return request
