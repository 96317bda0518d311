"""The whole service in one process, no Ray: embedded (or configured) stores, local models,
the same ``SearchService`` and ``Retriever`` as the Serve ingress. Used by evaluation, the
in-process benchmark baseline, and tests of the HTTP API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from deployments.config import AppConfig
from deployments.local import LocalModels, load_local_models
from deployments.roles import CROSS_ENCODER_ROLE, query_roles, uses_cross_encoder
from deployments.service import SearchService
from deployments.stores import EmbeddedServers, StoreEndpoints
from pipeline.ports import ModelPorts

__all__ = ["InProcessService", "in_process_service", "local_model_ports"]


def local_model_ports(config: AppConfig) -> tuple[ModelPorts, LocalModels]:
    """Load the query-time roles (and the cross-encoder) of ``config`` in this process."""
    roles = query_roles(config)
    if uses_cross_encoder(config):
        roles = [*roles, CROSS_ENCODER_ROLE]
    models = load_local_models(config.models, roles)
    ports = ModelPorts(
        encoders=models.encoders,
        cross_encoder=models.cross_encoder,
        image_encoders=models.image_encoders,
    )
    return ports, models


@dataclass
class InProcessService:
    """A started service, its models and the store endpoints."""

    service: SearchService
    models: LocalModels
    endpoints: StoreEndpoints


@asynccontextmanager
async def in_process_service(
    config: AppConfig, endpoints: StoreEndpoints | None = None
) -> AsyncIterator[InProcessService]:
    """Start stores (unless ``endpoints`` are given), load models, open the service; close
    and stop what was started on exit.

    Raises:
        pipeline.errors.BackendUnavailable: a store does not come up.
        models.errors.ModelNotAvailableError: model weights missing.
    """
    servers = EmbeddedServers(config) if endpoints is None else None
    try:  # start() inside: a kill just after it returns still stops the stores
        if servers is not None:
            endpoints = servers.start()
        assert endpoints is not None
        ports, models = local_model_ports(config)
        service = SearchService(config, endpoints, ports)
        await service.start()
        try:
            yield InProcessService(service=service, models=models, endpoints=endpoints)
        finally:
            await service.close()
    finally:
        if servers is not None:
            servers.stop()
