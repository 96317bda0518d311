"""The configuration is parsed once, at the edge: ``build_application`` binds every model
deployment to the parsed ``ModelProfile`` (``AppConfig.models``) and the ingress to the
``AppConfig`` and ``StoreEndpoints`` themselves, and the replicas use what they receive
without parsing again, so paths ``config_from_data`` resolves (a relative
``models.onnx_cache_dir`` made absolute under the data directory) reach the replicas.
Builds the application graph only; no Ray cluster is started."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
MODEL_PREFIXES = ("Encoder-", "ImageEncoder-", "CrossEncoder")


@pytest.fixture
def config(tmp_path: Path):
    """Production with the image models (every model deployment kind) and a relative
    ONNX cache directory, parsed once."""
    from deployments.config import load_config

    return load_config(
        "production",
        REPO / "configs/cluster/images.yaml",
        data_dir=tmp_path,
        overrides={"models": {"onnx_cache_dir": "relative/onnx"}},
    )


@pytest.fixture
def endpoints():
    from deployments.stores import StoreEndpoints

    return StoreEndpoints(milvus_uri="http://milvus.test:19530", postgres_dsn="postgresql://t")


def _built(config, endpoints) -> dict[str, Any]:
    """Deployment name -> built deployment (its class and bound init args)."""
    from ray.serve._private.build_app import build_app

    from deployments.app import build_application

    built = build_app(build_application(config, endpoints), name="handoff")
    return {deployment.name: deployment for deployment in built.deployments}


def _user_class(deployment) -> type:
    """The class the project wrote (``@serve.ingress`` wraps it in a subclass that takes
    its name and module, with an async ``__init__``)."""
    cls = deployment.func_or_class
    return next(
        c
        for c in cls.__mro__
        if c.__module__.startswith("deployments.")
        and "__init__" in vars(c)
        and not inspect.iscoroutinefunction(vars(c)["__init__"])
    )


def test_replicas_and_ingress_are_bound_to_the_parsed_config(config, endpoints) -> None:
    from deployments.config import AppConfig
    from deployments.stores import StoreEndpoints
    from models.specs import ModelProfile

    deployments = _built(config, endpoints)
    models = {name: d for name, d in deployments.items() if name.startswith(MODEL_PREFIXES)}
    assert {name.split("-")[0] for name in models} == {"Encoder", "ImageEncoder", "CrossEncoder"}
    for name, deployment in models.items():
        profile = deployment.init_args[0]
        assert isinstance(profile, ModelProfile), (name, type(profile))
        settings = {
            "Encoder": config.serve.encoder,
            "ImageEncoder": config.serve.image_encoder,
            "CrossEncoder": config.serve.cross_encoder,
        }[name.split("-")[0]]
        # the parsed profile, with the replica's intra-op threads set explicitly
        assert profile.cpu_threads == settings.threads_for(config.models), name
        assert profile.model_copy(update={"cpu_threads": config.models.cpu_threads}) == (
            config.models
        ), name
    ingress = deployments["SearchIngress"]
    bound_config, bound_endpoints = ingress.init_args[:2]
    assert isinstance(bound_config, AppConfig), type(bound_config)
    assert bound_config == config
    assert isinstance(bound_endpoints, StoreEndpoints), type(bound_endpoints)
    assert bound_endpoints == endpoints


def test_relative_onnx_cache_dir_reaches_the_replicas_absolute(
    config, endpoints, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each replica's constructor hands its loader the profile it was bound to, with the
    ONNX cache under the data directory (what a replica in another working directory
    needs), and the ingress hands the service the ``AppConfig`` it was bound to."""
    import deployments.cross_encoder
    import deployments.encoder
    import deployments.image_encoder
    import deployments.ingress

    expected = tmp_path.resolve() / "onnx"
    assert config.models.onnx_cache_dir == expected  # parsed once, at the edge
    loaded: dict[str, Path] = {}

    def fake_load_shared(profile, roles):
        for role in roles:
            loaded[role] = profile.onnx_cache_dir
        return {role: object() for role in roles}

    for module in (deployments.encoder, deployments.cross_encoder, deployments.image_encoder):
        monkeypatch.setattr(module, "load_shared", fake_load_shared)
    services: list[tuple[Any, Any]] = []

    def fake_service(config, endpoints, models):
        services.append((config, endpoints))
        return object()

    monkeypatch.setattr(deployments.ingress, "SearchService", fake_service)

    deployments_by_name = _built(config, endpoints)
    roles: set[str] = set()
    for name, deployment in deployments_by_name.items():
        if name.startswith(MODEL_PREFIXES):
            _user_class(deployment)(*deployment.init_args, **deployment.init_kwargs)
            bound_roles = deployment.init_args[1]
            roles.update([bound_roles] if isinstance(bound_roles, str) else bound_roles)
    assert roles and set(loaded) == roles
    assert all(path == expected and path.is_absolute() for path in loaded.values()), loaded

    ingress = deployments_by_name["SearchIngress"]
    cls = _user_class(ingress)
    cls.__init__(object.__new__(cls), *ingress.init_args, **ingress.init_kwargs)
    (service_config, service_endpoints), *_ = services
    assert service_config is ingress.init_args[0]  # not parsed again in the replica
    assert service_config.models.onnx_cache_dir == expected
    assert service_endpoints is ingress.init_args[1]


