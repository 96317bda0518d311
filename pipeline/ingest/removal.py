"""Removing documents (``biomed-search delete``): their registry rows, then their chunks
from every collection, so that an id refused for another knowledge base
(``IngestRunner.plan_batch``) can be ingested there once its copy is gone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pipeline.ports import IngestRegistry, IngestVectorStore
from pipeline.schema import ScopeFilter

__all__ = ["remove_documents", "remove_knowledge_base"]


async def remove_documents(
    store: IngestVectorStore,
    registry: IngestRegistry,
    document_ids: Sequence[str],
    collections: Iterable[str],
    kb_name: str | None = None,
) -> dict[str, list[str]]:
    """Remove documents: their registry rows first, then their chunks from every
    collection the registry listed for them and from ``collections`` (the enabled ones).
    Ids that are not registered have their chunks deleted from ``collections`` too: an
    ingest cut short stores a new document's chunks before registering it. Registry rows
    go first so that a run cut short never leaves a registered document without chunks
    (a re-ingest would take it for unchanged); running it again finishes it (the ids are
    then not registered, and their chunks go all the same). ``kb_name``: only documents
    registered in that knowledge base; those of another are left alone and listed. Do
    not remove an id that an ingest is writing at the same time.

    Returns:
        ``removed`` (registered ids removed), ``not_found`` (not registered; any chunks
        of theirs deleted), ``other_kb`` (registered in another knowledge base than
        ``kb_name``, untouched), each sorted.

    Raises:
        pipeline.errors.BackendUnavailable: a store does not answer.
    """
    wanted = list(dict.fromkeys(document_ids))
    stored = await registry.lookup_documents(wanted)
    other = sorted(i for i, r in stored.items() if kb_name is not None and r.kb_name != kb_name)
    doomed = sorted(i for i in stored if i not in other)
    unregistered = sorted(set(wanted) - set(stored))
    names = set(collections).union(*(stored[i].collections for i in doomed))
    if doomed:
        await registry.delete_documents(doomed)
    if doomed or unregistered:
        for name in sorted(names):
            await store.delete_documents(name, doomed + unregistered)
    return {"removed": doomed, "not_found": unregistered, "other_kb": other}


async def remove_knowledge_base(
    store: IngestVectorStore,
    registry: IngestRegistry,
    kb_name: str,
    collections: Iterable[str],
) -> dict[str, object]:
    """Remove every document of ``kb_name`` (:func:`remove_documents` on its registered
    ids), then every chunk still labelled ``kb_name`` in ``collections`` and in the
    collections the registry lists for the kb: the chunks of documents an ingest cut
    short stored but never registered, which no id look-up finds.

    Returns:
        :func:`remove_documents`' lists and ``unregistered_chunks`` (chunks of the kb
        left after its registered documents went; None when the store does not count).

    Raises:
        pipeline.errors.BackendUnavailable: a store does not answer.
    """
    scope = ScopeFilter(kb_names=(kb_name,))
    listed = {name for name, _ in await registry.collections_for_scope(scope)}
    ids = await registry.document_ids_for_scope(scope)
    outcome: dict[str, object] = dict(
        await remove_documents(store, registry, ids, collections, kb_name)
    )
    swept: int | None = 0
    for name in sorted(listed.union(collections)):
        count = await store.delete_knowledge_base(name, kb_name)
        swept = None if swept is None or count is None else swept + count
    outcome["unregistered_chunks"] = swept
    return outcome
