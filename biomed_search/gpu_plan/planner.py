"""The GPU plan itself: demand per deployment, whole GPUs for the heaviest, memory
shares for the rest, replica ranges and batch sizes (steps 1-6 of the package
docstring)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from biomed_search.gpu_plan.costs import BUILTIN_COSTS, ModelCost, PlanError, source_key
from biomed_search.gpu_plan.kinds import Kind
from deployments.config import AppConfig
from deployments.roles import model_deployments


@dataclass(frozen=True)
class PlannerSettings:
    """Planner constants: CUDA context per replica process (GiB), memory reserve as a
    fraction of each GPU, the fraction grid, replicas of one deployment per shared GPU,
    ingress CPUs, and autoscaling delays (seconds) for shared and whole-GPU models."""

    cuda_context_gib: float = 0.6
    reserve_fraction: float = 0.10
    fraction_step: float = 0.05
    max_replicas_per_shared_gpu: int = 2
    ingress_num_cpus: float = 1.0
    upscale_delay_s: float = 5.0
    downscale_delay_s_shared: float = 120.0
    downscale_delay_s_whole: float = 300.0


@dataclass(frozen=True)
class DeploymentDemand:
    """One model deployment of the application and the work it does per search."""

    name: str
    kind: Kind
    roles: tuple[str, ...]
    model: str
    cost: ModelCost
    units_per_forward: float
    items_per_search: float
    items_per_request: float

    @property
    def replica_gib(self) -> float:
        """fp16 weights + activation headroom (context added by the planner), GiB."""
        return (
            self.cost.weights_gib
            + self.cost.activation_mib_per_unit * (self.units_per_forward) / 1024
        )

    @property
    def gpu_ms_per_search(self) -> float:
        """Whole-GPU time one search takes on this deployment (ms): items per search
        over ``cost.throughput_per_s``."""
        return 1000.0 * self.items_per_search / self.cost.throughput_per_s


@dataclass(frozen=True)
class DeploymentPlan:
    """Where one deployment runs and how it scales."""

    name: str
    kind: Kind
    model: str
    label: str
    placement: Literal["whole", "shared"]
    num_gpus: float
    num_cpus: float
    min_replicas: int
    max_replicas: int
    replica_gib: float
    demand_share: float
    gpu_ms_per_search: float
    max_batch_size: int
    batch_wait_timeout_s: float
    target_ongoing_requests: int
    max_ongoing_requests: int
    downscale_delay_s: float


@dataclass(frozen=True)
class GpuPlan:
    """A node's plan: deployments, and the GPU layout with every max replica placed."""

    profile: str
    gpus: int
    mem_gib: float
    usable_gib: float
    deployments: tuple[DeploymentPlan, ...]
    layout: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = field(default=())
    settings: PlannerSettings = field(default_factory=PlannerSettings)

    def deployment(self, name: str) -> DeploymentPlan:
        """The plan of deployment ``name``. Raises KeyError when absent."""
        for item in self.deployments:
            if item.name == name:
                return item
        raise KeyError(name)

    def gpu_memory_gib(self) -> list[float]:
        """Resident memory per GPU with every replica at its max (GiB)."""
        sizes = {item.name: item.replica_gib for item in self.deployments}
        return [round(sum(sizes[name] for name in gpu), 3) for gpu in self.layout]

    def gpu_fractions(self) -> list[float]:
        """Sum of ``num_gpus`` per GPU with every replica at its max."""
        shares = {item.name: item.num_gpus for item in self.deployments}
        return [round(sum(shares[name] for name in gpu), 4) for gpu in self.layout]


