"""``SearchService.search`` answers a request that breaks a configured bound before it
opens any store: a 422 at once, not a 503 after the pool timeout with PostgreSQL down."""

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
