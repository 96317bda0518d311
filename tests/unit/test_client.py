"""biomed_search.client without a service: the retry policy, error bodies, request shapes
and the adapters' mapping, with the network replaced at the edge by httpx.MockTransport
(the live service is exercised in tests/integration/test_adapters.py)."""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from biomed_search.client import (
    API_KEY_ENV,
    AsyncBiomedSearchClient,
    BiomedSearchAPIError,
    BiomedSearchClient,
    BiomedSearchConnectionError,
    RetryPolicy,
    parse_retry_after,
    search_body,
)
from pipeline.schema import Chunk, ScoreParts, SearchResponse

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
FAST = RetryPolicy(initial_backoff_s=0.0, jitter=0.0)


def response_body() -> dict:
    chunks = [
        Chunk(
            chunk_id=f"ema-tagrisso#{index}",
            content=f"text {index}",
            document_id="ema-tagrisso",
            document_name="Tagrisso (osimertinib)",
            kb_id="demo",
            collection="biomed_text",
            biomed_section="adverse_reactions",
            similarity=similarity,
            score_parts=ScoreParts(ce=0.5, entity=1.0),
        )
        for index, similarity in enumerate([0.9, 0.7, 0.4])
    ]
    return SearchResponse(chunks=chunks, total=3).model_dump(mode="json", by_alias=True)


class Script:
    """A fake service at the transport edge: answers each request with the next item of
    ``steps`` (a Response, an exception to raise, or a callable of the request) and
    records the requests; the last step repeats."""

    def __init__(self, *steps: httpx.Response | Exception | Callable) -> None:
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps[min(len(self.requests), len(self.steps)) - 1]
        if isinstance(step, Exception):
            raise step
        return step(request) if callable(step) else step

    def client(self, **kwargs) -> BiomedSearchClient:
        kwargs.setdefault("retry", FAST)
        return BiomedSearchClient("http://svc", transport=httpx.MockTransport(self), **kwargs)

    def async_client(self, **kwargs) -> AsyncBiomedSearchClient:
        kwargs.setdefault("retry", FAST)
        return AsyncBiomedSearchClient("http://svc", transport=httpx.MockTransport(self), **kwargs)


def ok() -> httpx.Response:
    return httpx.Response(200, json=response_body())


def overloaded(retry_after: str | None = "0") -> httpx.Response:
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    body = {"error": "overloaded", "message": "too many requests in flight"}
    return httpx.Response(503, json=body, headers=headers)


class TestRetryPolicy:
    def test_retry_after_is_honoured_over_the_backoff(self):
        assert RetryPolicy(jitter=0.0).next_delay(1, 2.0, 0.0) == 2.0

    def test_backoff_doubles_and_is_capped(self):
        policy = RetryPolicy(max_attempts=10, initial_backoff_s=0.5, max_backoff_s=3.0, jitter=0.0)
        assert [policy.next_delay(n, None, 0.0) for n in range(1, 6)] == [0.5, 1, 2, 3, 3]

    def test_jitter_only_stretches_the_backoff(self):
        policy = RetryPolicy(initial_backoff_s=1.0, jitter=0.2)
        delays = [policy.next_delay(1, None, 0.0) for _ in range(50)]
        assert all(1.0 <= delay <= 1.2 for delay in delays)

    def test_stops_after_max_attempts(self):
        policy = RetryPolicy(max_attempts=3)
        assert policy.next_delay(2, 0.0, 0.0) == 0.0
        assert policy.next_delay(3, 0.0, 0.0) is None

    def test_stops_when_the_total_wait_would_be_exceeded(self):
        policy = RetryPolicy(max_total_wait_s=5.0)
        assert policy.next_delay(1, 4.0, 1.0) == 4.0
        assert policy.next_delay(1, 4.0, 1.5) is None

    @pytest.mark.parametrize(
        "kwargs",
        [{"max_attempts": 0}, {"initial_backoff_s": -1}, {"max_total_wait_s": -1}, {"jitter": 2}],
    )
    def test_invalid_settings_are_refused(self, kwargs):
        with pytest.raises(ValueError):
            RetryPolicy(**kwargs)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("", None), ("0", 0.0), ("3", 3.0), ("1.5", 1.5), ("-4", 0.0), ("soon", None)],
)
def test_parse_retry_after_seconds(value, expected):
    assert parse_retry_after(value) == expected


