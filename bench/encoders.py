"""In-process encoder throughput: the ceiling the served (Ray Serve) numbers are measured against.

For one text role (MiniLM in the offline profile) it measures texts/s at several call batch
sizes for three engines: torch with each call padded to its longest text ("unsorted"),
torch with texts sorted by length into token-budgeted sub-batches ("length-sorted"), and
ONNX Runtime on a cached export (length-sorted); then the cross-encoder role's pairs/s
when scoring one query against 50 texts. Texts are real leaflet sections (EMA), sampled
with a fixed seed.

Usage: ``python bench/encoders.py [--texts PATH] [--count 512] [--quick]``

:func:`benchmark_rows` returns :class:`ThroughputRow` records and :func:`format_table`
prints them, so another engine (a Ray Serve deployment handle, HTTP) can add rows to the
same table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from models.loader import load_cross_encoder, load_encoder
from models.specs import ModelProfile

__all__ = [
    "BenchSettings",
    "ThroughputRow",
    "benchmark_rows",
    "cross_encoder_rows",
    "format_table",
    "load_texts",
    "main",
    "text_encoder_rows",
]

REPOSITORY = Path(__file__).resolve().parents[1]
DEFAULT_TEXTS = REPOSITORY.parent / "shared" / "data" / "drug_labels" / "ema_leaflet_sections.jsonl"
DEFAULT_PROFILE = REPOSITORY / "configs" / "profiles" / "default.yaml"
QUERY = "gefitinib EGFR inhibitor dosage and warnings"


@dataclass(frozen=True)
class BenchSettings:
    """What to measure: the texts file, the profile and roles, call batch sizes, how many
    texts, how many pairs per cross-encoder call and how many such calls."""

    texts_path: Path = DEFAULT_TEXTS
    profile_path: Path = DEFAULT_PROFILE
    text_role: str = "general-text"
    scorer_role: str = "medcpt-rerank"
    count: int = 512
    batch_sizes: tuple[int, ...] = (1, 8, 32, 128)
    pairs: int = 50
    pair_calls: int = 8
    cpu_threads: int | None = None
    onnx_cache_dir: Path | None = None


@dataclass(frozen=True)
class ThroughputRow:
    """One measurement: ``items`` inputs in ``seconds`` wall time, in calls of
    ``batch_size`` inputs; ``unit`` is ``texts/s`` or ``pairs/s``."""

    target: str
    engine: str
    batch_size: int
    items: int
    seconds: float
    unit: str

    @property
    def rate(self) -> float:
        """Inputs per second."""
        return self.items / self.seconds if self.seconds > 0 else float("inf")


def load_texts(path: Path, count: int, seed: int = 0) -> list[str]:
    """``count`` non-empty ``text`` fields from a JSONL file, sampled with a fixed seed.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file holds fewer texts than ``count``.
    """
    with path.open(encoding="utf-8") as handle:
        texts = [text for line in handle if (text := json.loads(line).get("text", "").strip())]
    if len(texts) < count:
        raise ValueError(f"{path} holds {len(texts)} texts, fewer than {count}")
    return random.Random(seed).sample(texts, count)


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _calls(items: Sequence[str], size: int) -> list[Sequence[str]]:
    return [items[start:start + size] for start in range(0, len(items), size)]


def text_encoder_rows(
    texts: Sequence[str], profile: ModelProfile, settings: BenchSettings
) -> list[ThroughputRow]:
    """texts/s of the text role for each engine and call batch size (one warm-up call
    per engine is not timed)."""
    engines = {
        "torch unsorted": {"runtime": "torch", "sort_by_length": False},
        "torch length-sorted": {"runtime": "torch", "sort_by_length": True},
        "onnxruntime length-sorted": {"runtime": "onnx", "sort_by_length": True},
    }
    rows: list[ThroughputRow] = []
    for engine, fields in engines.items():
        engine_profile = profile.model_copy(update=fields)
        encoder = load_encoder(engine_profile.spec(settings.text_role), engine_profile)
        encoder.encode(list(texts[:8]))
        for size in settings.batch_sizes:
            calls = _calls(texts, size)
            seconds = _timed(
                lambda encoder=encoder, calls=calls: [encoder.encode(list(call)) for call in calls]
            )
            rows.append(ThroughputRow(settings.text_role, engine, size, len(texts), seconds,
                                      "texts/s"))
    return rows


def cross_encoder_rows(
    texts: Sequence[str], profile: ModelProfile, settings: BenchSettings
) -> list[ThroughputRow]:
    """pairs/s of the cross-encoder role scoring one query against ``settings.pairs`` texts
    per call, with torch and ONNX Runtime."""
    rows: list[ThroughputRow] = []
    documents = list(texts[: settings.pairs])
    engines = (("torch length-sorted", "torch"), ("onnxruntime length-sorted", "onnx"))
    for engine, runtime in engines:
        engine_profile = profile.model_copy(update={"runtime": runtime})
        scorer = load_cross_encoder(engine_profile.spec(settings.scorer_role), engine_profile)
        scorer.score(QUERY, documents[:4])
        seconds = _timed(lambda scorer=scorer: [scorer.score(QUERY, documents)
                                                for _ in range(settings.pair_calls)])
        label = f"{settings.scorer_role} ({scorer.spec.family.value})"
        rows.append(ThroughputRow(label, engine, len(documents),
                                  len(documents) * settings.pair_calls, seconds, "pairs/s"))
    return rows


def benchmark_rows(settings: BenchSettings) -> list[ThroughputRow]:
    """All in-process rows: the text role's engines x batch sizes, then the scorer role."""
    profile = ModelProfile.from_yaml(settings.profile_path)
    update: dict[str, object] = {}
    if settings.cpu_threads is not None:
        update["cpu_threads"] = settings.cpu_threads
    if settings.onnx_cache_dir is not None:
        update["onnx_cache_dir"] = settings.onnx_cache_dir
    profile = profile.model_copy(update=update)
    texts = load_texts(settings.texts_path, max(settings.count, settings.pairs))
    return (text_encoder_rows(texts[: settings.count], profile, settings)
            + cross_encoder_rows(texts, profile, settings))


