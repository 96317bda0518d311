"""The GPU planner (biomed_search/gpu_plan/): plans fit GPU memory whatever Ray packs, the
cross-encoder gets whole GPUs when there are enough, output is deterministic, and bad
inputs fail with a message that says what to change."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from biomed_search.gpu_plan import (
    BUILTIN_COSTS,
    PlanError,
    PlannerSettings,
    demands_for_config,
    format_plan,
    load_measurements,
    make_plan,
    serve_config,
    serve_config_yaml,
)
from deployments.config import AppConfig, load_config

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = "/tmp/biomed-search-plan-test"
SIZES = [(1, 24), (1, 80), (2, 24), (2, 48), (4, 40), (8, 24), (8, 80)]
TEXT_ONLY_SIZES = [(1, 16), (1, 12)]  # the image models do not fit one such GPU with the rest


@pytest.fixture(scope="module")
def production() -> AppConfig:
    return load_config("production", data_dir=DATA_DIR)


@pytest.fixture(scope="module")
def with_images() -> AppConfig:
    return load_config("production", REPO / "configs/cluster/images.yaml", data_dir=DATA_DIR)


class TestMemory:
    @pytest.mark.parametrize(
        ("gpus", "mem_gib", "profile"),
        [(*size, "production") for size in SIZES + TEXT_ONLY_SIZES]
        + [(*size, "with_images") for size in SIZES],
    )
    def test_every_gpu_holds_its_replicas_at_max(
        self, gpus: int, mem_gib: float, profile: str, request: pytest.FixtureRequest
    ) -> None:
        config = request.getfixturevalue(profile)
        plan = make_plan(demands_for_config(config), gpus, mem_gib)
        assert len(plan.layout) <= gpus
        assert all(memory <= plan.usable_gib for memory in plan.gpu_memory_gib())
        assert all(share <= 1.0 + 1e-9 for share in plan.gpu_fractions())
        placed = [name for gpu in plan.layout for name in gpu]
        for item in plan.deployments:
            assert placed.count(item.name) == item.max_replicas

    @pytest.mark.parametrize(("gpus", "mem_gib"), SIZES)
    def test_a_share_is_never_smaller_than_the_replicas_memory_share(
        self, gpus: int, mem_gib: float, with_images: AppConfig
    ) -> None:
        """So any packing Ray makes (shares summing to <= 1) fits the GPU's memory."""
        plan = make_plan(demands_for_config(with_images), gpus, mem_gib)
        for item in plan.deployments:
            assert item.num_gpus >= item.replica_gib / plan.usable_gib - 1e-9

    def test_a_replica_larger_than_a_gpu_is_refused_with_the_limits_to_lower(
        self, production: AppConfig
    ) -> None:
        with pytest.raises(PlanError, match="max_tokens_per_forward"):
            make_plan(demands_for_config(production), 1, 2.0)

    def test_too_many_models_for_the_gpus_is_refused(self, with_images: AppConfig) -> None:
        with pytest.raises(PlanError, match="more than 1 GPU"):
            make_plan(demands_for_config(with_images), 1, 6.0)

    def test_activation_headroom_follows_the_token_budget(self, production: AppConfig) -> None:
        small = production.model_copy(
            update={"models": production.models.model_copy(update={"max_tokens_per_forward": 4096})}
        )
        big = {d.name: d.replica_gib for d in demands_for_config(production)}
        for demand in demands_for_config(small):
            assert demand.replica_gib < big[demand.name]


class TestPlacement:
    @pytest.mark.parametrize("gpus", [2, 4, 8])
    def test_cross_encoder_gets_whole_gpus_when_there_are_enough(
        self, gpus: int, production: AppConfig
    ) -> None:
        plan = make_plan(demands_for_config(production), gpus, 80)
        cross = plan.deployment("CrossEncoder")
        assert cross.placement == "whole"
        assert cross.num_gpus == 1.0
        assert cross.max_replicas == gpus - 1  # one GPU is kept for the query encoders

    def test_on_one_gpu_everything_shares_it(self, production: AppConfig) -> None:
        plan = make_plan(demands_for_config(production), 1, 24)
        assert {item.placement for item in plan.deployments} == {"shared"}
        assert len(plan.layout) == 1

    def test_a_fast_cross_encoder_measurement_moves_it_to_a_shared_gpu(
        self, production: AppConfig, tmp_path: Path
    ) -> None:
        measurements = tmp_path / "measured.json"
        measurements.write_text(
            json.dumps({"models": {"ncbi/MedCPT-Cross-Encoder": {"throughput_per_s": 1.0e6}}})
        )
        costs, _ = load_measurements(measurements)
        plan = make_plan(demands_for_config(production, costs), 2, 80)
        assert plan.deployment("CrossEncoder").placement == "shared"

    def test_target_and_limits_follow_the_batch(self, production: AppConfig) -> None:
        plan = make_plan(demands_for_config(production), 8, 80)
        cross = plan.deployment("CrossEncoder")
        assert cross.target_ongoing_requests == 2  # 256 pairs / 128 pairs per search
        for item in plan.deployments:
            assert item.max_ongoing_requests >= item.max_batch_size
            assert item.min_replicas == 1 <= item.max_replicas


