"""Versioned, idempotent SQL migrations for the PostgreSQL registry (R-ING-6).

Migrations are the files ``pipeline/stores/migrations/NNN_name.sql`` (NNN = version,
applied in ascending order). ``apply_migrations`` records each applied file in
``schema_migrations (version, name, checksum, applied_at)`` and applies every missing one
in its own transaction, so a failing migration leaves nothing half-done. A session-level
advisory lock makes concurrent starts (several ingress replicas, a CLI) safe: the second
waits, then finds everything applied. Editing an applied file is refused (checksum).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import psycopg

__all__ = ["MIGRATIONS_DIR", "Migration", "apply_migrations", "discover_migrations"]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
#: Advisory lock key of the migration runner (any constant bigint, unique to this app).
MIGRATION_LOCK_KEY = 0x62696F6D6564  # "biomed"
_FILE_NAME = re.compile(r"^(\d{3,})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    """One migration file: version, name, SQL text and its sha256 checksum."""

    version: int
    name: str
    sql: str
    checksum: str


def discover_migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """The migrations in ``directory``, by ascending version.

    Raises:
        ValueError: a ``.sql`` file whose name is not ``NNN_name.sql``, or two files with
            the same version.
    """
    migrations: dict[int, Migration] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if not match:
            raise ValueError(f"migration file name must be NNN_name.sql: {path.name}")
        version = int(match.group(1))
        if version in migrations:
            raise ValueError(f"two migrations with version {version}: {path.name}")
        text = path.read_text(encoding="utf-8")
        migrations[version] = Migration(
            version=version,
            name=path.stem,
            sql=text,
            checksum=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        )
    return [migrations[version] for version in sorted(migrations)]


async def apply_migrations(
    connection: psycopg.AsyncConnection, directory: Path = MIGRATIONS_DIR
) -> list[str]:
    """Apply the migrations of ``directory`` not yet recorded; return their names.

    ``connection`` must be in autocommit mode (each migration opens its own transaction).
    Running it again applies nothing and returns ``[]``.

    Raises:
        RuntimeError: an applied migration's file changed since (checksum mismatch), or
            the connection is not in autocommit mode.
        psycopg.Error: a migration failed (its transaction is rolled back).
    """
    if not connection.autocommit:
        raise RuntimeError("apply_migrations needs an autocommit connection")
    migrations = discover_migrations(directory)
    await connection.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
    try:
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cursor = await connection.execute("SELECT version, checksum FROM schema_migrations")
        applied = {int(version): str(checksum) for version, checksum in await cursor.fetchall()}
        newly_applied: list[str] = []
        for migration in migrations:
            recorded = applied.get(migration.version)
            if recorded is not None:
                if recorded != migration.checksum:
                    raise RuntimeError(
                        f"migration {migration.name} was changed after it was applied "
                        "(add a new migration instead)"
                    )
                continue
            async with connection.transaction():
                await connection.execute(migration.sql.encode("utf-8"))
                await connection.execute(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                    (migration.version, migration.name, migration.checksum),
                )
            newly_applied.append(migration.name)
        return newly_applied
    finally:
        await connection.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
