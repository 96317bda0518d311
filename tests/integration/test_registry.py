"""PostgresDocumentRegistry against a real embedded PostgreSQL (session fixture)."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from deployments.runtime import EmbeddedPostgres
from pipeline.errors import BackendUnavailable
from pipeline.ports import DocumentRegistry
from pipeline.schema import DocumentRecord, ScopeFilter
from pipeline.stores.migrate import MIGRATIONS_DIR, discover_migrations
from pipeline.stores.registry import PostgresDocumentRegistry

pytestmark = pytest.mark.integration


def _kb() -> str:
    return f"kb-{uuid.uuid4().hex[:8]}"


def _record(document_id: str, name: str, kb_name: str, **fields: object) -> DocumentRecord:
    return DocumentRecord(document_id=document_id, name=name, kb_name=kb_name, **fields)


async def _fresh_database(server: EmbeddedPostgres) -> str:
    """DSN of a new, empty database on the session server."""
    database = f"t_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(server.dsn, autocommit=True) as connection:
        await connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    return server.dsn.replace(f"/{server.database}?", f"/{database}?")


async def test_registry_satisfies_the_port(registry: PostgresDocumentRegistry) -> None:
    assert isinstance(registry, DocumentRegistry)
    assert (await registry.health())["ok"] is True


async def test_r_ing_6_lookup_round_trips_every_field(registry: PostgresDocumentRegistry) -> None:
    kb = _kb()
    record = DocumentRecord(
        document_id=f"{kb}/tagrisso",
        name="Tagrisso (osimertinib) — EMA package leaflet",
        file_name="tagrisso_leaflet.md",
        source_uri="file:///data/drug_labels/tagrisso.md",
        kb_name=kb,
        namespace="biomed",
        tags=("ema", "oncology"),
        collections=("biomed_text", "medcpt_text"),
        encoders=("pubmedbert", "medcpt-article"),
        content_hash="sha256:abc",
        metadata={"title": "Tagrisso", "pages": [1, 2]},
    )
    assert await registry.register_documents([record]) == 1
    found = await registry.lookup_documents([record.document_id, "missing"])
    assert found == {record.document_id: record}


async def test_register_is_idempotent_and_unions_collections(
    registry: PostgresDocumentRegistry,
) -> None:
    kb = _kb()
    first = _record(
        f"{kb}/d1",
        "Old name",
        kb,
        collections=("biomed_text",),
        encoders=("pubmedbert",),
        content_hash="h1",
        metadata={"a": 1},
    )
    assert await registry.register_documents([first, first]) == 1
    assert await registry.register_documents([first]) == 1
    assert await registry.count_documents(kb) == 1
    second = _record(
        f"{kb}/d1",
        "New name",
        kb,
        collections=("chemical", "general_text"),
        encoders=("molformer",),
        metadata={"b": 2},
    )
    await registry.register_documents([second])
    stored = (await registry.lookup_documents([first.document_id]))[first.document_id]
    assert stored.name == "New name"
    assert stored.content_hash == "h1"  # an empty hash keeps the stored one
    assert stored.metadata == {"a": 1, "b": 2}
    assert list(zip(stored.collections, stored.encoders, strict=True)) == [
        ("biomed_text", "pubmedbert"),
        ("chemical", "molformer"),
        ("general_text", "molformer"),
    ]
    with pytest.raises(ValueError, match="encoders"):
        await registry.register_documents(
            [_record(f"{kb}/bad", "x", kb, collections=("a", "b", "c"), encoders=("e1", "e2"))]
        )
    with pytest.raises(ValueError, match="NUL"):
        await registry.register_documents([_record(f"{kb}/nul", "bad\x00name", kb)])


async def test_content_hashes_for_resumable_ingest(registry: PostgresDocumentRegistry) -> None:
    kb = _kb()
    await registry.register_documents(
        [_record(f"{kb}/a", "A", kb, content_hash="ha"), _record(f"{kb}/b", "B", kb)]
    )
    hashes = await registry.content_hashes([f"{kb}/a", f"{kb}/b", f"{kb}/never"])
    assert hashes == {f"{kb}/a": "ha", f"{kb}/b": ""}
    await registry.register_documents([_record(f"{kb}/a", "A", kb, content_hash="ha2")])
    assert await registry.content_hashes([f"{kb}/a"]) == {f"{kb}/a": "ha2"}


async def test_r_sup_2_ilike_escapes_wildcards(registry: PostgresDocumentRegistry) -> None:
    kb = _kb()
    names = {
        "pct": "Aspirin 50% solution",
        "num": "Aspirin 500 mg tablets",
        "und": "compound a_b leaflet",
        "any": "compound axb leaflet",
        "bsl": r"path C:\drugs\x label",
        "plain": "Path C:drugsx label",
    }
    await registry.register_documents(
        [_record(f"{kb}/{key}", name, kb) for key, name in names.items()]
    )

    async def lookup(term: str) -> list[str]:
        return await registry.lookup_document_ids_by_name_terms([term], kb_name=kb)

    assert await lookup("50%") == [f"{kb}/pct"]
    assert await lookup("a_b") == [f"{kb}/und"]
    assert await lookup("_") == [f"{kb}/und"]
    assert await lookup("%") == [f"{kb}/pct"]
    assert await lookup("\\drugs\\") == [f"{kb}/bsl"]
    assert await lookup("ASPIRIN") == [f"{kb}/num", f"{kb}/pct"]
    assert await registry.lookup_document_ids_by_name_terms(["", "  "], kb_name=kb) == []


async def test_name_lookup_filters_and_orders(registry: PostgresDocumentRegistry) -> None:
    kb_one, kb_two = _kb(), _kb()
    await registry.register_documents(
        [
            _record(f"{kb_one}/tag", "Tagrisso (osimertinib) — EMA package leaflet", kb_one),
            _record(f"{kb_one}/osi", "Osimertinib FDA indications", kb_one),
            _record(f"{kb_one}/gef", "Iressa (gefitinib) — EMA package leaflet", kb_one),
            _record(f"{kb_two}/osi", "osimertinib compound", kb_two),
            _record(f"{kb_two}/other", "osimertinib other namespace", kb_two, namespace="general"),
        ]
    )
    lookup = registry.lookup_document_ids_by_name_terms
    # Ordered by the first term that matches, then by id.
    assert await lookup(["gefitinib", "osimertinib"], kb_name=kb_one) == [
        f"{kb_one}/gef",
        f"{kb_one}/osi",
        f"{kb_one}/tag",
    ]
    assert await lookup(["osimertinib"], kb_name=[kb_one, kb_two]) == sorted(
        [f"{kb_one}/osi", f"{kb_one}/tag", f"{kb_two}/osi"]
    )
    assert await lookup(["osimertinib"], kb_name=kb_two, namespace=None) == [
        f"{kb_two}/osi",
        f"{kb_two}/other",
    ]
    assert await lookup(["osimertinib"], kb_name=kb_two, namespace="general") == [f"{kb_two}/other"]
    assert (
        await lookup(["osimertinib"], kb_name=[kb_one, kb_two], limit=2)
        == sorted([f"{kb_one}/osi", f"{kb_one}/tag", f"{kb_two}/osi"])[:2]
    )


async def test_r_rt_12_collections_for_scope(registry: PostgresDocumentRegistry) -> None:
    kb_one, kb_two = _kb(), _kb()
    await registry.register_documents(
        [
            _record(
                f"{kb_one}/a",
                "A",
                kb_one,
                tags=("ema",),
                collections=("biomed_text",),
                encoders=("pubmedbert",),
            ),
            _record(
                f"{kb_one}/b",
                "B",
                kb_one,
                tags=("fda",),
                collections=("chemical",),
                encoders=("molformer",),
            ),
            _record(
                f"{kb_two}/c",
                "C",
                kb_two,
                tags=("ema",),
                collections=("biomed_text", "radiology"),
                encoders=("pubmedbert", "biomedclip"),
            ),
        ]
    )
    scope_for = registry.collections_for_scope
    assert await scope_for(ScopeFilter(kb_names=(kb_one,))) == [
        ("biomed_text", "pubmedbert"),
        ("chemical", "molformer"),
    ]
    assert await scope_for(ScopeFilter(document_ids=(f"{kb_two}/c",))) == [
        ("biomed_text", "pubmedbert"),
        ("radiology", "biomedclip"),
    ]
    assert await scope_for(ScopeFilter(kb_names=(kb_one, kb_two), tags=("fda",))) == [
        ("chemical", "molformer"),
    ]
    assert await scope_for(ScopeFilter(kb_names=(kb_two,), document_ids=(f"{kb_one}/a",))) == []
    assert await scope_for(ScopeFilter()) == []
    ema = ScopeFilter(kb_names=(kb_one, kb_two), tags=("ema",))
    assert await registry.document_ids_for_scope(ema) == sorted([f"{kb_one}/a", f"{kb_two}/c"])
    assert await registry.document_ids_for_scope(ScopeFilter()) == []


async def test_r_rt_12_scope_finds_every_pair_in_byte_order(
    registry: PostgresDocumentRegistry,
) -> None:
    # pairs enumerated by the index (database collation) and returned in "C" order
    kb = _kb()
    pairs = [("b_text", "Zeta"), ("B_text", "alpha"), ("b_text", "alpha"), ("ä_text", "é")]
    await registry.register_documents(
        [
            _record(f"{kb}/{i}", f"D{i}", kb, collections=(c,), encoders=(e,))
            for i, (c, e) in enumerate(pairs)
        ]
        + [_record(f"{_kb()}/other", "Other", _kb(), collections=("zz",), encoders=("zz",))]
    )
    found = await registry.collections_for_scope(ScopeFilter(kb_names=(kb,)))
    assert found == sorted(pairs, key=lambda pair: (pair[0].encode(), pair[1].encode()))


async def test_hostile_values_neither_break_nor_widen(registry: PostgresDocumentRegistry) -> None:
    kb = _kb()
    hostile = ["'; DROP TABLE documents; --", '" or 1=1 --', "x' OR '1'='1", "[a]", "ünï 中文"]
    await registry.register_documents(
        [
            _record(
                f"{kb}/{i}",
                value,
                f"{kb}{value}",
                tags=(value,),
                collections=("c",),
                encoders=("e",),
            )
            for i, value in enumerate(hostile)
        ]
    )
    for index, value in enumerate(hostile):
        assert await registry.lookup_document_ids_by_name_terms([value], namespace=None) == [
            f"{kb}/{index}"
        ]
        ids = await registry.document_ids_for_scope(ScopeFilter(kb_names=(f"{kb}{value}",)))
        assert ids == [f"{kb}/{index}"]
        tagged = await registry.document_ids_for_scope(ScopeFilter(tags=(value,)))
        assert tagged == [f"{kb}/{index}"]
    assert await registry.lookup_document_ids_by_name_terms(["' OR 1=1 --"]) == []
    assert await registry.document_ids_for_scope(ScopeFilter(kb_names=("' OR '1'='1",))) == []
    assert await registry.count_documents(kb + hostile[0]) == 1


async def test_delete_documents_cascades(registry: PostgresDocumentRegistry) -> None:
    kb = _kb()
    await registry.register_documents(
        [
            _record(f"{kb}/a", "A", kb, collections=("c",), encoders=("e",)),
            _record(f"{kb}/b", "B", kb),
        ]
    )
    assert await registry.delete_documents([f"{kb}/a", f"{kb}/missing"]) == 1
    assert await registry.count_documents(kb) == 1
    assert await registry.collections_for_scope(ScopeFilter(kb_names=(kb,))) == []


async def test_migrations_idempotent_and_safe_when_concurrent(
    registry: PostgresDocumentRegistry, postgres_server: EmbeddedPostgres
) -> None:
    assert await registry.migrate() == []
    assert await registry.migrate() == []
    dsn = await _fresh_database(postgres_server)
    expected = [migration.name for migration in discover_migrations()]
    first = PostgresDocumentRegistry(dsn, migrate=False)
    second = PostgresDocumentRegistry(dsn, migrate=False)
    await first.open()
    await second.open()
    results = await asyncio.gather(first.migrate(), second.migrate())
    assert sorted(results, key=len) == [[], expected]
    async with await psycopg.AsyncConnection.connect(dsn) as connection:
        cursor = await connection.execute("SELECT name FROM schema_migrations ORDER BY version")
        assert [row[0] for row in await cursor.fetchall()] == expected
    await first.close()
    await second.close()


async def test_changed_migration_is_refused(
    postgres_server: EmbeddedPostgres, tmp_path: Path
) -> None:
    directory = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, directory)
    dsn = await _fresh_database(postgres_server)
    async with PostgresDocumentRegistry(dsn, migrations_dir=directory) as opened:
        assert await opened.migrate() == []
    first = sorted(directory.glob("*.sql"))[0]
    first.write_text(first.read_text() + "\n-- edited\n")
    with pytest.raises(BackendUnavailable, match="changed") as caught:
        async with PostgresDocumentRegistry(dsn, migrations_dir=directory):
            pass
    assert isinstance(caught.value.__cause__, RuntimeError)


async def test_unreachable_server_raises_backend_unavailable(tmp_path: Path) -> None:
    dsn = f"postgresql://postgres:@/nothing?host={tmp_path}"
    registry = PostgresDocumentRegistry(dsn, timeout_s=1.0)
    with pytest.raises(BackendUnavailable):
        await registry.open()
    assert (await registry.health())["ok"] is False


def test_embedded_postgres_is_reused(postgres_server: EmbeddedPostgres) -> None:
    again = EmbeddedPostgres(postgres_server.data_dir).start()
    assert again.started_here is False
    assert again.pid == postgres_server.pid
    assert again.dsn == postgres_server.dsn


async def test_registry_opens_after_a_failed_open(tmp_path: Path) -> None:
    # A psycopg pool opens once; a registry whose first open met a stopped server must
    # still open when the server is back (a service started during an outage recovers).
    postgres = EmbeddedPostgres(tmp_path / "pg").start()
    dsn = postgres.dsn
    postgres.stop()
    registry = PostgresDocumentRegistry(dsn, timeout_s=1.0)
    with pytest.raises(BackendUnavailable):
        await registry.open()
    EmbeddedPostgres(tmp_path / "pg").start()
    try:
        await registry.open()
        assert (await registry.health())["ok"] is True
    finally:
        await registry.close()
        EmbeddedPostgres(tmp_path / "pg").stop()
