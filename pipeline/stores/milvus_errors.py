"""Classification of ``MilvusException`` errors for :mod:`pipeline.stores.milvus`: a
released collection (after a Lite server restart; the store loads it and retries once).
Every Milvus error also makes the store forget the collection's cached ``CollectionInfo``.
"""

from __future__ import annotations

from pymilvus import MilvusException


def _is_released(error: MilvusException) -> bool:
    message = str(getattr(error, "message", error)).lower()
    return getattr(error, "code", None) == 101 or "released" in message or "load()" in message