def format_table(rows: Sequence[ThroughputRow]) -> str:
    """A fixed-width table: target, engine, batch size, items, seconds, rate and unit."""
    header = f"{'target':<34} {'engine':<26} {'batch':>5} {'items':>6} {'seconds':>8} {'rate':>9}"
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row.target:<34} {row.engine:<26} {row.batch_size:>5} {row.items:>6} "
            f"{row.seconds:>8.2f} {row.rate:>9.1f} {row.unit}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run the benchmark, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=Path, default=DEFAULT_TEXTS,
                        help="JSONL with a 'text' field per line (default: EMA leaflet sections)")
    parser.add_argument("--profile", type=Path, default=DEFAULT_PROFILE)
    parser.add_argument("--role", default="general-text", help="text role to measure")
    parser.add_argument("--scorer-role", default="medcpt-rerank")
    parser.add_argument("--count", type=int, default=512, help="texts per measurement")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8, 32, 128])
    parser.add_argument("--pairs", type=int, default=50, help="texts per cross-encoder call")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: all)")
    parser.add_argument("--onnx-cache-dir", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="smoke run on a few items")
    args = parser.parse_args(argv)
    settings = BenchSettings(
        texts_path=args.texts, profile_path=args.profile, text_role=args.role,
        scorer_role=args.scorer_role, count=args.count, batch_sizes=tuple(args.batch_sizes),
        pairs=args.pairs, cpu_threads=args.threads, onnx_cache_dir=args.onnx_cache_dir,
    )
    if args.quick:
        settings = replace(settings, count=16, batch_sizes=(1, 8), pairs=10, pair_calls=1)
    print(format_table(benchmark_rows(settings)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
