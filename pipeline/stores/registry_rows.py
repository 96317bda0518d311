"""Values and rows of the PostgreSQL document registry: checks of the values a caller
passes (NUL characters, collection / encoder pairs), LIKE escaping, and the conversion
between ``DocumentRecord`` and the registry's rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from pipeline.schema import DocumentRecord

__all__ = [
    "checked_text",
    "collection_pairs",
    "document_row",
    "escape_like",
    "record_from_row",
    "text_list",
]


def escape_like(term: str) -> str:
    """Escape ``\\``, ``%`` and ``_`` so that ``term`` matches literally in a LIKE / ILIKE
    pattern with ``ESCAPE '\\'`` (R-SUP-2: ``50%`` must not match ``500``)."""
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def checked_text(value: str, what: str) -> str:
    """``value`` itself once checked: a string without NUL characters (else ValueError
    naming ``what``)."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise ValueError(f"{what} contains a NUL character")
    return value


def text_list(values: Sequence[str] | None, what: str) -> list[str] | None:
    """Validated, de-duplicated list; None (no restriction) when empty."""
    if not values:
        return None
    return list(dict.fromkeys(checked_text(value, what) for value in values))


def collection_pairs(record: DocumentRecord) -> list[tuple[str, str]]:
    """The ``(collection, encoder)`` pairs of ``record``: the two lists zipped, or the
    one encoder beside every collection; ValueError for other counts or empty values."""
    collections, encoders = record.collections, record.encoders
    if not collections and not encoders:
        return []
    if len(collections) == len(encoders):
        pairs = list(zip(collections, encoders, strict=True))
    elif len(encoders) == 1 and collections:
        pairs = [(collection, encoders[0]) for collection in collections]
    else:
        raise ValueError(
            f"document {record.document_id!r}: {len(collections)} collections and "
            f"{len(encoders)} encoders (need equal counts or one encoder)"
        )
    for collection, encoder in pairs:
        if not collection or not encoder:
            raise ValueError(f"document {record.document_id!r}: empty collection or encoder")
        checked_text(collection, "collection")
        checked_text(encoder, "encoder")
    return pairs


def document_row(record: DocumentRecord) -> tuple[Any, ...]:
    """The ``documents`` row of ``record``, in the column order of ``UPSERT_DOCUMENT``."""
    return (
        record.document_id,
        record.name,
        record.file_name,
        record.source_uri,
        record.kb_name,
        record.namespace,
        list(record.tags),
        record.content_hash,
        Jsonb(record.metadata),
    )


def record_from_row(row: Sequence[Any]) -> DocumentRecord:
    """The ``DocumentRecord`` of one ``LOOKUP`` row (its collection / encoder pairs
    aggregated into two parallel arrays)."""
    return DocumentRecord(
        document_id=row[0],
        name=row[1],
        file_name=row[2],
        source_uri=row[3],
        kb_name=row[4],
        namespace=row[5],
        tags=tuple(row[6]),
        content_hash=row[7],
        metadata=dict(row[8] or {}),
        collections=tuple(row[9]),
        encoders=tuple(row[10]),
    )
