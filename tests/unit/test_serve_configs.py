"""Every shipped Ray Serve config (configs/serve*.yaml, configs/cluster/plans/*.yaml and the
KubeRay manifest's serveConfigV2) validates through Ray's own schema, names exactly the
deployments ``build_application`` makes for its profile, and keeps
``max_ongoing_requests >= max_batch_size``; the manifest has the RayService structure
it relies on; the GPU files agree with the planner."""

from __future__ import annotations

import functools
import io
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
CLUSTER = CONFIGS / "cluster"
MANIFEST = CLUSTER / "rayservice.yaml"
PLAN_FILES = sorted((CLUSTER / "plans").glob("*.yaml"))
STORE_URIS = {"milvus_uri": "http://milvus.test:19530", "postgres_dsn": "postgresql://t"}
MODEL_PREFIXES = ("Encoder-", "ImageEncoder-", "CrossEncoder")


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _manifest() -> dict[str, Any]:
    return _load(MANIFEST)


def _serve_documents() -> dict[str, dict[str, Any]]:
    documents = {
        "configs/serve.yaml": _load(CONFIGS / "serve.yaml"),
        "configs/serve.gpu.yaml": _load(CONFIGS / "serve.gpu.yaml"),
        "rayservice.serveConfigV2": yaml.safe_load(_manifest()["spec"]["serveConfigV2"]),
    }
    for path in PLAN_FILES:
        documents[f"plans/{path.name}"] = _load(path)
    return documents


DOCUMENTS = _serve_documents()
GPU_DOCUMENTS = [name for name in DOCUMENTS if name != "configs/serve.yaml"]


def _node_gpus(name: str) -> int:
    if name.startswith("plans/gpus-"):
        return int(name.removeprefix("plans/gpus-").split("x")[0])
    return 8


@functools.cache
def _built_names(profile: str, config: str | None) -> frozenset[str]:
    """Deployment names of the application build_application makes (no Ray needed)."""
    from ray.serve._private.build_app import build_app

    from deployments.app import build_application
    from deployments.config import load_config
    from deployments.stores import StoreEndpoints

    config_path = str(REPO / config) if config else None
    parsed = load_config(profile, config_path, data_dir="/tmp/biomed-search-config-test")
    built = build_app(build_application(parsed, StoreEndpoints(**STORE_URIS)), name="check")
    return frozenset(deployment.name for deployment in built.deployments)


def _applications(name: str) -> list[dict[str, Any]]:
    return DOCUMENTS[name]["applications"]


