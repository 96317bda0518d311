"""R-ING-1..6 against real Milvus Lite and PostgreSQL with the offline MiniLM and rxnfp
models: repeat ingests add nothing; an ingest killed mid-way and re-run stores every
record exactly once."""

from __future__ import annotations

import json

import pytest

from deployments.config import load_config
from deployments.ingest import document_roles
from deployments.local import load_local_models
from pipeline.errors import BackendUnavailable
from pipeline.ingest.runner import IngestRunner
from pipeline.stores.milvus import MilvusVectorStore
from pipeline.vocabulary import default_vocabulary
from tests.support.slices import demo_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def config():
    # one document per batch: a crash after the first encoder call leaves the first
    # document registered and the rest not
    return load_config("default", overrides={"pipeline": {"ingest": {"batch_documents": 1}}})


@pytest.fixture(scope="module")
def encoders(config):
    return dict(load_local_models(config.models, document_roles(config)).encoders)


@pytest.fixture(scope="module")
def records():
    return list(
        demo_slice(
            default_vocabulary(),
            products=("tagrisso", "iressa"),
            compounds=("OSIMERTINIB", "GEFITINIB"),
        )
    )


class FailingAfter:
    """A real encoder that crashes after ``calls`` successful calls (an injected fault)."""

    def __init__(self, encoder, calls: int) -> None:
        self.encoder, self.left = encoder, calls
        self.dimension = encoder.dimension

    async def encode(self, texts, titles=None):
        if self.left <= 0:
            raise BackendUnavailable("encoder crashed (injected fault)")
        self.left -= 1
        return await self.encoder.encode(texts, titles)


async def _reset(store, registry, config, records):
    for name in config.pipeline.enabled_collections():
        await store.drop_collection(name)
    await registry.delete_documents(sorted({r.document_id for r in records}))


async def _rows(store, config):
    rows = {}
    for name in config.pipeline.enabled_collections():
        if await store.has_collection(name):
            hits = await store.count(name)
            if hits:
                rows[name] = hits
    return rows


def _runner(store, registry, encoders, config):
    return IngestRunner(
        store=store,
        registry=registry,
        encoders=encoders,
        settings=config.pipeline,
        vocabulary=default_vocabulary(),
    )


@pytest.fixture
async def store(milvus_server):
    opened = MilvusVectorStore(milvus_server.uri, collection_prefix="ingest_")
    yield opened
    await opened.close()


async def test_r_ing_6_second_run_adds_nothing(store, registry, config, encoders, records):
    await _reset(store, registry, config, records)
    first = await _runner(store, registry, encoders, config).run(records, "drug-kb")
    rows = await _rows(store, config)
    assert first.failures == [] and first.documents_written == 4
    assert set(rows) == {"biomed_text", "chemical"} and rows["chemical"] == 2
    second = await _runner(store, registry, encoders, config).run(records, "drug-kb")
    assert second.documents_written == 0 and second.documents_unchanged == 4
    assert await _rows(store, config) == rows
    assert await registry.count_documents("drug-kb") >= 4
    stored = await registry.lookup_documents(["ema-tagrisso"])
    record = stored["ema-tagrisso"]
    assert record.name == "Tagrisso (osimertinib) — EMA package leaflet"
    assert list(record.collections) == ["biomed_text"]


def _with_word_form(config, form: str):
    lexical = config.pipeline.lexical.model_copy(update={"word_form": form})
    return config.model_copy(
        update={"pipeline": config.pipeline.model_copy(update={"lexical": lexical})}
    )


async def test_a8_another_word_form_rewrites_every_document(
    store, registry, config, encoders, records
):
    # the indexed BM25 text changes form, so nothing stored may count as unchanged
    await _reset(store, registry, config, records)
    as_written = _with_word_form(config, "as_written")
    await _runner(store, registry, encoders, as_written).run(records, "drug-kb")
    rows = await _rows(store, config)
    lemma = _with_word_form(config, "lemma")
    report = await _runner(store, registry, encoders, lemma).run(records, "drug-kb")
    assert report.documents_written == 4 and report.documents_unchanged == 0
    assert await _rows(store, config) == rows
    again = await _runner(store, registry, encoders, lemma).run(records, "drug-kb")
    assert again.documents_written == 0 and again.documents_unchanged == 4


