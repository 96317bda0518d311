"""``biomed-search serve``: embedded stores, the demo corpus on first start (an empty
data directory) or on ``--demo``, Ray Serve on 127.0.0.1; Ctrl-C stops everything it
started.

A model that cannot be loaded, whether in this process (the demo corpus ingest) or in a
Ray Serve replica whose constructor failed (Serve reports it as a ``RuntimeError``
holding the replica's traceback), leaves :func:`serve` as the one
:class:`models.errors.ModelNotAvailableError`; the CLI prints its message alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from deployments.config import DEMO_DIR, AppConfig
from deployments.runtime.processes import sigint_as_interrupt, sigterm_kept
from deployments.stores import (
    EmbeddedServers,
    StoreEndpoints,
    collection_metrics,
    collection_weights,
    open_stores,
)
from models.errors import find_model_error

__all__ = [
    "DEMO_KB",
    "check_cpu_demand",
    "demo_needed",
    "demo_sources",
    "ensure_demo_corpus",
    "serve",
    "start_ray_serve",
]

DEMO_KB = "demo"


def demo_sources(demo_dir: Path = DEMO_DIR) -> list[Path]:
    """The shipped demo corpus files (leaflets, FDA labels, compounds)."""
    return sorted(p for p in demo_dir.iterdir() if p.name.endswith((".jsonl.gz", ".csv.gz")))


def demo_needed(documents: int, demo_documents: int, demo: bool | None = None) -> bool:
    """Whether ``serve`` ingests the demo corpus: never with ``demo`` False
    (``--no-demo``) or when kb ``demo`` already holds documents; with ``demo`` True
    (``--demo``) whenever kb ``demo`` is empty; by default (None) only into an empty data
    directory (``documents``, every kb's registered documents, is 0), so the user's own
    documents never get the demo corpus beside them."""
    if demo is False or demo_documents > 0:
        return False
    return demo is True or documents == 0


async def ensure_demo_corpus(
    config: AppConfig, endpoints: StoreEndpoints, demo: bool | None = None
) -> dict[str, Any] | None:
    """Ingest the demo corpus into kb ``demo`` when :func:`demo_needed` says so (``demo``
    as there). Returns the ingest report, or None when nothing was ingested.

    Raises:
        pipeline.errors.BackendUnavailable: a store does not answer.
        models.errors.ModelNotAvailableError: a document encoder cannot be loaded.
    """
    from deployments.ingest import document_roles, run_ingest
    from deployments.local import load_local_models
    from pipeline.ingest.readers import read_source
    from pipeline.vocabulary import default_vocabulary

    metrics = collection_metrics(config)
    weights = collection_weights(config, "document")
    async with open_stores(endpoints, config.stores, metrics, weights) as (store, registry):
        documents = await registry.count_documents()
        if not demo_needed(documents, await registry.count_documents(DEMO_KB), demo):
            if demo is None and documents:
                print(
                    f"data dir holds {documents} documents: not adding the demo corpus "
                    "(--demo adds it)",
                    flush=True,
                )
            return None
        await store.check_writable()  # only an ingest is refused; a search just warns
        print(
            "ingesting the demo corpus into kb 'demo' (a few minutes on 2 CPU cores)...",
            flush=True,
        )
        models = load_local_models(config.models, document_roles(config))
        vocabulary = default_vocabulary()
        records = (
            record for source in demo_sources() for record in read_source(source, vocabulary)
        )
        report = await run_ingest(
            config, records, DEMO_KB, store, registry, dict(models.encoders), progress=True
        )
        return report.as_dict()


def check_cpu_demand(config: AppConfig, cpus: float) -> None:
    """Refuse a configuration whose replicas reserve more logical CPUs than ``cpus``:
    Ray would never place the last replicas and ``serve.run`` would wait for ever.

    Raises:
        ValueError: the demand (by deployment, :func:`deployments.app.cpu_demand`) and
            the settings to lower.
    """
    from deployments.app import cpu_demand

    demand = cpu_demand(config)
    total = sum(demand.values())
    if total > cpus + 1e-9:
        parts = ", ".join(f"{name} {cpu:g}" for name, cpu in demand.items())
        raise ValueError(
            f"the service's replicas reserve {total:g} CPUs ({parts}) but Ray has {cpus:g}: "
            "lower serve.<encoder|cross_encoder|image_encoder>.num_cpus or num_replicas "
            "(serve.encoder, with serve.encoder_overrides, also applies to the embeddings "
            "application's replicas)"
        )


def start_ray_serve(
    config: AppConfig,
    endpoints: StoreEndpoints,
    host: str,
    port: int,
    overrides: dict[str, Any] | None = None,
) -> None:
    """Start a local Ray instance and Serve on ``host:port`` and deploy the application
    of ``config`` (validated) over the stores at ``endpoints``; ``overrides`` as in
    ``deployments.app.build_application``.

    Raises:
        ValueError: the deployments reserve more CPUs than Ray has
            (:func:`check_cpu_demand`).
    """
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    from ray import serve

    from deployments.app import build_application

    if not ray.is_initialized():
        with sigterm_kept():  # a kill while Ray starts still stops the stores
            ray.init(
                address="local",
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
    check_cpu_demand(config, float(ray.cluster_resources().get("CPU", 0.0)))
    serve.start(http_options={"host": host, "port": port})
    application = build_application(config, endpoints, overrides)
    with _without_reconnect_notice():
        serve.run(application, name="biomed-search", route_prefix="/", blocking=False)
        if config.serve.embeddings_route:  # the lean embeddings path (issue 16)
            from deployments.app import build_embeddings_application

            serve.run(
                build_embeddings_application(config),
                name="embeddings",
                route_prefix=config.serve.embeddings_route,
                blocking=False,
            )


class _ReconnectNotice(logging.Filter):
    """Drops Serve's "Connecting to existing Serve app ... New http_options/
    controller_options will not be applied", which every ``serve.run`` logs once Serve is
    up (Ray 2.60): here ``serve.start`` has just applied this service's options, and the
    line told users that their host and port were ignored."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Connecting to existing Serve app")