class TestServeConfigFiles:
    def test_every_shipped_config_is_covered(self) -> None:
        assert len(PLAN_FILES) >= 3
        assert {
            "plans/gpus-1x24gib.yaml",
            "plans/gpus-2x48gib.yaml",
            "plans/gpus-8x80gib.yaml",
        } <= set(DOCUMENTS)

    @pytest.mark.parametrize("name", sorted(DOCUMENTS))
    def test_validates_against_ray_serve_schema(self, name: str) -> None:
        from ray.serve.schema import ServeDeploySchema

        schema = ServeDeploySchema.model_validate(DOCUMENTS[name])
        assert [app.import_path for app in schema.applications] == ["deployments.app:build_app"]

    @pytest.mark.parametrize("name", sorted(DOCUMENTS))
    def test_args_are_valid_build_app_arguments(self, name: str) -> None:
        from deployments.app import AppArgs

        for application in _applications(name):
            AppArgs.model_validate(application["args"])

    @pytest.mark.parametrize("name", sorted(DOCUMENTS))
    def test_deployment_names_are_exactly_those_build_application_makes(self, name: str) -> None:
        for application in _applications(name):
            args = application["args"]
            built = _built_names(args["profile"], args.get("config"))
            configured = {deployment["name"] for deployment in application["deployments"]}
            assert configured == built

    @pytest.mark.parametrize("name", sorted(DOCUMENTS))
    def test_max_ongoing_requests_is_at_least_the_batch_size(self, name: str) -> None:
        for application in _applications(name):
            for deployment in application["deployments"]:
                batch = (deployment.get("user_config") or {}).get("max_batch_size")
                if batch is not None:
                    assert deployment["max_ongoing_requests"] >= batch, deployment["name"]

    @pytest.mark.parametrize("name", sorted(DOCUMENTS))
    def test_every_model_deployment_autoscales_from_one_replica(self, name: str) -> None:
        for application in _applications(name):
            for deployment in application["deployments"]:
                if not deployment["name"].startswith(MODEL_PREFIXES):
                    continue
                scaling = deployment["autoscaling_config"]
                assert scaling["min_replicas"] == 1
                assert scaling["max_replicas"] >= scaling["min_replicas"]
                assert scaling["target_ongoing_requests"] >= 1
                assert scaling["upscale_delay_s"] < scaling["downscale_delay_s"]
                assert "num_replicas" not in deployment

    def test_cpu_config_asks_for_no_gpu(self) -> None:
        for deployment in _applications("configs/serve.yaml")[0]["deployments"]:
            assert deployment["ray_actor_options"].get("num_gpus", 0) == 0

    def test_cpu_config_starts_on_a_two_core_machine(self) -> None:
        """`serve run` gives Ray one logical CPU per core; a replica that does not fit
        waits unscheduled forever."""
        minimum = sum(
            deployment["ray_actor_options"]["num_cpus"]
            * (deployment.get("autoscaling_config") or {}).get(
                "min_replicas", deployment.get("num_replicas", 1)
            )
            for deployment in _applications("configs/serve.yaml")[0]["deployments"]
        )
        assert minimum <= 2

    @pytest.mark.parametrize("name", sorted(DOCUMENTS))
    def test_autoscaled_encoders_scale_on_texts_and_the_ingress_knows(self, name: str) -> None:
        """A Serve config's autoscaling_config replaces the application's: each encoder
        entry names the texts-in-flight policy itself, and the profile the args build
        autoscales the encoders too, so the search ingress sends a full merged call past
        its bound (else the load waits at the ingress, unseen by the autoscaler, which
        reads the replicas)."""
        from deployments.autoscaling import TEXTS_POLICY
        from deployments.config import load_config

        for application in _applications(name):
            args = application["args"]
            encoders = [d for d in application["deployments"]
                        if d["name"].startswith("Encoder-") and "autoscaling_config" in d]
            if not encoders:
                continue
            for deployment in encoders:
                policy = deployment["autoscaling_config"].get("policy") or {}
                assert policy.get("policy_function") == TEXTS_POLICY, deployment["name"]
            config_path = str(REPO / args["config"]) if args.get("config") else None
            parsed = load_config(args["profile"], config_path,
                                 data_dir="/tmp/biomed-search-config-test",
                                 overrides=args.get("overrides"))
            widest = max(d["autoscaling_config"]["max_replicas"] for d in encoders)
            for deployment in encoders:
                merge = parsed.serve.encoder_for(deployment["name"]).caller_merge()
                assert merge is not None and merge.send_full_calls, deployment["name"]
                assert merge.min_calls == widest, deployment["name"]

    @pytest.mark.parametrize("name", GPU_DOCUMENTS)
    def test_gpu_shares_at_max_replicas_fit_the_node(self, name: str) -> None:
        total = 0.0
        for deployment in _applications(name)[0]["deployments"]:
            gpus = deployment["ray_actor_options"].get("num_gpus", 0)
            if gpus:
                assert gpus == 1 or 0 < gpus < 1
                total += gpus * deployment["autoscaling_config"]["max_replicas"]
        assert 0 < total <= _node_gpus(name)

    @pytest.mark.parametrize("name", GPU_DOCUMENTS)
    def test_cross_encoder_gets_whole_gpus_when_the_node_has_several(self, name: str) -> None:
        cross = next(
            d for d in _applications(name)[0]["deployments"] if d["name"] == "CrossEncoder"
        )
        share = cross["ray_actor_options"]["num_gpus"]
        assert share == 1 if _node_gpus(name) >= 2 else 0 < share < 1


def _deployments_by_name(name: str) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in _applications(name)[0]["deployments"]}