async def test_another_collection_prefix_is_written_not_skipped(
    store, milvus_server, registry, config, encoders, records
):
    # one registry, two collection prefixes: the second store must get its own chunks
    await _reset(store, registry, config, records)
    await _runner(store, registry, encoders, config).run(records, "drug-kb")
    other = MilvusVectorStore(milvus_server.uri, collection_prefix="ingest_other_")
    try:
        for name in config.pipeline.enabled_collections():
            await other.drop_collection(name)
        report = await _runner(other, registry, encoders, config).run(records, "drug-kb")
        assert report.documents_written == 4 and report.documents_unchanged == 0
        assert await _rows(other, config) == await _rows(store, config)
    finally:
        await other.close()


async def test_killed_ingest_resumes_with_every_record_exactly_once(
    store, registry, config, encoders, records
):
    await _reset(store, registry, config, records)
    clean = await _runner(store, registry, encoders, config).run(records, "drug-kb")
    expected = await _rows(store, config)
    assert clean.documents_written == 4

    await _reset(store, registry, config, records)
    crashing = {role: FailingAfter(encoder, calls=1) for role, encoder in encoders.items()}
    with pytest.raises(BackendUnavailable):
        await _runner(store, registry, crashing, config).run(records, "drug-kb")
    partial = await _rows(store, config)
    assert sum(partial.values()) < sum(expected.values())

    resumed = await _runner(store, registry, encoders, config).run(records, "drug-kb")
    assert resumed.documents_unchanged > 0  # what was registered before the crash is kept
    after = await _rows(store, config)
    assert after == expected
    print(json.dumps({"rows_clean": expected, "rows_after_kill": partial, "rows_resumed": after}))
    fetched = await store.fetch(
        "biomed_text", [f"biomed_text:ema-tagrisso#s{i}-c0" for i in range(7)]
    )
    assert len(fetched) == 7


async def test_interrupted_new_document_whose_source_shrank_keeps_no_old_chunks(
    store, registry, config, encoders, records
):
    # The state a run killed between "chunks stored" and "document registered" leaves:
    # Tagrisso's chunks in Milvus, no registry row. Its source then loses sections.
    shrunk = [
        r for r in records if r.document_id != "ema-tagrisso" or not r.section_title.startswith("6")
    ]
    assert len(shrunk) < len(records)
    await _reset(store, registry, config, records)
    await _runner(store, registry, encoders, config).run(shrunk, "drug-kb")
    expected = await _rows(store, config)

    await _reset(store, registry, config, records)
    await _runner(store, registry, encoders, config).run(records, "drug-kb")
    full = await _rows(store, config)
    assert sum(full.values()) > sum(expected.values())
    assert await registry.delete_documents(["ema-tagrisso"]) == 1

    report = await _runner(store, registry, encoders, config).run(shrunk, "drug-kb")
    assert report.documents_written == 1 and report.documents_unchanged == 3
    assert await _rows(store, config) == expected  # none of the dropped sections' chunks


async def test_a_document_id_of_another_kb_is_refused_and_stays_where_it_is(
    store, registry, config, encoders, records
):
    await _reset(store, registry, config, records)
    await _runner(store, registry, encoders, config).run(records, "drug-kb")
    rows = await _rows(store, config)
    moved = await _runner(store, registry, encoders, config).run(records, "other-kb")
    ids = sorted({r.document_id for r in records})
    assert moved.documents_written == 0 and sorted(f.record_id for f in moved.failures) == ids
    assert all("registered in knowledge base 'drug-kb'" in f.reason for f in moved.failures)
    assert await _rows(store, config) == rows  # nothing moved, nothing deleted
    assert await registry.count_documents("drug-kb") == len(ids)
    assert await registry.count_documents("other-kb") == 0


async def test_a_changed_document_that_goes_elsewhere_leaves_no_chunk_behind(
    store, registry, config, encoders
):
    from pipeline.ingest.records import SourceRecord

    kb, doc = "move-kb", "move-kb/leaflet"
    await registry.delete_documents([doc])
    biomedical = SourceRecord(doc, "Tagrisso leaflet", "Osimertinib (Tagrisso) side effects: "
                              "diarrhoea, rash and interstitial lung disease in EGFR lung cancer.",
                              section_title="Possible side effects", drugs=("osimertinib",))
    general = SourceRecord(doc, "Kitchen notes", "Keep the kettle on the left shelf and the "
                           "spare mugs in the top drawer next to the window.")

    async def rows_of_kb() -> dict[str, int]:
        counted = {n: await store.count(n, kb_names=[kb])
                   for n in config.pipeline.enabled_collections()}
        return {n: c for n, c in counted.items() if c}

    first = await _runner(store, registry, encoders, config).run([biomedical], kb)
    before = await rows_of_kb()
    second = await _runner(store, registry, encoders, config).run([general], kb)
    after = await rows_of_kb()
    assert first.documents_written == second.documents_written == 1
    assert before and after and set(before).isdisjoint(after), (before, after)  # it moved
    registered = (await registry.lookup_documents([doc]))[doc]
    assert set(after) <= set(registered.collections)


