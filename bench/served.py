"""The model deployments on their own, for the encoder benchmarks: each query-time model
of a profile deployed as a Ray Serve application of its own (the product's
``EncoderDeployment`` / ``CrossEncoderDeployment`` with the profile's options), callers
driven through deployment handles at a chosen concurrency, and an OpenAI-style
``POST /embeddings`` HTTP front over an encoder deployment, so that an HTTP embedding
server (infinity-emb) and ours are measured by the same client.

Serve must already be running (``ray.init`` + ``serve.start``); nothing here starts or
stops Ray.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import numpy as np
from ray import serve
from ray.serve.handle import DeploymentHandle
from starlette.requests import Request
from starlette.responses import JSONResponse

from deployments.app import (
    build_embeddings_application,
    deployment_options,
    encoder_deployment_options,
)
from deployments.config import AppConfig
from deployments.cross_encoder import CrossEncoderDeployment
from deployments.embeddings_http import server_timing
from deployments.encoder import EncoderDeployment
from deployments.roles import model_deployments

__all__ = [
    "EmbeddingsHttp",
    "ModelApp",
    "RateResult",
    "delete_apps",
    "deploy_embeddings_direct",
    "deploy_embeddings_http",
    "deploy_model_apps",
    "direct_ingress_url",
    "drive",
    "hop_table",
    "model_groups",
]


@dataclass(frozen=True)
class ModelApp:
    """One deployed model: its Serve application name, deployment name, roles and
    kind (``encoder`` or ``cross-encoder``)."""

    app_name: str
    deployment: str
    roles: tuple[str, ...]
    kind: str

    def handle(self) -> DeploymentHandle:
        """A handle to the application's (only) deployment."""
        return serve.get_app_handle(self.app_name)


@dataclass(frozen=True)
class RateResult:
    """``items`` inputs answered in ``seconds`` by ``calls`` calls at ``concurrency``
    callers, with the failures counted apart; ``client_cpu_s``, where measured, the
    calling process's CPU seconds over those calls."""

    concurrency: int
    calls: int
    items: int
    seconds: float
    failures: int
    client_cpu_s: float | None = None

    @property
    def rate(self) -> float:
        """Items per second."""
        return self.items / self.seconds if self.seconds > 0 else float("nan")


def model_groups(config: AppConfig) -> dict[str, tuple[str, ...]]:
    """Deployment name -> roles, as ``build_application`` groups them: roles that share
    weights share an ``Encoder-<first role>``; the scorer is ``CrossEncoder``."""
    return {
        deployment.name: deployment.roles
        for deployment in model_deployments(config)
        if deployment.kind != "image_encoder"
    }


def deploy_model_apps(
    config: AppConfig, prefix: str = "bench-model", timeout_s: float = 600.0
) -> dict[str, ModelApp]:
    """Deploy every text model deployment of the validated ``config`` as its own
    application (``<prefix>-<deployment>``, no HTTP route) with its Serve options, bound
    to ``config.models`` as ``build_application`` binds them; wait until each is running.
    Deployment name -> ``ModelApp``."""
    apps: dict[str, ModelApp] = {}
    for name, roles in model_groups(config).items():
        app_name = f"{prefix}-{name}".lower()
        if name == "CrossEncoder":
            bound = CrossEncoderDeployment.options(
                name=name, **deployment_options(config.serve.cross_encoder)
            ).bind(config.serve.cross_encoder.replica_models(config.models), roles[0])
            kind = "cross-encoder"
        else:
            settings = config.serve.encoder_for(name)
            bound = EncoderDeployment.options(
                name=name, **encoder_deployment_options(settings)
            ).bind(settings.replica_models(config.models), list(roles))
            kind = "encoder"
        serve.run(bound, name=app_name, route_prefix=None, blocking=False)
        apps[name] = ModelApp(app_name, name, roles, kind)
    _wait_running([app.app_name for app in apps.values()], timeout_s)
    return apps


