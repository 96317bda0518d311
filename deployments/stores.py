"""Start (or point at) the stores a profile names, and open clients on them.

With no ``stores.milvus_uri`` / ``stores.postgres_dsn`` the embedded servers are started
under the data directory (Milvus Lite as a managed local server, embedded PostgreSQL) and
reused by every process that shares the data directory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Literal

import psutil

from deployments.config import AppConfig, StoreSettings
from deployments.runtime import EmbeddedPostgres, MilvusLiteServer
from pipeline.stores.milvus import DenseIndex, MilvusVectorStore
from pipeline.stores.registry import PostgresDocumentRegistry

__all__ = ["EmbeddedServers", "StoreEndpoints", "collection_metrics", "collection_weights",
           "open_stores", "stop_embedded_servers"]


@dataclass(frozen=True)
class StoreEndpoints:
    """Where the stores answer: a Milvus URI and a PostgreSQL DSN."""

    milvus_uri: str
    postgres_dsn: str
    milvus_token: str = ""


class EmbeddedServers:
    """The embedded servers a config needs (none when it names external ones).

    ``start()`` returns the endpoints; ``stop()`` stops only servers this object started.
    ``stop_at_exit=False`` keeps a Milvus Lite server this process starts running after it
    exits (``build_app`` runs in a short-lived Ray worker).
    """

    def __init__(self, config: AppConfig, stop_at_exit: bool = True) -> None:
        self.config = config
        self.stop_at_exit = stop_at_exit
        self.milvus: MilvusLiteServer | None = None
        self.postgres: EmbeddedPostgres | None = None

    def start(self) -> StoreEndpoints:
        """Start or reuse the embedded servers.

        Raises:
            pipeline.errors.BackendUnavailable: a server did not come up (the message
                holds its log tail).
        """
        stores = self.config.stores
        data_dir = self.config.data_dir
        uri = stores.milvus_uri
        dsn = stores.postgres_dsn.get_secret_value() if stores.postgres_dsn else None
        if uri is None:
            self.milvus = MilvusLiteServer(data_dir, stop_at_exit=self.stop_at_exit)
        if dsn is None:
            self.postgres = EmbeddedPostgres(data_dir)
        try:
            # each start stops what it brought up itself when it fails or is interrupted
            # half-way; one that returned is stopped here if the other fails
            if self.milvus is not None:
                self.milvus.start()
            if self.postgres is not None:
                self.postgres.start()
        except BaseException:
            with suppress(Exception):  # the start's own error is the one to see
                self.stop()
            raise
        if self.milvus is not None:
            uri = self.milvus.uri
        if self.postgres is not None:
            dsn = self.postgres.dsn
        token = stores.milvus_token.get_secret_value() if stores.milvus_token else ""
        return StoreEndpoints(milvus_uri=uri, postgres_dsn=dsn, milvus_token=token)

    def stop(self) -> None:
        """Stop the servers this object started (reused ones keep running); one that
        fails to stop, or a second Ctrl-C while it stops, does not keep the other running
        (the first error is raised after both)."""
        errors: list[BaseException] = []
        for server in (self.postgres, self.milvus):  # PostgreSQL stops in seconds
            if server is not None and server.started_here:
                try:
                    server.stop()
                except BaseException as error:
                    errors.append(error)
        if errors:
            raise errors[0]


def stop_embedded_servers(config: AppConfig) -> dict[str, str]:
    """Stop the embedded servers running over ``config.data_dir``, whoever started them:
    ``build_app`` (``serve run`` / ``serve deploy``) starts them detached, and they keep
    running for the next run to reuse. Stop the service and any ingest using them first:
    they are not restarted. The data stays.

    Store -> ``"stopped"``, ``"not running"``, ``"external"`` (the config names that
    store's server: nothing here to stop) or ``"failed: <reason>"`` (e.g. a process that
    survived SIGKILL); one store's failure does not keep the other running.
    """
    stores = config.stores
    servers = {
        "milvus": None if stores.milvus_uri else MilvusLiteServer(config.data_dir),
        "postgres": None if stores.postgres_dsn else EmbeddedPostgres(config.data_dir),
    }
    outcome: dict[str, str] = {}
    for name, server in servers.items():
        if server is None:
            outcome[name] = "external"
            continue
        if not config.data_dir.exists():  # a mistyped --data-dir: create nothing there
            outcome[name] = "not running"
            continue
        try:
            running = server.is_running()
            server.stop()  # also a recorded server that no longer answers
        except (RuntimeError, OSError, psutil.Error) as error:
            outcome[name] = f"failed: {error}"[:500]
            continue
        outcome[name] = "stopped" if running else "not running"
    return outcome


def collection_metrics(config: AppConfig) -> dict[str, str]:
    """Collection -> dense metric (``cosine`` / ``ip``) the profile configures
    (``pipeline.collections.<name>.metric``, from the encoders' model cards)."""
    return {name: spec.metric for name, spec in config.pipeline.collections.items()}


def collection_weights(config: AppConfig, side: Literal["document", "query"]) -> dict[str, str]:
    """Collection -> the encoder weights (``float`` / ``int8``,
    ``ModelProfile.vector_weights``) its ``side`` encoder runs with in this configuration:
    ``document`` for what ingest writes, ``query`` for what a search compares with.
    Collections whose encoder role is not in the model profile are left out."""
    weights = {}
    for name, spec in config.pipeline.enabled_collections().items():
        role = spec.document_encoder if side == "document" else spec.query_encoder
        encoder = config.models.roles.get(role)
        if encoder is not None:
            weights[name] = config.models.vector_weights(encoder)
    return weights


def _dense_index(settings: StoreSettings) -> DenseIndex:
    if settings.milvus_index == "hnsw":
        return DenseIndex.hnsw()
    return DenseIndex.flat()


@asynccontextmanager
async def open_stores(
    endpoints: StoreEndpoints,
    settings: StoreSettings,
    metrics: Mapping[str, str] | None = None,
    weights: Mapping[str, str] | None = None,
) -> AsyncIterator[tuple[MilvusVectorStore, PostgresDocumentRegistry]]:
    """Open the Milvus client and the registry pool (migrations applied); close both on
    exit. ``metrics`` (collection -> ``cosine`` / ``ip``, :func:`collection_metrics`) makes
    a dense search of a collection whose index has another metric a clear error;
    ``weights`` (:func:`collection_weights`) is recorded on new collections and checked
    against existing ones (``MilvusVectorStore``).

    Raises:
        pipeline.errors.BackendUnavailable: a store does not answer.
    """
    store = MilvusVectorStore(
        endpoints.milvus_uri,
        token=endpoints.milvus_token,
        index=_dense_index(settings),
        collection_prefix=settings.collection_prefix,
        metrics=metrics,
        weights=weights,
    )
    registry = PostgresDocumentRegistry(
        endpoints.postgres_dsn, min_size=settings.pool_min_size, max_size=settings.pool_max_size
    )
    await registry.open()
    try:
        yield store, registry
    finally:
        await registry.close()
        await store.close()
