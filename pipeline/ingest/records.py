"""The common record type every reader yields: one section of one document."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

__all__ = ["DocumentKind", "SourceRecord", "open_text", "plain_name", "read_jsonl"]


def open_text(path: str | Path) -> IO[str]:
    """Open a text file for reading, gunzipping ``*.gz`` transparently."""
    path = Path(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON Lines file (``*.gz``
    read transparently); line numbers count from 1.

    Raises:
        ValueError: a line is not JSON, or not a JSON object (``path:line: why``).
    """
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{number}: expected a JSON object")
            yield number, row


def plain_name(path: str | Path) -> str:
    """File name without a trailing ``.gz`` (``x.jsonl.gz`` -> ``x.jsonl``)."""
    name = Path(path).name
    return name[:-3] if name.endswith(".gz") else name


#: What a document is; decides its collection (R-ING-4) and chunking.
DocumentKind = str  # "leaflet" | "label" | "compound" | "paper" | "document"


@dataclass(frozen=True)
class SourceRecord:
    """One section of one source document, as a reader found it.

    ``document_id`` groups sections into a document; ``section_title`` is the heading as
    written (the chunker maps it to a canonical section, R-ING-2); ``drugs`` are the
    document's own drugs when the source names them (a leaflet's active substance, a
    compound's name); ``smiles`` is set for compounds (R-ING-5).
    """

    document_id: str
    document_name: str
    text: str
    section_title: str = ""
    section_index: int = 0
    kind: DocumentKind = "document"
    title: str = ""
    source_uri: str = ""
    file_name: str = ""
    drugs: tuple[str, ...] = ()
    smiles: str = ""
    tags: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def record_id(self) -> str:
        """``"<document_id>#<section_index>"``."""
        return f"{self.document_id}#{self.section_index}"
