"""The Ray Serve application graph: ``build_app(args)`` for ``serve run
deployments.app:build_app profile=default`` and for Ray Serve config files.

One ``EncoderDeployment`` per distinct query-side model (roles that share weights share a
deployment), one ``CrossEncoderDeployment``, one ``ImageEncoderDeployment`` per enabled
image model, and the ``SearchIngress``; each model deployment takes its Ray options
(CPU/GPU share, replicas, autoscaling) and batch settings from ``serve`` in the profile.

The configuration is parsed once, at the edge (``build_app`` here, the CLI, the bench
scripts); the application receives the typed ``AppConfig``: the model replicas get its
``models`` (a ``ModelProfile``) and their roles, the ingress the whole ``AppConfig``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict
from ray.serve import Application

from deployments.autoscaling import with_texts_policy
from deployments.config import AppConfig, DeploymentSettings, config_from_data, load_config_data
from deployments.cross_encoder import CrossEncoderDeployment
from deployments.encoder import EncoderDeployment
from deployments.image_encoder import ImageEncoderDeployment
from deployments.ingress import SearchIngress
from deployments.roles import CROSS_ENCODER_ROLE, ModelDeployment, model_deployments
from deployments.stores import EmbeddedServers, StoreEndpoints

__all__ = [
    "INGRESS_NUM_CPUS",
    "AppArgs",
    "build_app",
    "build_application",
    "build_embeddings_application",
    "cpu_demand",
    "deployment_options",
    "encoder_deployment_options",
    "settings_for",
]


class AppArgs(BaseModel):
    """Arguments of ``build_app`` (strings from the ``serve run`` command line or a Serve
    config file's ``args``). ``config``: a YAML file merged over the profile;
    ``overrides``: profile keys, nested as in a profile, merged over both (for a Serve
    config file, e.g. the encoders' ``serve.encoder.autoscaling_config``, which the
    search ingress must see to hold back no more than a partial merged call)."""

    model_config = ConfigDict(extra="forbid")

    profile: str = "default"
    config: str | None = None
    data_dir: str | None = None
    milvus_uri: str | None = None
    postgres_dsn: str | None = None
    overrides: dict[str, Any] | None = None


def deployment_options(settings: DeploymentSettings) -> dict[str, Any]:
    """Ray Serve ``.options(...)`` of one model deployment from its settings."""
    options: dict[str, Any] = {
        "ray_actor_options": {"num_cpus": settings.num_cpus, "num_gpus": settings.num_gpus},
        "max_ongoing_requests": max(settings.max_ongoing_requests, settings.max_batch_size),
        "max_queued_requests": settings.max_queued_requests,
        "user_config": {
            "max_batch_size": settings.max_batch_size,
            "batch_wait_timeout_s": settings.batch_wait_timeout_s,
        },
    }
    if settings.autoscaling_config:
        options["autoscaling_config"] = settings.autoscaling_config
    else:
        options["num_replicas"] = settings.num_replicas
    return options


def encoder_deployment_options(settings: DeploymentSettings) -> dict[str, Any]:
    """:func:`deployment_options` of an ``EncoderDeployment``: under autoscaling it
    scales on the texts its replicas hold (``deployments.autoscaling``;
    ``target_ongoing_requests`` counts texts), unless ``autoscaling_config`` names a
    policy of its own."""
    options = deployment_options(settings)
    if "autoscaling_config" in options:
        options["autoscaling_config"] = with_texts_policy(options["autoscaling_config"])
    return options


#: Logical CPUs one search-ingress replica reserves.
INGRESS_NUM_CPUS = 0.25


def _start_replicas(settings: DeploymentSettings) -> int:
    """Replicas a deployment starts with: ``num_replicas``, or under autoscaling its
    ``initial_replicas`` / ``min_replicas`` (Serve's default 1)."""
    scaling = settings.autoscaling_config
    if settings.num_replicas == "auto" and not scaling:
        return 1  # Serve's "auto" autoscales from its default min_replicas, 1
    if not scaling:
        return int(settings.num_replicas)
    return int(scaling.get("initial_replicas") or scaling.get("min_replicas", 1) or 0)


def cpu_demand(config: AppConfig) -> dict[str, float]:
    """Logical CPUs each deployment of the service reserves at start (replicas x
    ``num_cpus``), by deployment name: the search ingress, each model deployment, and
    the embeddings application when ``serve.embeddings_route`` is set. Ray places no
    replica it cannot fit, and ``serve.run`` then waits for ever: compare the sum with
    the cluster's CPUs before deploying."""
    demand = {"SearchIngress": config.serve.ingress_replicas * INGRESS_NUM_CPUS}
    for deployment in model_deployments(config):
        settings = settings_for(config, deployment)
        demand[deployment.name] = _start_replicas(settings) * settings.num_cpus
    if config.serve.embeddings_route:
        source = _embeddings_source(config)
        settings = settings_for(config, source)
        name = _embeddings_name(source)
        demand[name] = _start_replicas(settings) * settings.num_cpus
    return demand


def settings_for(config: AppConfig, deployment: ModelDeployment) -> DeploymentSettings:
    """The Serve settings of one model deployment: ``serve.<kind>``, for an encoder with
    its ``serve.encoder_overrides`` entry applied (``ServeSettings.encoder_for``)."""
    if deployment.kind == "encoder":
        return config.serve.encoder_for(deployment.name)
    return getattr(config.serve, deployment.kind)


def _embeddings_source(config: AppConfig) -> ModelDeployment:
    """The text encoder deployment the embeddings application serves: the profile's first.

    Raises:
        ValueError: the profile has no text encoder deployment.
    """
    encoders = [d for d in model_deployments(config) if d.kind == "encoder"]
    if not encoders:
        raise ValueError("no text encoder deployment in this profile to serve embeddings")
    return encoders[0]


def _embeddings_name(source: ModelDeployment) -> str:
    return f"Embeddings-{source.roles[0]}"


def build_application(
    config: AppConfig,
    endpoints: StoreEndpoints,
    overrides: Mapping[str, Any] | None = None,
) -> Application:
    """The application for a parsed configuration and the stores' endpoints.

    Args:
        config: the validated configuration (``load_config`` / ``config_from_data``);
            each model deployment is bound to ``config.models`` (with its replicas'
            intra-op threads, ``DeploymentSettings.replica_models``) and its roles, the
            ingress to ``config`` itself (nothing is parsed again in the replicas).
        endpoints: where Milvus and PostgreSQL answer.
        overrides: replaces a model deployment by name (``"cross-encoder"`` or
            ``"Encoder-<role>"``) with another bound deployment, e.g. a failing one in a
            test.
    """
    serve = config.serve
    overrides = dict(overrides or {})
    encoders, images, cross = {}, {}, None
    for deployment in model_deployments(config):
        name, roles = deployment.name, deployment.roles
        dims = {role: config.models.spec(role).dimension for role in roles}
        if deployment.kind == "encoder":
            settings = serve.encoder_for(name)
            bound = overrides.get(name) or EncoderDeployment.options(
                name=name, **encoder_deployment_options(settings)
            ).bind(settings.replica_models(config.models), list(roles))
            encoders[name] = (bound, dims)
        elif deployment.kind == "image_encoder":
            bound = overrides.get(name) or ImageEncoderDeployment.options(
                name=name, **deployment_options(serve.image_encoder)
            ).bind(serve.image_encoder.replica_models(config.models), list(roles))
            images[name] = (bound, dims)
        else:
            cross = overrides.get("cross-encoder") or CrossEncoderDeployment.options(
                name=name, **deployment_options(serve.cross_encoder)
            ).bind(serve.cross_encoder.replica_models(config.models), CROSS_ENCODER_ROLE)
    return SearchIngress.options(
        num_replicas=serve.ingress_replicas,
        max_ongoing_requests=serve.ingress_max_ongoing_requests,
        max_queued_requests=serve.ingress_max_queued_requests,
        backpressure_config={"status_code": 503, "retry_after_s": serve.retry_after_s},
        request_router_config={"max_backoff_s": serve.router_max_backoff_s},
        ray_actor_options={"num_cpus": INGRESS_NUM_CPUS},
    ).bind(config, endpoints, encoders, cross, images)


def build_embeddings_application(config: AppConfig) -> Application:
    """The profile's first text encoder deployment as an application of its own: HTTP
    goes proxy -> encoder replica (``POST <route>/embeddings``, or ``POST <route>`` when
    the route itself ends in ``/embeddings``; OpenAI request shape,
    ``deployments.embeddings_http``), one hop and one JSON round fewer than a route on
    the search ingress. Its replicas are its own (the same Serve options as the encoder
    deployment it copies: ``serve.encoder`` with that deployment's ``encoder_overrides``);
    with ``serve.embeddings_port`` each also answers on that port itself.

    Raises:
        ValueError: the profile has no text encoder deployment.
    """
    first = _embeddings_source(config)
    settings = settings_for(config, first)
    # the port keeps the Serve path's bounds: ongoing + queued, none for an unbounded queue
    port_bound = (
        None
        if settings.max_queued_requests < 0
        else settings.max_ongoing_requests + settings.max_queued_requests
    )
    return EncoderDeployment.options(
        name=_embeddings_name(first),
        **encoder_deployment_options(settings),
        # an overloaded replica answers as the search ingress does: 503 + Retry-After
        backpressure_config={"status_code": 503, "retry_after_s": config.serve.retry_after_s},
    ).bind(
        settings.replica_models(config.models),
        list(first.roles),
        http_port=config.serve.embeddings_port,
        http_host=config.serve.host,
        http_max_concurrency=port_bound,
        http_timeout_s=config.serve.request_timeout_s,
    )


def build_app(args: dict[str, Any]) -> Application:
    """Ray Serve app builder (``serve run deployments.app:build_app profile=default``).

    The edge of a Serve config file: the configuration is read, merged with the
    ``milvus_uri`` / ``postgres_dsn`` arguments and validated here, once. Store endpoints
    come from those arguments or the profile; without them the embedded servers under
    ``data_dir`` are started or reused.

    Raises:
        pydantic.ValidationError: an unknown argument or an invalid configuration value.
        FileNotFoundError: unknown profile.
    """
    parsed = AppArgs.model_validate(args or {})
    data = load_config_data(parsed.profile, parsed.config, parsed.data_dir, parsed.overrides)
    stores = dict(data.get("stores") or {})
    if parsed.milvus_uri:
        stores["milvus_uri"] = parsed.milvus_uri
    if parsed.postgres_dsn:
        stores["postgres_dsn"] = parsed.postgres_dsn
    data["stores"] = stores
    config = config_from_data(data)
    # build_app may run in a short-lived Ray worker: the Lite server must outlive it
    endpoints = EmbeddedServers(config, stop_at_exit=False).start()
    return build_application(config, endpoints)
