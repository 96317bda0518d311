"""A local Ray + Serve for one benchmark run: a bounded number of logical CPUs and of
object-store memory, the repository on the workers' ``PYTHONPATH`` (so replicas can
import ``bench`` modules), HTTP on a free port; both stopped on exit."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from bench import REPOSITORY

__all__ = ["ray_serve_session"]



@contextmanager
def ray_serve_session(
    num_cpus: int = 4,
    object_store_bytes: int = 512 * 1024**2,
    port: int | None = None,
    throughput_optimized: bool = False,
) -> Iterator[str]:
    """Start Ray (``num_cpus`` logical CPUs) and Serve; yield the HTTP base URL; shut
    Serve and Ray down on exit. ``throughput_optimized``: Ray Serve's
    ``RAY_SERVE_THROUGHPUT_OPTIMIZED=1`` (Ray >= 2.56: direct ingress, each ingress
    replica also answers HTTP on its own port from 30000; gRPC between replicas; user
    code on the replica's main loop), set before Ray starts so every process sees it.

    Raises:
        RuntimeError: Ray is already initialised in this process (a benchmark must not
            share, or shut down, somebody else's Ray).
    """
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    from ray import serve

    from deployments.runtime import find_free_port

    if ray.is_initialized():
        raise RuntimeError("Ray is already initialised in this process")
    if throughput_optimized:
        os.environ["RAY_SERVE_THROUGHPUT_OPTIMIZED"] = "1"
    port = port or find_free_port()
    python_path = os.pathsep.join(
        p for p in (str(REPOSITORY), os.environ.get("PYTHONPATH", "")) if p
    )
    ray.init(
        num_cpus=num_cpus,
        object_store_memory=object_store_bytes,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": {"PYTHONPATH": python_path, "HF_HUB_OFFLINE": "1",
                                  "TRANSFORMERS_OFFLINE": "1",
                                  "TOKENIZERS_PARALLELISM": "false"}},
    )
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        yield f"http://127.0.0.1:{port}"
    finally:
        try:
            serve.shutdown()
        finally:
            ray.shutdown()
            if throughput_optimized:
                os.environ.pop("RAY_SERVE_THROUGHPUT_OPTIMIZED", None)