def _wait_running(app_names: Sequence[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        statuses = serve.status().applications
        states = {name: str(getattr(statuses.get(name), "status", "MISSING")) for name in app_names}
        if all(state.endswith("RUNNING") for state in states.values()):
            return
        failed = {n: s for n, s in states.items() if "FAIL" in s}
        if failed or time.monotonic() > deadline:
            raise RuntimeError(f"applications not running: {states}")
        time.sleep(1.0)


def delete_apps(app_names: Sequence[str], timeout_s: float = 120.0) -> None:
    """Delete Serve applications together and wait until they are gone: one
    ``serve.delete`` after another waits about 3 s each for its replicas to stop.

    Raises:
        RuntimeError: some are still there after ``timeout_s`` seconds.
    """
    for name in app_names:
        serve.delete(name, _blocking=False)
    deadline = time.monotonic() + timeout_s
    while left := set(app_names) & set(serve.status().applications):
        if time.monotonic() > deadline:
            raise RuntimeError(f"applications not deleted after {timeout_s:.0f} s: {left}")
        time.sleep(0.2)


@serve.deployment(name="EmbeddingsHttp", max_ongoing_requests=512,
                  ray_actor_options={"num_cpus": 0.25})
class EmbeddingsHttp:
    """``POST /embeddings`` (OpenAI / infinity-emb request and response shape) over an
    ``EncoderDeployment`` handle: the benchmark's HTTP front, not a product route."""

    def __init__(self, encoder: DeploymentHandle, role: str) -> None:
        self.encoder = encoder
        self.role = role

    async def __call__(self, request: Request) -> JSONResponse:
        entered = time.perf_counter()
        body = await request.json()
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        parsed = time.perf_counter()
        vectors, timings = await self.encoder.encode_timed.remote(self.role, texts)
        returned = time.perf_counter()
        data = [
            {"object": "embedding", "index": index, "embedding": vector.tolist()}
            for index, vector in enumerate(np.asarray(vectors))
        ]
        response = JSONResponse({"object": "list", "data": data, "model": self.role,
                                 "usage": {"prompt_tokens": 0, "total_tokens": 0}})
        done = time.perf_counter()
        front = (f"front_parse;dur={(parsed - entered) * 1000:.2f}, "
                 f"handle;dur={(returned - parsed) * 1000:.2f}, "
                 f"front_encode;dur={(done - returned) * 1000:.2f}, "
                 f"front;dur={(done - entered) * 1000:.2f}")
        response.headers["Server-Timing"] = f"{front}, {server_timing(timings)}"
        return response


def deploy_embeddings_http(
    app: ModelApp, route_prefix: str = "/bench-embeddings", timeout_s: float = 300.0
) -> str:
    """Deploy ``EmbeddingsHttp`` over ``app``'s encoder as application ``<app>-http``
    at ``route_prefix`` (it answers any path under it, so ``POST
    <prefix>/embeddings`` works); returns the route prefix."""
    name = f"{app.app_name}-http"
    serve.run(EmbeddingsHttp.bind(app.handle(), app.roles[0]), name=name,
              route_prefix=route_prefix, blocking=False)
    _wait_running([name], timeout_s)
    return route_prefix


def deploy_embeddings_direct(
    config: AppConfig, route_prefix: str = "/bench-direct", app_name: str = "bench-direct",
    timeout_s: float = 300.0,
) -> str:
    """Deploy the product's embeddings application (``build_embeddings_application``:
    the profile's first text ``EncoderDeployment`` with its Serve options and replica
    threads) as application ``app_name`` at ``route_prefix``: HTTP goes proxy -> encoder
    replica, no front, no handle hop (``POST <prefix>/embeddings``); with
    ``serve.embeddings_port`` its replicas also answer on that port. Returns the route
    prefix."""
    serve.run(build_embeddings_application(config), name=app_name, route_prefix=route_prefix,
              blocking=False)
    _wait_running([app_name], timeout_s)
    return route_prefix


def direct_ingress_url(route_prefix: str, ports: range = range(30000, 30100),
                       host: str = "127.0.0.1") -> str | None:
    """With Serve's direct ingress on (``RAY_SERVE_THROUGHPUT_OPTIMIZED=1``), the base URL
    at which an ingress replica answers ``POST <route_prefix>/embeddings`` on its own
    port (Serve gives those from 30000 up), found by asking; None when none answers."""
    import httpx

    for port in ports:
        url = f"http://{host}:{port}{route_prefix}"
        with contextlib.suppress(httpx.HTTPError):
            if httpx.post(f"{url}/embeddings", json={"input": "probe"},
                          timeout=2.0).status_code == 200:
                return url
    return None


def hop_table(samples: Sequence[tuple[float, str]]) -> dict[str, float]:
    """Median ms per hop from ``(client ms, Server-Timing)`` samples: every named
    ``dur`` in the header, ``client`` (the whole request as the client saw it), and
    ``outside`` = client minus the outermost server figure (``front`` when a front
    deployment answered, else ``replica``): the proxy, the HTTP stack, the network."""
    if not samples:
        return {}
    columns: dict[str, list[float]] = {"client": []}
    outside: list[float] = []
    for client_ms, header in samples:
        parts: dict[str, float] = {}
        for item in filter(None, (p.strip() for p in header.split(","))):
            name, _, value = item.partition(";dur=")
            with contextlib.suppress(ValueError):
                parts[name] = float(value)
        columns["client"].append(client_ms)
        for name, value in parts.items():
            columns.setdefault(name, []).append(value)
        outer = parts.get("front", parts.get("replica"))
        if outer is not None:
            outside.append(client_ms - outer)
    if outside:
        columns["outside"] = outside
    return {name: float(np.median(values)) for name, values in columns.items()}


async def drive(
    call: Callable[[int], Awaitable[int]],
    concurrency: int,
    calls: int,
    duration_s: float,
) -> RateResult:
    """Closed loop: ``concurrency`` callers run ``call(i)`` (returning the items it
    answered) until ``calls`` calls were made or ``duration_s`` passed."""
    next_index = 0
    items = failures = made = 0
    deadline = time.perf_counter() + duration_s

    async def caller() -> None:
        nonlocal next_index, items, failures, made
        while next_index < calls and time.perf_counter() < deadline:
            index = next_index
            next_index += 1
            try:
                answered = await call(index)
            except Exception:  # a benchmark counts failures and goes on
                failures += 1
                continue
            items += answered
            made += 1

    start = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(concurrency)))
    return RateResult(concurrency, made, items, time.perf_counter() - start, failures)
