"""GPU plans as output: a Ray Serve config (YAML / dict), a readable table, and the
``biomed-search plan-gpus`` printout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from biomed_search.gpu_plan.costs import load_measurements
from biomed_search.gpu_plan.kinds import IMPORT_PATH, INGRESS_NAME
from biomed_search.gpu_plan.planner import GpuPlan, PlannerSettings, demands_for_config, make_plan
from deployments.autoscaling import with_texts_policy
from deployments.config import AppConfig


# -- output -----------------------------------------------------------------------------------
def _app_args(plan: GpuPlan) -> dict[str, Any]:
    """``build_app`` arguments: the profile, and the text encoders' autoscaling (the widest
    range and smallest target of the plan's encoders) as a profile override, so the search
    ingress knows they autoscale and holds back less than one merged call of texts
    (``DeploymentSettings.caller_merge``). Each encoder's own range is its Serve-level
    entry, which Serve applies over the application's."""
    args: dict[str, Any] = {"profile": plan.profile}
    encoders = [item for item in plan.deployments if item.kind == "encoder"]
    if encoders:
        args["overrides"] = {"serve": {"encoder": {"autoscaling_config": {
            "min_replicas": min(item.min_replicas for item in encoders),
            "max_replicas": max(item.max_replicas for item in encoders),
            "target_ongoing_requests": min(item.target_ongoing_requests for item in encoders),
            "upscale_delay_s": plan.settings.upscale_delay_s,
            "downscale_delay_s": min(item.downscale_delay_s for item in encoders),
        }}}}
    return args


def serve_config(plan: GpuPlan, route_prefix: str = "/") -> dict[str, Any]:
    """A Ray Serve config file (``serve deploy`` / ``serve run`` / ``serveConfigV2``) with
    one application whose deployments carry the plan."""
    deployments: list[dict[str, Any]] = [
        {
            "name": INGRESS_NAME,
            "autoscaling_config": {
                "min_replicas": 1,
                "max_replicas": max(2, plan.gpus),
                "target_ongoing_requests": 32,
                "upscale_delay_s": plan.settings.upscale_delay_s,
                "downscale_delay_s": plan.settings.downscale_delay_s_shared,
            },
            "max_ongoing_requests": 64,
            "ray_actor_options": {"num_cpus": plan.settings.ingress_num_cpus},
        }
    ]
    for item in plan.deployments:
        scaling = {
            "min_replicas": item.min_replicas,
            "max_replicas": item.max_replicas,
            "initial_replicas": item.min_replicas,
            "target_ongoing_requests": item.target_ongoing_requests,
            "upscale_delay_s": plan.settings.upscale_delay_s,
            "downscale_delay_s": item.downscale_delay_s,
        }
        # a Serve config's autoscaling_config replaces the application's whole: an
        # encoder keeps its texts-in-flight policy (deployments.autoscaling) only here
        if item.kind == "encoder":
            scaling = with_texts_policy(scaling)
        deployments.append(
            {
                "name": item.name,
                "autoscaling_config": scaling,
                "max_ongoing_requests": item.max_ongoing_requests,
                "ray_actor_options": {"num_cpus": item.num_cpus, "num_gpus": item.num_gpus},
                "user_config": {
                    "max_batch_size": item.max_batch_size,
                    "batch_wait_timeout_s": item.batch_wait_timeout_s,
                },
            }
        )
    return {
        "proxy_location": "EveryNode",
        "http_options": {"host": "0.0.0.0", "port": 8000},
        "applications": [
            {
                "name": "biomed-search",
                "route_prefix": route_prefix,
                "import_path": IMPORT_PATH,
                "args": _app_args(plan),
                "deployments": deployments,
            }
        ],
    }


