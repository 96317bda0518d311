"""Ray Serve autoscaling with CPU replicas: a deployment whose options come from the
project's own ``deployment_options(DeploymentSettings(autoscaling_config=...))`` scales
from 1 to 2 replicas under load and back to 1 when the load stops (issue 9, item 3).

The model is a stand-in at the edge (each request holds a replica for 0.3 s, like a slow
forward pass, without spending the shared CPU); the autoscaling path is Serve's own, on
the session's Ray (``serve_cluster``), as a separate application and route prefix. The
delays are short here (1 s up, 3 s down); the shipped configs use 5 s up and 60-300 s
down. Bounded to about two minutes.

Then the real ``EncoderDeployment`` with ``encoder_deployment_options``, fed single-text
callers merged as the search ingress merges them under autoscaling (few calls, many
texts; ``DeploymentSettings.caller_merge``): it scales on the texts its replicas report
(``deployments.autoscaling``), where Serve's default policy, counting calls, would not,
and the texts the ingress holds back are too few to hide the load.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from deployments.app import deployment_options
from deployments.config import DeploymentSettings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

APP_NAME = "autoscaling-test"
DEPLOYMENT = "SlowModel"
REQUEST_S = 0.3
CALLERS = 12
UP_TIMEOUT_S = 75.0
DOWN_TIMEOUT_S = 45.0
CALL_TIMEOUT_S = 120.0
SETTINGS = DeploymentSettings(
    num_cpus=0.1,
    max_batch_size=4,
    max_ongoing_requests=8,
    autoscaling_config={
        "min_replicas": 1,
        "initial_replicas": 1,
        "max_replicas": 2,
        "target_ongoing_requests": 2,
        "upscale_delay_s": 1.0,
        "downscale_delay_s": 3.0,
        "metrics_interval_s": 0.5,
        "look_back_period_s": 2.0,
    },
)


def _slow_model() -> Any:
    from ray import serve

    @serve.deployment(name=DEPLOYMENT)
    class SlowModel:
        """Holds its replica ``REQUEST_S`` seconds per request; takes a ``user_config``
        like the model deployments (``reconfigure``)."""

        def __init__(self) -> None:
            self.user_config: dict[str, Any] = {}

        def reconfigure(self, user_config: dict[str, Any]) -> None:
            self.user_config = dict(user_config)

        async def predict(self, value: int) -> int:
            await asyncio.sleep(REQUEST_S)
            return value

    return SlowModel


def _running_replicas() -> int:
    from ray import serve

    application = serve.status().applications.get(APP_NAME)
    if application is None or DEPLOYMENT not in application.deployments:
        return 0
    return int(application.deployments[DEPLOYMENT].replica_states.get("RUNNING", 0))


def _wait_for(predicate: Callable[[], bool], timeout_s: float, history: list[int]) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        history.append(_running_replicas())
        if predicate():
            return True
        time.sleep(0.5)
    return False


@pytest.fixture
def slow_app(serve_cluster: Any) -> Iterator[Any]:
    from ray import serve

    options = deployment_options(SETTINGS)
    assert "num_replicas" not in options  # autoscaling replaces a fixed count
    handle = serve.run(
        _slow_model().options(**options).bind(), name=APP_NAME, route_prefix=f"/{APP_NAME}"
    )
    try:
        yield handle
    finally:
        serve.delete(APP_NAME)


def test_deployment_scales_from_one_to_two_replicas_under_load_and_back(slow_app: Any) -> None:
    history: list[int] = []
    assert _wait_for(lambda: _running_replicas() == 1, 30.0, history), history
    assert slow_app.predict.remote(7).result(timeout_s=30) == 7

    stop = threading.Event()
    answered = [0] * CALLERS

    def caller(number: int) -> None:
        while not stop.is_set():
            # generous: on a busy 2-core CI machine a new replica took 62 s to start,
            # and a call queued behind the first one waited past 30 s (what is tested
            # here is the replica count, not this deadline)
            slow_app.predict.remote(number).result(timeout_s=CALL_TIMEOUT_S)
            answered[number] += 1

    with ThreadPoolExecutor(max_workers=CALLERS) as pool:
        futures = [pool.submit(caller, number) for number in range(CALLERS)]
        try:
            scaled_up = _wait_for(lambda: _running_replicas() == 2, UP_TIMEOUT_S, history)
        finally:
            stop.set()
        for future in futures:
            future.result(timeout=60)
    assert scaled_up, f"no second replica under {CALLERS} callers; replicas seen: {history}"
    assert all(answered), "every caller got answers while scaling"

    scaled_down = _wait_for(lambda: _running_replicas() == 1, DOWN_TIMEOUT_S, history)
    assert scaled_down, f"did not scale back to one replica; replicas seen: {history}"
    assert max(history) == 2  # never above max_replicas


ENCODER_APP = "autoscaling-encoder-test"
ENCODER_CALLERS = 96  # one text each, as an ingress's query embeddings come
ENCODER_SETTINGS = DeploymentSettings(
    num_cpus=0.1,
    max_batch_size=16,
    batch_wait_timeout_s=0.0,
    max_ongoing_requests=8,
    caller_merge_items=16,
    autoscaling_config={
        "min_replicas": 1,
        "initial_replicas": 1,
        "max_replicas": 2,
        # texts: more than the 2 merged calls of 16 the ingress's bound lets out, far
        # more than the calls Serve's default policy would count
        "target_ongoing_requests": 40,
        "upscale_delay_s": 1.0,
        "downscale_delay_s": 30.0,
        "metrics_interval_s": 0.5,
        "look_back_period_s": 2.0,
    },
)


def _encoder_replicas(name: str) -> int:
    from ray import serve

    application = serve.status().applications.get(ENCODER_APP)
    if application is None or name not in application.deployments:
        return 0
    return int(application.deployments[name].replica_states.get("RUNNING", 0))


def test_an_encoder_fed_merged_calls_scales_on_its_texts(serve_cluster: Any, tmp_path) -> None:
    """The real ``EncoderDeployment`` (the default profile's MiniLM) with the options the
    application gives it, fed as the search ingress feeds it under autoscaling: 96
    single-text callers through a ``CallCoalescer`` with ``caller_merge()``'s settings
    (2 merged calls of up to 16 texts out, full calls of 16 past that bound). Serve sees
    a few calls in flight against a target of 40; the replicas report the texts, about
    all 96 of them (only a partial call waits at the caller): it scales to 2. With the
    bound alone (no ``send_full_calls``) the replicas would hold 32 texts at most and it
    would stay at 1."""
    from ray import serve

    from deployments.app import encoder_deployment_options
    from deployments.config import load_config
    from deployments.encoder import EncoderDeployment
    from deployments.handles import merged_encoder_calls
    from deployments.roles import model_deployments

    config = load_config("default", data_dir=tmp_path)
    encoder = next(d for d in model_deployments(config) if d.kind == "encoder")
    options = encoder_deployment_options(ENCODER_SETTINGS)
    merge = ENCODER_SETTINGS.caller_merge()
    assert merge is not None and merge.send_full_calls
    app = serve.run(
        EncoderDeployment.options(name=encoder.name, **options).bind(
            ENCODER_SETTINGS.replica_models(config.models), list(encoder.roles)),
        name=ENCODER_APP, route_prefix=None,
    )
    role = encoder.roles[0]
    history: list[int] = []
    stop = threading.Event()
    answered = [0] * ENCODER_CALLERS

    def replicas() -> int:
        return _encoder_replicas(encoder.name)

    async def callers() -> None:
        coalescer = merged_encoder_calls(app, merge)

        async def caller(number: int) -> None:
            text = f"osimertinib dosing question {number}"
            while not stop.is_set():
                vectors = await asyncio.wait_for(coalescer.encode(role, [text]),
                                                 CALL_TIMEOUT_S)
                assert vectors.shape[0] == 1
                answered[number] += 1

        await asyncio.gather(*(caller(number) for number in range(ENCODER_CALLERS)))

    try:
        deadline = time.monotonic() + UP_TIMEOUT_S
        with ThreadPoolExecutor(max_workers=1) as pool:
            driving = pool.submit(asyncio.run, callers())
            try:
                while time.monotonic() < deadline and replicas() < 2 and not driving.done():
                    history.append(replicas())
                    time.sleep(0.5)
                history.append(replicas())
            finally:
                stop.set()
            driving.result(timeout=CALL_TIMEOUT_S)
    finally:
        # the driver's router pushes autoscaling metrics until shut down; left running,
        # it would start a new Ray after the session's shutdown
        app.shutdown()
        serve.delete(ENCODER_APP)
    assert all(answered), sum(1 for count in answered if not count)
    assert history[-1] == 2, f"no second encoder replica on {ENCODER_CALLERS} callers: {history}"
