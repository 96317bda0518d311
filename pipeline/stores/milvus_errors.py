"""Classification of ``MilvusException`` errors for :mod:`pipeline.stores.milvus`.

- a missing collection (the store forgets its cached ``CollectionInfo``);
- a released collection (after a Lite server restart; the store loads it and retries once).
"""

from __future__ import annotations

from pymilvus import MilvusException


def _is_missing_collection(error: MilvusException) -> bool:
    message = str(getattr(error, "message", error)).lower()
    return (
        getattr(error, "code", None) == 100
        or "does not exist" in message
        or ("not found" in message and "collection" in message)
    )


def _is_released(error: MilvusException) -> bool:
    message = str(getattr(error, "message", error)).lower()
    return getattr(error, "code", None) == 101 or "released" in message or "load()" in message
