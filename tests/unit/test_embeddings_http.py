"""``POST .../embeddings`` on an encoder replica (deployments.embeddings_http): the
OpenAI request / response shape over the real offline MiniLM, Server-Timing, and a clear
4xx naming the field for bad input."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route
from starlette.testclient import TestClient

from deployments.config import load_config
from deployments.embeddings_http import EncodeTimings, embeddings_call
from models.loader import load_role

ROLES = {"pubmedbert": 384, "general-text": 384}  # role -> output width


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    config = load_config("default", data_dir=tmp_path_factory.mktemp("emb"))
    return load_role("pubmedbert", config.models)


ENCODED: list[int] = []  # texts each encode call got


@pytest.fixture(scope="module")
def client(minilm) -> TestClient:
    async def encode_timed(role: str, texts: Sequence[str]) -> tuple[np.ndarray, EncodeTimings]:
        ENCODED.append(len(texts))
        vectors = np.asarray(minilm.encode(list(texts)), dtype=np.float32)
        return vectors, EncodeTimings(queue_ms=0.5, forward_ms=2.0, replica_ms=3.0)

    async def endpoint(request: Request):
        return await embeddings_call(request, ROLES, encode_timed)

    app = Starlette(routes=[Route("/{path:path}", endpoint, methods=["GET", "POST"])])
    return TestClient(app)


def test_one_text_and_a_list_come_back_in_order_as_the_model_encodes_them(client, minilm):
    texts = ["osimertinib side effects", "rivaroxaban dose", "Tagrisso storage"]
    response = client.post("/bench/embeddings", json={"input": texts, "model": "general-text"})
    assert response.status_code == 200
    body = response.json()
    assert body["model"] == "general-text" and body["object"] == "list"
    assert [item["index"] for item in body["data"]] == [0, 1, 2]
    vectors = np.asarray([item["embedding"] for item in body["data"]], dtype=np.float32)
    np.testing.assert_allclose(vectors, minilm.encode(texts), atol=1e-6)
    single = client.post("/embeddings", json={"input": texts[1]}).json()
    assert single["model"] == "pubmedbert" and len(single["data"]) == 1
    np.testing.assert_allclose(single["data"][0]["embedding"], vectors[1], atol=1e-5)
    timing = response.headers["server-timing"]
    assert "queue;dur=0.50" in timing and "forward;dur=2.00" in timing


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"input": []}, "input"),
        ({"input": ["ok", ""]}, "input"),
        ({"input": [1, 2]}, "input"),
        ({"texts": ["wrong key"]}, "input"),
        ({"input": ["x"] * 2049}, "input"),
        ({"input": "x", "model": "medcpt-rerank"}, "model"),
        (["not", "an", "object"], "body"),
    ],
)
def test_bad_bodies_get_a_422_that_names_the_field(client, body, field):
    response = client.post("/embeddings", json=body)
    assert response.status_code == 422
    error = response.json()
    assert error["error"] == "invalid_request"
    assert error["fields"][0]["field"] == field


def test_bad_json_wrong_path_and_wrong_method_are_4xx(client):
    bad = client.post(
        "/embeddings", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert bad.status_code == 422 and bad.json()["fields"][0]["field"] == "body"
    assert client.post("/search", json={"input": "x"}).status_code == 404
    wrong = client.get("/embeddings")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"


def test_a_lone_surrogate_is_a_422_not_a_failed_batch(client):
    # valid JSON ("\\ud800" escapes one UTF-16 half) that no tokenizer can take
    raw = b'{"input": ["ok", "lone \\ud800 surrogate"]}'
    response = client.post("/embeddings", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["fields"][0]["field"] == "input"


def test_a_body_over_the_cap_is_a_413_and_a_text_over_the_cap_a_422(client):
    from deployments.embeddings_http import MAX_BODY_BYTES, MAX_TEXT_CHARS

    huge = b'{"input": "' + b"a" * MAX_BODY_BYTES + b'"}'
    declared = client.post(
        "/embeddings", content=huge, headers={"content-type": "application/json"}
    )
    assert declared.status_code == 413
    assert declared.json()["fields"][0]["field"] == "body"

    def chunked():  # no Content-Length: the cap holds while the body streams in
        yield b'{"input": "'
        for _ in range(MAX_BODY_BYTES // 65536 + 1):
            yield b"a" * 65536
        yield b'"}'

    streamed = client.post(
        "/embeddings", content=chunked(), headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413
    long_text = client.post("/embeddings", json={"input": ["ok", "a " * MAX_TEXT_CHARS]})
    assert long_text.status_code == 422
    assert long_text.json()["fields"][0]["field"] == "input"
    at_cap = client.post("/embeddings", json={"input": "a" * MAX_TEXT_CHARS})
    assert at_cap.status_code == 200


def test_base64_encoding_and_dimensions_follow_openai(client, minilm):
    import base64

    text = "pembrolizumab infusion reactions"
    plain = client.post("/embeddings", json={"input": text, "encoding_format": "float"})
    packed = client.post("/embeddings", json={"input": text, "encoding_format": "base64"})
    assert plain.status_code == packed.status_code == 200
    raw = base64.b64decode(packed.json()["data"][0]["embedding"])
    vector = np.frombuffer(raw, dtype="<f4")
    np.testing.assert_array_equal(vector, np.asarray(plain.json()["data"][0]["embedding"], "<f4"))
    width = vector.shape[0]
    same = client.post("/embeddings", json={"input": text, "dimensions": width})
    assert same.status_code == 200
    assert (
        client.post("/embeddings", json={"input": text, "encoding_format": None}).status_code == 200
    )
    ENCODED.clear()
    for body, field in (
        ({"input": [text] * 64, "dimensions": width // 2}, "dimensions"),
        ({"input": text, "dimensions": True}, "dimensions"),
        ({"input": text, "dimensions": float(width)}, "dimensions"),
        ({"input": text, "dimensions": 10**400}, "dimensions"),
        ({"input": text, "encoding_format": "int8"}, "encoding_format"),
        ({"input": text, "encoding_format": ""}, "encoding_format"),
        ({"input": text, "encoding_format": False}, "encoding_format"),
        ({"input": text, "model": ["pubmedbert"]}, "model"),
    ):
        refused = client.post("/embeddings", json=body)
        assert refused.status_code == 422, body
        assert refused.json()["fields"][0]["field"] == field
    assert ENCODED == []  # every refusal came before any encoding
