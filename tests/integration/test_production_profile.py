"""The production profile served end to end on tiny random copies of its real models.

The acceptance: with a Hugging Face cache holding a random-weight copy of each
role's real layout (``scripts/build_tiny_production_cache.py``), the production profile
starts, answers ``/v1/search`` and ``/v1/search/image``, and ``/readyz`` lists every model
deployment ok. The service is the acceptance's literal command, ``biomed-search serve
--profile production --config overlay``, run once for the module in a subprocess with
``HF_HOME`` pointing at the tiny cache: the real loaders resolving the hub ids from that
cache, its own embedded Milvus Lite and PostgreSQL, the whole demo corpus ingested on
first start, its own Ray. The image collections are created empty in its data directory
beforehand (the ingest reads no images), so an image search runs every image plan. At
the end it is stopped with Ctrl-C, and the module checks that it exits 0 and leaves no
process behind. The random weights make rankings meaningless: the tests check that every
path runs, not what it ranks first.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import yaml
from PIL import Image

from deployments.config import AppConfig, load_config
from deployments.ingest import document_roles
from deployments.roles import model_deployments
from deployments.runtime import find_free_port
from deployments.serve_cli import demo_sources
from deployments.stores import (
    EmbeddedServers,
    StoreEndpoints,
    collection_metrics,
    open_stores,
)
from pipeline.ingest.readers import read_source
from pipeline.vocabulary import default_vocabulary
from scripts.build_tiny_production_cache import (
    PRODUCTION_PROFILE,
    TinyProductionCache,
    build_tiny_production_cache,
)
from tests.support.budgets import SLOW_MACHINE_BUDGETS

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.starts_ray]

GEFITINIB = "COc1cc2ncnc(Nc3ccc(F)c(Cl)c3)c2cc1OCCCN1CCOCC1"
#: What an upload searches: image -> image in radiology (BiomedCLIP) and pathology (UNI2),
#: R-XM-2, and the visual plan (the laion CLIP), R-RT-8.
IMAGE_COLLECTIONS = ("radiology", "pathology", "visual")


@pytest.fixture(scope="module")
def tiny_cache(tmp_path_factory: pytest.TempPathFactory) -> TinyProductionCache:
    """The tiny production hub cache and its overlay, built with the script."""
    return build_tiny_production_cache(tmp_path_factory.mktemp("tiny-production"))


@pytest.fixture(scope="module")
def config(tiny_cache: TinyProductionCache, tmp_path_factory: pytest.TempPathFactory):
    """The production profile with the script's overlay, as the tests read it."""
    return load_config(
        "production", tiny_cache.overlay_path, data_dir=tmp_path_factory.mktemp("production")
    )


def _create_image_collections(config: AppConfig) -> None:
    """The image collections, empty, in ``config``'s data directory (its embedded stores,
    started and stopped here): the demo ingest reads no images, and an image search of a
    missing collection finds nothing to search."""

    async def create(endpoints: StoreEndpoints) -> None:
        metrics = collection_metrics(config)
        async with open_stores(endpoints, config.stores, metrics) as (store, _):
            for name in IMAGE_COLLECTIONS:
                spec = config.pipeline.collections[name]
                dimension = config.models.spec(spec.document_encoder).dimension
                await store.ensure_collection(name, dimension, spec.hybrid, metric=spec.metric)

    servers = EmbeddedServers(config)
    try:
        asyncio.run(create(servers.start()))
    finally:
        servers.stop()


# -- the service: ``biomed-search serve --profile production --config overlay`` -----------


def _alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    left = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                left.append(process)
        except psutil.NoSuchProcess:
            pass
    return left


