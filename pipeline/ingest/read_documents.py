"""Users' own documents: JSON lines (``{"id", "title", "text", "section"?, "source_uri"?,
"tags"?}``, or ``{"id", "title", "sections": [{"title", "text"}]}``) and Markdown files
(one document per file, ``#`` headings start sections)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from pipeline.ingest.records import SourceRecord, read_jsonl

__all__ = ["read_jsonl_documents", "read_markdown"]

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*)$")


def read_jsonl_documents(path: str | Path) -> Iterator[SourceRecord]:
    """Yield records from a JSONL file. A line that is not JSON raises; a line without
    ``id`` or text is yielded with empty fields so the runner reports and skips it.

    Raises:
        ValueError: a line is not JSON (with the line number).
    """
    path = Path(path)
    for line_number, row in read_jsonl(path):
        document_id = str(row.get("id") or row.get("_id") or "")
        title = str(row.get("title") or "")
        sections = row.get("sections") or [
            {"title": row.get("section") or "", "text": row.get("text") or ""}
        ]
        tags = tuple(str(t) for t in row.get("tags") or [])
        located = f"{path.name}#{document_id}" if document_id else f"{path.name}:{line_number}"
        for index, section in enumerate(sections):
            yield SourceRecord(
                document_id=document_id,
                document_name=title or document_id,
                title=title,
                text=str(section.get("text") or ""),
                section_title=str(section.get("title") or ""),
                section_index=index,
                kind=str(row.get("kind") or "document"),
                # by id, not line: a line added above must not make the rows below
                # "changed"; a row without an id is named by its line in the failures
                source_uri=str(row.get("source_uri") or located),
                file_name=path.name,
                smiles=str(row.get("smiles") or ""),
                tags=tags,
            )


def read_markdown(path: str | Path) -> Iterator[SourceRecord]:
    """Yield one record per heading section of a Markdown file (or of every ``*.md``
    file under a folder). The first ``#`` heading names the document."""
    path = Path(path)
    files = sorted(path.rglob("*.md")) if path.is_dir() else [path]
    for file in files:
        text = file.read_text(encoding="utf-8")
        title = file.stem
        sections: list[tuple[str, list[str]]] = [("", [])]
        for line in text.splitlines():
            heading = _HEADING_RE.match(line)
            if heading:
                if heading.group(1) == "#" and title == file.stem:
                    title = heading.group(2).strip()
                sections.append((heading.group(2).strip(), []))
            else:
                sections[-1][1].append(line)
        document_id = re.sub(
            r"[^A-Za-z0-9_.-]+", "-", str(file.relative_to(path if path.is_dir() else file.parent))
        )
        for index, (heading, lines) in enumerate(s for s in sections if "".join(s[1]).strip()):
            yield SourceRecord(
                document_id=document_id,
                document_name=title,
                title=title,
                text="\n".join(lines).strip(),
                section_title=heading,
                section_index=index,
                source_uri=file.resolve().as_uri(),
                file_name=file.name,
            )
