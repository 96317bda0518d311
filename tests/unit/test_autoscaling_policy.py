"""The texts-in-flight autoscaling policy of encoder deployments (``deployments.autoscaling``):
its arithmetic, the policy on Ray Serve's own ``AutoscalingContext`` / ``AutoscalingConfig``
(deserialised the way Serve's controller does), the options that carry it, and the metric
an ``EncoderDeployment`` replica reports."""

from __future__ import annotations

import asyncio
import math

import pytest

from deployments.autoscaling import (
    TEXTS_IN_FLIGHT,
    TEXTS_POLICY,
    replicas_for_texts,
    texts_in_flight_policy,
    with_texts_policy,
)

pytestmark = pytest.mark.unit


def test_replicas_follow_texts_not_calls() -> None:
    assert replicas_for_texts({"a": 40.0, "b": 20.0, "c": 0.0}, 3, 0, 3, 20) == 3.0
    # a replica that has not reported yet counts as the mean of those that have
    assert replicas_for_texts({"a": 30.0}, 2, 0, 1, 20) == 3.0
    # a call queued at the handles counts as the mean call the replicas hold: two
    # calls hold 32 texts, so 4 queued merged calls carry about 64 more
    assert replicas_for_texts({"a": 32.0}, 1, 4, 6, 32) == 3.0
    # ... and at least one text
    assert replicas_for_texts({"a": 1.0}, 1, 9, 11, 10) == 1.0
    # a replica holding texts holds at least one call, also where the look-back averages
    # count fewer (here none): no jump between 1 and 0 held calls
    assert replicas_for_texts({"a": 10.0}, 1, 10, 2, 10) == 11.0
    assert replicas_for_texts({"a": 10.0}, 1, 10, 11, 10) == 11.0
    # nothing reported yet: Serve's call count stands in
    assert replicas_for_texts({}, 2, 0, 6, 2) == 3.0
    # a value that is not a number is not a report
    assert replicas_for_texts({"a": math.nan}, 1, 0, 4, 2) == 2.0


def test_a_target_of_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="target_texts"):
        replicas_for_texts({"a": 1.0}, 1, 0, 1, 0)


def _context(config, texts_by_replica: dict[str, float], calls: float, running: int = 2,
             queued: float = 0.0):
    from ray.serve._private.common import DeploymentID, ReplicaID
    from ray.serve.config import AutoscalingContext

    deployment = DeploymentID(name="Encoder-pubmedbert", app_name="app")
    replicas = [ReplicaID(f"r{i}", deployment) for i in range(running)]
    metrics = {TEXTS_IN_FLIGHT: {replicas[int(key)]: value
                                 for key, value in texts_by_replica.items()}}
    return AutoscalingContext(
        deployment_id=deployment, deployment_name=deployment.name, app_name="app",
        current_num_replicas=running, target_num_replicas=running,
        running_replicas=replicas, total_num_requests=calls, total_queued_requests=queued,
        aggregated_metrics=metrics, raw_metrics=None,
        capacity_adjusted_min_replicas=config.min_replicas,
        capacity_adjusted_max_replicas=config.max_replicas, policy_state={},
        last_scale_up_time=None, last_scale_down_time=None, current_time=None,
        config=config,
    )


def test_merged_calls_scale_the_encoder_where_the_default_policy_would_not() -> None:
    """Two merged calls carrying 128 texts over two replicas, target 32 texts: the
    texts policy asks for 4 replicas; Serve's default policy, counting the 2 calls, for
    a sixteenth of one."""
    from ray.serve.autoscaling_policy import replica_queue_length_autoscaling_policy
    from ray.serve.config import AutoscalingConfig

    config = AutoscalingConfig(min_replicas=1, max_replicas=8, target_ongoing_requests=32,
                               policy={"policy_function": TEXTS_POLICY})
    context = _context(config, {"0": 64.0, "1": 64.0}, calls=2)
    # the policy as Serve's controller gets it: deserialised from the config
    policy = config.policy.get_policy()
    assert policy(context) == (4.0, {})
    assert texts_in_flight_policy(context) == (4.0, {})
    default, _ = replica_queue_length_autoscaling_policy(context)
    assert default < 1


def test_full_calls_queued_at_the_handles_count_as_the_calls_the_replicas_hold() -> None:
    """Four calls held by two replicas carry 64 texts; two more wait in the callers'
    routers (past ``max_ongoing_requests``): they count 16 texts each, not one."""
    from ray.serve.config import AutoscalingConfig

    config = AutoscalingConfig(min_replicas=1, max_replicas=8, target_ongoing_requests=32,
                               policy={"policy_function": TEXTS_POLICY})
    context = _context(config, {"0": 32.0, "1": 32.0}, calls=6, queued=2)
    assert texts_in_flight_policy(context) == (3.0, {})


