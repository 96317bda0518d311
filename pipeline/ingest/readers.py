"""Pick a reader by format (``auto`` detects it from the path)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pipeline.ingest.read_beir import read_beir_corpus
from pipeline.ingest.read_compounds import read_chembl_compounds
from pipeline.ingest.read_documents import read_jsonl_documents, read_markdown
from pipeline.ingest.read_drug_labels import read_ema_leaflets, read_fda_indications
from pipeline.ingest.records import SourceRecord, open_text, plain_name
from pipeline.vocabulary import Vocabulary

__all__ = ["FORMATS", "detect_format", "read_source"]

FORMATS = ("auto", "beir", "ema-leaflets", "fda-indications", "chembl", "jsonl", "markdown")


def detect_format(path: Path) -> str:
    """Guess the format of ``path`` from its name (and, for JSONL, its first line).

    Raises:
        ValueError: no reader fits.
    """
    name = plain_name(path).lower()
    if path.is_dir():
        if (path / "corpus.jsonl").exists():
            return "beir"
        if any(path.rglob("*.md")):
            return "markdown"
    elif name.endswith((".md", ".markdown")):
        return "markdown"
    elif name.endswith(".csv"):
        return "chembl"
    elif name.endswith(".jsonl"):
        with open_text(path) as handle:
            first = handle.readline()
        if '"_id"' in first:
            return "beir"
        if '"drug"' in first and '"section"' in first:
            return "ema-leaflets"
        if '"unii"' in first and '"indications"' in first:
            return "fda-indications"
        return "jsonl"
    raise ValueError(
        f"{path}: cannot tell its format; pass --format (one of {', '.join(FORMATS[1:])})"
    )


def read_source(
    path: str | Path, vocabulary: Vocabulary, fmt: str = "auto"
) -> Iterator[SourceRecord]:
    """Records of ``path`` in format ``fmt``; a folder without a single format is read
    file by file (auto-detected).

    Raises:
        ValueError: unknown format, a file no reader fits, or a file its reader cannot
            read (not UTF-8, bad JSON), the file named in the message.
        FileNotFoundError: ``path`` does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file or folder: {path}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    if fmt == "auto" and path.is_dir() and not (path / "corpus.jsonl").exists():
        for child in sorted(
            p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")
        ):
            yield from read_source(child, vocabulary, "auto")
        return
    fmt = detect_format(path) if fmt == "auto" else fmt
    try:
        yield from _read_file(path, vocabulary, fmt)
    except ValueError as error:  # bad bytes or JSON deep in a folder: say which file
        if str(path) in str(error):
            raise
        raise ValueError(f"{path}: {error}") from error


def _read_file(path: Path, vocabulary: Vocabulary, fmt: str) -> Iterator[SourceRecord]:
    if fmt == "beir":
        yield from read_beir_corpus(path)
    elif fmt == "ema-leaflets":
        yield from read_ema_leaflets(path, vocabulary)
    elif fmt == "fda-indications":
        yield from read_fda_indications(path, vocabulary)
    elif fmt == "chembl":
        yield from read_chembl_compounds(path, vocabulary)
    elif fmt == "jsonl":
        yield from read_jsonl_documents(path)
    else:
        yield from read_markdown(path)