def _wait_ready(url: str, process: subprocess.Popen, log: Path, timeout_s: float) -> None:
    """Poll ``/readyz`` until 200; fail early, with the log, when the CLI exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"serve exited {process.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(f"{url}/readyz", timeout=15.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(2.0)
    pytest.fail(f"serve not ready after {timeout_s:.0f} s:\n{log.read_text()[-4000:]}")


def _stop(process: subprocess.Popen, log: Path) -> None:
    """Ctrl-C, as a user stops it: exit status 0 and every process it started gone (Ray's
    raylet, GCS and workers, Milvus Lite, PostgreSQL). A CLI that does not stop within
    120 s is killed with its process group, and the test fails."""
    started = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    process.send_signal(signal.SIGINT)
    try:
        status = process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        pytest.fail(f"serve did not stop on Ctrl-C:\n{log.read_text()[-4000:]}")
    deadline = time.monotonic() + 30.0
    while _alive(started) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = [(p.pid, " ".join(p.cmdline())[:120]) for p in _alive(started)]
    assert status == 0, log.read_text()[-4000:]
    assert not left, f"processes left by serve: {left}"


@pytest.fixture(scope="module")
def cli_folder(tmp_path_factory) -> Path:
    """Where the CLI's overlay, data dir and output (``serve.log``) go."""
    return tmp_path_factory.mktemp("production-cli")


@pytest.fixture(scope="module")
def cli_url(tiny_cache: TinyProductionCache, cli_folder: Path) -> Iterator[str]:
    """``biomed-search serve --profile production --config <overlay>`` in a subprocess
    (its own session), the tiny cache found through ``HF_HOME`` (the overlay's
    ``hf_cache_dir`` dropped); stopped with Ctrl-C at the end (see :func:`_stop`)."""
    folder = cli_folder
    overlay = yaml.safe_load(tiny_cache.overlay_path.read_text(encoding="utf-8"))
    del overlay["models"]["hf_cache_dir"]
    # these tests check that every path runs, not how fast (tests/support/budgets.py)
    overlay.setdefault("pipeline", {})["budgets"] = SLOW_MACHINE_BUDGETS
    (folder / "overlay.yaml").write_text(yaml.safe_dump(overlay), encoding="utf-8")
    _create_image_collections(
        load_config("production", folder / "overlay.yaml", data_dir=folder / "data")
    )
    port = find_free_port()
    env = {
        **os.environ,
        "HF_HOME": str(tiny_cache.hub_cache.parent),  # the hub cache is HF_HOME/hub
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "disabled",
    }
    env.pop("HF_HUB_CACHE", None)
    env.pop("RAY_ADDRESS", None)  # its own local Ray, not the session's
    command = [
        sys.executable,
        "-m",
        "biomed_search",
        "serve",
        "--profile",
        "production",
        "--config",
        str(folder / "overlay.yaml"),
        "--data-dir",
        str(folder / "data"),
        "--port",
        str(port),
    ]
    log = folder / "serve.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, process, log, timeout_s=600)
        yield url
    finally:
        if process.poll() is None:
            _stop(process, log)


