"""Where one model call's time goes: tokenising (``TokenizerAdapter.rows``) against
padding + forward passes + copying back (``run_in_sub_batches``), for the BERT-base text
encoder and cross-encoder (``bench.gpu_check``'s random-weight builds, loaded by the
product's loader, fp16 on CUDA). Median of ``--repeats`` calls per batch size, ms.

    python -m bench.gpu_stages              # on the GPU machine
    python -m bench.gpu_stages --quick      # tiny models, CPU is fine (smoke)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench.gpu_check import BASE, FAMILIES, QUERIES, TINY, _inputs, _profile
from models.batching import run_in_sub_batches
from models.loader import load_role
from models.specs import EncoderSpec

__all__ = ["main", "stage_times"]


def _median_ms(call: Callable[[], Any], repeats: int) -> float:
    call()  # warm-up at this shape
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return float(np.median(times))


def stage_times(family: str, model: Any, batch: int, repeats: int) -> dict[str, float]:
    """``{"tokenise_ms", "forward_ms", "whole_ms"}`` for one call of ``batch`` items: the
    rows the model's own call would tokenise, then those rows through its sub-batches."""
    if family == "cross-encoder":  # the replica's two halves (deployments.batching.score_call)
        passages = _inputs("pairs", batch)
        questions = [QUERIES[0]] * batch

        def tokenise() -> Any:
            return model.tokenize_pairs(questions, passages)

        def whole() -> Any:
            return model.score(QUERIES[0], passages)

        rows = tokenise()

        def forward() -> Any:
            return model.score_tokens(rows)
    else:
        texts = _inputs("text", batch)

        def tokenise() -> Any:
            return model.adapter.rows(texts)

        def whole() -> Any:
            return model.encode(texts)

        rows = tokenise()
        adapter = model.adapter

        def forward() -> Any:
            return run_in_sub_batches(
                rows, adapter.input_names, adapter.pad_token_id, model.forward, model.limits
            )

    return {
        "tokenise_ms": _median_ms(tokenise, repeats),
        "forward_ms": _median_ms(forward, repeats),
        "whole_ms": _median_ms(whole, repeats),
        "tokens": float(sum(len(row["input_ids"]) for row in rows)),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print one markdown table: family, batch, tokens, tokenise / forward / whole ms."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 32, 256])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"
    lines = [
        f"Model call stages ({name}, {'fp16' if device == 'cuda' else 'fp32'}), median ms",
        "",
        "| family | batch | tokens | tokenise ms | forward ms | whole call ms | tokenise share |",
        "|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="gpu-stages-") as temporary:
        root = Path(temporary)
        for family in ("hf-text", "cross-encoder"):
            folder = root / family
            size = TINY if args.quick else BASE
            spec = EncoderSpec(source=str(folder), **FAMILIES[family].build(folder, size))
            model = load_role(spec.role, _profile(root, spec, device=device))
            for batch in args.batches:
                row = stage_times(family, model, batch, args.repeats)
                lines.append(
                    f"| {family} | {batch} | {row['tokens']:.0f} | {row['tokenise_ms']:.1f} | "
                    f"{row['forward_ms']:.1f} | {row['whole_ms']:.1f} | "
                    f"{row['tokenise_ms'] / row['whole_ms']:.0%} |"
                )
                print(lines[-1], file=sys.stderr)
            del model
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
