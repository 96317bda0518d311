"""Issue 8 on the HTTP API, in process (same FastAPI app and SearchService as the Serve
ingress; real Milvus Lite, real PostgreSQL, the offline MiniLM / rxnfp models): bad input
gets a 4xx naming the field, hostile values neither break nor widen a search, and a key
never sees another knowledge base's chunks."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deployments.api import create_app
from deployments.config import config_from_data, load_config_data
from deployments.inprocess import local_model_ports
from deployments.service import SearchService
from tests.support.http import app_client
from tests.support.slices import ingest_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEYS = [
    {"name": "alpha-reader", "key": "key-alpha", "kb_ids": ["alpha"]},
    {"name": "beta-reader", "key": "key-beta", "kb_ids": ["beta"]},
    {"name": "both-reader", "key": "key-both", "kb_ids": ["alpha", "beta"]},
    {"name": "admin", "key": "key-admin", "kb_ids": ["*"]},
]
#: Knowledge bases each key may read; None: all of them.
ALLOWED: dict[str, set[str] | None] = {
    "key-alpha": {"alpha"},
    "key-beta": {"beta"},
    "key-both": {"alpha", "beta"},
    "key-admin": None,
}
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
    b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x04\x00\x09\xfb\x03\xfd\xe3U"
    b"\xf2\x9c\x00\x00\x00\x00IEND\xaeB`\x82"
)


@pytest.fixture(scope="module")
def config_data(tmp_path_factory):
    return load_config_data(
        "default",
        data_dir=tmp_path_factory.mktemp("api"),
        overrides={
            "stores": {"collection_prefix": "api_"},
            "serve": {"max_image_bytes": 4096},
            "auth": {"api_keys": KEYS},
        },
    )


@pytest.fixture(scope="module")
async def service(config_data, endpoints):
    """Two knowledge bases (alpha: Tagrisso, Iressa; beta: Lynparza, Xarelto) and the
    service over them."""
    config = config_from_data(config_data)
    for kb, products in (("alpha", ("tagrisso", "iressa")), ("beta", ("lynparza", "xarelto"))):
        report = await ingest_slice(
            config, endpoints, kb, products, compounds=(), id_prefix=f"{kb}-"
        )
        assert report.documents_written == len(products), report.as_dict()
    ports, _models = local_model_ports(config)
    opened = SearchService(config, endpoints, ports)
    await opened.start()
    yield opened
    await opened.close()


@pytest.fixture(scope="module")
async def client(service):
    async with app_client(service) as opened:
        yield opened


def auth(key: str = "key-admin") -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def post(client, body: Any, key: str = "key-admin", raw: bool = False) -> httpx.Response:
    if raw:
        return await client.post(
            "/v1/search", content=body, headers={**auth(key), "Content-Type": "application/json"}
        )
    return await client.post("/v1/search", json=body, headers=auth(key))


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   \t\n "}, "query"),
        ({"query": "x" * 2001}, "query"),
        ({}, "query"),
        ({"query": "ok", "page": 0}, "page"),
        ({"query": "ok", "page_size": 0}, "page_size"),
        ({"query": "ok", "page_size": 5000}, "page_size"),
        ({"query": "ok", "top_k": 0}, "top_k"),
        ({"query": "ok", "top_k": 5000}, "top_k"),
        ({"query": "ok", "similarity_threshold": -0.1}, "similarity_threshold"),
        ({"query": "ok", "similarity_threshold": 1.5}, "similarity_threshold"),
        ({"query": "ok", "vector_similarity_weight": 2}, "vector_similarity_weight"),
        ({"query": "ok", "route_mode": "telepathy"}, "route_mode"),
        ({"query": "ok", "collections": ["nope"]}, "collections"),
        ({"query": "ok", "collections": []}, "collections"),  # searched nothing, said nothing
        ({"query": "ok", "surprise": 1}, "surprise"),
        ({"query": "ok", "kb_ids": ["alpha\x00"]}, "kb_ids"),
        ({"query": "ok", "namespace": "a\nb"}, "namespace"),
        ({"query": "ok", "document_ids": ["d" * 300]}, "document_ids"),
        ({"query": "ok", "tags": "not-a-list"}, "tags"),
        ({"query": 12}, "query"),
        # JSON of another type is refused, not converted (true became page_size 1)
        ({"query": "ok", "page_size": True}, "page_size"),
        ({"query": "ok", "page_size": "5"}, "page_size"),
        ({"query": "ok", "page": 2.0}, "page"),
        ({"query": "ok", "top_k": "100"}, "top_k"),
        ({"query": "ok", "rerank": "yes"}, "rerank"),
        ({"query": "ok", "highlight": 1}, "highlight"),
        ({"query": "ok", "similarity_threshold": "0.5"}, "similarity_threshold"),
        ({"query": "ok", "vector_similarity_weight": True}, "vector_similarity_weight"),
    ],
)
async def test_bad_input_is_422_naming_the_field(client, body, field):
    response = await post(client, body)
    assert response.status_code == 422, response.text
    fields = [item["field"] for item in response.json()["fields"]]
    assert field in fields, fields


async def test_a_blank_query_gets_one_message_whatever_the_blanks(client):
    messages = set()
    for query in ("", "   ", "\u200b\u200b", "\x00\t"):
        response = await post(client, {"query": query})
        assert response.status_code == 422, response.text
        messages.add(response.json()["fields"][0]["message"])
    assert len(messages) == 1 and "visible characters" in messages.pop()


async def test_a_body_sent_as_another_media_type_is_415_naming_the_content_type(client):
    response = await client.post(
        "/v1/search", content=b'{"query": "osimertinib"}',
        headers={**auth(), "Content-Type": "text/plain"},
    )
    assert response.status_code == 415, response.text
    answer = response.json()
    assert answer["fields"][0]["field"] == "content-type"
    assert "application/json" in answer["message"] and "text/plain" in answer["message"]
    unsaid = await client.post("/v1/search", content=b'{"query": "osimertinib"}',
                               headers={**auth(), "Content-Type": ""})
    assert unsaid.status_code == 415 and "missing" in unsaid.json()["message"], unsaid.text
    no_body = await client.post("/v1/search", headers=auth())
    assert no_body.status_code == 422  # nothing sent: the body itself is what is missing


async def test_malformed_json_is_422_naming_the_body(client):
    response = await post(client, b'{"query": "osim', raw=True)
    assert response.status_code == 422
    answer = response.json()
    assert answer["error"] == "invalid_request"
    assert answer["fields"][0]["field"] == "body"  # not the character offset
    assert "not valid JSON at character" in answer["fields"][0]["message"]


@pytest.mark.parametrize("body", [
    b'{"query": "\xfc\xfd"}',  # not UTF-8
    b"[" * 5000 + b"]" * 5000,  # nested past the JSON parser's depth
])
async def test_a_body_that_cannot_be_read_is_422_naming_the_body(client, body):
    response = await post(client, body, raw=True)
    assert response.status_code == 422, response.text
    answer = response.json()
    assert answer["error"] == "invalid_request" and answer["fields"][0]["field"] == "body"


@pytest.mark.parametrize("field", ["similarity_threshold", "vector_similarity_weight"])
async def test_nan_is_422_saying_a_finite_number_is_needed(client, field):
    response = await post(client, b'{"query": "ok", "%s": NaN}' % field.encode(), raw=True)
    assert response.status_code == 422, response.text
    assert response.json()["fields"] == [{"field": field,
                                          "message": "Input should be a finite number"}]


async def test_healthz_answers_head_as_load_balancers_ask(client):
    assert (await client.head("/healthz")).status_code == 200
    spec = (await client.get("/openapi.json")).json()
    assert list(spec["paths"]["/healthz"]) == ["get"]  # operation ids stay unique


async def test_unknown_paths_and_methods_answer_in_the_error_shape(client):
    missing = await client.get("/v1/nope")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    wrong = await client.get("/v1/search")
    assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"
    assert wrong.headers["allow"] == "POST"


@pytest.mark.parametrize(
    "query",
    [
        "ósimertinib — 副作用 😀",
        "osimertinib\x00\x07 side\u200b effects",
        "x" * 1999,
        "a" * 300 + " " + "b" * 300,
        "C1CC(((((((((((((CC1",
        "[[[[]]]]((()))==##@@",
        "'; DROP TABLE documents; --",
        '" or 1==1 or "',
    ],
)
async def test_odd_queries_never_500(client, query):
    response = await post(client, {"query": query, "similarity_threshold": 0})
    assert response.status_code in (200, 422), response.text


@pytest.mark.parametrize(
    "field",
    ["kb_ids", "document_ids", "tags"],
)
@pytest.mark.parametrize(
    "value",
    ['alpha" or kb_name != "', "x') OR 1=1 --", "]) or true or ([", "%", "_", "\\"],
)
async def test_hostile_scope_values_neither_break_nor_widen(client, field, value):
    response = await post(
        client, {"query": "side effects", field: [value], "similarity_threshold": 0}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    if field == "kb_ids":
        assert body["chunks"] == [] and body["total"] == 0


async def test_missing_and_unknown_keys_are_401(client):
    assert (await client.post("/v1/search", json={"query": "x"})).status_code == 401
    response = await post(client, {"query": "x"}, key="wrong")
    assert response.status_code == 401 and response.json()["error"] == "Unauthorized"


async def test_asking_for_another_kb_is_403(client):
    response = await post(client, {"query": "side effects", "kb_ids": ["beta"]}, key="key-alpha")
    assert response.status_code == 403
    assert "beta" in response.json()["message"]


async def test_a_search_of_a_collection_never_created_says_so(client):
    """Another namespace is routed to the general default collection (R-RT-1), which this
    service never created: an empty page that said nothing in a break-it trial."""
    other = await post(client, {"query": "Tagrisso side effects", "namespace": "Biomed"})
    assert other.status_code == 200 and other.json()["total"] == 0
    assert [w for w in other.json()["warnings"] if w.startswith("namespace:")] == [
        "namespace: searched 'general_text', which this service has not created (namespace "
        "'Biomed' is not this service's 'biomed': R-RT-1 routes it to the general default "
        "route)"
    ]
    named = await post(client, {"query": "Tagrisso side effects", "collections": ["general_text"]})
    assert named.status_code == 200 and named.json()["total"] == 0
    assert named.json()["warnings"] == [
        "collections: none of 'general_text' is on this question's route, so nothing was "
        "searched; leave collections out to search as routed"
    ]
    found = await post(client, {"query": "Tagrisso side effects"})
    assert found.json()["total"] > 0 and found.json()["warnings"] == []


async def test_a_kb_with_no_documents_is_named_in_the_warnings(client):
    """An unknown (or not yet ingested) kb answers 200 with nothing, and says which; so
    it does beside one that answers."""
    body = {"query": "side effects", "kb_ids": ["gamma", "alpha", "gamma"]}
    found = (await post(client, body)).json()
    assert found["total"] > 0
    assert found["warnings"] == [
        "kb_ids: no documents in 'gamma' (a misspelt knowledge base, or one not ingested yet)"]
    alone = (await post(client, {**body, "kb_ids": ["alpha"]})).json()
    assert alone["total"] > 0 and alone["warnings"] == []
    response = await post(client, {**body, "kb_ids": ["gamma", "alph", "gamma"]})
    assert response.status_code == 200
    data = response.json()
    assert data["total"] == 0 and data["chunks"] == []
    assert data["warnings"] == [
        "kb_ids: no documents in 'gamma', 'alph' (a misspelt knowledge base, or one not "
        "ingested yet)"]
    other_filter = (await post(client, {**body, "kb_ids": ["alpha"],
                                        "document_ids": ["no-such-document"]})).json()
    assert other_filter["total"] == 0 and other_filter["warnings"] == []  # alpha has some


async def test_unscoped_request_is_scoped_to_the_keys_kbs(client):
    response = await post(
        client,
        {"query": "side effects nausea rash", "page_size": 20, "similarity_threshold": 0},
        key="key-alpha",
    )
    assert response.status_code == 200
    kbs = {chunk["kb_id"] for chunk in response.json()["chunks"]}
    assert kbs == {"alpha"}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    key=st.sampled_from(sorted(ALLOWED)),
    kb_ids=st.lists(st.sampled_from(["alpha", "beta", "gamma"]), max_size=3, unique=True),
    documents=st.lists(
        st.sampled_from(["alpha-ema-tagrisso", "beta-ema-lynparza", "beta-ema-xarelto", "nope"]),
        max_size=3,
        unique=True,
    ),
    query=st.sampled_from(
        ["side effects", "Tagrisso dosage", "Lynparza nausea", "rivaroxaban bleeding", "storage"]
    ),
)
async def test_property_a_key_never_sees_another_kbs_chunks(client, key, kb_ids, documents, query):
    body = {
        "query": query,
        "kb_ids": kb_ids,
        "document_ids": documents,
        "page_size": 20,
        "similarity_threshold": 0,
    }
    response = await post(client, body, key=key)
    allowed = ALLOWED[key]
    if allowed is not None and set(kb_ids) - allowed:
        assert response.status_code == 403, (key, kb_ids, documents, response.text[:300])
        return
    assert response.status_code == 200, response.text
    seen = {chunk["kb_id"] for chunk in response.json()["chunks"]}
    if kb_ids:
        assert seen <= set(kb_ids)
    elif allowed is not None:
        assert seen <= allowed


async def test_image_upload_checks(client):
    url = "/v1/search/image"
    not_image = await client.post(
        url, headers=auth(), files={"image": ("x.png", b"hello, world", "image/png")}
    )
    assert not_image.status_code == 422 and not_image.json()["fields"][0]["field"] == "image"
    too_big = await client.post(
        url, headers=auth(), files={"image": ("x.png", PNG + b"\0" * 5000, "image/png")}
    )
    assert too_big.status_code == 422 and "larger" in too_big.json()["message"]
    gif = await client.post(url, headers=auth(), files={"image": ("x.gif", b"GIF89a", "image/gif")})
    assert gif.status_code == 422 and "unsupported" in gif.json()["message"]
    empty = await client.post(url, headers=auth(), files={"image": ("x.png", b"", "image/png")})
    assert empty.status_code == 422
    missing = await client.post(url, headers=auth(), data={"query": "x"})
    assert missing.status_code == 422 and missing.json()["fields"][0]["field"] == "image"
    # a valid image, but this profile enables no image collection: refused, not ignored
    good = await client.post(
        url,
        headers=auth(),
        data={"query": "Tagrisso"},
        files={"image": ("x.png", PNG, "image/png")},
    )
    assert good.status_code == 422, good.text
    assert good.json()["fields"][0]["field"] == "image"
    assert "no image collection" in good.json()["message"]
    visual = await post(client, {"query": "Tagrisso", "route_mode": "visual"})
    assert visual.status_code == 422 and visual.json()["fields"][0]["field"] == "route_mode"


async def test_bodies_past_the_cap_are_413_before_they_are_parsed(client):
    limit = 1024 * 1024  # serve.max_request_bytes' default
    padded = {"query": "Tagrisso", "tags": ["x" * 1000] * (limit // 1000)}
    declared = await client.post("/v1/search", headers=auth(), json=padded)
    assert declared.status_code == 413
    assert declared.json()["fields"][0]["field"] == "body"

    class Chunked:  # no Content-Length: the cap holds while the body streams in
        def __init__(self) -> None:
            parts = [b'{"query": "Tagrisso", "tags": ["', *[b"x" * 65536] * (limit // 65536 + 1)]
            self.parts = iter([*parts, b'"]}'])

        def __aiter__(self) -> Chunked:
            return self

        async def __anext__(self) -> bytes:
            try:
                return next(self.parts)
            except StopIteration:
                raise StopAsyncIteration from None

    streamed = await client.post(
        "/v1/search", headers={**auth(), "content-type": "application/json"}, content=Chunked()
    )
    assert streamed.status_code == 413 and streamed.json()["error"] == "payload_too_large"
    image = await client.post(  # the image route's cap: max_image_bytes (4096) + 64 KiB
        "/v1/search/image",
        headers=auth(),
        files={"image": ("x.png", PNG + b"\0" * (70 * 1024), "image/png")},
    )
    assert image.status_code == 413
    fine = await client.post("/v1/search", headers=auth(), json={"query": "Tagrisso"})
    assert fine.status_code == 200  # the service answers on after refusing


async def test_a_stalled_json_body_is_408_within_body_timeout_s(service, monkeypatch):
    """A client that sends headers and part of a JSON body holds an ingress slot until
    ``serve.body_timeout_s`` (10 s by default), not ``request_timeout_s`` (30 s): 200
    such sockets made every other search a 503 for 30 s in a break-it trial."""
    serve = service.config.serve.model_copy(update={"body_timeout_s": 0.3})
    monkeypatch.setattr(service, "config", service.config.model_copy(update={"serve": serve}))

    async def stalled() -> AsyncIterator[bytes]:
        yield b'{"query": "Tag'
        await asyncio.sleep(60)
        yield b'risso"}'

    async with app_client(service) as fresh:
        started = time.monotonic()
        answer = await fresh.post(
            "/v1/search", headers={**auth(), "content-type": "application/json"}, content=stalled()
        )
    assert answer.status_code == 408
    assert answer.json()["fields"] == [{"field": "body", "message": "not received within 0.3 s"}]
    assert time.monotonic() - started < 10  # not the 30 s request deadline


async def test_openapi_and_probes(client):
    schema = (await client.get("/openapi.json")).json()
    assert "/v1/search" in schema["paths"]
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200, ready.text


def test_fuzz_openapi_schema_no_5xx(config_data, endpoints):
    """schemathesis over the OpenAPI schema (bounded): no response is a 5xx."""
    import schemathesis
    from hypothesis import settings as hypothesis_settings
    from starlette.testclient import TestClient

    config = config_from_data(config_data)
    ports, _ = local_model_ports(config)
    app = create_app()
    app.state.service = SearchService(config, endpoints, ports)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    seen: list[int] = []
    with TestClient(app):
        for operation in schema.get_all_operations():
            operation = operation.ok()
            strategy = operation.as_strategy()

            @hypothesis_settings(
                max_examples=15,
                deadline=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
            @given(case=strategy)
            def check(case) -> None:
                response = case.call(headers=auth(), timeout=120)
                seen.append(response.status_code)
                assert response.status_code < 500, (case.path, case.body, response.text)

            check()
    assert len(seen) >= 40
    print(json.dumps({"fuzz_inputs": len(seen), "5xx": sum(s >= 500 for s in seen)}))


#: Any JSON value: what a client may put in any field of the request model.
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
#: Values near each field's limits, and of the wrong type, per SearchRequest field.
FIELD_VALUES = {
    "query": st.text(max_size=60) | st.text(min_size=1990, max_size=2010) | JSON_VALUES,
    "kb_ids": st.lists(st.text(max_size=12), max_size=3) | JSON_VALUES,
    "document_ids": st.lists(st.text(max_size=12), max_size=3) | JSON_VALUES,
    "tags": st.lists(st.text(max_size=12), max_size=3) | JSON_VALUES,
    "page": st.integers(-2, 1002) | JSON_VALUES,
    "page_size": st.integers(-2, 1002) | JSON_VALUES,
    "top_k": st.integers(-2, 1030) | JSON_VALUES,
    "similarity_threshold": st.floats(-0.5, 1.5) | JSON_VALUES,
    "vector_similarity_weight": st.floats(-0.5, 1.5) | JSON_VALUES,
    "rerank": JSON_VALUES,
    "route_mode": st.sampled_from(["hybrid", "text", "visual", "image"]) | JSON_VALUES,
    "collections": st.lists(st.sampled_from(["biomed_text", "chemical", "nope"]), max_size=3)
    | JSON_VALUES,
}


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=st.fixed_dictionaries(
        {
            "query": st.sampled_from(["Tagrisso dosage", "rivaroxaban bleeding"])
            | FIELD_VALUES["query"]
        },
        optional={name: values for name, values in FIELD_VALUES.items() if name != "query"},
    )
    | JSON_VALUES
)
async def test_hypothesis_request_model_bodies_never_5xx(client, body):
    """hypothesis over the request model: any JSON body, any value in any field, gets a
    200 or a 4xx that names a field; never a 5xx."""
    response = await post(client, body)
    assert response.status_code < 500, (body, response.text[:300])
    if response.status_code == 422:
        fields = response.json()["fields"]
        assert fields and all(item["field"] for item in fields), response.text[:300]
