"""Records into documents: validation (R-ING-6), grouping a record stream by document and
the content hash that says whether a stored document changed.

Both ingest engines call these; :mod:`pipeline.ingest.runner` re-exports the names.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass

from pipeline.ingest.records import SourceRecord
from pipeline.structure import STRUCTURE_RULES_VERSION

__all__ = [
    "RecordFailure",
    "content_hash",
    "stream_documents",
    "valid_records",
    "validate_record",
]

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
    ``failures`` with its reason and, when it has one, its source URI (the file and line
    of a JSONL row without an id).

    A document comes once: every reader here yields a document's sections together, its
    section indexes rising (one JSONL row, one Markdown file, one product's leaflet). So
    a run of records that starts over (another document id came between, or the index
    does not rise) and names a document id already read is that document again (two
    JSONL rows with one id, one file given twice, the same id in two files): each of its
    records is a failure, and the first occurrence stays. Merged, its sections took the
    first one's chunk ids, and its text replaced the first's unseen. Only the document
    ids read so far are kept."""
    seen: set[str] = set()
    current, last_index, repeated = None, -1, False
    for record in records:
        reason = validate_record(record)
        if reason is None:
            if record.document_id != current or record.section_index <= last_index:
                if current is not None:
                    seen.add(current)
                current, repeated = record.document_id, record.document_id in seen
            last_index = record.section_index
            if repeated:
                reason = (
                    f"repeats document {record.document_id}, already read earlier in the "
                    "source; the first one is kept"
                )
        if reason is None:
            yield record
        else:
            where = f" ({record.source_uri})" if record.source_uri else ""
            failures.append(RecordFailure(record.record_id, reason + where))


def stream_documents(
    records: Iterable[SourceRecord], failures: list[RecordFailure]
) -> Iterator[tuple[str, list[SourceRecord]]]:
    """``(document id, its valid records)`` as the records stream by (invalid ones, and
    a document's later occurrences, go to ``failures``: :func:`valid_records`)."""
    current: list[SourceRecord] = []
    for record in valid_records(records, failures):
        if current and record.document_id == current[0].document_id:
            current.append(record)
            continue
        if current:
            yield current[0].document_id, current
        current = [record]
    if current:
        yield current[0].document_id, current


def content_hash(
    records: Sequence[SourceRecord], kb_name: str, salt: str, namespace: str = ""
) -> str:
    """Fingerprint of everything an ingest stores for one document: every field of its
    section records (text, titles, kind, drugs, tags, file name, source URI, extras), its
    kb, its namespace and the ingest configuration (``salt``). 32 hex characters.

    Any field in it, changed, makes the next ingest write the document again: the title
    is part of each chunk's encoded text, the kind picks its collections (R-ING-4), the
    file name and source URI are chunk metadata, the namespace is the registry's.

    Raises:
        TypeError: a value in a record's ``extra`` that JSON cannot hold (sets are
            sorted).
    """
    digest = hashlib.sha256(f"fields-v2|{salt}".encode())
    digest.update(kb_name.encode())
    digest.update(f"|namespace:{namespace}".encode())
    if any(record.smiles for record in records):
        # compounds carry standardised structures (SPEC A-3): new rules, new rows
        digest.update(STRUCTURE_RULES_VERSION.encode())
    for record in sorted(records, key=lambda r: r.section_index):
        fields = asdict(record)
        digest.update(json.dumps(fields, sort_keys=True, default=sorted).encode())
    return digest.hexdigest()[:32]
