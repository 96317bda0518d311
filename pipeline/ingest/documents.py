"""Records into documents: validation (R-ING-6) and grouping a record stream by document.

Both ingest engines call these; :mod:`pipeline.ingest.runner` re-exports the names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pipeline.ingest.records import SourceRecord

__all__ = ["RecordFailure", "stream_documents", "valid_records", "validate_record"]

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:#@/+-]{0,200}$")
_MAX_TEXT_CHARS = 2_000_000


@dataclass(frozen=True)
class RecordFailure:
    """A record left out, and why."""

    record_id: str
    reason: str


def validate_record(record: SourceRecord) -> str | None:
    """The reason ``record`` cannot be ingested, or None when it can."""
    if not record.document_id:
        return "missing document id"
    if not _ID_RE.match(record.document_id):
        return f"document id {record.document_id[:40]!r} has characters outside [A-Za-z0-9_.:#@/+-]"
    if not record.text or not record.text.strip():
        return "empty text"
    if len(record.text) > _MAX_TEXT_CHARS:
        return f"text longer than {_MAX_TEXT_CHARS} characters"
    if any(ord(ch) < 32 and ch not in "\t\n\r" for ch in record.text[:10000]):
        return "control characters in text"
    return None


def valid_records(
    records: Iterable[SourceRecord], failures: list[RecordFailure]
) -> Iterator[SourceRecord]:
    """The records that pass :func:`validate_record`; each other one is appended to
    ``failures`` with its reason."""
    for record in records:
        reason = validate_record(record)
        if reason is None:
            yield record
        else:
            failures.append(RecordFailure(record.record_id, reason))


def stream_documents(
    records: Iterable[SourceRecord], failures: list[RecordFailure]
) -> Iterator[tuple[str, list[SourceRecord]]]:
    """``(document id, its valid records)`` as the records stream by (invalid ones go to
    ``failures``). A document's sections must come together, as every reader here
    writes them; only the ids seen so far are kept.

    Raises:
        ValueError: a document's sections are split by another document's (the message
            names it; the in-process engine, which holds the whole source, takes such a
            source).
    """
    seen: set[str] = set()
    current: list[SourceRecord] = []
    for record in valid_records(records, failures):
        if current and record.document_id == current[0].document_id:
            current.append(record)
            continue
        if record.document_id in seen:
            raise ValueError(
                f"document {record.document_id!r}: its sections are not together in the "
                "source; sort the source by document or use --engine inprocess"
            )
        if current:
            yield current[0].document_id, current
        seen.add(record.document_id)
        current = [record]
    if current:
        yield current[0].document_id, current
