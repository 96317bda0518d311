"""Removing registered documents (``biomed-search delete``): their chunks from every
collection, then their registry rows, so that an id refused for another knowledge base
(``IngestRunner.plan_batch``) can be ingested there once its copy is gone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pipeline.ports import IngestRegistry, IngestVectorStore

__all__ = ["remove_documents"]


async def remove_documents(
    store: IngestVectorStore,
    registry: IngestRegistry,
    document_ids: Sequence[str],
    collections: Iterable[str],
    kb_name: str | None = None,
) -> dict[str, list[str]]:
    """Remove registered documents: their chunks from every collection the registry lists
    for them and from ``collections`` (the enabled ones: leftovers of an interrupted
    ingest), then their registry rows. Chunks go first, so a run cut short leaves the
    document registered and a second run finishes it (idempotent). ``kb_name``: only
    documents of that knowledge base; the others are left alone and listed.

    Returns:
        ``removed`` (ids), ``not_found`` (not registered), ``other_kb`` (registered in
        another knowledge base than ``kb_name``), each sorted.

    Raises:
        pipeline.errors.BackendUnavailable: a store does not answer.
    """
    stored = await registry.lookup_documents(list(dict.fromkeys(document_ids)))
    other = sorted(i for i, r in stored.items() if kb_name is not None and r.kb_name != kb_name)
    doomed = sorted(i for i in stored if i not in other)
    names = set(collections).union(*(stored[i].collections for i in doomed))
    if doomed:
        for name in sorted(names):
            await store.delete_documents(name, doomed)
        await registry.delete_documents(doomed)
    return {"removed": doomed, "not_found": sorted(set(document_ids) - set(stored)),
            "other_kb": other}