async def test_a_document_refused_for_another_kb_goes_there_once_removed_from_its_own(
    store, registry, config, encoders, records
):
    from pipeline.ingest.removal import remove_documents

    await _reset(store, registry, config, records)
    await _runner(store, registry, encoders, config).run(records, "drug-kb")
    ids = sorted({r.document_id for r in records})
    collections = config.pipeline.enabled_collections()
    kept = await remove_documents(store, registry, [*ids, "no-such-id"], collections, "other")
    assert kept == {"removed": [], "not_found": ["no-such-id"], "other_kb": ids}
    assert await _rows(store, config)  # another kb's documents are left alone
    removed = await remove_documents(store, registry, ids, collections, "drug-kb")
    assert removed["removed"] == ids and await _rows(store, config) == {}
    assert await registry.count_documents("drug-kb") == 0
    moved = await _runner(store, registry, encoders, config).run(records, "other-kb")
    assert moved.failures == [] and moved.documents_written == len(ids)
    # a run cut short after the registry rows went: the chunks are there, unregistered
    await registry.delete_documents(ids[:1])
    again = await remove_documents(store, registry, ids, collections)  # no kb: any
    assert again["removed"] == ids[1:] and again["not_found"] == ids[:1]
    assert await _rows(store, config) == {}  # the unregistered one's chunks went too
    assert await registry.count_documents("other-kb") == 0


async def test_a_rewrite_that_fails_midway_is_redone_by_the_next_run(
    store, registry, config, encoders
):
    """A changed document loses its old chunks before the new ones are written; if the
    run then fails, its registry row must not still say 'stored, old hash', or
    re-ingesting the old text would be skipped as unchanged with no chunk left."""
    from pipeline.ingest.records import SourceRecord

    kb, doc = "rewrite-kb", "rewrite-kb/leaflet"
    await registry.delete_documents([doc])
    text = "Osimertinib (Tagrisso) side effects: diarrhoea, rash and interstitial lung disease."
    old = SourceRecord(doc, "Tagrisso leaflet", text, section_title="Possible side effects",
                       drugs=("osimertinib",))
    new = SourceRecord(doc, "Tagrisso leaflet", text + " Tell your doctor about eye problems.",
                       section_title="Possible side effects", drugs=("osimertinib",))
    first = await _runner(store, registry, encoders, config).run([old], kb)
    assert first.documents_written == 1
    crashing = {role: FailingAfter(encoder, calls=0) for role, encoder in encoders.items()}
    with pytest.raises(BackendUnavailable):
        await _runner(store, registry, crashing, config).run([new], kb)
    again = await _runner(store, registry, encoders, config).run([old], kb)
    assert again.documents_written == 1 and again.documents_unchanged == 0
    assert await store.count("biomed_text", kb_names=[kb]) > 0


async def test_removing_a_kb_also_removes_its_unregistered_chunks(
    store, registry, config, encoders, records
):
    """``delete --kb``: an ingest cut short stores chunks before it registers their
    document; no registry look-up finds them, so the kb sweep must, and it must leave
    another kb's chunks alone."""
    from pipeline.ingest.records import SourceRecord
    from pipeline.ingest.removal import remove_knowledge_base

    neighbour = SourceRecord("notes/kettle", "Aspirin notes", "Aspirin reduces fever and "
                             "pain; take it with food to spare the stomach lining.")
    await _reset(store, registry, config, [*records, neighbour])
    await _runner(store, registry, encoders, config).run(records, "drug-kb")
    await _runner(store, registry, encoders, config).run([neighbour], "notes-kb")
    ids = sorted({r.document_id for r in records})
    collections = config.pipeline.enabled_collections()

    async def kb_rows(kb: str) -> int:
        return sum([await store.count(name, kb_names=[kb]) for name in collections])

    neighbour_rows = await kb_rows("notes-kb")
    assert neighbour_rows and await kb_rows("drug-kb")
    await registry.delete_documents(ids[:1])  # its chunks stay, unregistered
    outcome = await remove_knowledge_base(store, registry, "drug-kb", collections)
    assert outcome["removed"] == ids[1:] and outcome["other_kb"] == []
    assert outcome["unregistered_chunks"] != 0
    assert await kb_rows("drug-kb") == 0
    assert await kb_rows("notes-kb") == neighbour_rows
    assert await registry.count_documents("drug-kb") == 0
    assert await registry.count_documents("notes-kb") == 1