def test_parse_retry_after_http_date():
    now = datetime(2026, 12, 1, 9, 0, 0, tzinfo=UTC)
    assert parse_retry_after(format_datetime(now + timedelta(seconds=7), usegmt=True), now) == 7
    assert parse_retry_after(format_datetime(now - timedelta(seconds=7), usegmt=True), now) == 0


class TestSyncClient:
    def test_503_with_retry_after_is_retried_then_parsed(self):
        script = Script(overloaded("0"), ok())
        response = script.client().search("osimertinib side effects")
        assert len(script.requests) == 2
        assert isinstance(response, SearchResponse)
        assert [chunk.similarity for chunk in response.chunks] == [0.9, 0.7, 0.4]

    def test_retry_after_is_waited_for(self):
        script = Script(overloaded("1"), ok())
        started = time.monotonic()
        script.client().search("x")
        assert time.monotonic() - started >= 1.0

    def test_a_503_that_outlasts_the_attempts_raises_the_typed_error(self):
        script = Script(overloaded("0"))
        with pytest.raises(BiomedSearchAPIError) as caught:
            script.client(retry=RetryPolicy(max_attempts=3)).search("x")
        assert len(script.requests) == 3
        error = caught.value
        assert (error.status_code, error.error, error.retry_after_s) == (503, "overloaded", 0)

    def test_a_retry_after_beyond_the_total_wait_is_not_slept(self):
        script = Script(overloaded("120"), ok())
        started = time.monotonic()
        with pytest.raises(BiomedSearchAPIError) as caught:
            script.client(retry=RetryPolicy(max_total_wait_s=10)).search("x")
        assert caught.value.status_code == 503 and len(script.requests) == 1
        assert time.monotonic() - started < 5

    def test_connection_errors_are_retried(self):
        script = Script(httpx.ConnectError("refused"), ok())
        assert script.client().search("x").total == 3
        assert len(script.requests) == 2

    def test_a_connection_that_keeps_failing_raises_connection_error(self):
        script = Script(httpx.ConnectError("refused"))
        with pytest.raises(BiomedSearchConnectionError) as caught:
            script.client(retry=RetryPolicy(max_attempts=2, initial_backoff_s=0)).search("x")
        assert len(script.requests) == 2
        assert isinstance(caught.value.__cause__, httpx.ConnectError)

    def test_422_is_not_retried_and_names_the_field(self):
        body = {
            "error": "invalid_request",
            "message": "invalid field(s): page_size",
            "fields": [{"field": "page_size", "message": "must be >= 1"}],
        }
        script = Script(httpx.Response(422, json=body))
        with pytest.raises(BiomedSearchAPIError) as caught:
            script.client().search("x", page_size=0)
        assert len(script.requests) == 1
        error = caught.value
        assert (error.status_code, error.error) == (422, "invalid_request")
        assert error.field_names == ["page_size"]
        assert error.fields[0].message == "must be >= 1"

    def test_a_body_that_is_not_json_still_gives_the_typed_error(self):
        script = Script(httpx.Response(404, text="no such route"))
        with pytest.raises(BiomedSearchAPIError) as caught:
            script.client().health()
        assert (caught.value.error, caught.value.message) == ("http_404", "no such route")

    def test_fastapi_detail_is_the_message(self):
        script = Script(httpx.Response(405, json={"detail": "Method Not Allowed"}))
        with pytest.raises(BiomedSearchAPIError, match="Method Not Allowed"):
            script.client().collections()

    def test_api_key_is_sent_as_bearer(self, monkeypatch):
        monkeypatch.delenv(API_KEY_ENV, raising=False)
        script = Script(ok())
        script.client(api_key="secret").search("x")
        script.client().search("x")
        monkeypatch.setenv(API_KEY_ENV, "from-env")
        script.client().search("x")
        headers = [request.headers.get("Authorization") for request in script.requests]
        assert headers == ["Bearer secret", None, "Bearer from-env"]

    def test_search_sends_the_options_that_are_set(self):
        script = Script(ok())
        script.client().search("q", kb_ids=("demo",), page=2, page_size=3, rerank=False)
        request = script.requests[0]
        assert (request.method, request.url.path) == ("POST", "/v1/search")
        assert httpx.Response(200, content=request.content).json() == {
            "query": "q",
            "kb_ids": ["demo"],
            "page": 2,
            "page_size": 3,
            "rerank": False,
        }

    def test_unknown_option_is_a_type_error(self):
        with pytest.raises(TypeError):
            Script(ok()).client().search("q", pagesize=3)

    def test_search_image_posts_multipart_with_a_sniffed_type(self, tmp_path):
        script = Script(ok())
        path = tmp_path / "scan"
        path.write_bytes(PNG)
        script.client().search_image(path, query="Tagrisso", kb_ids=["demo"], page_size=2)
        request = script.requests[0]
        assert request.url.path == "/v1/search/image"
        content = request.content
        assert b'name="image"; filename="scan"' in content and b"image/png" in content
        assert b'name="query"' in content and b"Tagrisso" in content
        assert b'name="kb_ids"' in content and b'name="page_size"' in content

    def test_ready_returns_a_not_ready_report_without_retrying(self):
        script = Script(httpx.Response(503, json={"ready": False, "models": {}}))
        assert script.client().ready() == {"ready": False, "models": {}}
        assert len(script.requests) == 1


