"""``SearchIngress``: the FastAPI app of ``deployments/api.py`` served by Ray Serve. It
receives the model deployments' handles in its constructor and builds the
``SearchService`` with handle-backed ports; the retrieval logic lives in ``pipeline``."""

from __future__ import annotations

from typing import Any

from ray import serve
from ray.serve.handle import DeploymentHandle

from deployments.api import create_app
from deployments.config import config_from_data
from deployments.handles import HandleCrossEncoder, HandleImageEncoder, HandleTextEncoder, health
from deployments.service import ModelPorts, SearchService
from deployments.stores import StoreEndpoints

__all__ = ["SearchIngress"]


@serve.deployment(name="SearchIngress", max_ongoing_requests=64)
@serve.ingress()
class SearchIngress:
    """The HTTP entry point.

    Args:
        config_data: merged configuration mapping (``load_config_data``).
        endpoints: ``{"milvus_uri", "postgres_dsn", "milvus_token"}``.
        encoders: deployment name -> (handle, {role: dimension}).
        cross_encoder: the cross-encoder handle, or None.
        image_encoders: deployment name -> (handle, {role: dimension}).
    """

    def __init__(
        self,
        config_data: dict[str, Any],
        endpoints: dict[str, str],
        encoders: dict[str, tuple[DeploymentHandle, dict[str, int]]],
        cross_encoder: DeploymentHandle | None = None,
        image_encoders: dict[str, tuple[DeploymentHandle, dict[str, int]]] | None = None,
    ) -> None:
        config = config_from_data(config_data)
        text_ports, image_ports, checks = {}, {}, {}
        for name, (handle, roles) in encoders.items():
            for role, dimension in roles.items():
                text_ports[role] = HandleTextEncoder(handle, role, dimension)
            checks[name] = _checker(handle, name)
        for name, (handle, roles) in (image_encoders or {}).items():
            for role, dimension in roles.items():
                image_ports[role] = HandleImageEncoder(handle, role, dimension)
            checks[name] = _checker(handle, name)
        if cross_encoder is not None:
            checks["cross-encoder"] = _checker(cross_encoder, "cross-encoder")
        models = ModelPorts(
            encoders=text_ports,
            cross_encoder=HandleCrossEncoder(cross_encoder) if cross_encoder else None,
            image_encoders=image_ports,
            health_checks=checks,
        )
        self.service = SearchService(config, StoreEndpoints(**endpoints), models)

    def __serve_build_asgi_app__(self) -> Any:
        """Build the FastAPI app in the replica (nothing pickled) and attach the service."""
        app = create_app()
        app.state.service = self.service
        return app

    async def check_health(self) -> None:
        """The ingress is healthy when its event loop answers; store and model state is
        reported by ``/readyz`` instead, so a store outage does not restart replicas."""


def _checker(handle: DeploymentHandle, name: str):  # type: ignore[no-untyped-def]
    async def check() -> Any:
        return await health(handle, name)

    return check