class TestDeterminism:
    def test_same_inputs_give_the_same_text(self, with_images: AppConfig) -> None:
        demands = demands_for_config(with_images)
        first = serve_config_yaml(make_plan(demands, 8, 80))
        shuffled = list(demands)
        random.Random(3).shuffle(shuffled)
        assert serve_config_yaml(make_plan(shuffled, 8, 80)) == first

    def test_deployment_names_follow_build_application(self, with_images: AppConfig) -> None:
        names = [demand.name for demand in demands_for_config(with_images)]
        assert names == sorted(
            [
                "CrossEncoder",
                "Encoder-general-text",
                "Encoder-medcpt-query",
                "Encoder-molformer",
                "Encoder-pubmedbert",
                "ImageEncoder-biomedclip",
                "ImageEncoder-general-vl",
                "ImageEncoder-uni2",
            ]
        )

    def test_the_default_profile_groups_roles_that_share_a_model(self) -> None:
        config = load_config("default", data_dir=DATA_DIR)
        (pubmedbert,) = [d for d in demands_for_config(config) if d.name == "Encoder-pubmedbert"]
        assert pubmedbert.roles == ("pubmedbert", "general-text")


class TestOutput:
    def test_serve_config_validates_against_ray_serve_schema(self, with_images: AppConfig) -> None:
        from ray.serve.schema import ServeDeploySchema

        plan = make_plan(demands_for_config(with_images), 2, 48, profile="production")
        ServeDeploySchema.model_validate(serve_config(plan))

    def test_yaml_carries_the_reasoning_as_comments(self, production: AppConfig) -> None:
        plan = make_plan(demands_for_config(production), 8, 80, profile="production")
        text = serve_config_yaml(plan)
        assert "scheduling share, not memory isolation" in text
        assert yaml.safe_load(text) == serve_config(plan)
        assert "GPU 7:" in format_plan(plan)

    def test_cli_prints_a_deployable_plan(self, capsys: pytest.CaptureFixture[str]) -> None:
        from biomed_search.cli import main

        code = main(
            [
                "plan-gpus",
                "--profile",
                "production",
                "--gpus",
                "2",
                "--mem-gib",
                "24",
                "--data-dir",
                DATA_DIR,
            ]
        )
        assert code == 0
        document = yaml.safe_load(capsys.readouterr().out)
        args = document["applications"][0]["args"]
        assert args["profile"] == "production"
        # the ingress learns that the encoders autoscale (and how far) from the args
        encoders = [d for d in document["applications"][0]["deployments"]
                    if d["name"].startswith("Encoder-")]
        scaling = args["overrides"]["serve"]["encoder"]["autoscaling_config"]
        assert scaling["max_replicas"] == max(
            d["autoscaling_config"]["max_replicas"] for d in encoders)
        assert set(args) == {"profile", "overrides"}

    def test_cli_reports_a_plan_that_cannot_fit(self, capsys: pytest.CaptureFixture[str]) -> None:
        from biomed_search.cli import main

        code = main(
            [
                "plan-gpus",
                "--profile",
                "production",
                "--gpus",
                "1",
                "--mem-gib",
                "1",
                "--data-dir",
                DATA_DIR,
            ]
        )
        assert code == 2
        assert "usable on one GPU" in capsys.readouterr().err


class TestMeasurements:
    def test_overrides_merge_onto_the_builtin_table(self, tmp_path: Path) -> None:
        path = tmp_path / "m.json"
        path.write_text(
            json.dumps(
                {
                    "cuda_context_gib": 0.4,
                    "models": {"hf-hub:MahmoodLab/UNI2-h": {"weights_gib": 1.5}},
                }
            )
        )
        costs, overrides = load_measurements(path)
        assert costs["MahmoodLab/UNI2-h"] == replace(
            BUILTIN_COSTS["MahmoodLab/UNI2-h"], weights_gib=1.5
        )
        assert PlannerSettings(**overrides).cuda_context_gib == 0.4

    def test_unknown_fields_are_refused(self, tmp_path: Path) -> None:
        path = tmp_path / "m.json"
        path.write_text(json.dumps({"models": {"ncbi/MedCPT-Cross-Encoder": {"speed": 1}}}))
        with pytest.raises(PlanError, match="unknown fields"):
            load_measurements(path)

    def test_a_model_without_numbers_is_named(self, production: AppConfig) -> None:
        costs = {k: v for k, v in BUILTIN_COSTS.items() if k != "ibm/MoLFormer-XL-both-10pct"}
        with pytest.raises(PlanError, match="MoLFormer-XL-both-10pct"):
            demands_for_config(production, costs)