def _search(url: str, **fields: Any) -> dict[str, Any]:
    response = httpx.post(f"{url}/v1/search", json=fields, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()


def _stage(body: dict[str, Any], name: str) -> dict[str, Any]:
    return next(entry for entry in body["trace"] if entry["name"] == name)


def test_overlay_changes_only_the_widths(config, tiny_cache):
    """Every production role keeps its family, source, pooling and metric; only the
    widths (and UNI2's size kwargs) are the tiny ones, read from the tiny cache."""
    production = yaml.safe_load(PRODUCTION_PROFILE.read_text(encoding="utf-8"))["models"]
    assert set(config.models.roles) == set(production["roles"])
    for role, published in production["roles"].items():
        spec = config.models.spec(role)
        assert spec.source == published["source"]
        assert spec.family.value == published["family"]
        assert spec.metric.value == published.get("metric", "cosine")
        if "pooling" in published:
            assert spec.pooling.value == published["pooling"]
        if published.get("dimension"):
            assert spec.dimension < published["dimension"]
    assert config.models.hf_cache_dir == tiny_cache.hub_cache
    assert config.pipeline.collections["medcpt_text"].metric == "ip"


def test_readyz_lists_every_model_deployment_ok(cli_url, config):
    deployments = model_deployments(config)
    served = {role for deployment in deployments for role in deployment.roles}
    # every production role runs: query side in a deployment, the rest at ingest
    assert served | set(document_roles(config)) == set(config.models.enabled_roles())
    assert {d.kind for d in deployments} == {"encoder", "image_encoder", "cross_encoder"}
    expected = {"cross-encoder" if d.kind == "cross_encoder" else d.name for d in deployments} | {
        "milvus",
        "postgres",
    }
    response = httpx.get(f"{cli_url}/readyz", timeout=60)
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["ready"] is True
    assert set(report["checks"]) == expected
    assert set(report["checks"].values()) == {"ok"}, report["checks"]


def test_text_search_returns_chunks_through_every_text_plan(cli_url):
    body = _search(cli_url, query="osimertinib side effects")
    assert body["chunks"]
    collections = {plan["collection"] for plan in body["route"]}
    assert {"biomed_text", "medcpt_text"} <= collections  # medcpt_dual_search
    for name in collections:
        assert _stage(body, f"plan:{name}")["degraded"] is False, _stage(body, f"plan:{name}")
    assert _stage(body, "tier2")["degraded"] is False  # the MedCPT cross-encoder scored


def test_smiles_search_routes_to_molformer(cli_url):
    body = _search(cli_url, query=GEFITINIB)
    assert [plan["collection"] for plan in body["route"]] == ["chemical"]
    assert body["chunks"] and {c["collection"] for c in body["chunks"]} == {"chemical"}
    assert _stage(body, "plan:chemical")["degraded"] is False


def _png() -> bytes:
    image = Image.new("RGB", (40, 40), (200, 30, 30))
    image.paste((20, 20, 220), (10, 10, 30, 30))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def test_image_search_encodes_the_upload_with_the_image_models(cli_url, config):
    response = httpx.post(
        f"{cli_url}/v1/search/image",
        files={"image": ("slide.png", _png(), "image/png")},
        data={"query": "osimertinib"},
        timeout=120,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["chunks"]
    collections = {plan["collection"] for plan in body["route"]}
    assert set(IMAGE_COLLECTIONS) <= collections
    for name in IMAGE_COLLECTIONS:  # each image model embedded the PNG, Milvus searched
        assert _stage(body, f"plan:{name}")["degraded"] is False, _stage(body, f"plan:{name}")
    stats = httpx.get(f"{cli_url}/v1/stats", timeout=60).json()["deployments"]
    for deployment in model_deployments(config):
        if deployment.kind == "image_encoder":
            assert stats[deployment.name]["batches"] >= 1, stats[deployment.name]


def test_an_upload_the_image_models_cannot_read_is_a_422_naming_image(cli_url):
    truncated = _png()[:60]  # a PNG signature and header, then nothing
    response = httpx.post(
        f"{cli_url}/v1/search/image",
        files={"image": ("slide.png", truncated, "image/png")},
        timeout=120,
    )
    assert response.status_code == 422, response.text  # was 200 for the words "image search"
    assert response.json()["fields"][0]["field"] == "image", response.text


def test_biomed_search_serve_cli(cli_url, cli_folder):
    """The acceptance's command started on the tiny cache (the tests above searched it)
    and applied its host and port: Serve's "will not be applied" notice of the
    ``serve.run`` calls after ``serve.start`` would tell the user otherwise. Its Ctrl-C
    exit is checked when the module ends (:func:`_stop`)."""
    assert httpx.get(f"{cli_url}/readyz", timeout=60).status_code == 200
    log = (cli_folder / "serve.log").read_text(encoding="utf-8")
    assert "will not be applied" not in log
    # the whole demo corpus went in with the production document encoders
    ingested = re.search(r"demo corpus: (\d+) documents, (\d+) chunks, (\d+) records left out", log)
    assert ingested, log[-4000:]
    documents, chunks, left_out = map(int, ingested.groups())
    vocabulary = default_vocabulary()
    shipped = {r.document_id for path in demo_sources() for r in read_source(path, vocabulary)}
    assert documents == len(shipped) and chunks > documents and left_out == 0