class TestGpuFilesAgreeWithThePlanner:
    @pytest.mark.parametrize("path", PLAN_FILES, ids=lambda path: path.name)
    def test_plan_file_is_the_planner_output(self, path: Path) -> None:
        from biomed_search.gpu_plan import print_plan
        from deployments.config import load_config

        document = _load(path)
        args = document["applications"][0]["args"]
        gpus, mem = path.stem.removeprefix("gpus-").split("gib")[0].split("x")
        config = load_config(
            args["profile"],
            REPO / args["config"] if args.get("config") else None,
            data_dir="/tmp/biomed-search-config-test",
        )
        output = io.StringIO()
        with redirect_stdout(output):
            print_plan(config, int(gpus), float(mem), config_path=args.get("config"))
        assert output.getvalue() == path.read_text(encoding="utf-8"), (
            f"regenerate {path.name} with biomed-search plan-gpus"
        )

    def test_serve_gpu_yaml_carries_the_8_gpu_plan(self) -> None:
        hand = _deployments_by_name("configs/serve.gpu.yaml")
        plan = _deployments_by_name("plans/gpus-8x80gib.yaml")
        assert set(hand) == set(plan)
        for name, planned in plan.items():
            for key in ("ray_actor_options", "user_config", "max_ongoing_requests"):
                assert hand[name].get(key) == planned.get(key), (name, key)
            for key in ("min_replicas", "max_replicas", "target_ongoing_requests"):
                assert (
                    hand[name]["autoscaling_config"][key] == planned["autoscaling_config"][key]
                ), (name, key)


class TestRayServiceManifest:
    def test_is_a_ray_io_v1_rayservice(self) -> None:
        manifest = _manifest()
        assert manifest["apiVersion"] == "ray.io/v1"
        assert manifest["kind"] == "RayService"
        assert manifest["metadata"]["name"]
        assert isinstance(manifest["spec"]["serveConfigV2"], str)

    def test_serve_config_is_the_gpu_application_with_external_stores(self) -> None:
        inline = _applications("rayservice.serveConfigV2")[0]
        node = _applications("configs/serve.gpu.yaml")[0]
        assert inline["deployments"] == node["deployments"]
        assert inline["import_path"] == node["import_path"]
        assert inline["args"]["profile"] == node["args"]["profile"]
        assert inline["args"]["milvus_uri"].startswith("http")
        assert inline["args"]["postgres_dsn"].startswith("postgresql://")
        assert ":" not in inline["args"]["postgres_dsn"].split("@")[0].removeprefix(
            "postgresql://"
        ), "no password in the manifest"

    @staticmethod
    def _check_pod(template: dict[str, Any]) -> dict[str, Any]:
        containers = template["spec"]["containers"]
        assert containers, "a pod template needs a container"
        container = containers[0]
        assert container["name"] and container["image"]
        resources = container["resources"]
        assert resources["limits"]["cpu"] and resources["limits"]["memory"]
        assert resources["requests"] == resources["limits"]
        return container

    @staticmethod
    def _check_start_params(params: dict[str, Any]) -> None:
        assert all(
            isinstance(key, str) and isinstance(value, str) for key, value in params.items()
        ), "rayStartParams values are strings"

    def test_head_group_runs_no_replicas(self) -> None:
        head = _manifest()["spec"]["rayClusterConfig"]["headGroupSpec"]
        self._check_start_params(head["rayStartParams"])
        assert head["rayStartParams"]["num-cpus"] == "0"
        container = self._check_pod(head["template"])
        assert "nvidia.com/gpu" not in container["resources"]["limits"]

    def test_gpu_worker_group_matches_the_8_gpu_plan(self) -> None:
        cluster = _manifest()["spec"]["rayClusterConfig"]
        assert cluster["enableInTreeAutoscaling"] is True
        (group,) = cluster["workerGroupSpecs"]
        assert group["groupName"]
        assert 1 <= group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
        self._check_start_params(group["rayStartParams"])
        container = self._check_pod(group["template"])
        gpus = int(container["resources"]["limits"]["nvidia.com/gpu"])
        assert gpus == int(group["rayStartParams"]["num-gpus"]) == _node_gpus("configs/serve.gpu")
        tolerations = group["template"]["spec"]["tolerations"]
        assert any(t["key"] == "nvidia.com/gpu" for t in tolerations)
        cpus = sum(
            d["ray_actor_options"]["num_cpus"] * d["autoscaling_config"]["max_replicas"]
            for d in _applications("rayservice.serveConfigV2")[0]["deployments"]
        )
        assert cpus <= float(container["resources"]["limits"]["cpu"]) * group["maxReplicas"]
