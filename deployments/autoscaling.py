"""Autoscaling an encoder deployment on the texts its replicas hold, not on its calls.

Serve's default policy (``replica_queue_length_autoscaling_policy``) scales on ongoing
calls per replica. An encoder's calls carry different numbers of texts: the search
ingress merges its encode calls (``deployments.call_coalescing``; a full merged call
goes past its bound, so under autoscaling fewer than ``caller_merge_items`` texts per
role wait at each ingress replica, unseen), the ingress's document encodes and an
embeddings request carry many. Calls past a replica's ``max_ongoing_requests`` wait in
the caller's router, where this policy counts each as carrying the mean texts of the
calls the replicas hold (at least one).
Here each ``EncoderDeployment`` replica reports the texts it holds (queued in its batcher
or in the forward pass, ``record_autoscaling_stats``), and the policy asks for
``texts / target_ongoing_requests`` replicas: for an encoder deployment (the search
application's and the embeddings application's), ``target_ongoing_requests`` counts
texts. Serve applies ``min_replicas`` / ``max_replicas``, the delays and the scaling
factors around the policy (``ray.serve.autoscaling_policy._apply_autoscaling_config``).

Source: Ray Serve's custom autoscaling metrics and policies (``AutoscalingContext``,
``AutoscalingPolicy``, Ray 2.60, "advanced autoscaling" guide). Serve's controller imports
this module by its path (``deployments.autoscaling``) when it applies a Serve config file,
so the package must be installed where the controller runs (the image or the head
node's environment, not only a ``runtime_env`` working directory); the module imports
nothing beyond the standard library, so that import is cheap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ray.serve.config import AutoscalingContext

__all__ = [
    "TEXTS_IN_FLIGHT",
    "TEXTS_POLICY",
    "replicas_for_texts",
    "texts_in_flight_policy",
    "with_texts_policy",
]

#: The custom metric an encoder replica reports: texts it holds (float, >= 0).
TEXTS_IN_FLIGHT = "texts_in_flight"
#: Import path of :func:`texts_in_flight_policy` for ``autoscaling_config.policy``.
TEXTS_POLICY = "deployments.autoscaling:texts_in_flight_policy"


def replicas_for_texts(
    texts_by_replica: Mapping[Any, float],
    running_replicas: int,
    queued_calls: float,
    ongoing_calls: float,
    target_texts: float,
) -> float:
    """Replicas wanted (unrounded, before Serve's bounds) for the texts in flight.

    Args:
        texts_by_replica: texts each reporting replica held, averaged over Serve's
            look-back window (``AutoscalingContext.aggregated_metrics``).
        running_replicas: replicas running now (>= 1).
        queued_calls: calls queued at the callers' handles, not yet at a replica; each
            counts as the mean texts of a call the replicas hold (``texts /
            max(ongoing_calls - queued_calls, 1)``, at least one text; replicas that
            hold texts hold at least one call, whatever the look-back averages say):
            a queued merged call carries about what a held one does, and counting it
            as one text kept the encoder from scaling while full calls piled up at
            the handles.
        ongoing_calls: Serve's own count of calls in flight, queued ones included
            (``AutoscalingContext.total_num_requests``); used alone while no replica has
            reported texts yet (a replica starting, or one that failed to report).
        target_texts: texts in flight one replica should hold (> 0).

    Returns:
        ``(texts + queued texts) / target_texts``. Replicas that have not reported
        count as the mean of those that have.

    Raises:
        ValueError: ``target_texts`` <= 0.
    """
    if target_texts <= 0:
        raise ValueError(f"target_texts must be > 0, got {target_texts}")
    reported = [float(texts) for texts in texts_by_replica.values() if math.isfinite(texts)]
    if not reported:
        return ongoing_calls / target_texts
    texts = sum(reported) / len(reported) * max(running_replicas, len(reported))
    queued_calls = max(queued_calls, 0.0)
    # continuous in the held calls (the look-back averages can make them fractional)
    texts_per_call = max(texts / max(ongoing_calls - queued_calls, 1.0), 1.0)
    return (texts + queued_calls * texts_per_call) / target_texts


def texts_in_flight_policy(ctx: AutoscalingContext) -> tuple[float, dict[str, Any]]:
    """Ray Serve autoscaling policy: replicas for the texts the encoder's replicas hold,
    ``target_ongoing_requests`` texts each (:func:`replicas_for_texts`). Keeps no state.
    With no replica running it keeps Serve's target (the cold start is Serve's)."""
    if ctx.current_num_replicas == 0:
        return ctx.target_num_replicas, {}
    # Serve aggregates custom metrics over the running replicas only
    texts = (ctx.aggregated_metrics or {}).get(TEXTS_IN_FLIGHT, {})
    return replicas_for_texts(
        texts,
        ctx.current_num_replicas,
        ctx.total_queued_requests or 0.0,
        ctx.total_num_requests,
        ctx.config.get_target_ongoing_requests(),
    ), {}


def with_texts_policy(autoscaling_config: Mapping[str, Any]) -> dict[str, Any]:
    """``autoscaling_config`` (Serve's keys) with :func:`texts_in_flight_policy` as its
    policy, unless it names a policy of its own."""
    config = dict(autoscaling_config)
    config.setdefault("policy", {"policy_function": TEXTS_POLICY})
    return config
