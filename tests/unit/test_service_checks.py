"""``SearchService.search`` answers a request that breaks a configured bound before it
opens any store: a 422 at once, not a 503 after the pool timeout with PostgreSQL down."""

import asyncio
import time

import pytest

from deployments.config import load_config
from deployments.service import Principal, SearchService
from deployments.stores import StoreEndpoints
from pipeline.errors import InvalidRequest
from pipeline.ports import ModelPorts
from pipeline.schema import SearchRequest

pytestmark = pytest.mark.unit


async def test_a_bad_request_is_refused_before_the_stores_are_opened(tmp_path):
    unreachable = StoreEndpoints(
        milvus_uri="http://127.0.0.1:9", postgres_dsn=f"postgresql://x@/none?host={tmp_path}"
    )
    service = SearchService(
        load_config("default", data_dir=tmp_path), unreachable,
        ModelPorts(encoders={}, cross_encoder=None),
    )
    admin = Principal(name="local", kb_ids=None, admin=True)
    with pytest.raises(InvalidRequest) as caught:
        await service.search(SearchRequest(query="osimertinib", page_size=500), admin)
    assert caught.value.field == "page_size"
    assert service.retriever is None  # nothing was opened


async def test_a_store_that_does_not_answer_fails_each_request_within_its_timeout(tmp_path):
    """PostgreSQL down: the registry pool waits 30 s to connect. Requests that arrive
    meanwhile share that one opening and each fails at its own request timeout (they
    used to queue on a lock and retry in turn, 30 s each)."""
    from deployments.config import config_from_data, load_config_data
    from pipeline.errors import BackendUnavailable

    unreachable = StoreEndpoints(
        milvus_uri="http://127.0.0.1:9", postgres_dsn=f"postgresql://x@/none?host={tmp_path}"
    )
    data = load_config_data("default", data_dir=tmp_path,
                            overrides={"serve": {"request_timeout_s": 1.0}})
    service = SearchService(config_from_data(data), unreachable,
                            ModelPorts(encoders={}, cross_encoder=None))
    admin = Principal(name="local", kb_ids=None, admin=True)
    started = time.monotonic()
    outcomes = await asyncio.gather(
        *(service.search(SearchRequest(query=f"osimertinib {i}"), admin) for i in range(4)),
        return_exceptions=True,
    )
    elapsed = time.monotonic() - started
    assert all(isinstance(o, BackendUnavailable) for o in outcomes), outcomes
    assert "did not open within" in str(outcomes[0])
    assert elapsed < 25.0, elapsed  # before the pool gives up (30 s); 4 x 30 s before
    assert service.retriever is None
    await service.close()  # cancels the opening still waiting for PostgreSQL
    assert service._opening is None


async def test_a_registry_open_cancelled_while_connecting_leaves_no_pool_running(tmp_path):
    """``SearchService.close`` cancels an opening stuck on PostgreSQL; the pool's
    scheduler and workers must go with it (they kept retrying the connection)."""
    from pipeline.stores.registry import PostgresDocumentRegistry

    def pool_tasks() -> list[asyncio.Task]:
        return [task for task in asyncio.all_tasks() if not task.done()
                and "psycopg_pool" in getattr(task.get_coro(), "cr_code",
                                              type("c", (), {"co_filename": ""})).co_filename]

    before = len(pool_tasks())
    registry = PostgresDocumentRegistry(f"postgresql://x@/none?host={tmp_path}")
    opening = asyncio.create_task(registry.open())
    await asyncio.sleep(0.5)
    assert len(pool_tasks()) > before  # it is trying
    opening.cancel()
    await asyncio.gather(opening, return_exceptions=True)
    await asyncio.sleep(0.1)
    assert len(pool_tasks()) == before
