"""The application's configuration: one typed object parsed once at the edge.

A profile (``configs/profiles/<name>.yaml``) holds the sections ``models`` (which weights
fill each role, ``models.specs.ModelProfile``), ``pipeline`` (every SPEC.md number,
``pipeline.settings.PipelineSettings``), ``stores`` and ``serve``. ``--config FILE``
merges a user file over the profile, key by key.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, model_validator

from deployments.auth_config import ApiKey, AuthSettings
from deployments.call_coalescing import MergeSettings
from models.specs import ModelProfile
from pipeline.settings import PipelineSettings, deep_merge, load_yaml

__all__ = [
    "CONFIG_DIR",
    "PROFILES_DIR",
    "ApiKey",
    "AppConfig",
    "AuthSettings",
    "DeploymentSettings",
    "ServeSettings",
    "StoreSettings",
    "config_from_data",
    "load_config",
    "load_config_data",
]

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
PROFILES_DIR = CONFIG_DIR / "profiles"
DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _not_bool(value: Any) -> Any:
    # pydantic's lax int reads YAML's true as 1: a port must be written as a number
    if isinstance(value, bool):
        raise ValueError("a port number is required, not true / false")
    return value


#: A TCP port number, 1..65535 (YAML's true / false refused).
Port = Annotated[int, BeforeValidator(_not_bool), Field(ge=1, le=65535)]


class StoreSettings(_Settings):
    """Where vectors and the registry live. ``None`` URI / DSN: the embedded servers
    (Milvus Lite, embedded PostgreSQL) under the data directory."""

    milvus_uri: str | None = None
    milvus_token: SecretStr | None = None
    milvus_index: Literal["flat", "hnsw", "ivf_flat", "autoindex"] = "flat"
    #: Strong sees every finished write; Bounded saves ~200 ms per search on a server.
    milvus_search_consistency: Literal["Strong", "Bounded", "Session", "Eventually"] = "Strong"
    #: Partition new collections by knowledge base (large server collections).
    milvus_partition_by_kb: bool = False
    collection_prefix: str = ""
    postgres_dsn: SecretStr | None = None
    pool_min_size: int = Field(1, ge=0)
    pool_max_size: int = Field(8, ge=1)


class DeploymentSettings(_Settings):
    """Ray Serve options of one model deployment kind (encoder, cross-encoder, image).

    ``intra_op_threads``: torch / ONNX Runtime intra-op threads in each replica. Unset,
    a replica takes the profile's ``models.cpu_threads``, else ``ceil(num_cpus)`` (at
    least 1): set explicitly in the replica (``threads_for``), never left to Ray's
    ``OMP_NUM_THREADS`` default.
    """

    num_replicas: int | Literal["auto"] = 1
    num_cpus: float = Field(1.0, ge=0)
    intra_op_threads: int | None = Field(None, ge=1)
    num_gpus: float = Field(0.0, ge=0)
    max_batch_size: int = Field(32, ge=1)
    batch_wait_timeout_s: float = Field(0.005, ge=0)
    max_ongoing_requests: int = Field(64, ge=1)
    max_queued_requests: int = Field(-1, ge=-1)
    autoscaling_config: dict[str, Any] | None = None
    #: Each search-ingress replica keeps ``caller_calls_per_replica`` encode calls per
    #: encoder replica out at most (the deployment's roles together); the calls that
    #: come meanwhile go merged into handle calls of about this many texts at most
    #: (``deployments.call_coalescing``); a queue of this many texts goes out at once
    #: without taking a slot (``send_full_calls``). Under ``autoscaling_config`` the
    #: bound is per ``max_replicas``, and fewer than this many texts per role (with
    #: titles or without) wait at an ingress replica, unseen by the autoscaler (an
    #: encoder deployment scales on the texts its replicas hold,
    #: ``deployments.autoscaling``; calls past a replica's ``max_ongoing_requests``
    #: count as the mean call the replicas hold). None: one handle call per encode
    #: call.
    caller_merge_items: int | None = Field(16, ge=1)
    #: Merged encode calls out per encoder replica (per ingress replica; under
    #: ``autoscaling_config`` per ``max_replicas``; full calls past it not counted). 1: the
    #: callers queue at the ingress while the replica runs its forward pass and go as
    #: one larger call (on 2 CPU cores, 1 served 1.07-1.46x the texts/s of 2 with int8
    #: MiniLM at c=8-32 and about half the caller's CPU per text; torch 0.91-1.19x,
    #: within noise; bench/README.md, issue 16). 2 overlaps the next call's round trip
    #: with the forward pass, for a model whose forward pass is as short as a handle
    #: call. The deployment's encode calls share the slots: with one replica, one slow
    #: call holds the encodes of that ingress whose queue has fewer than
    #: ``caller_merge_items`` texts until it answers or its callers' request deadlines
    #: cancel it (a full queue goes past it). Read for ``serve.encoder`` and its
    #: ``encoder_overrides`` only (the ingress's encode calls).
    caller_calls_per_replica: int = Field(1, ge=1)

    def threads_for(self, models: ModelProfile) -> int:
        """Intra-op threads of one replica: ``intra_op_threads``, else the profile's
        ``cpu_threads``, else ``ceil(num_cpus)``, at least 1."""
        if self.intra_op_threads is not None:
            return self.intra_op_threads
        if models.cpu_threads is not None:
            return models.cpu_threads
        return max(1, math.ceil(self.num_cpus))

    def caller_merge(self) -> MergeSettings | None:
        """How the search ingress merges its encode calls to a deployment of these
        settings (all the deployment's roles together, per ingress replica):
        ``caller_merge_items`` per call, spread over up to one call per replica, and
        ``caller_calls_per_replica`` calls per replica in flight at most: the callers
        that come meanwhile queue and go merged, and a queue of ``caller_merge_items``
        texts goes out at once past the bound (``send_full_calls``: against the bound
        alone 1.11-1.34x the texts/s at c=64, 0.94-1.14x at c=32, text and SMILES
        encoders, int8 and torch, 2 replicas, ``bench/latest/full-calls-20261202/``).
        Under ``autoscaling_config`` the replicas are its ``max_replicas`` (Serve's
        default 1), and what waits at the ingress, unseen by the texts-in-flight policy,
        is less than one call per role: a queue that grows goes to the replicas, where
        the policy counts it. None when calls are not merged (``caller_merge_items`` unset,
        or ``num_replicas: auto`` without an ``autoscaling_config``)."""
        if self.caller_merge_items is None:
            return None
        if self.autoscaling_config:
            replicas = max(1, int(self.autoscaling_config.get("max_replicas", 1)))
        elif isinstance(self.num_replicas, int) and self.num_replicas >= 1:
            replicas = self.num_replicas
        else:
            return None
        return MergeSettings(self.caller_merge_items, replicas,
                             self.caller_calls_per_replica * replicas, send_full_calls=True)

    def replica_models(self, models: ModelProfile) -> ModelProfile:
        """The model profile a replica of this deployment loads: ``models`` with
        ``cpu_threads`` set to :meth:`threads_for`."""
        return models.model_copy(update={"cpu_threads": self.threads_for(models)})


class ServeSettings(_Settings):
    """The HTTP service: address, ingress limits, one ``DeploymentSettings`` per model
    deployment kind, and per encoder deployment the fields that differ from
    ``encoder`` (``encoder_overrides``)."""

    host: str = "127.0.0.1"
    port: Port = 8000
    ingress_replicas: int = Field(1, ge=1)
    ingress_max_ongoing_requests: int = Field(64, ge=1)
    ingress_max_queued_requests: int = Field(128, ge=-1)
    request_timeout_s: float = Field(30.0, gt=0)
    #: How long a JSON request body may take to arrive whole (then a 408 naming ``body``);
    #: the ingress slot it holds meanwhile serves no one (an image upload has
    #: ``request_timeout_s``). At most ``request_timeout_s``.
    body_timeout_s: float = Field(10.0, gt=0)
    #: Retry-After (s) on the fast 503 an overloaded ingress answers (Ray backpressure).
    retry_after_s: float = Field(1.0, ge=0)
    #: Longest wait (s) of the proxy's router between tries to hand a queued request to an
    #: ingress replica at its ``ingress_max_ongoing_requests`` (Ray's ``RequestRouterConfig
    #: .max_backoff_s``, 0.5 by default). Its two routing tasks learn of a free slot only
    #: when they try again, so at Ray's default a queue drained by about 2 requests per
    #: 0.5 s while the replica idled: 200 concurrent requests took up to 16-20 s, against
    #: 2.6-3.6 s at 0.05 (2 cores, demo corpus; README "Under load").
    router_max_backoff_s: float = Field(0.05, gt=0)
    max_image_bytes: int = Field(10 * 1024 * 1024, ge=1)
    #: Largest JSON request body (bytes) on the search ingress; past it a 413 naming
    #: ``body`` before the body is parsed (an image search: ``max_image_bytes`` + 64 KiB).
    max_request_bytes: int = Field(1024 * 1024, ge=1024)
    #: Route of the lean embeddings application (``build_embeddings_application``: the
    #: text encoder answering HTTP itself), e.g. ``/v1/embeddings``; None: not deployed.
    #: Must end in ``/embeddings`` so it cannot shadow the search app's routes.
    embeddings_route: str | None = Field(None, pattern=r"^(/[A-Za-z0-9_-]+)*/embeddings$")
    #: Each replica of the embeddings application also answers ``POST /v1/embeddings``
    #: on this port of ``host`` itself (``deployments.embeddings_port``: past Serve's
    #: proxy and request path, the replicas of a node share the port); None: not.
    #: Needs ``embeddings_route``.
    embeddings_port: Port | None = None
    encoder: DeploymentSettings = Field(default_factory=DeploymentSettings)
    #: Per encoder deployment (``Encoder-<role>``, as ``build_application`` names it for
    #: this profile): the fields of ``encoder`` that differ for it, e.g.
    #: ``{Encoder-molformer: {num_replicas: 2, intra_op_threads: 1}}``. An
    #: ``autoscaling_config`` entry is merged key by key over ``encoder``'s (null: a fixed
    #: ``num_replicas``). The embeddings application copies its source deployment's entry.
    encoder_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    cross_encoder: DeploymentSettings = Field(
        default_factory=lambda: DeploymentSettings(max_batch_size=256)
    )
    image_encoder: DeploymentSettings = Field(default_factory=DeploymentSettings)

    @model_validator(mode="after")
    def _check_encoder_overrides(self) -> ServeSettings:
        for name, override in self.encoder_overrides.items():
            try:
                settings = self.encoder_for(name)
            except ValueError as error:  # pydantic's ValidationError included
                raise ValueError(f"serve.encoder_overrides.{name}: {error}") from error
            if "num_replicas" in override and settings.autoscaling_config:
                raise ValueError(
                    f"serve.encoder_overrides.{name}.num_replicas has no effect under "
                    "autoscaling_config: set autoscaling_config: null there for a fixed "
                    "count, or its min_replicas / max_replicas")
        return self

    def encoder_for(self, deployment: str) -> DeploymentSettings:
        """The settings of encoder deployment ``deployment``: ``encoder`` with its
        ``encoder_overrides`` entry applied.

        Raises:
            pydantic.ValidationError: the entry names an unknown field or a bad value.
        """
        override = self.encoder_overrides.get(deployment)
        if not override:
            return self.encoder
        fields = {**self.encoder.model_dump(), **override}
        base, scaling = self.encoder.autoscaling_config, override.get("autoscaling_config")
        if base and isinstance(scaling, dict):  # key by key; null keeps null
            fields["autoscaling_config"] = {**base, **scaling}
        return DeploymentSettings.model_validate(fields)


class AppConfig(_Settings):
    """Everything the application reads, for one profile."""

    profile: str = "default"
    data_dir: Path = Path(".biomed-search")
    models: ModelProfile
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    stores: StoreSettings = Field(default_factory=StoreSettings)
    serve: ServeSettings = Field(default_factory=ServeSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)

    @model_validator(mode="after")
    def _check_embeddings_route(self) -> AppConfig:
        return self.check_embeddings_route()

    def check_embeddings_route(self) -> AppConfig:
        """The embeddings application answers HTTP without the ingress and its key check:
        refuse it where API keys protect the service; its port needs the route and a
        port other than the service's (run again by ``serve`` after the command line's
        ``--port``).

        Raises:
            ValueError: one of these combinations.
        """
        if self.serve.embeddings_route and self.auth.api_keys:
            raise ValueError(
                "serve.embeddings_route has no API-key check: unset it, or auth.api_keys"
            )
        port = self.serve.embeddings_port
        if port is not None and not self.serve.embeddings_route:
            raise ValueError(
                "serve.embeddings_port: set serve.embeddings_route too (the embeddings "
                "application's replicas open the port)"
            )
        if port is not None and port == self.serve.port:
            raise ValueError("serve.embeddings_port must differ from serve.port")
        return self

    @model_validator(mode="after")
    def _check_encoder_override_names(self) -> AppConfig:
        """Each ``serve.encoder_overrides`` key names an encoder deployment of this
        profile (a misspelt one would silently change nothing).

        Raises:
            ValueError: an unknown name (the message lists the profile's).
        """
        if not self.serve.encoder_overrides:
            return self
        from deployments.roles import model_deployments  # it imports this module

        names = {d.name for d in model_deployments(self) if d.kind == "encoder"}
        unknown = sorted(set(self.serve.encoder_overrides) - names)
        if unknown:
            raise ValueError(
                f"serve.encoder_overrides: no encoder deployment {', '.join(unknown)} in "
                f"this profile (its encoder deployments: {', '.join(sorted(names))})")
        return self

    @model_validator(mode="after")
    def _check_collection_metrics(self) -> AppConfig:
        """Each enabled collection compares vectors the way its encoders' model cards
        say: ``pipeline.collections.<name>.metric`` must equal the ``metric`` of its
        query and document roles (roles the profile does not fill are not checked).

        Raises:
            ValueError: a mismatch (e.g. MedCPT roles ``metric: ip`` under a ``cosine``
                collection, which would compare raw vectors by cosine).
        """
        for name, spec in self.pipeline.enabled_collections().items():
            for role in dict.fromkeys((spec.query_encoder, spec.document_encoder)):
                encoder = self.models.roles.get(role)
                if encoder is None or not encoder.enabled:
                    continue
                if encoder.metric.value != spec.metric:
                    raise ValueError(
                        f"collection {name!r} has metric {spec.metric!r} but its encoder "
                        f"role {role!r} has metric {encoder.metric.value!r}; set "
                        f"pipeline.collections.{name}.metric and models.roles.{role}.metric "
                        f"alike (the model card says which)"
                    )
        return self


def load_config_data(
    profile: str = "default",
    config_path: str | Path | None = None,
    data_dir: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The merged, unvalidated configuration mapping: profile ``profile`` (a name under
    ``configs/profiles/`` or a YAML path), then ``config_path``, then ``overrides``.
    Edges that must change it before validation (``deployments.app.build_app`` applies
    its store arguments) validate it once with :func:`config_from_data` and hand the
    ``AppConfig`` on; nothing downstream takes the mapping.

    Raises:
        FileNotFoundError: the profile or config file does not exist (the message lists
            the shipped profiles).
    """
    path = Path(profile)
    if not path.suffix:
        path = PROFILES_DIR / f"{profile}.yaml"
    if not path.exists():
        shipped = ", ".join(sorted(p.stem for p in PROFILES_DIR.glob("*.yaml")))
        raise FileNotFoundError(f"profile {profile!r} not found ({path}); shipped: {shipped}")
    data = load_yaml(path)
    if config_path is not None:
        data = deep_merge(data, load_yaml(config_path))
    if overrides:
        data = deep_merge(data, overrides)
    data["profile"] = path.stem
    if data_dir is not None:
        data["data_dir"] = str(Path(data_dir).expanduser().resolve())
    else:
        data["data_dir"] = str(Path(data.get("data_dir", ".biomed-search")).expanduser().resolve())
    return data


def config_from_data(data: dict[str, Any]) -> AppConfig:
    """Validate a mapping from :func:`load_config_data`; a relative
    ``models.onnx_cache_dir`` becomes ``<data_dir>/onnx`` (replicas may run in another
    working directory).

    Raises:
        ValueError: a value is invalid (pydantic names the field).
    """
    data = dict(data)
    models_data = dict(data.pop("models", {}) or {})
    data_dir = Path(data.get("data_dir", ".biomed-search"))
    onnx_dir = Path(models_data.get("onnx_cache_dir") or "onnx")
    if not onnx_dir.is_absolute():  # replicas may run in another working directory
        models_data["onnx_cache_dir"] = str(data_dir / "onnx")
    return AppConfig(models=ModelProfile.from_mapping(models_data), **data)


def load_config(
    profile: str = "default",
    config_path: str | Path | None = None,
    data_dir: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
) -> AppConfig:
    """Read, merge and validate a configuration (see :func:`load_config_data`).

    Raises:
        FileNotFoundError: the profile or config file does not exist.
        ValueError: a value is invalid (pydantic names the field).
    """
    return config_from_data(load_config_data(profile, config_path, data_dir, overrides))