def format_plan(plan: GpuPlan) -> str:
    """The plan as a table, the GPU layout and the reasoning (plain text lines)."""
    lines = [
        f"GPU plan for profile {plan.profile!r}: {plan.gpus} GPU(s) x {plan.mem_gib:g} GiB per "
        f"node; usable {plan.usable_gib:.1f} GiB per GPU "
        f"({plan.settings.reserve_fraction:.0%} reserve); CUDA context "
        f"{plan.settings.cuda_context_gib:g} GiB per replica.",
        "",
        f"{'deployment':<24} {'model':<24} {'GiB/rep':>7} {'GPU-ms':>7} {'demand':>7} "
        f"{'placement':<9} {'num_gpus':>8} {'replicas':>8} {'batch':>5} {'target':>6}",
    ]
    for item in plan.deployments:
        lines.append(
            f"{item.name:<24} {item.label:<24} {item.replica_gib:>7.2f} "
            f"{item.gpu_ms_per_search:>7.3f} {item.demand_share:>7.1%} {item.placement:<9} "
            f"{item.num_gpus:>8.2f} {f'{item.min_replicas}..{item.max_replicas}':>8} "
            f"{item.max_batch_size:>5} {item.target_ongoing_requests:>6}"
        )
    lines += ["", "GPU layout with every deployment at its max replicas:"]
    memory, fractions = plan.gpu_memory_gib(), plan.gpu_fractions()
    for index, gpu in enumerate(plan.layout):
        counts: dict[str, int] = {}
        for name in gpu:
            counts[name] = counts.get(name, 0) + 1
        placed = ", ".join(f"{name} x{count}" for name, count in counts.items()) or "(idle)"
        lines.append(
            f"  GPU {index}: {placed}: {memory[index]:.1f} of {plan.usable_gib:.1f} "
            f"GiB, shares {fractions[index]:.2f} of 1.00"
        )
    whole = [item for item in plan.deployments if item.placement == "whole"]
    shared = [item for item in plan.deployments if item.placement == "shared"]
    lines += ["", "Why:"]
    for item in whole:
        lines.append(
            f"- {item.name} does {item.demand_share:.1%} of the GPU work of a search "
            f"({item.gpu_ms_per_search:.2f} GPU-ms), so it gets {item.max_replicas} whole "
            f"GPU(s): one replica each, autoscaled 1..{item.max_replicas}."
        )
    if shared:
        names = ", ".join(item.name for item in shared)
        where = "the other GPU(s)" if whole else "the node's GPU(s)"
        lines.append(
            f"- {names} share {where}: together {sum(i.demand_share for i in shared):.1%}"
            " of the work; each replica's num_gpus is its memory share (replica GiB / usable "
            "GiB, rounded up to 0.05), replicas added by demand up to "
            f"{plan.settings.max_replicas_per_shared_gpu} per shared GPU."
        )
    lines += [
        "- num_gpus is a scheduling share, not memory isolation: Ray places replicas while "
        "their fractions on a GPU sum to <= 1 and CUDA does not cap a process at its share. "
        "Every fraction is >= the replica's share of usable memory, so any placement keeps a "
        "GPU's resident memory (context + weights + activation headroom) within usable memory.",
        "- Activation headroom is one forward pass at models.max_tokens_per_forward padded "
        "tokens (text) or models.max_batch_size images; larger serve batches are split into "
        "such forward passes, so the serve batch does not raise peak memory.",
        "- target_ongoing_requests = requests that fill one batch: a replica scales out when "
        "more than a full batch waits; max_ongoing_requests >= max_batch_size. A text "
        "encoder counts texts, not calls (deployments.autoscaling:texts_in_flight_policy): "
        "the search ingress merges its encode calls.",
        *(f"- {note}" for note in plan.notes),
    ]
    return "\n".join(lines)


def serve_config_yaml(
    plan: GpuPlan, route_prefix: str = "/", config_path: str | Path | None = None
) -> str:
    """The plan as a Serve config YAML whose leading comment is :func:`format_plan`;
    ``config_path`` (the ``--config`` overlay planned with) goes into the app's args."""
    header = "\n".join(f"# {line}".rstrip() for line in format_plan(plan).splitlines())
    overlay = f" --config {config_path}" if config_path else ""
    generated = (
        f"# Generated by: biomed-search plan-gpus --profile {plan.profile}{overlay} "
        f"--gpus {plan.gpus} --mem-gib {plan.mem_gib:g}"
    )
    document = serve_config(plan, route_prefix)
    if config_path:
        document["applications"][0]["args"]["config"] = str(config_path)
    body = yaml.safe_dump(document, sort_keys=False, width=100)
    return f"{generated}\n#\n{header}\n\n{body}"


def _overlay_note(config: AppConfig) -> str | None:
    """A warning when ``config`` is not its profile alone (a ``--config`` overlay whose
    path the emitted args cannot know)."""
    from deployments.config import load_config

    try:
        bare = load_config(config.profile, data_dir=config.data_dir)
    except (OSError, ValueError):
        return None
    if bare.model_dump() == config.model_dump():
        return None
    return (
        "# NOTE: planned with a --config overlay: add `config: <that file>` to the "
        "application's args below.\n"
    )


def print_plan(
    config: AppConfig,
    gpus: int,
    mem_gib: float,
    measurements: str | Path | None = None,
    *,
    config_path: str | Path | None = None,
) -> int:
    """``biomed-search plan-gpus``: print the plan of ``config`` for ``gpus`` GPUs of
    ``mem_gib`` GiB as a Serve config YAML (the reasoning in its leading comments, so the
    output can be saved and deployed as it is). ``config_path``: the ``--config`` overlay
    ``config`` was loaded with, written into the app's args. Returns the exit code (0).

    Raises:
        PlanError: (a ``ValueError``) see :func:`make_plan` and :func:`load_measurements`.
    """
    costs, overrides = load_measurements(measurements)
    settings = PlannerSettings(**overrides)
    plan = make_plan(
        demands_for_config(config, costs), gpus, mem_gib, settings, profile=config.profile
    )
    note = None if config_path else _overlay_note(config)
    print((note or "") + serve_config_yaml(plan, config_path=config_path), end="")
    return 0
