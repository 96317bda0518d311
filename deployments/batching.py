"""Batch bookkeeping shared by the model deployments: the request types their batchers
collect, the plain functions that run one batch (tests call them without Ray), a
cross-encoder replica's request path (``score_call``), and a batch-size histogram exposed
as a metric. No Ray import: the replicas hand
``BatchStats`` their metric (``deployments.metrics.observe_batch``), so a ray-free
benchmark runs the same batch code (``bench/gpu_batching.py``)."""

from __future__ import annotations

import asyncio
import functools
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from deployments.model_replica import gather_split

__all__ = [
    "BatchStats",
    "EncodeRequest",
    "ImageRequest",
    "ScoreRequest",
    "encode_batch",
    "items_in",
    "score_batch",
    "score_call",
]


@dataclass(frozen=True)
class EncodeRequest:
    """One caller's texts for one role (titles for [title, text] encoders)."""

    role: str
    texts: tuple[str, ...]
    titles: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ScoreRequest:
    """One caller's query and texts for the cross-encoder; ``tokens``: their rows,
    already tokenised by the model's ``tokenize_pairs`` (one per text), when it has one."""

    query: str
    texts: tuple[str, ...]
    titles: tuple[str, ...] | None = None
    tokens: tuple[Mapping[str, Sequence[int]], ...] | None = field(
        default=None, compare=False, repr=False
    )


@dataclass(frozen=True)
class ImageRequest:
    """One caller's images (bytes) or texts (text tower) for one image role."""

    role: str
    images: tuple[bytes, ...] = ()
    texts: tuple[str, ...] = ()


def items_in(requests: Sequence[Any]) -> int:
    """Batch size in items (texts, pairs, images), not requests: ``@serve.batch``'s
    ``batch_size_fn``, so a request carrying 50 pairs counts 50."""
    return sum(len(getattr(r, "texts", ())) + len(getattr(r, "images", ())) for r in requests)


def encode_batch(models: dict[str, Any], requests: Sequence[EncodeRequest]) -> list[np.ndarray]:
    """Run a batch of encode requests: one forward call per role over every request's
    texts, then split back per request, in order. ``(n_i, d)`` float32 each.

    Raises:
        KeyError: a role this replica does not serve.
    """
    results: list[np.ndarray | None] = [None] * len(requests)
    by_role: dict[str, list[int]] = {}
    for index, request in enumerate(requests):
        by_role.setdefault(request.role, []).append(index)
    for role, indexes in by_role.items():
        model = models[role]
        texts = [text for i in indexes for text in requests[i].texts]
        with_titles = any(requests[i].titles is not None for i in indexes)
        titles = (
            [
                title
                for i in indexes
                for title in (requests[i].titles or ("",) * len(requests[i].texts))
            ]
            if with_titles
            else None
        )
        vectors = np.asarray(model.encode(texts, titles), dtype=np.float32)
        start = 0
        for i in indexes:
            count = len(requests[i].texts)
            results[i] = vectors[start : start + count]
            start += count
    return [r if r is not None else np.zeros((0, 0), np.float32) for r in results]


def score_batch(model: Any, requests: Sequence[ScoreRequest]) -> list[np.ndarray]:
    """Score a batch of requests with one model call over all their pairs: their token
    rows when every request carries them (``score_tokens``), else their texts when the
    model takes pairs of different queries (``score_pairs``), else one call per request.
    ``(n_i,)`` float32 each, in order."""
    if requests and all(r.tokens is not None for r in requests):
        rows = [row for r in requests for row in r.tokens or ()]
        return _split(np.asarray(model.score_tokens(rows), dtype=np.float32), requests)
    if hasattr(model, "score_pairs"):
        queries = [r.query for r in requests for _ in r.texts]
        texts = [t for r in requests for t in r.texts]
        titles = [t for r in requests for t in (r.titles or ("",) * len(r.texts))]
        scores = np.asarray(model.score_pairs(queries, texts, titles), dtype=np.float32)
        return _split(scores, requests)
    return [
        np.asarray(
            model.score(r.query, list(r.texts), list(r.titles) if r.titles else None),
            dtype=np.float32,
        )
        for r in requests
    ]


def _split(scores: np.ndarray, requests: Sequence[ScoreRequest]) -> list[np.ndarray]:
    out, start = [], 0
    for request in requests:
        out.append(scores[start : start + len(request.texts)])
        start += len(request.texts)
    return out


async def score_call(
    model: Any,
    submit: Callable[[ScoreRequest], Awaitable[np.ndarray]],
    max_batch_size: int,
    query: str,
    texts: Sequence[str],
    titles: Sequence[str] | None = None,
    tokenize_executor: Executor | None = None,
) -> np.ndarray:
    """A cross-encoder replica's ``score``: ``texts`` cut into pieces of at most
    ``max_batch_size`` pairs, each queued with ``submit`` (the replica's batcher); a
    model with ``tokenize_pairs`` has each piece tokenised first, on
    ``tokenize_executor`` (the loop's default when None), so requests are tokenised while
    the model runs the batch before (issue 16: tokenising was 73 % of a 256-pair call on
    an H200). Pieces reach the batcher as their tokenising ends, so a long request can be
    overtaken by a short one. ``(n,)`` float32, in order.

    Raises:
        ModelInputError: a piece the model cannot tokenise (that caller only).
    """
    tokenize = getattr(model, "tokenize_pairs", None)
    loop = asyncio.get_running_loop()

    async def piece(part: Sequence[str], offset: int) -> np.ndarray:
        part_titles = tuple(titles[offset : offset + len(part)]) if titles is not None else None
        tokens = None
        if tokenize is not None:
            job = functools.partial(tokenize, [query] * len(part), part, part_titles)
            tokens = tuple(await loop.run_in_executor(tokenize_executor, job))
        return await submit(ScoreRequest(query, tuple(part), part_titles, tokens))

    if not texts:
        return np.zeros((0,), dtype=np.float32)
    parts = await gather_split(list(texts), max_batch_size, piece)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


class BatchStats:
    """Sizes of the last ``window`` batches (items per forward call) and their count.

    Args:
        window: batches kept for :meth:`snapshot`.
        observe: also called with ``(items, requests)`` per batch: the replicas pass the
            ``biomed_search_batch_*`` Prometheus histograms (``deployments.metrics``).
    """

    def __init__(
        self, window: int = 10_000, observe: Callable[[int, int], None] | None = None
    ) -> None:
        self.observe = observe
        self.sizes: deque[int] = deque(maxlen=window)
        self.requests: deque[int] = deque(maxlen=window)
        self.batches = 0

    def record(self, items: int, requests: int) -> None:
        """Record one forward call of ``items`` from ``requests`` callers, here and in
        ``observe``."""
        self.sizes.append(items)
        self.requests.append(requests)
        self.batches += 1
        if self.observe is not None:
            self.observe(items, requests)

    def snapshot(self) -> dict[str, Any]:
        """Histogram and summary of recent batch sizes."""
        sizes = list(self.sizes)
        return {
            "batches": self.batches,
            "histogram": dict(sorted(Counter(sizes).items())),
            "requests_histogram": dict(sorted(Counter(self.requests).items())),
            "max": max(sizes, default=0),
            "mean": round(sum(sizes) / len(sizes), 2) if sizes else 0.0,
        }