def test_a_replica_not_reported_yet_counts_as_the_others_and_none_keeps_the_target() -> None:
    from ray.serve.config import AutoscalingConfig

    config = AutoscalingConfig(min_replicas=1, max_replicas=4, target_ongoing_requests=10)
    context = _context(config, {"0": 30.0}, calls=2, running=2)  # r1 just started
    assert texts_in_flight_policy(context)[0] == 6.0  # 30 texts x 2 replicas / 10
    idle = _context(config, {}, calls=0, running=0)
    assert texts_in_flight_policy(idle) == (0, {})


def test_the_policy_is_added_unless_one_is_named() -> None:
    mine = {"min_replicas": 1, "policy": {"policy_function": "my.module:policy"}}
    assert with_texts_policy(mine) == mine
    plain = {"min_replicas": 1, "max_replicas": 2}
    added = with_texts_policy(plain)
    assert added == {**plain, "policy": {"policy_function": TEXTS_POLICY}}
    assert "policy" not in plain


def test_encoder_options_carry_the_policy_only_when_autoscaled() -> None:
    from deployments.app import deployment_options, encoder_deployment_options
    from deployments.config import DeploymentSettings

    fixed = DeploymentSettings(num_replicas=2)
    assert encoder_deployment_options(fixed) == deployment_options(fixed)
    scaled = DeploymentSettings(autoscaling_config={"min_replicas": 1, "max_replicas": 3})
    options = encoder_deployment_options(scaled)
    assert options["autoscaling_config"]["policy"] == {"policy_function": TEXTS_POLICY}
    assert "policy" not in deployment_options(scaled)["autoscaling_config"]


def test_an_encoder_replica_reports_the_texts_it_holds(tmp_path) -> None:
    """The real ``EncoderDeployment`` class (not deployed) with the default profile's
    MiniLM: while a call of 5 texts waits for its batch, the replica reports 5."""
    from deployments.config import load_config
    from deployments.encoder import EncoderDeployment
    from deployments.roles import model_deployments

    config = load_config("default", data_dir=tmp_path)
    encoder = next(d for d in model_deployments(config) if d.kind == "encoder")
    replica = EncoderDeployment.func_or_class(
        config.serve.encoder.replica_models(config.models), list(encoder.roles))
    replica.reconfigure({"max_batch_size": 32, "batch_wait_timeout_s": 0.3})
    role = encoder.roles[0]

    async def scenario() -> list[float]:
        seen = [replica.record_autoscaling_stats()[TEXTS_IN_FLIGHT]]
        call = asyncio.ensure_future(replica.encode(role, ["a", "b", "c", "d", "e"]))
        await asyncio.sleep(0.05)  # the batch waits up to 0.3 s to fill
        seen.append(replica.record_autoscaling_stats()[TEXTS_IN_FLIGHT])
        vectors = await call
        seen.append(replica.record_autoscaling_stats()[TEXTS_IN_FLIGHT])
        assert vectors.shape[0] == 5
        return seen

    assert asyncio.run(scenario()) == [0.0, 5.0, 0.0]


def test_texts_on_the_replicas_embeddings_port_are_reported_too(tmp_path) -> None:
    """``serve.embeddings_port`` requests skip Serve's request path (Serve counts none of
    them as ongoing), but they reach the same ``encode_timed``: the replica reports
    their texts, so the texts-in-flight policy scales on port traffic too."""
    import socket

    import httpx

    from deployments.config import load_config
    from deployments.encoder import EncoderDeployment
    from deployments.roles import model_deployments

    config = load_config("default", data_dir=tmp_path)
    encoder = next(d for d in model_deployments(config) if d.kind == "encoder")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    texts = [f"imatinib dosing question {i}" for i in range(5)]

    async def scenario() -> tuple[list[float], int, int]:
        # Serve runs the constructor on the replica's loop, which starts the port
        replica = EncoderDeployment.func_or_class(
            config.serve.encoder.replica_models(config.models), list(encoder.roles),
            http_port=port)
        replica.reconfigure({"max_batch_size": 32, "batch_wait_timeout_s": 0.3})
        assert replica.port is not None
        try:
            for _ in range(200):
                if replica.port.serving:
                    break
                await asyncio.sleep(0.02)
            else:
                raise AssertionError("the embeddings port did not start")
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                request = asyncio.ensure_future(
                    client.post("/v1/embeddings", json={"input": texts}, timeout=30))
                seen = []
                while not request.done():  # the batch waits up to 0.3 s to fill
                    seen.append(replica.record_autoscaling_stats()[TEXTS_IN_FLIGHT])
                    await asyncio.sleep(0.01)
                answer = await request
            seen.append(replica.record_autoscaling_stats()[TEXTS_IN_FLIGHT])
            return seen, answer.status_code, len(answer.json()["data"])
        finally:
            await replica.port.aclose()

    seen, status, vectors = asyncio.run(scenario())
    assert (status, vectors) == (200, 5)
    assert max(seen) == 5.0 and seen[-1] == 0.0
