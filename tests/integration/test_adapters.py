"""Issue 18's framework adapters against a live service: the typed client (sync and
async), the LlamaIndex and LangChain retrievers and the README's examples, over a real
Ray Serve application (real Milvus Lite, PostgreSQL and the offline models) with an API
key configured.

The one fake is at the network edge: an ``httpx.MockTransport`` that answers 503 with
``Retry-After`` before passing requests on to the live service, to test the client's
retry loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import time
from pathlib import Path

import httpx
import pytest

from biomed_search.client import (
    API_KEY_ENV,
    AsyncBiomedSearchClient,
    BiomedSearchAPIError,
    BiomedSearchClient,
    RetryPolicy,
)
from deployments.config import load_config
from deployments.serve_cli import wait_ready
from tests.support.budgets import SLOW_MACHINE_BUDGETS
from tests.support.slices import ingest_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

APP = "adapters"
PREFIX = "/adapters-it"
KEY = "key-adapters"
QUESTION = "osimertinib side effects"
README = Path(__file__).resolve().parents[2] / "README.md"
#: The README's examples are written for ``make serve``.
MAKE_SERVE_URL = "http://127.0.0.1:8000"
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
    b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x04\x00\x09\xfb\x03\xfd\xe3U"
    b"\xf2\x9c\x00\x00\x00\x00IEND\xaeB`\x82"
)
METADATA_KEYS = {
    "chunk_id",
    "document_id",
    "document_name",
    "kb_id",
    "collection",
    "biomed_section",
    "similarity",
    "score_parts",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return load_config(
        "default",
        data_dir=tmp_path_factory.mktemp("adapters"),
        overrides={
            "stores": {"collection_prefix": "adapters_"},
            "auth": {"api_keys": [{"name": "adapters", "key": KEY, "kb_ids": ["demo"]}]},
            "serve": {"encoder": {"num_cpus": 0.5}},
            "pipeline": {"budgets": SLOW_MACHINE_BUDGETS},  # paths, not speed
        },
    )


@pytest.fixture(scope="module")
def url(serve_cluster, config, endpoints):
    """Tagrisso's and Iressa's leaflets (two EGFR inhibitors: the right one must win),
    ingested in-process, served as the application ``adapters``."""
    from ray import serve

    from deployments.app import build_application

    report = asyncio.run(
        ingest_slice(config, endpoints, "demo", products=("tagrisso", "iressa"), compounds=())
    )
    assert report.documents_written == 2 and not report.failures, report.as_dict()
    serve.run(build_application(config, endpoints), name=APP, route_prefix=PREFIX)
    base = f"{serve_cluster.url}{PREFIX}"
    wait_ready(base, timeout_s=300)
    yield base
    serve.delete(APP)


@pytest.fixture
def api_key(monkeypatch):
    """The key, also where the clients look when none is passed (the README examples)."""
    monkeypatch.setenv(API_KEY_ENV, KEY)
    return KEY


def assert_tagrisso_first(names: list[str], scores: list[float]) -> None:
    assert names and "Tagrisso" in names[0], names
    assert scores == sorted(scores, reverse=True), scores
    assert all(0.0 <= score <= 1.0 for score in scores), scores


def test_sync_client_finds_tagrisso_with_the_key(url):
    with BiomedSearchClient(url, api_key=KEY) as client:
        assert client.health() == {"status": "ok"}
        assert client.ready()["ready"] is True
        response = client.search(QUESTION, page_size=5)
        collections = {row["name"]: row for row in client.collections()["collections"]}
    chunks = response.chunks
    assert_tagrisso_first([c.document_name for c in chunks], [c.similarity for c in chunks])
    assert "adverse_reactions" in {
        c.biomed_section for c in chunks if "Tagrisso" in c.document_name
    }
    assert {c.kb_id for c in chunks} == {"demo"} and len(chunks) <= 5
    assert response.intent.workflow == "drug_entity"
    assert collections["biomed_text"]["rows"] > 0, collections


async def test_async_client_finds_tagrisso_and_pages(url):
    async with AsyncBiomedSearchClient(url, api_key=KEY) as client:
        first, second = await asyncio.gather(
            client.search(QUESTION, page_size=3), client.search(QUESTION, page=2, page_size=3)
        )
        # the default profile enables no image collection: the typed error names the field
        with pytest.raises(BiomedSearchAPIError) as refused:
            await client.search_image(PNG, query="Tagrisso", page_size=2)
    chunks = first.chunks
    assert_tagrisso_first([c.document_name for c in chunks], [c.similarity for c in chunks])
    assert not {c.chunk_id for c in chunks} & {c.chunk_id for c in second.chunks}
    assert first.total == second.total >= len(chunks) + len(second.chunks)
    assert refused.value.status_code == 422
    assert [item.field for item in refused.value.fields] == ["image"]


def test_without_the_key_and_with_a_wrong_one_the_error_is_typed(url, monkeypatch):
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    for key in (None, "wrong"):
        with (
            BiomedSearchClient(url, api_key=key) as client,
            pytest.raises(BiomedSearchAPIError) as caught,
        ):
            client.search(QUESTION)
        assert caught.value.status_code == 401 and caught.value.error == "Unauthorized"


@pytest.mark.parametrize(
    ("options", "field"),
    [({"page_size": 0}, "page_size"), ({"route_mode": "telepathy"}, "route_mode")],
)
def test_a_bad_field_is_a_typed_422_naming_it(url, options, field):
    with (
        BiomedSearchClient(url, api_key=KEY) as client,
        pytest.raises(BiomedSearchAPIError) as caught,
    ):
        client.search(QUESTION, **options)
    error = caught.value
    assert (error.status_code, error.error) == (422, "invalid_request")
    assert field in error.field_names, error.fields


def test_a_kb_the_key_may_not_read_is_a_typed_403(url):
    with (
        BiomedSearchClient(url, api_key=KEY) as client,
        pytest.raises(BiomedSearchAPIError) as caught,
    ):
        client.search(QUESTION, kb_ids=["elsewhere"])
    assert caught.value.status_code == 403 and "elsewhere" in caught.value.message


class Overloading:
    """The edge fake: the first ``times`` requests get the service's 503 ``overloaded``
    answer with ``Retry-After``; the rest go to the live service."""

    def __init__(self, times: int, retry_after: str) -> None:
        self.times = times
        self.retry_after = retry_after
        self.answered: list[int] = []
        self.live = httpx.Client(timeout=120)

    def __enter__(self) -> Overloading:
        return self

    def __exit__(self, *_: object) -> None:
        self.live.close()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if len(self.answered) < self.times:
            self.answered.append(503)
            body = {"error": "overloaded", "message": "too many requests in flight"}
            return httpx.Response(503, json=body, headers={"Retry-After": self.retry_after})
        forwarded = self.live.send(
            self.live.build_request(
                request.method, request.url, headers=request.headers, content=request.content
            )
        )
        self.answered.append(forwarded.status_code)
        return httpx.Response(
            forwarded.status_code, headers=forwarded.headers, content=forwarded.content
        )


def test_client_retries_a_503_after_its_retry_after(url):
    policy = RetryPolicy(max_attempts=3, max_total_wait_s=5)
    started = time.monotonic()
    with (
        Overloading(times=2, retry_after="1") as edge,
        BiomedSearchClient(
            url, api_key=KEY, retry=policy, transport=httpx.MockTransport(edge)
        ) as client,
    ):
        response = client.search(QUESTION)
    elapsed = time.monotonic() - started
    assert edge.answered == [503, 503, 200]
    assert elapsed >= 2.0  # two Retry-After: 1 waits
    assert "Tagrisso" in response.chunks[0].document_name


def test_client_gives_up_when_the_service_stays_overloaded(url):
    with (
        Overloading(times=10, retry_after="0") as edge,
        BiomedSearchClient(
            url, api_key=KEY, retry=RetryPolicy(max_attempts=3), transport=httpx.MockTransport(edge)
        ) as client,
        pytest.raises(BiomedSearchAPIError) as caught,
    ):
        client.search(QUESTION)
    assert edge.answered == [503, 503, 503]
    assert (caught.value.status_code, caught.value.error) == (503, "overloaded")


async def test_llamaindex_retriever_returns_scored_nodes(url, api_key):
    from llama_index.core.schema import NodeWithScore, TextNode

    from biomed_search.integrations.llamaindex import BiomedSearchRetriever

    retriever = BiomedSearchRetriever(url, page_size=5)  # key from the environment
    try:
        results = [
            await asyncio.to_thread(retriever.retrieve, QUESTION),
            await retriever.aretrieve(QUESTION),
        ]
    finally:
        await retriever.aclose()
    for hits in results:
        assert hits and all(isinstance(hit, NodeWithScore) for hit in hits)
        assert all(isinstance(hit.node, TextNode) and hit.node.text for hit in hits)
        names = [hit.node.metadata["document_name"] for hit in hits]
        assert_tagrisso_first(names, [hit.score for hit in hits])
        for hit in hits:
            assert set(hit.node.metadata) >= METADATA_KEYS, hit.node.metadata
            assert hit.node.id_ == hit.node.metadata["chunk_id"]
            assert hit.score == hit.node.metadata["similarity"]
            assert hit.node.metadata["score_parts"], hit.node.metadata


async def test_langchain_retriever_returns_documents(url):
    from langchain_core.documents import Document

    from biomed_search.integrations.langchain import BiomedSearchRetriever

    retriever = BiomedSearchRetriever(url, api_key=KEY, page_size=4, kb_ids=["demo"])
    try:
        results = [
            await asyncio.to_thread(retriever.invoke, QUESTION),
            await retriever.ainvoke(QUESTION),
        ]
    finally:
        await retriever.aclose()
    for documents in results:
        assert documents and all(isinstance(doc, Document) for doc in documents)
        assert len(documents) <= 4
        names = [doc.metadata["document_name"] for doc in documents]
        assert_tagrisso_first(names, [doc.metadata["similarity"] for doc in documents])
        for doc in documents:
            assert set(doc.metadata) >= METADATA_KEYS and doc.page_content
            assert doc.id == doc.metadata["chunk_id"] and doc.metadata["kb_id"] == "demo"


def readme_examples() -> dict[str, str]:
    """The README's LlamaIndex and LangChain examples (the first ``python`` block that
    imports each integration)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    found = {}
    for framework in ("llamaindex", "langchain"):
        found[framework] = next(
            block for block in blocks if f"biomed_search.integrations.{framework}" in block
        )
    return found


@pytest.mark.parametrize(("framework", "most_lines"), [("llamaindex", 5), ("langchain", 4)])
def test_readme_example_runs_against_the_service(url, api_key, framework, most_lines):
    code = readme_examples()[framework]
    assert len(code.strip().splitlines()) <= most_lines, code
    assert MAKE_SERVE_URL in code  # what `make serve` listens on
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.replace(MAKE_SERVE_URL, url), "README.md", "exec"), {})
    output = printed.getvalue()
    assert "Tagrisso" in output.splitlines()[0], output
