"""Issue 18, the command line as a newcomer meets it (real Milvus Lite, real PostgreSQL,
the offline models of the default profile):

- ``serve``'s demo step adds nothing to a data dir that already holds the user's own
  documents (the demo corpus belongs to an empty data dir or an explicit ``--demo``);
- ``biomed-search query`` with no service reachable answers from ``--data-dir``
  in-process (and says so on stderr); with a service it keeps using HTTP;
- its results stay readable at ``COLUMNS=80``: every text line of a result but its last
  holds at least 40 characters.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from biomed_search.cli import build_parser
from deployments.config import config_from_data, load_config_data
from deployments.runtime import find_free_port
from deployments.serve_cli import DEMO_KB, demo_needed, ensure_demo_corpus
from deployments.stores import StoreEndpoints, open_stores

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
METFORMIN = "Metformin in the clinic"
WARFARIN = "Warfarin monitoring"
DOCUMENTS = {
    "metformin.md": f"""# {METFORMIN}

## Side effects
Metformin often causes stomach upset, nausea, diarrhoea and a metallic taste when
treatment starts; taking the tablets with meals and raising the dose slowly helps most
patients. Lactic acidosis is a rare but serious side effect: stop metformin and seek care
at once for muscle pain, trouble breathing, unusual sleepiness or a cold feeling in the
hands and feet, especially with kidney problems or after contrast dye.

## Dosage
Start with 500 mg once or twice daily with meals and increase by 500 mg each week up to
2,000 mg a day as tolerated; check kidney function before starting and at least once a
year, and reduce the dose when the eGFR falls below 45 mL/min.
""",
    "warfarin.md": f"""# {WARFARIN}

## Monitoring
Warfarin needs regular INR checks: weekly while the dose is being adjusted and every four
to twelve weeks once the INR is stable within the target range of 2.0 to 3.0 for most
indications. Record every result and dose change in the anticoagulation booklet.

## Interactions
Many antibiotics, antifungals, amiodarone and some herbal remedies raise the INR and the
risk of bleeding; vitamin K rich foods lower it. Ask the clinic before starting or
stopping any medicine, and report nosebleeds, blood in the urine or black stools.
""",
}


@pytest.fixture(scope="module")
def docs_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("clinic-docs")
    for name, text in DOCUMENTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# -- serve: the demo corpus only into an empty data dir or on --demo --------------------


@pytest.mark.parametrize(
    ("documents", "demo_documents", "demo", "expected"),
    [
        (0, 0, None, True),  # empty data dir: the demo corpus on first start
        (2, 0, None, False),  # the user's own documents: nothing added
        (2, 0, True, True),  # --demo: added beside them
        (0, 0, False, False),  # --no-demo
        (2, 0, False, False),
        (221, 219, None, False),  # already there
        (221, 219, True, False),
    ],
)
def test_demo_needed(documents, demo_documents, demo, expected):
    assert demo_needed(documents, demo_documents, demo) is expected


@pytest.mark.parametrize(
    ("argv", "demo", "no_demo"),
    [([], False, False), (["--demo"], True, False), (["--no-demo"], False, True)],
)
def test_serve_demo_flags(argv, demo, no_demo):
    args = build_parser().parse_args(["serve", *argv])
    assert (args.demo, args.no_demo) == (demo, no_demo)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--demo", "--no-demo"])


async def test_serve_adds_no_demo_to_a_data_dir_with_documents(
    milvus_server, module_dsn, docs_dir, tmp_path
):
    """Two Markdown files in kb ``clinic``, then the demo step ``serve`` runs first."""
    from deployments.ingest import document_roles, run_ingest
    from deployments.local import load_local_models
    from pipeline.ingest.readers import read_source
    from pipeline.vocabulary import default_vocabulary

    config = config_from_data(
        load_config_data(
            "default",
            data_dir=tmp_path,
            overrides={"stores": {"collection_prefix": "newcomer_"}},
        )
    )
    endpoints = StoreEndpoints(milvus_uri=milvus_server.uri, postgres_dsn=module_dsn)
    encoders = dict(load_local_models(config.models, document_roles(config)).encoders)
    records = list(read_source(docs_dir, default_vocabulary(), "markdown"))
    async with open_stores(endpoints, config.stores) as (store, registry):
        report = await run_ingest(config, records, "clinic", store, registry, encoders, False)
        assert report.documents_written == 2, report.as_dict()
        rows_before = await store.count("biomed_text")

    assert await ensure_demo_corpus(config, endpoints) is None
    assert await ensure_demo_corpus(config, endpoints, demo=False) is None

    async with open_stores(endpoints, config.stores) as (store, registry):
        assert await registry.count_documents(DEMO_KB) == 0
        assert await registry.count_documents() == 2
        assert await store.count("biomed_text") == rows_before


# -- query: in-process from the data dir with no service; HTTP with one ------------------


def run_cli(*argv: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "biomed_search.cli", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=420,
    )


@pytest.fixture(scope="module")
def data_dir(docs_dir, tmp_path_factory) -> Path:
    """A data dir holding the two Markdown files in kb ``clinic``, ingested with
    ``biomed-search ingest`` (its embedded servers started and stopped there)."""
    folder = tmp_path_factory.mktemp("newcomer-data")
    done = run_cli("ingest", str(docs_dir), "--kb", "clinic", "--data-dir", str(folder))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout[done.stdout.index("{") :])
    assert report["documents_written"] == 2, report
    return folder


def test_delete_removes_a_kb_and_names_ids_not_found_or_refused(docs_dir, tmp_path):
    folder = tmp_path / "data"
    assert run_cli("ingest", str(docs_dir), "--kb", "wrong", "--data-dir", str(folder)
                   ).returncode == 0
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    nothing = run_cli("ingest", str(empty), "--kb", "wrong", "--data-dir", str(folder))
    assert nothing.returncode == 1 and f"no documents in {empty}" in nothing.stderr
    missing = run_cli("delete", "no-such-doc", "--data-dir", str(folder))
    assert missing.returncode == 0, missing.stderr[-3000:]  # nothing of it is stored
    assert json.loads(missing.stdout)["not_found"] == ["no-such-doc"]
    assert "not registered (nothing of them is stored now): no-such-doc" in missing.stderr
    refused = run_cli("delete", "metformin.md", "--kb", "other",
                      "--data-dir", str(folder))
    assert refused.returncode == 1 and "refused" in refused.stderr, refused.stderr[-3000:]
    done = run_cli("delete", "--kb", "wrong", "--data-dir", str(folder))
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout)
    assert len(outcome["removed"]) == 2 and outcome["documents_in_registry"] == 0, outcome


def no_service_url() -> str:
    return f"http://127.0.0.1:{find_free_port()}"


RESULT_RE = re.compile(r"^\s*\d+\s+\d\.\d{3}\s")


def result_texts(output: str) -> list[tuple[str, list[str]]]:
    """(header line, text lines) of each result in ``query``'s output."""
    results: list[tuple[str, list[str]]] = []
    for line in output.splitlines():
        if RESULT_RE.match(line):
            results.append((line, []))
        elif results and line.startswith("     ") and line.strip():
            results[-1][1].append(line)
        elif results and results[-1][1]:
            break  # the trace line after the last result
    return results