@pytest.mark.parametrize(
    ("num_cpus", "intra_op_threads", "cpu_threads", "expected"),
    [
        (0.5, None, None, 1),
        (2.0, None, None, 2),
        (1.5, None, None, 2),
        (0.5, 3, None, 3),
        (0.5, None, 4, 4),
        (2.0, 1, 4, 1),
    ],
)
def test_replica_threads_come_from_the_deployment_not_from_ray(
    config,
    num_cpus: float,
    intra_op_threads: int | None,
    cpu_threads: int | None,
    expected: int,
) -> None:
    """Intra-op threads per replica: the deployment's own setting, else the profile's
    ``cpu_threads``, else ceil(num_cpus) (never Ray's OMP_NUM_THREADS default)."""
    from deployments.config import DeploymentSettings

    settings = DeploymentSettings(num_cpus=num_cpus, intra_op_threads=intra_op_threads)
    models = config.models.model_copy(update={"cpu_threads": cpu_threads})
    assert settings.threads_for(models) == expected
    assert settings.replica_models(models).cpu_threads == expected


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, (16, 1, 1, True)),
        ({"num_replicas": 3, "caller_merge_items": 8}, (8, 3, 3, True)),
        ({"num_replicas": 2, "caller_calls_per_replica": 2}, (16, 2, 4, True)),
        ({"caller_merge_items": None}, None),
        ({"num_replicas": "auto"}, None),
        ({"autoscaling_config": {"min_replicas": 1, "max_replicas": 4}}, (16, 4, 4, True)),
        ({"autoscaling_config": {"min_replicas": 1}, "caller_calls_per_replica": 3},
         (16, 1, 3, True)),
        ({"autoscaling_config": {"max_replicas": 4}, "caller_merge_items": None}, None),
    ],
)
def test_the_ingress_holds_back_less_than_a_full_call(fields, expected):
    """A fixed encoder deployment gets ``caller_calls_per_replica`` calls per replica out
    at most (default one), the callers beyond wait and go merged. An autoscaled one gets
    the same bound over ``max_replicas`` (Serve's default 1). Either way a full call goes
    past it (``send_full_calls``: under autoscaling the autoscaler then sees all but a
    partial call's texts; ``DeploymentSettings.caller_merge``)."""
    from deployments.config import DeploymentSettings

    merge = DeploymentSettings(**fields).caller_merge()
    got = None if merge is None else (merge.max_items, merge.min_calls, merge.max_in_flight,
                                      merge.send_full_calls)
    assert got == expected


@pytest.mark.parametrize("route", ["/", "/v1", "/v1/embeddings/", "/v1/search", "v1/embeddings"])
def test_an_embeddings_route_that_could_shadow_the_search_app_is_refused(route, tmp_path):
    from pydantic import ValidationError

    from deployments.config import load_config

    with pytest.raises(ValidationError, match="embeddings_route"):
        load_config("default", data_dir=tmp_path, overrides={"serve": {"embeddings_route": route}})


