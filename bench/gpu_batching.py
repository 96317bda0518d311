"""Replica batching on a GPU: one model replica's continuous batcher, batching on against
off, under c concurrent callers (issue 16's "batching on / off >= 2x at c=16", without
Ray's hops).

Ray-free, so it runs where only torch is installed (a lent GPU machine). The models are
``bench.gpu_check``'s random-weight builds in their published layouts (BERT-base text
encoder for PubMedBERT / MedCPT-Query, BERT-base cross-encoder for MedCPT-Cross), loaded
by the product's loader (``models.loader.load_role``) in fp16 on CUDA. Each request goes
the replica's own way: ``BatchSettings.batcher`` (``deployments.model_replica``) over
``encode_batch`` / ``score_batch`` (``deployments.batching``) in a worker thread, as
``EncoderDeployment._encode_batch`` and ``CrossEncoderDeployment`` run them.

- Batching on: the deployment's ``user_config`` in ``configs/serve.gpu.yaml`` (text
  encoders 32 texts / 5 ms, the cross-encoder 256 pairs / 10 ms).
- Batching off: ``max_batch_size`` 1 (``bench.baselines``'s "batching off": one text,
  or one pair, per forward pass); for the cross-encoder also "per-request" (one
  request's pairs per pass, requests never combined).
- Requests: one short query text (text encoder); one query with ``--pairs`` passages cut
  at 2,048 characters (cross-encoder; a search sends 128).
- Per concurrency c: c callers each send a request, await it and send the next, for
  ``--seconds`` after ``--warmup-s``; items/s and p50 / p99 latency (ms) of the calls
  that end in that window, and the mean batch (items per forward pass).
- The limit: the model called in process, back to back, at batching on's
  ``max_batch_size`` (texts or pairs per pass); served/limit = items/s at c over it.

    python -m bench.gpu_batching                      # on the GPU machine
    python -m bench.gpu_batching --quick              # tiny models, CPU is fine (smoke)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from bench import REPOSITORY
from bench.gpu_check import BASE, FAMILIES, QUERIES, TINY, Size, _inputs, _profile
from deployments.batching import (
    BatchStats,
    EncodeRequest,
    ScoreRequest,
    encode_batch,
    items_in,
    score_batch,
    score_call,
)
from deployments.model_replica import BatchSettings, gather_split
from models.loader import load_role
from models.specs import EncoderSpec

__all__ = ["batch_settings", "drive", "main"]

CONCURRENCY = (1, 8, 16, 32, 64)
PAIR_CONCURRENCY = (1, 4, 16)  # searches in flight, each sending --pairs pairs
DEPLOYMENTS = {"hf-text": "Encoder-pubmedbert", "cross-encoder": "CrossEncoder"}
OFF = {"max_batch_size": 1, "batch_wait_timeout_s": 0.0}


def batch_settings(deployment: str, config: Path) -> dict[str, Any]:
    """``user_config`` of ``deployment`` in the Serve config at ``config`` (the batch
    settings a GPU replica runs with).

    Raises:
        KeyError: no deployment of that name carries a ``user_config``.
    """
    document = yaml.safe_load(config.read_text())
    for application in document.get("applications", []):
        for entry in application.get("deployments", []):
            if entry.get("name") == deployment and "user_config" in entry:
                return dict(entry["user_config"])
    raise KeyError(f"{deployment}: no user_config in {config}")


async def drive(
    submit: Callable[[int], Awaitable[int]], concurrency: int, seconds: float, warmup_s: float
) -> dict[str, float]:
    """Run ``concurrency`` closed-loop callers of ``submit(n) -> items`` for ``warmup_s``
    + ``seconds``; the calls that end inside the window (after the warm-up) count, with
    their latency. Returns items/s, requests/s and p50 / p99 latency (ms)."""
    start = time.perf_counter()
    measure_from, stop_at = start + warmup_s, start + warmup_s + seconds
    latencies: list[float] = []
    items = 0

    async def caller(index: int) -> None:
        nonlocal items
        sent = 0
        while (began := time.perf_counter()) < stop_at:
            done = await submit(index * 1_000_003 + sent)
            sent += 1
            ended = time.perf_counter()
            if measure_from <= ended <= stop_at:
                latencies.append((ended - began) * 1000)
                items += done

    await asyncio.gather(*(caller(i) for i in range(concurrency)))
    window = stop_at - measure_from
    ordered = np.sort(np.asarray(latencies or [float("nan")]))
    return {
        "items_s": items / window,
        "requests_s": len(latencies) / window,
        "p50_ms": float(np.percentile(ordered, 50)),
        "p99_ms": float(np.percentile(ordered, 99)),
    }


class _TokensInTheBatch:
    """The cross-encoder without ``tokenize_pairs``: each batch tokenises its own pairs
    inside its forward call (``score_pairs``), as replicas did before issue 16."""

    def __init__(self, model: Any) -> None:
        self.score_pairs = model.score_pairs


def _replica(
    family: str, model: Any, role: str, pairs: int, settings: dict[str, Any]
) -> tuple[Callable[[int], Awaitable[int]], BatchStats]:
    """A replica's request path for ``model`` with ``settings``: ``submit(n)`` sends the
    n-th request and returns its item count."""
    if settings.get("tokens_in_batch"):
        model = _TokensInTheBatch(model)
    batch = BatchSettings()
    batch.update({k: v for k, v in settings.items() if k != "tokens_in_batch"})
    forward_pool = ThreadPoolExecutor(max_workers=1)
    tokenize_pool = ThreadPoolExecutor(max_workers=torch.get_num_threads())
    stats = BatchStats()
    passages = _inputs("pairs", 64) if family == "cross-encoder" else []

    async def run(requests: list[Any]) -> Sequence[np.ndarray]:
        stats.record(items_in(requests), len(requests))
        if family == "cross-encoder":
            # the deployment's own threads: one for the forward pass, its own for tokenising
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(forward_pool, score_batch, model, requests)
        return await asyncio.to_thread(encode_batch, {role: model}, requests)

    batcher = batch.batcher(run, lambda request: items_in([request]))

    async def submit(n: int) -> int:
        query = QUERIES[n % len(QUERIES)]
        if family == "cross-encoder":  # the deployment's own path (tokenising included)
            texts = [passages[(n + i) % len(passages)] for i in range(pairs)]
            scores = await score_call(
                model, batcher.submit, batch.max_batch_size, query, texts, None, tokenize_pool
            )
            return len(scores)

        async def piece(part: Sequence[str], offset: int) -> np.ndarray:
            return await batcher.submit(EncodeRequest(role, tuple(part)))

        # a call larger than max_batch_size is cut as the deployments cut it
        parts = await gather_split([query], batch.max_batch_size, piece)
        return sum(len(part) for part in parts)

    return submit, stats


def _limit(family: str, model: Any, role: str, batch: int, seconds: float) -> float:
    """Items/s of the model called in process, back to back, at ``batch`` items a pass."""
    if family == "cross-encoder":
        passages = _inputs("pairs", batch)
        requests: list[Any] = [ScoreRequest(QUERIES[0], tuple(passages))]

        def once() -> None:
            score_batch(model, requests)
    else:
        requests = [EncodeRequest(role, tuple(_inputs("text", batch)))]

        def once() -> None:
            encode_batch({role: model}, requests)

    once()
    passes, started = 0, time.perf_counter()
    while passes < 3 or time.perf_counter() - started < seconds:
        once()
        passes += 1
    return batch * passes / (time.perf_counter() - started)


def run_family(family: str, size: Size, root: Path, args: Any) -> list[dict[str, Any]]:
    """Rows (one per mode and concurrency, and the limit) for one family."""
    folder = root / family
    spec = EncoderSpec(source=str(folder), **FAMILIES[family].build(folder, size))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_role(spec.role, _profile(root, spec, device=device))
    on = batch_settings(DEPLOYMENTS[family], args.serve_config)
    if args.quick:
        on["max_batch_size"] = min(on["max_batch_size"], 32)
    pairs = args.pairs if family == "cross-encoder" else 1
    concurrency = args.pair_concurrency if family == "cross-encoder" else args.concurrency
    limit = _limit(family, model, spec.role, on["max_batch_size"], args.seconds / 2)
    rows: list[dict[str, Any]] = [
        {
            "family": family,
            "mode": "limit",
            "c": None,
            "batch": on["max_batch_size"],
            "items_s": limit,
        }
    ]
    modes = [("on", on), ("off", OFF)]
    if args.also_no_wait:  # the batch goes as soon as the model is free, never waits
        modes.insert(1, ("on, wait 0", {**on, "batch_wait_timeout_s": 0.0}))
    if family == "cross-encoder":  # each batch tokenises its own pairs (before issue 16)
        modes.insert(1, ("on, tokenised in the batch", {**on, "tokens_in_batch": True}))
    if family == "cross-encoder":  # bench.baselines' "per-request batches"
        modes.insert(1, ("per-request", {"max_batch_size": pairs, "batch_wait_timeout_s": 0.0}))
    for mode, settings in modes:
        for c in concurrency:
            submit, stats = _replica(family, model, spec.role, pairs, settings)
            row = asyncio.run(drive(submit, c, args.seconds, args.warmup_s))
            snapshot = stats.snapshot()
            row.update(
                family=family,
                mode=mode,
                c=c,
                batch=snapshot["mean"],
                served_over_limit=row["items_s"] / limit,
            )
            rows.append(row)
            print(
                f"  {family} {mode} c={c}: {row['items_s']:.0f} items/s, p99 "
                f"{row['p99_ms']:.1f} ms, batch {snapshot['mean']}",
                file=sys.stderr,
            )
    del model
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return rows


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "- (no call ended in the window)"


def format_table(rows: Sequence[dict[str, Any]], device: str) -> str:
    """Markdown: per family and c, items/s, p50 / p99 and mean batch on and off, the on/off
    ratio and served/limit."""
    lines = [
        f"Replica batching ({device}); limit = in process at batching on's max batch",
        "",
        "| family | c | on items/s | on p50 / p99 ms | on batch | off items/s | "
        "off p50 / p99 ms | on/off | on / limit |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for family in dict.fromkeys(row["family"] for row in rows):
        limit = next(r for r in rows if r["family"] == family and r["mode"] == "limit")
        lines.append(
            f"| {family} | limit (batch {limit['batch']}) | {limit['items_s']:.0f} | | | | | | |"
        )
        for r in rows:
            if r["family"] == family and r["mode"] not in ("on", "off", "limit"):
                lines.append(
                    f"| {family} {r['mode']} | {r['c']} | {r['items_s']:.0f} | "
                    f"{r['p50_ms']:.1f} / {r['p99_ms']:.1f} | {r['batch']} | | | | "
                    f"{r['served_over_limit']:.2f} |"
                )
        on = {r["c"]: r for r in rows if r["family"] == family and r["mode"] == "on"}
        off = {r["c"]: r for r in rows if r["family"] == family and r["mode"] == "off"}
        for c, a in on.items():
            b = off[c]
            lines.append(
                f"| {family} | {c} | {a['items_s']:.0f} | {a['p50_ms']:.1f} / {a['p99_ms']:.1f} "
                f"| {a['batch']} | {b['items_s']:.0f} | {b['p50_ms']:.1f} / {b['p99_ms']:.1f} "
                f"| {_ratio(a['items_s'], b['items_s'])} | {a['served_over_limit']:.2f} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table (and write ``--out`` JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny models (CPU smoke test)")
    parser.add_argument("--families", default=",".join(DEPLOYMENTS))
    parser.add_argument("--concurrency", type=int, nargs="+", default=list(CONCURRENCY))
    parser.add_argument(
        "--pair-concurrency",
        type=int,
        nargs="+",
        default=list(PAIR_CONCURRENCY),
        help="cross-encoder callers",
    )
    parser.add_argument("--seconds", type=float, default=4.0, help="measured window per row")
    parser.add_argument("--warmup-s", type=float, default=1.0)
    parser.add_argument("--pairs", type=int, default=32, help="cross-encoder pairs per request")
    parser.add_argument(
        "--serve-config", type=Path, default=REPOSITORY / "configs" / "serve.gpu.yaml"
    )
    parser.add_argument(
        "--also-no-wait",
        action="store_true",
        help="also batching on with batch_wait_timeout_s 0",
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.families.split(",") if name.strip()]
    unknown = sorted(set(names) - set(DEPLOYMENTS))
    if unknown:
        parser.error(f"unknown families {unknown}; valid: {', '.join(DEPLOYMENTS)}")
    device = (
        f"cuda: {torch.cuda.get_device_name(0)} (fp16)"
        if torch.cuda.is_available()
        else "no CUDA: CPU fp32"
    )
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="gpu-batching-") as temporary:
        for name in names:
            rows.extend(run_family(name, TINY if args.quick else BASE, Path(temporary), args))
    print(format_table(rows, device))
    if args.out is not None:
        args.out.write_text(
            json.dumps({"device": device, "argv": sys.argv, "rows": rows}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
