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

from biomed_search.gpu_plan.costs import BUILTIN_COSTS, ModelCost, PlanError, load_measurements
from biomed_search.gpu_plan.planner import (
    DeploymentDemand,
    DeploymentPlan,
    GpuPlan,
    PlannerSettings,
    demands_for_config,
    make_plan,
)
from biomed_search.gpu_plan.render import format_plan, print_plan, serve_config, serve_config_yaml

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
