"""Issue 18: with API keys configured, the operational endpoints follow them. ``GET
/v1/stats`` is for admin keys only (401 without a key, 403 with another one); ``GET
/v1/collections`` counts only the rows of the caller's knowledge bases, except for an
admin key or a ``*`` key, which see every row. Without keys the service stays open.

The FastAPI app in process with the real ``SearchService`` over real Milvus Lite and
PostgreSQL; the expected row counts come from the ingest reports of two knowledge bases.
"""

from __future__ import annotations

from collections import Counter

import pytest

from deployments.config import config_from_data, load_config_data
from deployments.inprocess import local_model_ports
from deployments.service import Principal, SearchService
from pipeline.errors import Forbidden
from tests.support.budgets import SLOW_MACHINE_BUDGETS
from tests.support.http import app_client
from tests.support.slices import ingest_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEYS = [
    {"name": "clinic-reader", "key": "key-clinic", "kb_ids": ["clinic"]},
    {"name": "all-reader", "key": "key-all", "kb_ids": ["*"]},
    # an admin key scoped to one kb for search still sees every row and the stats
    {"name": "ops", "key": "key-ops", "kb_ids": ["clinic"], "admin": True},
    # no knowledge base yet: no search may run (an empty scope once meant every kb)
    {"name": "pending", "key": "key-none", "kb_ids": []},
]


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def config_data(tmp_path_factory):
    return load_config_data(
        "default",
        data_dir=tmp_path_factory.mktemp("scoping"),
        overrides={
            "stores": {"collection_prefix": "scope_"},
            "auth": {"api_keys": KEYS},
            "pipeline": {"budgets": SLOW_MACHINE_BUDGETS},  # paths, not speed
        },
    )


@pytest.fixture(scope="module")
async def ingested(config_data, endpoints) -> dict[str, Counter[str]]:
    """kb ``clinic``: Tagrisso's leaflet; kb ``other``: Iressa's and Lynparza's leaflets
    and the aspirin compound. Rows written per collection, per kb."""
    config = config_from_data(config_data)
    written: dict[str, Counter[str]] = {}
    for kb, products, compounds in (
        ("clinic", ("tagrisso",), ()),
        ("other", ("iressa", "lynparza"), ("ASPIRIN",)),
    ):
        report = await ingest_slice(
            config, endpoints, kb, products, compounds=compounds, id_prefix=f"{kb}-"
        )
        assert report.documents_written == len(products) + len(compounds), report.as_dict()
        written[kb] = Counter(report.chunks_written)
    assert written["clinic"]["biomed_text"] > 0 and written["other"]["chemical"] > 0
    return written


@pytest.fixture(scope="module")
async def ports(config_data):
    ports, _models = local_model_ports(config_from_data(config_data))
    return ports


@pytest.fixture(scope="module")
async def client(config_data, endpoints, ingested, ports):
    service = SearchService(config_from_data(config_data), endpoints, ports)
    await service.start()
    async with app_client(service) as opened:
        yield opened
    await service.close()


@pytest.fixture(scope="module")
async def open_client(config_data, endpoints, ingested, ports):
    """The same stores with no API keys configured."""
    data = {**config_data, "auth": {"api_keys": []}}
    service = SearchService(config_from_data(data), endpoints, ports)
    await service.start()
    async with app_client(service) as opened:
        yield opened
    await service.close()


def rows_of(body: dict) -> dict[str, int]:
    return {row["name"]: row["rows"] for row in body["collections"]}


def expected_rows(ingested: dict[str, Counter[str]], kbs: list[str], names) -> dict[str, int]:
    return {name: sum(ingested[kb][name] for kb in kbs) for name in names}


async def test_stats_need_an_admin_key(client):
    missing = await client.get("/v1/stats")
    assert missing.status_code == 401, missing.text
    for key in ("key-clinic", "key-all"):
        response = await client.get("/v1/stats", headers=auth(key))
        assert response.status_code == 403, (key, response.text)
        assert response.json()["error"] == "Forbidden"
        assert "admin" in response.json()["message"]
    unknown = await client.get("/v1/stats", headers=auth("key-nope"))
    assert unknown.status_code == 401
    admin = await client.get("/v1/stats", headers=auth("key-ops"))
    assert admin.status_code == 200, admin.text
    assert "deployments" in admin.json()


async def test_collections_of_a_scoped_key_count_its_kbs_only(client, ingested):
    response = await client.get("/v1/collections", headers=auth("key-clinic"))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["kb_ids"] == ["clinic"]
    rows = rows_of(body)
    assert rows == expected_rows(ingested, ["clinic"], rows)
    assert rows["biomed_text"] == ingested["clinic"]["biomed_text"] > 0
    assert rows["chemical"] == 0  # the only compound is kb "other"'s


@pytest.mark.parametrize("key", ["key-ops", "key-all"])
async def test_admin_and_star_keys_see_totals(client, ingested, key):
    response = await client.get("/v1/collections", headers=auth(key))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["kb_ids"] is None
    rows = rows_of(body)
    assert rows == expected_rows(ingested, ["clinic", "other"], rows)
    assert rows["biomed_text"] > ingested["clinic"]["biomed_text"]


async def test_collections_need_a_key(client):
    assert (await client.get("/v1/collections")).status_code == 401


async def test_without_keys_the_service_stays_open(open_client, ingested):
    stats = await open_client.get("/v1/stats")
    assert stats.status_code == 200, stats.text
    response = await open_client.get("/v1/collections")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["kb_ids"] is None
    rows = rows_of(body)
    assert rows == expected_rows(ingested, ["clinic", "other"], rows)


async def test_require_admin_helper():
    """The check a metrics route uses: a non-admin principal is refused."""
    SearchService.require_admin(Principal(name="ops", kb_ids=frozenset({"clinic"}), admin=True))
    with pytest.raises(Forbidden, match="admin"):
        SearchService.require_admin(Principal(name="reader", kb_ids=None))


async def test_store_count_filters_by_kb(config_data, endpoints, ingested):
    """The store call behind the scoped counts: per kb, several kbs, none, unknown."""
    from deployments.stores import open_stores

    config = config_from_data(config_data)
    async with open_stores(endpoints, config.stores) as (store, _registry):
        assert (
            await store.count("biomed_text", kb_names=["clinic"])
            == (ingested["clinic"]["biomed_text"])
        )
        assert await store.count("biomed_text", kb_names=["clinic", "other"]) == (
            await store.count("biomed_text")
        )
        assert await store.count("biomed_text", kb_names=[]) == 0
        assert await store.count("biomed_text", kb_names=['nope" or kb_name != "']) == 0


@pytest.mark.parametrize("kb_ids", [[], ["clinic"]])
async def test_a_key_with_no_kbs_may_search_none(client, kb_ids):
    response = await client.post("/v1/search", headers=auth("key-none"),
                                 json={"query": "osimertinib side effects", "kb_ids": kb_ids})
    assert response.status_code == 403, response.text
    assert "may read no knowledge base" in response.json()["message"]