def test_the_embeddings_route_is_refused_where_api_keys_protect_the_service(tmp_path):
    from pydantic import ValidationError

    from deployments.config import load_config

    ok = load_config(
        "default", data_dir=tmp_path, overrides={"serve": {"embeddings_route": "/v1/embeddings"}}
    )
    assert ok.serve.embeddings_route == "/v1/embeddings"
    keys = {"api_keys": [{"name": "a", "key": "secret-a", "kb_ids": ["*"]}]}
    with pytest.raises(ValidationError, match="no API-key check"):
        load_config(
            "default",
            data_dir=tmp_path,
            overrides={"serve": {"embeddings_route": "/v1/embeddings"}, "auth": keys},
        )


@pytest.mark.parametrize(
    ("serve", "message"),
    [
        ({"embeddings_port": 8100}, "set serve.embeddings_route too"),
        ({"embeddings_route": "/v1/embeddings", "embeddings_port": 8000}, "differ from"),
        ({"embeddings_route": "/v1/embeddings", "embeddings_port": 0}, "embeddings_port"),
        # YAML's `embeddings_port: true` is not port 1
        ({"embeddings_route": "/v1/embeddings", "embeddings_port": True}, "not true / false"),
        ({"port": False}, "not true / false"),
    ],
)
def test_an_embeddings_port_needs_its_route_and_a_port_of_its_own(serve, message, tmp_path):
    from pydantic import ValidationError

    from deployments.app import build_embeddings_application
    from deployments.config import load_config

    with pytest.raises(ValidationError, match=message):
        load_config("default", data_dir=tmp_path, overrides={"serve": serve})
    ok = load_config(
        "default",
        data_dir=tmp_path,
        overrides={"serve": {"embeddings_route": "/v1/embeddings", "embeddings_port": 8100}},
    )
    bound = build_embeddings_application(ok)
    assert bound._bound_deployment.init_kwargs["http_port"] == 8100
    # the port keeps the search ingress's deadline
    assert bound._bound_deployment.init_kwargs["http_timeout_s"] == ok.serve.request_timeout_s


def test_the_command_lines_port_is_checked_against_the_embeddings_port(tmp_path):
    # `biomed-search serve --port 8100` with serve.embeddings_port 8100: both would bind
    # 8100 (Serve's proxy also uses SO_REUSEPORT) and split the traffic
    from deployments.config import load_config

    config = load_config(
        "default",
        data_dir=tmp_path,
        overrides={"serve": {"embeddings_route": "/v1/embeddings", "embeddings_port": 8100}},
    )
    assert config.check_embeddings_route() is config
    moved = config.model_copy(update={"serve": config.serve.model_copy(update={"port": 8100})})
    with pytest.raises(ValueError, match=r"must differ from serve\.port"):
        moved.check_embeddings_route()


def test_replicas_that_cannot_fit_the_cpus_are_refused_before_deploying(tmp_path):
    # 2 encoder replicas of 1 CPU each apply to both encoder deployments and to the
    # embeddings application: 3.25 CPUs on a 2-CPU Ray, where serve.run would wait for ever
    from deployments.config import load_config
    from deployments.serve_cli import check_cpu_demand

    crowded = load_config(
        "default",
        data_dir=tmp_path,
        overrides={
            "serve": {
                "embeddings_route": "/v1/embeddings",
                "encoder": {"num_replicas": 2, "intra_op_threads": 1},
            }
        },
    )
    with pytest.raises(ValueError, match=r"reserve 3\.25 CPUs .*Embeddings-pubmedbert 1.*has 2"):
        check_cpu_demand(crowded, 2.0)
    check_cpu_demand(crowded, 4.0)  # fits: no error
    check_cpu_demand(load_config("default", data_dir=tmp_path), 2.0)  # the shipped default fits
    # num_replicas "auto": Serve starts one replica and autoscales from there
    auto = load_config(
        "default", data_dir=tmp_path, overrides={"serve": {"encoder": {"num_replicas": "auto"}}}
    )
    from deployments.app import cpu_demand

    assert cpu_demand(auto)["Encoder-pubmedbert"] == auto.serve.encoder.num_cpus


