"""BEIR corpus reader: ``corpus.jsonl`` lines ``{"_id", "title", "text"}`` (Thakur et al.,
BEIR, NeurIPS 2021). One document per line; the document id is the BEIR ``_id`` so that
qrels match."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pipeline.ingest.records import SourceRecord, read_jsonl

__all__ = ["read_beir_corpus"]


def read_beir_corpus(path: str | Path) -> Iterator[SourceRecord]:
    """Yield one ``paper`` record per corpus line.

    Raises:
        ValueError: a line is not JSON or lacks ``_id`` (with the line number).
    """
    path = Path(path)
    if path.is_dir():
        path = path / "corpus.jsonl"
    for line_number, row in read_jsonl(path):
        if "_id" not in row:
            raise ValueError(f"{path}:{line_number}: missing _id")
        title = str(row.get("title") or "").strip()
        yield SourceRecord(
            document_id=str(row["_id"]),
            document_name=title or str(row["_id"]),
            title=title,
            text=str(row.get("text") or ""),
            kind="paper",
            source_uri=f"{path.name}#{row['_id']}",
            file_name=path.name,
        )
