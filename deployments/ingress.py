"""``SearchIngress``: the FastAPI app of ``deployments/api.py`` served by Ray Serve. It
receives the parsed configuration, the store endpoints and the model deployments'
handles in its constructor and builds the ``SearchService`` with handle-backed ports; the
retrieval logic lives in ``pipeline``."""

from __future__ import annotations

from typing import Any

from ray import serve
from ray.serve.handle import DeploymentHandle

from deployments.api import create_app
from deployments.config import AppConfig
from deployments.handles import (
    HandleCrossEncoder,
    HandleImageEncoder,
    HandleTextEncoder,
    batch_stats,
    merged_encoder_calls,
)
from deployments.metrics import RequestMetricsMiddleware
from deployments.service import SearchService
from deployments.stores import StoreEndpoints
from pipeline.ports import ModelPorts

__all__ = ["SearchIngress"]


@serve.deployment(name="SearchIngress", max_ongoing_requests=64)
@serve.ingress()
class SearchIngress:
    """The HTTP entry point.

    Args:
        config: the validated configuration (parsed once by the app builder's caller).
        endpoints: where Milvus and PostgreSQL answer.
        encoders: deployment name -> (handle, {role: dimension}).
        cross_encoder: the cross-encoder handle, or None.
        image_encoders: deployment name -> (handle, {role: dimension}).
    """

    def __init__(
        self,
        config: AppConfig,
        endpoints: StoreEndpoints,
        encoders: dict[str, tuple[DeploymentHandle, dict[str, int]]],
        cross_encoder: DeploymentHandle | None = None,
        image_encoders: dict[str, tuple[DeploymentHandle, dict[str, int]]] | None = None,
    ) -> None:
        text_ports: dict[str, HandleTextEncoder] = {}
        image_ports: dict[str, HandleImageEncoder] = {}
        checks: dict[str, Any] = {}
        stats: dict[str, Any] = {}
        for name, (handle, roles) in encoders.items():
            merge = config.serve.encoder_for(name).caller_merge()
            merged = merged_encoder_calls(handle, merge) if merge is not None else None
            ports = {
                role: HandleTextEncoder(handle, role, dim, merged) for role, dim in roles.items()
            }
            text_ports.update(ports)
            first = next(iter(ports.values()))
            checks[name] = lambda port=first: port.encode(["readiness check"])
            stats[name] = lambda handle=handle, name=name: batch_stats(handle, name)
        for name, (handle, roles) in (image_encoders or {}).items():
            image_ports.update(
                {role: HandleImageEncoder(handle, role, dim) for role, dim in roles.items()}
            )
            checks[name] = stats[name] = lambda handle=handle, name=name: batch_stats(handle, name)
        cross = HandleCrossEncoder(cross_encoder) if cross_encoder is not None else None
        if cross is not None:
            checks["cross-encoder"] = lambda: cross.score("readiness", ["check"])
            stats["cross-encoder"] = lambda: batch_stats(cross_encoder, "cross-encoder")
        models = ModelPorts(
            encoders=text_ports,
            cross_encoder=cross,
            image_encoders=image_ports,
            health_checks=checks,
            stats_sources=stats,
        )
        self.service = SearchService(config, endpoints, models)

    def __serve_build_asgi_app__(self) -> Any:
        """Build the FastAPI app in the replica (nothing pickled), attach the service and
        the Prometheus request metrics (``deployments.metrics``)."""
        app = create_app()
        app.state.service = self.service
        app.add_middleware(RequestMetricsMiddleware, service=self.service)
        return app

    async def check_health(self) -> None:
        """The ingress is healthy when its event loop answers; store and model state is
        reported by ``/readyz`` instead, so a store outage does not restart replicas."""
