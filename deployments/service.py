"""The search service behind the HTTP API: stores, model ports, the ``Retriever``, access
control and readiness. No Ray here: the Serve ingress builds it with handle-backed
ports, tests and the in-process baseline with local ones."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hmac
import logging
import time
from dataclasses import dataclass
from typing import Any

from deployments.config import AppConfig
from deployments.stores import (
    StoreEndpoints,
    collection_metrics,
    collection_weights,
    open_stores,
)
from pipeline.errors import BackendUnavailable, Forbidden, InvalidRequest, Unauthorized
from pipeline.ports import HealthCheck, ModelPorts, RetrieverPorts
from pipeline.request_checks import check_request
from pipeline.retriever import Retriever
from pipeline.schema import SearchRequest, SearchResponse

__all__ = ["Principal", "SearchService"]

logger = logging.getLogger(__name__)

#: Seconds ``/readyz`` waits for each check, and for the stores to open.
READINESS_CHECK_S = 10.0


def _retrieve_exception(task: asyncio.Task[None]) -> None:
    """Mark a failed opening's error as seen: when every waiter timed out before it
    failed, asyncio would log "Task exception was never retrieved"."""
    if not task.cancelled():
        task.exception()


@dataclass(frozen=True)
class Principal:
    """Who is calling: a key name, the knowledge bases it may read (None = all), and
    whether it may read the operational endpoints (stats, unscoped row counts;
    true for every caller of an open service)."""

    name: str
    kb_ids: frozenset[str] | None
    admin: bool = False


class SearchService:
    """Stores + models + ``Retriever``, opened once per ingress replica.

    Args:
        config: the application config.
        endpoints: where Milvus and PostgreSQL answer.
        models: the model ports.
    """

    def __init__(self, config: AppConfig, endpoints: StoreEndpoints, models: ModelPorts) -> None:
        self.config = config
        self.endpoints = endpoints
        self.models = models
        self.retriever: Retriever | None = None
        self._stores_cm: Any = None
        self._store: Any = None
        self._registry: Any = None
        self._opening: asyncio.Task[None] | None = None
        #: Collection -> a warning found when the stores opened (and again at each
        #: ``/readyz``), added to each response that searched the collection
        #: (``MilvusVectorStore.weights_mismatches``).
        self.vector_warnings: dict[str, str] = {}
        self._keys = [
            (key.name, key.secret(), key.kb_ids, key.admin) for key in config.auth.api_keys
        ]
        self.started_at = time.time()

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self, timeout_s: float | None = None) -> None:
        """Open the store clients and build the retriever (idempotent, concurrency-safe).

        One opening runs at a time, shared by every caller: its failure answers all who
        wait on it at once (each used to try again in turn, up to the pool's 30 s each),
        and the next call tries again. A caller that stops waiting (``timeout_s``, s; its
        own cancellation) leaves the opening running for the next.

        Raises:
            BackendUnavailable: a store does not answer, or the stores are not open
                within ``timeout_s``.
        """
        if self.retriever is not None:
            return
        if self._opening is None or self._opening.done():
            # its own context: not a child of the request that happened to start it
            self._opening = asyncio.create_task(self._open(), context=contextvars.Context())
            self._opening.add_done_callback(_retrieve_exception)
        opening = self._opening
        try:
            await asyncio.wait_for(asyncio.shield(opening), timeout_s)
        except TimeoutError as error:
            if opening.done():  # the opening itself timed out, not this caller's wait
                raise BackendUnavailable(f"the stores did not open: {error}") from error
            raise BackendUnavailable(
                f"the stores did not open within {timeout_s:.1f} s (PostgreSQL or Milvus "
                "does not answer; still trying)"
            ) from None

    async def _open(self) -> None:
        stores = open_stores(
            self.endpoints,
            self.config.stores,
            collection_metrics(self.config),
            collection_weights(self.config, "query"),
        )
        store, registry = await stores.__aenter__()
        try:
            self.vector_warnings = await store.weights_mismatches()
        except BaseException:
            await stores.__aexit__(None, None, None)
            raise
        for line in self.vector_warnings.values():
            logger.warning("%s", line)
        self._stores_cm, self._store, self._registry = stores, store, registry
        ports = RetrieverPorts(store=store, models=self.models, registry=registry)
        self.retriever = Retriever(self.config.pipeline, ports)

    async def close(self) -> None:
        """Close the store clients (an opening still under way is cancelled); a later
        :meth:`start` opens them again."""
        opening, self._opening = self._opening, None
        if opening is not None and not opening.done():
            opening.cancel()
            await asyncio.gather(opening, return_exceptions=True)
        if self._stores_cm is not None:
            await self._stores_cm.__aexit__(None, None, None)
            self._stores_cm = None
            self.retriever = None

    async def _retriever(self, deadline: float) -> Retriever:
        await self.start(timeout_s=max(deadline - time.monotonic(), 0.0))
        assert self.retriever is not None
        return self.retriever

    # -- access ---------------------------------------------------------------------------

    def authenticate(self, authorization: str | None) -> Principal:
        """Resolve the ``Authorization: Bearer <key>`` header. With no keys configured the
        service is open.

        Raises:
            Unauthorized: keys are configured and the header is missing or unknown.
        """
        if not self._keys:
            return Principal(name="anonymous", kb_ids=None, admin=True)
        if not authorization or not authorization.lower().startswith("bearer "):
            raise Unauthorized("missing bearer token (Authorization: Bearer <key>)")
        token = authorization[7:].strip()
        for name, secret, kb_ids, admin in self._keys:
            if secret and hmac.compare_digest(secret.encode(), token.encode()):
                scope = None if "*" in kb_ids else frozenset(kb_ids)
                return Principal(name=name, kb_ids=scope, admin=admin)
        raise Unauthorized("unknown API key")

    @staticmethod
    def require_admin(principal: Principal) -> None:
        """Operational endpoints (``/v1/stats``) are for admin keys only; with
        no keys configured every caller is admin (:meth:`authenticate`).

        Raises:
            Forbidden: ``principal`` is a key without ``admin: true``.
        """
        if not principal.admin:
            raise Forbidden(f"key {principal.name!r} is not an admin key (auth.api_keys[].admin)")

    @staticmethod
    def authorise(request: SearchRequest, principal: Principal) -> SearchRequest:
        """Restrict the request's scope to the knowledge bases the key may read: an
        unscoped request is scoped to them; asking for another one is forbidden.

        Raises:
            Forbidden: the request names a knowledge base the key may not read, or the
                key may read none (``kb_ids: []``).
        """
        if principal.kb_ids is None:
            return request
        if not principal.kb_ids:  # an empty scope is no access, not an unscoped search
            raise Forbidden(f"key {principal.name!r} may read no knowledge base "
                            "(its auth.api_keys[].kb_ids is empty)")
        if not request.kb_ids:
            return request.model_copy(update={"kb_ids": sorted(principal.kb_ids)})
        denied = sorted(set(request.kb_ids) - principal.kb_ids)
        if denied:
            raise Forbidden(f"kb_ids: this key may not read {', '.join(denied)}")
        return request

    # -- requests -------------------------------------------------------------------------

    async def search(
        self, request: SearchRequest, principal: Principal, image: bytes | None = None
    ) -> SearchResponse:
        """Run one search within the configured request timeout.

        Raises:
            InvalidRequest / Forbidden: bad or disallowed request.
            BackendUnavailable: stores or models down.
            DeadlineExceeded: the request timeout passed.
        """
        named_kbs = request.kb_ids
        # the request's time starts now, and a bad request is told so before any store
        # is opened (opening waits up to the pool timeout when PostgreSQL is down)
        deadline = time.monotonic() + self.config.serve.request_timeout_s
        request = check_request(
            self.config.pipeline, self.authorise(request, principal), image is not None
        )
        retriever = await self._retriever(deadline)
        response = await retriever.search(request, image=image, deadline=deadline)
        if self.vector_warnings:
            searched = {plan.collection for plan in response.route}
            response.warnings.extend(
                line for name, line in self.vector_warnings.items() if name in searched
            )
        # a named kb with no chunk on this page may have none at all ("demo", "nope"):
        # the registry is asked about those only
        unseen = [name for name in named_kbs if name not in {c.kb_id for c in response.chunks}]
        if unseen:
            response.warnings.extend(await self._empty_kb_warnings(unseen, deadline))
        if not response.total:
            response.warnings.extend(
                await self._missing_collection_warnings(request, response, deadline)
            )
        return response

    async def _missing_collection_warnings(
        self, request: SearchRequest, response: SearchResponse, deadline: float
    ) -> list[str]:
        """A warning naming the searched collections that do not exist in the store, asked
        only when nothing was found: a request for another ``namespace`` is routed to the
        general default collection (R-RT-1), which a drug-label service may never have
        created, and ``collections: ["general_text"]`` was on no route (nothing searched);
        both answered an empty page that said nothing. None when the store cannot say
        before the request's ``deadline`` (``time.monotonic()`` s): the search itself
        succeeded."""
        searched = list(dict.fromkeys(plan.collection for plan in response.route))
        if not searched and request.collections:
            names = ", ".join(repr(name) for name in request.collections)
            return [
                f"collections: none of {names} is on this question's route, so nothing was "
                "searched; leave collections out to search as routed"
            ]
        left_s = deadline - time.monotonic()
        if left_s <= 0:
            return []
        try:
            exists = await asyncio.wait_for(
                asyncio.gather(*(self._store.has_collection(name) for name in searched)), left_s
            )
        except (BackendUnavailable, TimeoutError, ValueError):
            return []
        missing = [name for name, there in zip(searched, exists, strict=True) if not there]
        if not missing:
            return []
        other = request.namespace != self.config.pipeline.namespace
        field = "namespace" if other and request.collections is None else "collections"
        why = (
            f" (namespace {request.namespace!r} is not this service's "
            f"{self.config.pipeline.namespace!r}: R-RT-1 routes it to the general default "
            "route)"
            if other
            else ""
        )
        return [
            f"{field}: searched {', '.join(repr(name) for name in missing)}, which this "
            f"service has not created{why}"
        ]

    async def _empty_kb_warnings(self, kb_names: list[str], deadline: float) -> list[str]:
        """A warning naming the ``kb_ids`` values with no registered document (a misspelt
        knowledge base, or one not ingested yet), asked only for the named kbs with no
        chunk on the page; none when the registry cannot say before the request's ``deadline``
        (``time.monotonic()`` s): the search itself succeeded."""
        left_s = deadline - time.monotonic()
        if left_s <= 0:
            return []
        try:
            known = await asyncio.wait_for(
                self._registry.knowledge_bases_with_documents(kb_names), left_s)
        except (BackendUnavailable, TimeoutError):
            return []
        empty = [name for name in dict.fromkeys(kb_names) if name not in known]
        if not empty:
            return []
        return [f"kb_ids: no documents in {', '.join(repr(name) for name in empty)} "
                "(a misspelt knowledge base, or one not ingested yet)"]

    @staticmethod
    def count_scope(principal: Principal) -> list[str] | None:
        """The knowledge bases whose rows ``principal`` may count, sorted; None: every
        row (an admin key, a ``*`` key, or an open service)."""
        if principal.admin or principal.kb_ids is None:
            return None
        return sorted(principal.kb_ids)

    async def collections(self, principal: Principal) -> list[dict[str, Any]]:
        """Enabled collections with encoders and row counts: every row for
        :meth:`count_scope` None, else only the rows of the caller's knowledge bases
        (Milvus ``count(*)`` filtered on ``kb_name``).

        Raises:
            BackendUnavailable: a store does not answer.
        """
        await self.start(timeout_s=self.config.serve.request_timeout_s)
        kb_names = self.count_scope(principal)
        rows = []
        for name, spec in self.config.pipeline.enabled_collections().items():
            exists = await self._store.has_collection(name)
            count = await self._store.count(name, kb_names=kb_names) if exists else 0
            rows.append(
                {
                    "name": name,
                    "rows": count,
                    "exists": exists,
                    "query_encoder": spec.query_encoder,
                    "document_encoder": spec.document_encoder,
                    "modality": spec.modality,
                    "hybrid": spec.hybrid,
                }
            )
        return rows

    async def readiness(self) -> dict[str, Any]:
        """Every store and model deployment, checked; ``ready`` only when all answer."""
        checks: dict[str, str] = {}

        async def run(name: str, check: HealthCheck) -> None:
            try:
                result = await asyncio.wait_for(check(), timeout=READINESS_CHECK_S)
            except Exception as error:  # readiness reports every failure, never raises
                checks[name] = f"{type(error).__name__}: {error}"[:300]
                return
            # store health calls answer {"ok": bool, "error": ...} instead of raising
            if isinstance(result, dict) and result.get("ok") is False:
                checks[name] = str(result.get("error") or "not ok")[:300]
            else:
                checks[name] = "ok"

        try:
            await self.start(timeout_s=READINESS_CHECK_S)
        except BackendUnavailable as error:
            return {"ready": False, "checks": {"stores": str(error)}}
        await asyncio.gather(
            run("milvus", self._store.health),
            run("postgres", self._registry.health),
            *(run(name, check) for name, check in self.models.health_checks.items()),
        )
        if checks.get("milvus") == "ok":  # again: collections made since the stores opened
            with contextlib.suppress(BackendUnavailable, TimeoutError):
                self.vector_warnings = await asyncio.wait_for(
                    self._store.weights_mismatches(), READINESS_CHECK_S)
        report: dict[str, Any] = {"ready": all(v == "ok" for v in checks.values()),
                                  "checks": checks}
        if self.vector_warnings:  # it answers, but worse than it should: say why
            report["warnings"] = list(self.vector_warnings.values())
        return report

    async def model_stats(self) -> dict[str, Any]:
        """Batch-size statistics of every model deployment."""
        results: dict[str, Any] = {}
        for name, check in self.models.stats_sources.items():
            try:
                results[name] = await asyncio.wait_for(check(), timeout=10.0)
            except Exception as error:  # a stats page reports failures, never raises
                results[name] = {"error": f"{type(error).__name__}: {error}"[:300]}
        return results

    def check_query_length(self, query: str) -> None:
        """Raises InvalidRequest when ``query`` exceeds the configured length."""
        limit = self.config.pipeline.request.max_query_chars
        if len(query) > limit:
            raise InvalidRequest("query", f"longer than {limit} characters ({len(query)})")