class TestAsyncClient:
    async def test_503_with_retry_after_is_retried(self):
        script = Script(overloaded("0"), overloaded(None), ok())
        async with script.async_client() as client:
            response = await client.search("osimertinib side effects", page_size=3)
        assert len(script.requests) == 3 and len(response.chunks) == 3

    async def test_connection_errors_are_retried_then_raised(self):
        script = Script(httpx.ConnectError("refused"))
        async with script.async_client(retry=RetryPolicy(max_attempts=3)) as client:
            with pytest.raises(BiomedSearchConnectionError):
                await client.health()
        assert len(script.requests) == 3

    async def test_422_raises_the_typed_error(self):
        body = {"error": "invalid_request", "message": "m", "fields": [{"field": "query"}]}
        script = Script(httpx.Response(422, json=body))
        async with script.async_client() as client:
            with pytest.raises(BiomedSearchAPIError) as caught:
                await client.search(" ")
        assert caught.value.field_names == ["query"]


def test_search_body_leaves_unset_fields_to_the_service():
    assert search_body("q", {"page_size": None, "tags": ()}) == {"query": "q", "tags": []}
    assert search_body("q", {"namespace": "general"}) == {"query": "q", "namespace": "general"}
    with pytest.raises(TypeError, match="valid: collections, document_ids"):
        search_body("q", {"pagesize": 3})


def test_llamaindex_nodes_carry_our_metadata_and_scores():
    from biomed_search.integrations.llamaindex import BiomedSearchRetriever

    script = Script(ok())
    retriever = BiomedSearchRetriever(client=script.client(), page_size=3)
    hits = retriever.retrieve("osimertinib side effects")
    assert [hit.score for hit in hits] == [0.9, 0.7, 0.4]
    node = hits[0].node
    assert (node.id_, node.text) == ("ema-tagrisso#0", "text 0")
    assert node.metadata["document_name"] == "Tagrisso (osimertinib)"
    assert node.metadata["score_parts"] == {"ce": 0.5, "entity": 1.0}
    shown = node.get_content(metadata_mode="llm")
    assert "adverse_reactions" in shown and "similarity" not in shown
    sent = httpx.Response(200, content=script.requests[0].content).json()
    assert sent["page_size"] == 3
    retriever.close()  # closes only what it made: the given client still works
    assert retriever.retrieve("again")[0].score == 0.9


def test_langchain_documents_carry_our_metadata():
    from biomed_search.integrations.langchain import BiomedSearchRetriever

    retriever = BiomedSearchRetriever(client=Script(ok()).client(), kb_ids=["demo"])
    documents = retriever.invoke("osimertinib side effects")
    assert [doc.metadata["similarity"] for doc in documents] == [0.9, 0.7, 0.4]
    assert documents[0].id == "ema-tagrisso#0" and documents[0].page_content == "text 0"
    assert documents[0].metadata["kb_id"] == "demo"


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("llamaindex", "llama_index.core.retrievers", "llamaindex"),
        ("langchain", "langchain_core.retrievers", "langchain"),
    ],
)
def test_a_missing_framework_names_the_extra(monkeypatch, module, framework, extra):
    monkeypatch.setitem(sys.modules, framework, None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, f"biomed_search.integrations.{module}", raising=False)
    with pytest.raises(ImportError, match=rf"pip install 'biomed-search\[{extra}\]'"):
        importlib.import_module(f"biomed_search.integrations.{module}")