def test_query_without_a_service_answers_from_the_data_dir(data_dir):
    url = no_service_url()
    done = run_cli("query", "metformin lactic acidosis", "--data-dir", str(data_dir), "--url", url)
    assert done.returncode == 0, done.stderr[-3000:]
    said = [line for line in done.stderr.splitlines() if "in-process" in line]
    assert said == [f"no service at {url}: answering in-process from {data_dir}"], done.stderr
    results = result_texts(done.stdout)
    assert results, done.stdout
    assert METFORMIN in results[0][0], done.stdout
    assert "lactic acidosis" in " ".join(" ".join(text) for _, text in results).lower()


def test_query_in_process_checks_the_configured_bounds_before_starting_stores(tmp_path):
    empty = tmp_path / "data"
    empty.mkdir()
    done = run_cli("query", "metformin", "--page-size", "500", "--data-dir", str(empty),
                   "--url", no_service_url())
    assert done.returncode == 1, done.stderr[-3000:]
    assert "invalid request: page_size: must be <= 100" in done.stderr, done.stderr[-3000:]
    assert not any(empty.iterdir())  # no embedded server was set up there


def test_query_results_stay_readable_at_80_columns(data_dir):
    done = run_cli(
        "query",
        "metformin side effects dosage",
        "--data-dir",
        str(data_dir),
        "--url",
        no_service_url(),
        "--page-size",
        "4",
        columns=80,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), done.stdout
    results = result_texts(done.stdout)
    assert len(results) >= 2, done.stdout
    for header, text in results:
        assert text, (header, done.stdout)
        for line in text[:-1]:
            assert len(line.strip()) >= 40, (line, done.stdout)
    assert any(len(text) >= 2 for _, text in results), done.stdout  # the check bites


class _Service(BaseHTTPRequestHandler):
    body: ClassVar[bytes] = b""
    seen: ClassVar[list[dict[str, Any]]] = []
    url: ClassVar[str] = ""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.seen.append({"path": self.path, "json": json.loads(self.rfile.read(length))})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def running_service(data_dir) -> Iterator[type[_Service]]:
    """A service at the HTTP edge answering with a real response body (the data dir's,
    taken in-process with ``query --json``)."""
    done = run_cli(
        "query", "warfarin INR", "--data-dir", str(data_dir), "--url", no_service_url(), "--json"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    body = json.loads(done.stdout)
    assert body["chunks"] and body["chunks"][0]["document_name"] == WARFARIN, body
    handler = type("Handler", (_Service,), {"body": json.dumps(body).encode(), "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


def test_query_with_a_service_uses_http(running_service, data_dir):
    url = running_service.url
    done = run_cli("query", "warfarin INR", "--data-dir", str(data_dir), "--url", url)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "in-process" not in done.stderr
    assert running_service.seen == [
        {"path": "/v1/search", "json": {"query": "warfarin INR", "page_size": 5, "kb_ids": []}}
    ]
    results = result_texts(done.stdout)
    assert results and WARFARIN in results[0][0], done.stdout


def test_query_without_service_or_data_dir_says_what_to_do(tmp_path):
    missing = tmp_path / "nothing-here"
    done = run_cli("query", "metformin", "--data-dir", str(missing), "--url", no_service_url())
    assert done.returncode == 1
    said = " ".join(done.stderr.split())
    assert "cannot reach" in said and "no data dir at" in said, done.stderr
    assert "`biomed-search serve`" in said, done.stderr
    assert not missing.exists()  # no empty data dir left behind