def demands_for_config(
    config: AppConfig, costs: Mapping[str, ModelCost] | None = None
) -> list[DeploymentDemand]:
    """The model deployments ``deployments.app.build_application`` makes for ``config``
    (same grouping and names), each with its cost and work per search.

    Raises:
        PlanError: a model with no entry in ``costs`` (the message names it).
    """
    costs = dict(BUILTIN_COSTS if costs is None else costs)
    profile = config.models
    entries: list[tuple[str, Kind, list[str]]] = [
        (deployment.name, deployment.kind, list(deployment.roles))
        for deployment in model_deployments(config)
    ]
    missing = sorted(
        {source_key(profile.spec(roles[0]).source) for _, _, roles in entries} - set(costs)
    )
    if missing:
        raise PlanError(
            f"no cost numbers for {', '.join(missing)}: add them to a --measurements JSON "
            '({"models": {"<source>": {"label", "params_m", "weights_gib", '
            '"activation_mib_per_unit", "throughput_per_s", "saturating_batch"}}}), e.g. '
            "from bench/gpu_check.py --measurements-out"
        )
    pairs_per_search = float(config.pipeline.tier2.max_candidates)
    demands = []
    for name, kind, roles in entries:
        spec = profile.spec(roles[0])
        if kind == "image_encoder":
            units = float(profile.max_batch_size)
        else:  # padded tokens per forward, in thousands
            rows = min(
                profile.max_batch_size, max(1, profile.max_tokens_per_forward // spec.max_tokens)
            )
            units = min(profile.max_tokens_per_forward, rows * spec.max_tokens) / 1000
        per_search = pairs_per_search if kind == "cross_encoder" else 1.0
        demands.append(
            DeploymentDemand(
                name=name,
                kind=kind,
                roles=tuple(roles),
                model=source_key(spec.source),
                cost=costs[source_key(spec.source)],
                units_per_forward=units,
                items_per_search=per_search,
                items_per_request=per_search,
            )
        )
    return sorted(demands, key=lambda demand: demand.name)


# -- planning -------------------------------------------------------------------------------
def _round_up(value: float, step: float) -> float:
    return round(min(1.0, math.ceil(value / step - 1e-9) * step), 4)


def _pack(replicas: Sequence[tuple[str, float]], gpus: int) -> list[list[str]] | None:
    """First-fit decreasing of (name, fraction) replicas onto ``gpus`` GPUs of capacity
    1.0; None when they do not fit. Deterministic (ties by name)."""
    bins: list[list[str]] = [[] for _ in range(gpus)]
    loads = [0.0] * gpus
    for name, fraction in sorted(replicas, key=lambda item: (-item[1], item[0])):
        for index in range(gpus):
            if loads[index] + fraction <= 1.0 + 1e-9:
                bins[index].append(name)
                loads[index] += fraction
                break
        else:
            return None
    return bins


def make_plan(
    demands: Sequence[DeploymentDemand],
    gpus: int,
    mem_gib: float,
    settings: PlannerSettings | None = None,
    profile: str = "default",
) -> GpuPlan:
    """Plan ``demands`` on one node of ``gpus`` GPUs with ``mem_gib`` GiB each (see the
    module docstring for the rules). Pure and deterministic.

    Raises:
        PlanError: ``gpus`` < 1 or ``mem_gib`` <= 0, no deployments, a replica larger than
            one GPU's usable memory, or the shared deployments do not fit even with one
            replica each.
    """
    settings = settings or PlannerSettings()
    if gpus < 1 or mem_gib <= 0:
        raise PlanError(f"need --gpus >= 1 and --mem-gib > 0, got {gpus} and {mem_gib}")
    if not demands:
        raise PlanError("the profile enables no model deployment")
    usable = mem_gib * (1.0 - settings.reserve_fraction)
    replica_gib = {d.name: round(settings.cuda_context_gib + d.replica_gib, 3) for d in demands}
    for demand in demands:
        if replica_gib[demand.name] > usable:
            raise PlanError(
                f"{demand.name} ({demand.cost.label}) needs {replica_gib[demand.name]:.1f} GiB "
                f"per replica, more than the {usable:.1f} GiB usable on one GPU: lower "
                "models.max_tokens_per_forward / models.max_batch_size or use larger GPUs"
            )
    total_ms = sum(d.gpu_ms_per_search for d in demands)
    share = {d.name: d.gpu_ms_per_search / total_ms for d in demands}
    fraction = {
        d.name: _round_up(
            max(replica_gib[d.name] / usable, settings.fraction_step), settings.fraction_step
        )
        for d in demands
    }
    whole = {d.name: math.floor(share[d.name] * gpus + 1e-9) for d in demands}
    whole = {name: count for name, count in whole.items() if count >= 1}
    notes: list[str] = []

    def shared_names() -> list[str]:
        return sorted(d.name for d in demands if d.name not in whole)

    while whole:
        light = shared_names()
        pool = gpus - sum(whole.values())
        if not light or (pool >= 1 and _pack([(n, fraction[n]) for n in light], pool)):
            break
        giver = max(sorted(whole), key=lambda name: whole[name])
        whole[giver] -= 1
        notes.append(f"{giver}: one GPU less ({whole[giver]} left) to keep a shared GPU")
        if whole[giver] == 0:
            del whole[giver]
    light = shared_names()
    pool = gpus - sum(whole.values())
    replicas = {name: 1 for name in light}
    if light and _pack([(name, fraction[name]) for name in light], pool) is None:
        raise PlanError(
            f"one replica of each of {', '.join(light)} needs GPU shares "
            f"{', '.join(f'{fraction[n]:.2f}' for n in light)}, more than {pool} GPU(s) of "
            f"{mem_gib:g} GiB hold: use more or larger GPUs or lower the activation limits"
        )
    cap = settings.max_replicas_per_shared_gpu * pool
    while True:
        candidates = sorted(
            (name for name in light if replicas[name] < cap),
            key=lambda name: (-share[name] / replicas[name], name),
        )
        for name in candidates:
            trial = {**replicas, name: replicas[name] + 1}
            if _pack([(n, fraction[n]) for n in light for _ in range(trial[n])], pool):
                replicas = trial
                break
        else:
            break
    shared_layout = _pack([(n, fraction[n]) for n in light for _ in range(replicas[n])], pool)
    layout: list[tuple[str, ...]] = []
    for name in sorted(whole):
        layout.extend((name,) for _ in range(whole[name]))
    layout.extend(tuple(gpu) for gpu in (shared_layout or []))
    by_name = {d.name: d for d in demands}
    plans = []
    for name in sorted(by_name):
        demand = by_name[name]
        is_whole = name in whole
        batch = demand.cost.saturating_batch
        per_batch = max(1, math.ceil(batch / demand.items_per_request))
        plans.append(
            DeploymentPlan(
                name=name,
                kind=demand.kind,
                model=demand.model,
                label=demand.cost.label,
                placement="whole" if is_whole else "shared",
                num_gpus=1.0 if is_whole else fraction[name],
                num_cpus=demand.cost.num_cpus,
                min_replicas=1,
                max_replicas=whole[name] if is_whole else replicas[name],
                replica_gib=replica_gib[name],
                demand_share=round(share[name], 4),
                gpu_ms_per_search=round(demand.gpu_ms_per_search, 4),
                max_batch_size=batch,
                batch_wait_timeout_s=demand.cost.batch_wait_timeout_s,
                target_ongoing_requests=per_batch,
                max_ongoing_requests=max(batch, 2 * per_batch),
                downscale_delay_s=settings.downscale_delay_s_whole
                if is_whole
                else settings.downscale_delay_s_shared,
            )
        )
    return GpuPlan(
        profile=profile,
        gpus=gpus,
        mem_gib=mem_gib,
        usable_gib=round(usable, 3),
        deployments=tuple(plans),
        layout=tuple(layout),
        notes=tuple(notes),
        settings=settings,
    )
