"""``DocumentRegistry`` over PostgreSQL (psycopg 3 + an async connection pool).

Tables (``pipeline/stores/migrations/``): ``documents`` (one row per document, R-ING-6)
and ``document_collections (document_id, collection, encoder)``, the collections and
encoders each document was ingested into (R-RT-12 scope-aware routing, R-T2-10
back-fill). Every value is a query parameter; name look-ups escape LIKE wildcards.

Ingest order (resumable, R-ING-6): a document is registered last, after its chunks are
stored, with its ``content_hash``; :meth:`PostgresDocumentRegistry.lookup_documents`
then tells a re-run which documents are complete and unchanged (and in which kb and
collections they are).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from pipeline.errors import BackendUnavailable
from pipeline.schema import DocumentRecord, ScopeFilter
from pipeline.stores.migrate import MIGRATIONS_DIR, apply_migrations
from pipeline.stores.registry_rows import (
    checked_text,
    collection_pairs,
    document_row,
    escape_like,
    record_from_row,
    text_list,
)
from pipeline.stores.registry_sql import (
    INSERT_COLLECTION,
    LOOKUP,
    NAME_LOOKUP,
    SCOPE_COLLECTIONS,
    SCOPE_WHERE,
    UPSERT_DOCUMENT,
)

__all__ = ["PostgresDocumentRegistry", "escape_like"]


class PostgresDocumentRegistry:
    """The PostgreSQL ``documents`` registry behind the ``DocumentRegistry`` port.

    Args:
        dsn: libpq connection string or URI (the embedded server's, or any PostgreSQL).
        min_size / max_size: connection pool bounds.
        migrate: apply pending migrations on :meth:`open`.
        timeout_s: seconds to wait for a pooled connection (and for :meth:`open`).
        migrations_dir: where the ``NNN_name.sql`` files live (tests only).

    Use ``async with PostgresDocumentRegistry(dsn) as registry:`` or ``await open()`` /
    ``await close()``. Methods raise ``BackendUnavailable`` when the server does not
    answer and ``ValueError`` for invalid values (NUL characters, bad collection pairs).
    """

    def __init__(
        self,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        migrate: bool = True,
        timeout_s: float = 30.0,
        migrations_dir: Path = MIGRATIONS_DIR,
    ) -> None:
        self.dsn = dsn
        self.migrate_on_open = migrate
        self.timeout_s = timeout_s
        self.migrations_dir = migrations_dir
        self.min_size, self.max_size = min_size, max_size
        self._pool = self._new_pool()
        self._opened = False

    def _new_pool(self) -> AsyncConnectionPool:
        # A psycopg pool opens once: after a failed open (server down at start) the next
        # open() needs a fresh one, or the service could never recover.
        return AsyncConnectionPool(
            self.dsn,
            min_size=self.min_size,
            max_size=self.max_size,
            open=False,
            timeout=self.timeout_s,
            kwargs={"autocommit": True},
            name="document-registry",
        )

    async def open(self) -> None:
        """Open the pool (waiting for ``min_size`` connections) and apply migrations.

        Raises:
            BackendUnavailable: no connection within ``timeout_s``, or the migrations
                cannot be applied (a role without CREATE rights, an edited migration).
        """
        if self._opened:
            return
        try:
            await self._pool.open(wait=True, timeout=self.timeout_s)
        except BaseException as error:  # timed out or cancelled: no pool workers left
            await self._pool.close()
            self._pool = self._new_pool()
            if isinstance(error, PoolTimeout):
                raise BackendUnavailable(f"PostgreSQL registry unreachable: {error}") from error
            raise
        self._opened = True
        if self.migrate_on_open:
            try:
                await self.migrate()
            except (psycopg.Error, RuntimeError) as error:  # an answer, not a bare 500
                await self.close()
                raise BackendUnavailable(f"PostgreSQL registry migrations: {error}") from error
            except BaseException:
                await self.close()
                raise

    async def close(self) -> None:
        """Close the connection pool (no-op when not open); :meth:`open` may be called
        again."""
        if self._opened:
            await self._pool.close()
            self._pool = self._new_pool()  # open() may be called again
            self._opened = False

    async def __aenter__(self) -> PostgresDocumentRegistry:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if not self._opened:
            raise RuntimeError("PostgresDocumentRegistry is not open (await open() first)")
        try:
            async with self._pool.connection() as connection:
                yield connection
        except (PoolTimeout, psycopg.OperationalError) as error:
            raise BackendUnavailable(f"PostgreSQL registry: {error}") from error

    async def migrate(self) -> list[str]:
        """Apply pending migrations; return the names applied (``[]`` when up to date)."""
        async with self._connection() as connection:
            return await apply_migrations(connection, self.migrations_dir)

    async def health(self) -> dict[str, Any]:
        """``{"ok": bool, "latency_ms": float, "error": str | None}``; never raises."""
        started = time.perf_counter()
        try:
            async with self._connection() as connection:
                await connection.execute("SELECT 1")
        except Exception as error:
            return {
                "ok": False,
                "latency_ms": (time.perf_counter() - started) * 1000,
                "error": str(error),
            }
        return {"ok": True, "latency_ms": (time.perf_counter() - started) * 1000, "error": None}

    # -- writes ------------------------------------------------------------------------
    async def register_documents(self, records: Sequence[DocumentRecord]) -> int:
        """Insert or update ``records`` in one transaction (R-ING-6); idempotent.

        Fields are replaced by the new values, except: an empty ``content_hash`` keeps the
        stored one, ``metadata`` is merged (new keys win), and collection / encoder pairs
        are added to the stored ones (a union). A document id given twice: the last
        record's fields, the union of their pairs.

        Returns:
            Number of distinct documents in ``records``.

        Raises:
            ValueError: an empty document id, a NUL character, mismatched collections /
                encoders (see ``DocumentRecord``).
            BackendUnavailable: the server does not answer.
        """
        latest: dict[str, DocumentRecord] = {}
        pairs: dict[str, dict[tuple[str, str], None]] = {}
        for record in records:
            if not record.document_id:
                raise ValueError("document_id must not be empty")
            for what, value in (
                ("document_id", record.document_id),
                ("name", record.name),
                ("file_name", record.file_name),
                ("source_uri", record.source_uri),
                ("kb_name", record.kb_name),
                ("namespace", record.namespace),
                ("content_hash", record.content_hash),
                *(("tag", tag) for tag in record.tags),
            ):
                checked_text(value, what)
            latest[record.document_id] = record
            pairs.setdefault(record.document_id, {}).update(dict.fromkeys(collection_pairs(record)))
        if not latest:
            return 0
        document_rows = [document_row(record) for record in latest.values()]
        collection_rows = [
            (document_id, collection, encoder)
            for document_id, document_pairs in pairs.items()
            for collection, encoder in document_pairs
        ]
        async with (
            self._connection() as connection,
            connection.transaction(),
            connection.cursor() as cursor,
        ):
            await cursor.executemany(UPSERT_DOCUMENT, document_rows)
            if collection_rows:
                await cursor.executemany(INSERT_COLLECTION, collection_rows)
        return len(latest)

    async def delete_documents(self, document_ids: Sequence[str]) -> int:
        """Delete documents (and their collection pairs); return how many existed."""
        ids = text_list(document_ids, "document id")
        if not ids:
            return 0
        async with self._connection() as connection:
            cursor = await connection.execute(
                "DELETE FROM documents WHERE document_id = ANY(%s)", (ids,)
            )
            return cursor.rowcount

    # -- reads -------------------------------------------------------------------------
    async def lookup_document_ids_by_name_terms(
        self,
        terms: Sequence[str],
        kb_name: str | Sequence[str] | None = None,
        namespace: str | None = "biomed",
        limit: int | None = None,
    ) -> list[str]:
        """Documents whose name contains any of ``terms``, case-insensitively (R-SUP-2).

        ``name ILIKE '%term%' ESCAPE '\\'`` with ``\\``, ``%`` and ``_`` in the term
        escaped, so a term matches only literally. Blank terms are ignored.

        Args:
            terms: name fragments (drug names, R-SUP-1), in priority order.
            kb_name: one kb name or several; None or empty = any kb.
            namespace: the documents' namespace; None = any.
            limit: most ids returned; None = all.

        Returns:
            Document ids ordered by the first term that matches them, then by id
            (deterministic).

        Raises:
            ValueError: a NUL character in a value, ``limit`` < 1.
            BackendUnavailable: the server does not answer.
        """
        cleaned = [checked_text(term, "term").strip() for term in terms]
        patterns = [f"%{escape_like(term)}%" for term in dict.fromkeys(cleaned) if term]
        if not patterns:
            return []
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        kb_names = text_list([kb_name] if isinstance(kb_name, str) else kb_name, "kb name")
        parameters: dict[str, Any] = {
            "kb_names": kb_names,
            "namespace": None if namespace is None else checked_text(namespace, "namespace"),
            "limit": limit,
        }
        matches, ranks = [], []
        for position, pattern in enumerate(patterns):
            parameters[f"p{position}"] = pattern
            condition = sql.SQL(r"d.name ILIKE {} ESCAPE '\'").format(
                sql.Placeholder(f"p{position}")
            )
            matches.append(condition)
            ranks.append(sql.SQL("WHEN {} THEN {}").format(condition, sql.Literal(position)))
        query = sql.SQL(NAME_LOOKUP).format(
            matches=sql.SQL(" OR ").join(matches), ranks=sql.SQL(" ").join(ranks)
        )
        async with self._connection() as connection:
            cursor = await connection.execute(query, parameters)
            return [row[0] for row in await cursor.fetchall()]

    async def lookup_documents(self, document_ids: Sequence[str]) -> dict[str, DocumentRecord]:
        """Registry rows of ``document_ids`` (missing ids are absent from the result)."""
        ids = text_list(document_ids, "document id")
        if not ids:
            return {}
        async with self._connection() as connection:
            cursor = await connection.execute(LOOKUP, (ids,))
            rows = await cursor.fetchall()
        return {row[0]: record_from_row(row) for row in rows}

    @staticmethod
    def _scope_parameters(scope: ScopeFilter) -> dict[str, list[str] | None]:
        return {
            "ids": text_list(scope.document_ids, "document id"),
            "kb_names": text_list(scope.kb_names, "kb name"),
            "tags": text_list(scope.tags, "tag"),
        }

    async def collections_for_scope(self, scope: ScopeFilter) -> list[tuple[str, str]]:
        """Distinct ``(collection, encoder)`` pairs of the documents in ``scope``
        (R-RT-12), sorted. Scope parts are ANDed: kb name in ``kb_names``, id in
        ``document_ids``, any tag in ``tags``. An empty scope selects nothing (``[]``):
        the scope-aware union applies only to scoped requests."""
        if scope.is_empty:
            return []
        async with self._connection() as connection:
            cursor = await connection.execute(SCOPE_COLLECTIONS, self._scope_parameters(scope))
            return [(row[0], row[1]) for row in await cursor.fetchall()]

    async def document_ids_for_scope(self, scope: ScopeFilter) -> list[str]:
        """Ids of the documents in ``scope`` (as in :meth:`collections_for_scope`),
        sorted; ``[]`` for an empty scope."""
        if scope.is_empty:
            return []
        query = (
            "SELECT d.document_id FROM documents AS d WHERE"
            + SCOPE_WHERE
            + 'ORDER BY d.document_id COLLATE "C"'
        )
        async with self._connection() as connection:
            cursor = await connection.execute(query, self._scope_parameters(scope))
            return [row[0] for row in await cursor.fetchall()]

    async def content_hashes(self, document_ids: Sequence[str]) -> dict[str, str]:
        """``content_hash`` of each registered document among ``document_ids``."""
        ids = text_list(document_ids, "document id")
        if not ids:
            return {}
        async with self._connection() as connection:
            cursor = await connection.execute(
                "SELECT document_id, content_hash FROM documents WHERE document_id = ANY(%s)",
                (ids,),
            )
            return {row[0]: row[1] for row in await cursor.fetchall()}

    async def knowledge_bases_with_documents(self, kb_names: Sequence[str]) -> set[str]:
        """Which of ``kb_names`` have at least one registered document (one query, one
        ``documents.kb_name`` index probe per name).

        Raises:
            ValueError: a name that is not a string or holds a NUL character.
        """
        names = text_list(kb_names, "kb name")
        if not names:
            return set()
        query = ("SELECT wanted.kb FROM unnest(%s::text[]) AS wanted(kb) WHERE EXISTS "
                 "(SELECT 1 FROM documents AS d WHERE d.kb_name = wanted.kb)")  # a probe each
        async with self._connection() as connection:
            cursor = await connection.execute(query, (names,))
            return {row[0] for row in await cursor.fetchall()}

    async def count_documents(self, kb_name: str | None = None) -> int:
        """Number of registered documents, optionally of one kb."""
        async with self._connection() as connection:
            if kb_name is None:
                cursor = await connection.execute("SELECT count(*) FROM documents")
            else:
                cursor = await connection.execute(
                    "SELECT count(*) FROM documents WHERE kb_name = %s",
                    (checked_text(kb_name, "kb"),),
                )
            row = await cursor.fetchone()
        return int(row[0]) if row else 0
