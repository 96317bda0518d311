"""The ingest runner: records -> chunks -> vectors -> Milvus, then the registry (R-ING-1..6).

Exactly once, by construction:
- chunk ids are stable and upserts idempotent, so writing a chunk twice keeps one copy;
- a document is registered (with its content hash) only after all its chunks are stored,
  so an interrupted run leaves unregistered documents that the next run writes again,
  and registered, unchanged documents are skipped;
- every document about to be written has its stored chunks deleted first: the old
  version's of a changed document, and the leftovers of an interrupted run of a new one
  (whose source may have shrunk since, so upserting the new ids alone would keep them).
A record that fails validation is skipped, counted and reported with its reason; the rest
goes in.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from pipeline.ingest.chunker import ChunkDraft, chunk_document
from pipeline.ingest.documents import (
    RecordFailure,
    content_hash,
    stream_documents,
    valid_records,
    validate_record,
)
from pipeline.ingest.profile import document_profile, target_collections
from pipeline.ingest.read_compounds import compound_record
from pipeline.ingest.records import SourceRecord
from pipeline.lexical import LEXICAL_TEXT_VERSION, lexical_document_text
from pipeline.ports import IngestRegistry, IngestVectorStore, TextEncoder
from pipeline.schema import DocumentRecord, Node
from pipeline.settings import CollectionSpec, PipelineSettings
from pipeline.vocabulary import Vocabulary

__all__ = [
    "BatchPlan",
    "IngestReport",
    "IngestRunner",
    "RecordFailure",
    "content_hash",
    "encoder_inputs",
    "stream_documents",
    "valid_records",
    "validate_record",
]

logger = logging.getLogger(__name__)

#: Collections of this modality get the structure-search fields (SPEC A-3).
STRUCTURE_MODALITY = "smiles"


@dataclass
class IngestReport:
    """What one run did. ``chunks_written`` counts rows upserted per collection."""

    documents_seen: int = 0
    documents_written: int = 0
    documents_unchanged: int = 0
    chunks_written: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    failures: list[RecordFailure] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "documents_seen": self.documents_seen,
            "documents_written": self.documents_written,
            "documents_unchanged": self.documents_unchanged,
            "chunks_written": dict(self.chunks_written),
            "failures": [f"{f.record_id}: {f.reason}" for f in self.failures],
            "seconds": round(self.seconds, 2),
        }


def encoder_inputs(
    spec: CollectionSpec, drafts: Sequence[ChunkDraft]
) -> tuple[list[str], list[str]]:
    """What the document encoder of ``spec`` reads for ``drafts``: texts (a compound's
    SMILES in a ``smiles`` collection) and titles (the document title or name)."""
    texts = [
        str(draft.metadata.get("smiles") or draft.text)
        if spec.modality == STRUCTURE_MODALITY
        else draft.text
        for draft in drafts
    ]
    titles = [str(d.metadata.get("title") or d.metadata["document_name"]) for d in drafts]
    return texts, titles


@dataclass
class BatchPlan:
    """A batch of documents ready to encode and store (:meth:`IngestRunner.plan_batch`):
    chunks per collection, the registry record of each document to write (committed
    once all its chunks are stored); whatever is stored of these documents goes first
    (:meth:`IngestRunner.delete_stale`)."""

    per_collection: dict[str, tuple[CollectionSpec, list[ChunkDraft]]] = field(default_factory=dict)
    records: dict[str, DocumentRecord] = field(default_factory=dict)
    #: collections the registry lists for them (a changed document's old chunks go too)
    stored_collections: set[str] = field(default_factory=set)
    replaced: list[str] = field(default_factory=list)  #: registered ids being rewritten


class IngestRunner:
    """Ingest records into the collections their documents belong to.

    Args:
        store: Milvus (or any ``IngestVectorStore``).
        registry: the PostgreSQL registry (or any ``IngestRegistry``).
        encoders: role -> document-side encoder port.
        settings: pipeline settings (collections, ingest sizes).
        vocabulary: for primary drugs (R-ING-3), lexical texts (R-REQ-6), profiles.
        progress: called after each batch with (documents done, documents total, report).
    """

    def __init__(
        self,
        *,
        store: IngestVectorStore,
        registry: IngestRegistry,
        encoders: Mapping[str, TextEncoder],
        settings: PipelineSettings,
        vocabulary: Vocabulary,
        progress: Callable[[int, int, IngestReport], None] | None = None,
    ) -> None:
        self.store = store
        self.registry = registry
        self.encoders = encoders
        self.settings = settings
        self.vocabulary = vocabulary
        self.progress = progress
        self._ready: set[str] = set()

    def _salt(self) -> str:
        ingest = self.settings.ingest
        roles = sorted(
            f"{spec.name}:{spec.document_encoder}"
            for spec in self.settings.enabled_collections().values()
        )
        # Where the chunks live is part of "already stored": one registry in front of two
        # collection prefixes (two deployments, two test modules) must write each.
        # (No prefix adds nothing, so stores written before this keep their hashes.)
        prefix = getattr(self.store, "collection_prefix", "")
        # What the vocabulary found is stored too (primary drugs, lexical texts, profiles),
        # and the BM25 text's form and settings.
        lexical = self.settings.lexical
        salt = (
            f"v1|{ingest.chunk_tokens}|{ingest.chunk_overlap}|{','.join(roles)}"
            f"|vocabulary:{self.vocabulary.fingerprint}"
            f"|lexical:{LEXICAL_TEXT_VERSION}:{lexical.title_weight}:{lexical.synonyms}"
            # (as written adds nothing, so stores written before A-8 keep their hashes)
            + (f":{lexical.word_form}" if lexical.word_form != "as_written" else "")
        )
        return f"{salt}|prefix:{prefix}" if prefix else salt

    async def run(
        self, records: Iterable[SourceRecord], kb_name: str, namespace: str | None = None
    ) -> IngestReport:
        """Ingest ``records`` into knowledge base ``kb_name``, registered under
        ``namespace`` (default: the settings' ``namespace``, the one the supplementary
        recall looks documents up in, R-SUP-2).

        Raises:
            pipeline.errors.BackendUnavailable: a store or encoder is down (documents
                already registered stay; a re-run resumes).
        """
        started = time.perf_counter()
        namespace = namespace or self.settings.namespace
        report = IngestReport()
        documents: dict[str, list[SourceRecord]] = {}
        for record in valid_records(records, report.failures):
            documents.setdefault(record.document_id, []).append(record)
        report.documents_seen = len(documents)
        ids = list(documents)
        batch = self.settings.ingest.batch_documents
        for start in range(0, len(ids), batch):
            chunk_ids = ids[start : start + batch]
            await self._ingest_batch(
                {i: documents[i] for i in chunk_ids}, kb_name, namespace, report
            )
            if self.progress is not None:
                self.progress(min(start + batch, len(ids)), len(ids), report)
        report.seconds = time.perf_counter() - started
        return report

    async def _ingest_batch(
        self,
        documents: dict[str, list[SourceRecord]],
        kb_name: str,
        namespace: str,
        report: IngestReport,
    ) -> None:
        plan = await self.plan_batch(documents, kb_name, namespace, report)
        await self.delete_stale(plan)
        for spec, drafts in plan.per_collection.values():
            written = await self._write(spec, drafts)
            report.chunks_written[spec.name] += written
        await self.register(list(plan.records.values()), report)

    async def plan_batch(
        self,
        documents: Mapping[str, Sequence[SourceRecord]],
        kb_name: str,
        namespace: str,
        report: IngestReport,
    ) -> BatchPlan:
        """Record -> chunks -> metadata for a batch of valid documents (R-ING-1..5): the
        one implementation both engines (in-process, Ray Data) call. Documents whose
        stored content hash matches are counted unchanged and left out; a document no
        enabled collection takes is a failure in ``report``, and so is a document whose
        id is registered in another knowledge base (document ids are global: writing it
        would move it out of that kb; nothing of it is touched).

        Raises:
            pipeline.errors.BackendUnavailable: the registry does not answer.
        """
        salt = self._salt()
        hashes = {
            doc_id: content_hash(recs, kb_name, salt, namespace)
            for doc_id, recs in documents.items()
        }
        stored = await self.registry.lookup_documents(list(documents))
        todo = {
            doc_id: recs
            for doc_id, recs in documents.items()
            if doc_id not in stored or stored[doc_id].content_hash != hashes[doc_id]
        }
        report.documents_unchanged += len(documents) - len(todo)
        plan = BatchPlan()
        for doc_id, recs in todo.items():
            earlier = stored.get(doc_id)
            if earlier is not None and earlier.kb_name != kb_name:
                report.failures.append(RecordFailure(doc_id, (
                    f"document id {doc_id!r} is registered in knowledge base "
                    f"{earlier.kb_name!r}; ids are global, so writing it into {kb_name!r} "
                    "would take it out of that kb: give it another id, or remove that "
                    "copy first (biomed-search delete)")))
                continue
            if earlier is not None:
                plan.stored_collections.update(earlier.collections)
                plan.replaced.append(doc_id)
            filled = [self._backfill_smiles(r) for r in recs]
            profile = document_profile(filled, self.vocabulary, self.settings)
            targets = target_collections(profile, self.settings)
            if not targets:
                report.failures.append(
                    RecordFailure(doc_id, f"no enabled collection for {profile}")
                )
                continue
            drafts = chunk_document(filled, kb_name, self.vocabulary, self.settings.ingest)
            for spec in targets:
                plan.per_collection.setdefault(spec.name, (spec, []))[1].extend(drafts)
            plan.records[doc_id] = self._document_record(
                doc_id, recs, targets, kb_name, namespace, hashes[doc_id]
            )
        return plan

    async def delete_stale(self, plan: BatchPlan) -> None:
        """Delete whatever is stored of the plan's documents before their new chunks go in:
        a changed document's registry row first (else a run that fails after this would
        leave it registered under its old hash, and a re-run would skip it as unchanged),
        then its chunks from the collections it goes to now and those the registry listed;
        a new document's chunks left by an interrupted run go too.

        Raises:
            pipeline.errors.BackendUnavailable: a store does not answer.
        """
        if not plan.records:
            return
        if plan.replaced:
            await self.registry.delete_documents(plan.replaced)
        for name in sorted(set(plan.per_collection) | plan.stored_collections):
            await self.store.delete_documents(name, list(plan.records))

    async def register(self, records: Sequence[DocumentRecord], report: IngestReport) -> None:
        """Register documents whose chunks are all stored (the exactly-once commit)."""
        if records:
            await self.registry.register_documents(records)
            report.documents_written += len(records)

    async def prepare_collection(self, spec: CollectionSpec, dimension: int) -> None:
        """Create ``spec``'s collection (``dimension``-d vectors) once per runner."""
        if spec.name not in self._ready:
            await self.store.ensure_collection(
                spec.name,
                dimension,
                spec.hybrid,
                structure=spec.modality == STRUCTURE_MODALITY,
                metric=spec.metric,
            )
            self._ready.add(spec.name)

    def _backfill_smiles(self, record: SourceRecord) -> SourceRecord:
        # R-ING-5: a compound with a known name but no SMILES takes it from the table.
        if record.kind != "compound" or record.smiles:
            return record
        filled = compound_record(
            record.title or record.document_name, record.document_id, "", self.vocabulary
        )
        if not filled.smiles:
            return record
        return SourceRecord(
            **{
                **record.__dict__,
                "smiles": filled.smiles,
                "text": f"{record.text} SMILES: {filled.smiles}",
            }
        )

    async def _write(self, spec: CollectionSpec, drafts: list[ChunkDraft]) -> int:
        encoder = self.encoders.get(spec.document_encoder)
        if encoder is None:
            raise LookupError(f"no encoder for role {spec.document_encoder!r}")
        await self.prepare_collection(spec, encoder.dimension)
        size = self.settings.ingest.encode_batch
        written = 0
        for start in range(0, len(drafts), size):
            part = drafts[start : start + size]
            texts, titles = encoder_inputs(spec, part)
            vectors = np.asarray(await encoder.encode(texts, titles), dtype=np.float32)
            written += await self.store_chunks(spec, part, vectors)
        return written

    async def store_chunks(
        self, spec: CollectionSpec, drafts: Sequence[ChunkDraft], vectors: np.ndarray
    ) -> int:
        """Upsert ``drafts`` with their (n, d) float32 ``vectors`` (from
        :func:`encoder_inputs`) into ``spec``'s collection; returns rows written.

        Raises:
            ValueError: a vector shape other than (n, collection dimension).
            pipeline.errors.BackendUnavailable: the store does not answer.
        """
        nodes = [
            Node(
                node_id=f"{spec.name}:{draft.chunk_id}",
                text=draft.text,
                metadata={
                    **draft.metadata,
                    "node_id": f"{spec.name}:{draft.chunk_id}",
                    "collection": spec.name,
                    "modality": spec.modality,
                },
            )
            for draft in drafts
        ]
        lexical = (
            [
                lexical_document_text(
                    draft.text,
                    str(draft.metadata.get("section_title") or ""),
                    self.vocabulary,
                    self.settings.lexical,
                )
                for draft in drafts
            ]
            if spec.hybrid
            else None
        )
        return await self.store.upsert(spec.name, nodes, vectors, lexical)

    @staticmethod
    def _document_record(
        doc_id: str,
        records: Sequence[SourceRecord],
        targets: Sequence[CollectionSpec],
        kb_name: str,
        namespace: str,
        digest: str,
    ) -> DocumentRecord:
        first = records[0]
        return DocumentRecord(
            document_id=doc_id,
            name=first.document_name,
            file_name=first.file_name,
            source_uri=first.source_uri,
            kb_name=kb_name,
            namespace=namespace,
            tags=tuple(dict.fromkeys(tag for r in records for tag in r.tags)),
            collections=tuple(spec.name for spec in targets),
            encoders=tuple(spec.document_encoder for spec in targets),
            content_hash=digest,
            metadata={"kind": first.kind, "drugs": list(first.drugs), "sections": len(records)},
        )