def test_the_image_route_keeps_its_cap_under_a_route_prefix(tmp_path):
    from types import SimpleNamespace

    from deployments.api import MULTIPART_ROOM, _body_limit
    from deployments.config import load_config

    config = load_config("default", data_dir=tmp_path)
    app = SimpleNamespace(state=SimpleNamespace(service=SimpleNamespace(config=config)))
    image = config.serve.max_image_bytes + MULTIPART_ROOM
    for path in ("/v1/search/image", "/bench-base/v1/search/image"):
        assert _body_limit({"app": app, "path": path}) == image
    assert _body_limit({"app": app, "path": "/v1/search"}) == config.serve.max_request_bytes


def test_an_encoder_deployment_takes_its_own_overrides(tmp_path, endpoints):
    """``serve.encoder_overrides``: one encoder deployment (here the SMILES encoder)
    gets its own layout and merging; the other keeps ``serve.encoder``, in the built
    application, its CPU demand and the merge settings the ingress reads
    (``ServeSettings.encoder_for``)."""
    from deployments.app import cpu_demand
    from deployments.config import load_config

    config = load_config("default", data_dir=tmp_path, overrides={"serve": {
        "encoder": {"num_replicas": 1, "intra_op_threads": 2, "caller_merge_items": 32},
        "encoder_overrides": {"Encoder-molformer": {
            "num_replicas": 2, "intra_op_threads": 1, "caller_merge_items": 16}},
    }})
    built = _built(config, endpoints)
    text, smiles = built["Encoder-pubmedbert"], built["Encoder-molformer"]
    assert (text.num_replicas, text.init_args[0].cpu_threads) == (1, 2)
    assert (smiles.num_replicas, smiles.init_args[0].cpu_threads) == (2, 1)
    merges = {name: config.serve.encoder_for(name).caller_merge()
              for name in ("Encoder-pubmedbert", "Encoder-molformer")}
    assert merges["Encoder-pubmedbert"].max_items == 32
    assert (merges["Encoder-molformer"].max_items,
            merges["Encoder-molformer"].max_in_flight) == (16, 2)
    demand = cpu_demand(config)
    assert demand["Encoder-molformer"] == 2 * demand["Encoder-pubmedbert"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"Encoder-molformr": {"num_replicas": 2}}, r"no encoder deployment Encoder-molformr"),
        ({"Encoder-molformer": {"num_replics": 2}},
         r"encoder_overrides\.Encoder-molformer(.|\n)*num_replics"),
        ({"Encoder-molformer": {"max_batch_size": 0}},
         r"encoder_overrides\.Encoder-molformer(.|\n)*max_batch_size"),
    ],
)
def test_an_encoder_override_that_changes_nothing_or_is_invalid_is_refused(
    tmp_path, overrides, message
):
    from deployments.config import load_config

    with pytest.raises(ValueError, match=message):
        load_config("default", data_dir=tmp_path,
                    overrides={"serve": {"encoder_overrides": overrides}})


def test_an_override_under_autoscaling_merges_its_scaling_and_refuses_a_fixed_count(tmp_path):
    """Under ``serve.encoder.autoscaling_config`` (the Serve configs' ``args.overrides``)
    an entry's ``autoscaling_config`` changes only the keys it names, ``null`` gives a
    fixed count, and a bare ``num_replicas`` (which Serve would ignore) is refused."""
    from deployments.config import load_config

    scaled = {"min_replicas": 1, "max_replicas": 2, "target_ongoing_requests": 32}

    def load(override):
        return load_config("default", data_dir=tmp_path, overrides={"serve": {
            "encoder": {"autoscaling_config": scaled},
            "encoder_overrides": {"Encoder-molformer": override}}})

    merged = load({"autoscaling_config": {"max_replicas": 1}}).serve
    assert merged.encoder_for("Encoder-molformer").autoscaling_config == {
        **scaled, "max_replicas": 1}
    fixed = load({"autoscaling_config": None, "num_replicas": 3}).serve
    assert fixed.encoder_for("Encoder-molformer").caller_merge().max_in_flight == 3
    with pytest.raises(ValueError, match=r"Encoder-molformer\.num_replicas has no effect"):
        load({"num_replicas": 3})
