"""The batch logic of the model deployments, called without Ray: requests of several
callers go through one model call and come back split, in order."""

import numpy as np
import pytest

from deployments.batching import (
    BatchStats,
    EncodeRequest,
    ScoreRequest,
    encode_batch,
    items_in,
    score_batch,
)
from deployments.model_replica import BatchSettings, gather_split

pytestmark = pytest.mark.unit


class CountingEncoder:
    """A stand-in model (edge fake): vector = [len(text), 1], recording each call."""

    dimension = 2

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts, titles=None):
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


class PairScorer:
    def __init__(self) -> None:
        self.calls = 0

    def score_pairs(self, queries, texts, titles=None):
        self.calls += 1
        return np.array(
            [len(q) * 100 + len(t) for q, t in zip(queries, texts, strict=True)], dtype=np.float32
        )


def test_encode_batch_one_call_per_role_split_in_order():
    model = CountingEncoder()
    requests = [
        EncodeRequest("a", ("x", "yy")),
        EncodeRequest("b", ("zzz",)),
        EncodeRequest("a", ("wwww",)),
    ]
    results = encode_batch({"a": model, "b": model}, requests)
    assert [r[:, 0].tolist() for r in results] == [[1, 2], [3], [4]]
    assert model.calls == [["x", "yy", "wwww"], ["zzz"]]


def test_score_batch_uses_pairs_of_different_queries_in_one_call():
    scorer = PairScorer()
    results = score_batch(scorer, [ScoreRequest("q", ("a", "bb")), ScoreRequest("qq", ("c",))])
    assert [r.tolist() for r in results] == [[101, 102], [201]]
    assert scorer.calls == 1


class TokenScorer(PairScorer):
    """Also scores pre-tokenised rows (score = sum of the ids), counting those calls."""

    def __init__(self) -> None:
        super().__init__()
        self.token_calls = 0

    def score_tokens(self, rows):
        self.token_calls += 1
        return np.array([sum(row["input_ids"]) for row in rows], dtype=np.float32)


def test_score_batch_runs_every_requests_token_rows_in_one_call():
    scorer = TokenScorer()
    tokens = ({"input_ids": [1, 2]}, {"input_ids": [5]})
    requests = [
        ScoreRequest("q", ("a", "b"), tokens=tokens),
        ScoreRequest("q", ("c",), tokens=({"input_ids": [7]},)),
    ]
    assert [r.tolist() for r in score_batch(scorer, requests)] == [[3, 5], [7]]
    assert (scorer.token_calls, scorer.calls) == (1, 0)
    # one request without rows: the texts of all of them go through score_pairs
    mixed = [requests[0], ScoreRequest("qq", ("c",))]
    assert [r.tolist() for r in score_batch(scorer, mixed)] == [[101, 101], [201]]
    assert (scorer.token_calls, scorer.calls) == (1, 1)


def test_batch_size_counts_items_not_requests():
    requests = [ScoreRequest("q", ("a",) * 50), ScoreRequest("q", ("b",) * 3)]
    assert items_in(requests) == 53
    stats = BatchStats()
    stats.record(53, 2)
    stats.record(4, 1)
    snapshot = stats.snapshot()
    assert snapshot["max"] == 53 and snapshot["batches"] == 2
    assert snapshot["histogram"] == {4: 1, 53: 1}


async def test_large_calls_are_split_to_fit_max_batch_size():
    seen = []

    async def make(piece, offset):
        seen.append((len(piece), offset))
        return list(piece)

    parts = await gather_split(list(range(10)), 4, make)
    assert sorted(seen) == [(2, 8), (4, 0), (4, 4)]
    assert [x for part in parts for x in part] == list(range(10))


def test_batch_settings_validate_runtime_updates():
    settings = BatchSettings()
    settings.update({"max_batch_size": 8, "batch_wait_timeout_s": 0.0})
    assert (settings.max_batch_size, settings.batch_wait_timeout_s) == (8, 0.0)
    with pytest.raises(ValueError):
        settings.update({"max_batch_size": 0})
