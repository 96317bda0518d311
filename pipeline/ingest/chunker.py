"""Split a document's sections into chunks with the R-ING-1 metadata.

Chunks pack whole sentences up to ``chunk_tokens`` word tokens and repeat the last
``chunk_overlap`` tokens' sentences at the start of the next chunk. Each chunk's text
starts with a short header (document title and section) so that a chunk read alone says
what it is about; the stored vector and the BM25 text are computed from that same text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.ingest.records import SourceRecord
from pipeline.ingest.sections import canonical_section
from pipeline.settings import IngestSettings
from pipeline.structure import standardize
from pipeline.text import tokens
from pipeline.vocabulary import Vocabulary

__all__ = ["ChunkDraft", "chunk_document", "primary_drugs_for", "split_sentences"]

_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9(\"'•-])|\n+")


@dataclass(frozen=True)
class ChunkDraft:
    """A chunk before encoding: its id (shared by every collection it goes into, as
    ``source_chunk_id``), text, and R-ING-1 metadata without the per-collection keys."""

    chunk_id: str
    text: str
    metadata: dict


def split_sentences(text: str) -> list[str]:
    """Sentences (or lines) of ``text``, stripped, empty ones dropped."""
    return [part.strip() for part in _SENTENCE_RE.split(text) if part and part.strip()]


def _windows(sentences: Sequence[str], size: int, overlap: int) -> list[str]:
    counts = [max(1, len(tokens(sentence))) for sentence in sentences]
    chunks: list[str] = []
    start = 0
    while start < len(sentences):
        end, total = start, 0
        while end < len(sentences) and (total + counts[end] <= size or end == start):
            total += counts[end]
            end += 1
        if end == start + 1 and counts[start] > size:
            words = sentences[start].split()
            step = max(1, size - overlap)
            chunks.extend(
                " ".join(words[i : i + size])
                for i in range(0, len(words), step)
                if words[i : i + size]
            )
            start = end
            continue
        chunks.append(" ".join(sentences[start:end]))
        if end >= len(sentences):
            break
        back, kept = end, 0
        while back > start + 1 and kept + counts[back - 1] <= overlap:
            back -= 1
            kept += counts[back]
        start = back
    return chunks


def primary_drugs_for(
    record: SourceRecord, chunk_text: str, vocabulary: Vocabulary, limit: int
) -> list[str]:
    """R-ING-3: the document's own drugs when the source names them (a leaflet's active
    substance, a label's generic, a compound); otherwise the drugs the chunk names most
    (brand names count as their active substance), at most ``limit``."""
    if record.drugs:
        return list(dict.fromkeys(record.drugs))[:limit]
    found = Counter(
        match.entity.canonical
        for match in vocabulary.find(f"{record.title}\n{chunk_text}", correct_typos=False)
        if match.entity.is_drug
    )
    return [name for name, _ in found.most_common(limit)]


def _summary(section_title: str, text: str) -> str:
    head = f"{section_title}: {text}" if section_title else text
    return " ".join(head.split())[:200]


def _structure_metadata(smiles: str) -> dict[str, str]:
    """SPEC A-3: a compound keeps its SMILES as given and adds its standardised parent's
    canonical SMILES and InChIKey (absent when RDKit cannot parse the SMILES)."""
    structure = standardize(smiles)
    if structure is None:
        return {"smiles": smiles}
    return {
        "smiles": smiles,
        "canonical_smiles": structure.canonical_smiles,
        "inchikey": structure.inchikey,
    }


def chunk_document(
    records: Sequence[SourceRecord],
    kb_name: str,
    vocabulary: Vocabulary,
    settings: IngestSettings,
) -> list[ChunkDraft]:
    """Chunks of one document (all its section records), in section order.

    Chunk ids are ``{document_id}#s{section}-c{chunk}``: stable across runs, so re-ingest
    overwrites instead of duplicating.
    """
    drafts: list[ChunkDraft] = []
    for record in sorted(records, key=lambda r: r.section_index):
        section = canonical_section(record.section_title, record.kind)
        structure_metadata = _structure_metadata(record.smiles) if record.smiles else {}
        header = " — ".join(part for part in (record.title, record.section_title) if part)
        pieces = _windows(
            split_sentences(record.text), settings.chunk_tokens, settings.chunk_overlap
        ) or [record.text.strip()]
        for index, piece in enumerate(pieces):
            chunk_id = f"{record.document_id}#s{record.section_index}-c{index}"
            text = f"{header}\n{piece}" if header else piece
            metadata = {
                "source_chunk_id": chunk_id,
                "document_id": record.document_id,
                "path": f"{record.document_id}/{section}/{record.section_index}-{index}",
                "file_name": record.file_name,
                "document_name": record.document_name,
                "source_uri": record.source_uri,
                "kb_name": kb_name,
                "tags": list(record.tags),
                "primary_drugs": primary_drugs_for(
                    record, piece, vocabulary, settings.max_primary_drugs
                ),
                "biomed_section": section,
                "section_title": record.section_title,
                "content_summary": _summary(record.section_title, piece),
                "title": record.title,
                "kind": record.kind,
                "positions": [record.section_index, index],
            }
            if record.smiles:
                metadata.update(structure_metadata)
            drafts.append(ChunkDraft(chunk_id=chunk_id, text=text, metadata=metadata))
    return drafts