@contextlib.contextmanager
def _without_reconnect_notice() -> Any:
    serve_logger = logging.getLogger("ray.serve")
    notice = _ReconnectNotice()
    serve_logger.addFilter(notice)
    try:
        yield
    finally:
        serve_logger.removeFilter(notice)


def wait_ready(url: str, timeout_s: float = 600.0) -> dict[str, Any]:
    """Poll ``/readyz`` until it answers 200.

    Raises:
        TimeoutError: not ready within ``timeout_s`` (with the last report).
    """
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            response = httpx.get(f"{url}/readyz", timeout=15.0)
            last = response.json()
            if response.status_code == 200:
                return last
        except (httpx.HTTPError, ValueError) as error:
            last = str(error)
        time.sleep(1.0)
    raise TimeoutError(f"service not ready after {timeout_s:.0f} s: {last}")


def serve(
    config: AppConfig, host: str | None = None, port: int | None = None, demo: bool | None = None
) -> int:
    """Run until Ctrl-C. ``config`` is the validated configuration (``load_config``);
    ``host`` / ``port`` default to ``config.serve``; ``demo``: ingest the demo corpus
    (None: only into an empty data directory; see :func:`demo_needed`). Returns the exit
    status.

    Raises:
        ValueError: ``serve.embeddings_port`` equals ``port``.
        models.errors.ModelNotAvailableError: a role's model could not be loaded or warmed
            up, here or in a Serve replica (rebuilt from the replica's error text).
        pipeline.errors.BackendUnavailable: a store did not come up.
    """
    started = time.perf_counter()
    host = host or config.serve.host
    port = port or config.serve.port
    # the command line's address is the service's: the embeddings port binds that host
    # and must not be the service's port (same check as the configuration's)
    config = config.model_copy(
        update={"serve": config.serve.model_copy(update={"host": host, "port": port})}
    )
    config.check_embeddings_route()
    # SIGTERM while starting stops what started, as Ctrl-C does: the command line runs
    # every command under deployments.runtime.processes.sigterm_as_interrupt
    with sigint_as_interrupt():
        return _serve(config, host, port, demo, started)


def _serve(config: AppConfig, host: str, port: int, demo: bool | None, started: float) -> int:
    servers = EmbeddedServers(config)
    try:
        endpoints = servers.start()  # inside: a signal while one store starts stops both
        print(f"stores: milvus {endpoints.milvus_uri}, postgres ready", flush=True)
        if demo is not False:
            report = asyncio.run(ensure_demo_corpus(config, endpoints, demo))
            if report is not None:
                print(
                    f"demo corpus: {report['documents_written']} documents, "
                    f"{sum(report['chunks_written'].values())} chunks, "
                    f"{len(report['failures'])} records left out",
                    flush=True,
                )
                for failure in report["failures"]:
                    print(f"  left out: {failure}", flush=True)
        url = f"http://{host}:{port}"
        try:
            start_ray_serve(config, endpoints, host, port)
            wait_ready(url)
        except (RuntimeError, TimeoutError) as error:
            model_error = find_model_error(error)
            if model_error is None:
                raise
            raise model_error from None
        print(
            f"\nbiomed-search is serving at {url} (ready in "
            f"{time.perf_counter() - started:.0f} s)\n"
            f"  curl -s {url}/v1/search -H 'Content-Type: application/json' "
            f'-d \'{{"query": "osimertinib side effects"}}\'\n'
            f"  OpenAPI: {url}/openapi.json (Swagger UI at /docs loads from a CDN)\n"
            "  Ctrl-C stops everything.",
            flush=True,
        )
        stop = asyncio.Event()
        loop = asyncio.new_event_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        loop.run_until_complete(stop.wait())
        return 0
    finally:
        print("stopping...", file=sys.stderr, flush=True)
        _stop_ray()
        servers.stop()


def _stop_ray() -> None:
    try:
        import ray
        from ray import serve as ray_serve

        if ray.is_initialized():
            ray_serve.shutdown()
            ray.shutdown()
    except Exception as error:  # shutting down: report, keep stopping the stores
        print(f"ray shutdown: {error}", file=sys.stderr)
