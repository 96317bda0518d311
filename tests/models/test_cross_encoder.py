"""The cross-encoder role (R-T2-3) on a tiny random BertForSequenceClassification, and the
offline bi-encoder scorer on the real MiniLM."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from deployments.batching import ScoreRequest, items_in, score_batch, score_call
from deployments.model_replica import BatchSettings
from models.cross_encoder import CrossEncoderScorer, rerank_documents
from models.errors import ModelInputError
from models.loader import load_cross_encoder, load_encoder
from models.specs import EncoderSpec
from tests.models.helpers import ProfileFactory

TEXTS = [
    "gefitinib is an egfr kinase inhibitor",
    "insulin lowers blood glucose",
    "erlotinib tablet dose for lung cancer patients " * 40,
    "a",
]
TITLES = ["egfr", "", "lung cancer.", None]


@pytest.fixture(scope="module")
def scorer(tiny_cross_encoder_folder: Path, make_profile: ProfileFactory) -> CrossEncoderScorer:
    spec = EncoderSpec(
        role="medcpt-rerank",
        family="cross-encoder",
        source=str(tiny_cross_encoder_folder),
        max_tokens=512,
        max_chars=2048,
    )
    loaded = load_cross_encoder(spec, make_profile(max_batch_size=2))
    assert isinstance(loaded, CrossEncoderScorer)
    return loaded


@pytest.mark.unit
class TestRerankDocuments:
    def test_r_t2_3_title_dot_text_and_2048_characters(self) -> None:
        documents = rerank_documents(["x" * 5000, "body"], ["Title.", ""], None)
        assert documents[0] == "Title. " + "x" * 2048
        assert documents[1] == "body"

    def test_max_chars_from_the_spec(self) -> None:
        assert rerank_documents(["abcdef"], None, 3) == ["abc"]


@pytest.mark.unit
class TestCrossEncoderScorer:
    def test_one_float32_logit_per_text_in_order(self, scorer: CrossEncoderScorer) -> None:
        scores = scorer.score("egfr inhibitor", TEXTS, titles=TITLES)
        assert scores.shape == (len(TEXTS),)
        assert scores.dtype == np.float32
        reversed_scores = scorer.score("egfr inhibitor", TEXTS[::-1], titles=TITLES[::-1])
        np.testing.assert_allclose(scores, reversed_scores[::-1], atol=1e-5)

    def test_batched_equals_one_by_one(self, scorer: CrossEncoderScorer) -> None:
        batched = scorer.score("egfr inhibitor", TEXTS, titles=TITLES)
        single = [
            scorer.score("egfr inhibitor", [text], titles=[title])[0]
            for text, title in zip(TEXTS, TITLES, strict=True)
        ]
        np.testing.assert_allclose(batched, single, atol=1e-5)

    def test_overflowing_pairs_are_truncated_not_an_error(self, scorer: CrossEncoderScorer) -> None:
        scores = scorer.score("egfr " * 3000, ["lung " * 3000, "x" * 100_000])
        assert np.isfinite(scores).all()
        rows = scorer.adapter.rows(["egfr " * 3000], ["lung " * 3000])
        assert len(rows[0]["input_ids"]) == scorer.adapter.max_length

    def test_score_pairs_equals_per_query_scores(self, scorer: CrossEncoderScorer) -> None:
        queries = ["egfr inhibitor", "insulin", "egfr inhibitor", "lung"]
        pairs = scorer.score_pairs(queries, TEXTS, TITLES)
        single = [
            scorer.score(q, [t], [title])[0]
            for q, t, title in zip(queries, TEXTS, TITLES, strict=True)
        ]
        np.testing.assert_allclose(pairs, single, atol=1e-5)
        with pytest.raises(ModelInputError):
            scorer.score_pairs(["q"], TEXTS)

    def test_empty_and_bad_inputs(self, scorer: CrossEncoderScorer) -> None:
        assert scorer.score("q", []).shape == (0,)
        with pytest.raises(ModelInputError):
            scorer.score(None, ["text"])  # type: ignore[arg-type]
        with pytest.raises(ModelInputError):
            scorer.score("q", "one string")


@pytest.mark.slow
def test_a_replicas_threads_also_tokenise_and_change_no_score(
    scorer: CrossEncoderScorer,
    tiny_cross_encoder_folder: Path,
    make_profile: ProfileFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a GPU cross-encoder call is mostly tokenising (bench/gpu_stages.py): the replica's
    # threads (cpu_threads, DeploymentSettings.threads_for) tokenise in parallel too
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("RAYON_NUM_THREADS", "0")  # recorded, so teardown restores it
    monkeypatch.delenv("RAYON_NUM_THREADS")
    torch_threads = torch.get_num_threads()
    try:
        parallel = load_cross_encoder(scorer.spec, make_profile(max_batch_size=2, cpu_threads=2))
        assert os.environ["TOKENIZERS_PARALLELISM"] == "true"
        assert os.environ["RAYON_NUM_THREADS"] == "2"
        np.testing.assert_allclose(
            parallel.score("egfr inhibitor", TEXTS * 8),
            scorer.score("egfr inhibitor", TEXTS * 8),
            atol=1e-5,
        )
        load_cross_encoder(scorer.spec, make_profile(cpu_threads=1))
        assert os.environ["TOKENIZERS_PARALLELISM"] == "false"
    finally:
        torch.set_num_threads(torch_threads)


async def test_a_replica_tokenises_each_request_before_its_batch(
    scorer: CrossEncoderScorer,
) -> None:
    # the replica's request path (deployments.batching.score_call) over its own batcher:
    # every request reaches the batch already tokenised, scores as score() gives them
    batches: list[list[bool]] = []

    async def run(requests: list[ScoreRequest]) -> list[np.ndarray]:
        batches.append([request.tokens is not None for request in requests])
        return await asyncio.to_thread(score_batch, scorer, requests)

    batcher = BatchSettings(max_batch_size=4).batcher(run, lambda r: items_in([r]))
    first, second = await asyncio.gather(
        score_call(scorer, batcher.submit, 4, "egfr inhibitor", TEXTS * 2, TITLES * 2),
        score_call(scorer, batcher.submit, 4, "insulin", TEXTS),
    )
    np.testing.assert_allclose(
        first, scorer.score("egfr inhibitor", TEXTS * 2, TITLES * 2), atol=1e-5
    )
    np.testing.assert_allclose(second, scorer.score("insulin", TEXTS), atol=1e-5)
    assert batches and all(all(flags) for flags in batches)
    assert sum(len(flags) for flags in batches) == 3  # 8 texts in pieces of 4, then 4
    # a caller the model cannot tokenise fails alone, before it reaches a batch
    with pytest.raises(ModelInputError):
        await score_call(scorer, batcher.submit, 4, 42, ["a"])  # type: ignore[arg-type]
    assert sum(len(flags) for flags in batches) == 3


def test_tokenize_pairs_then_score_tokens_is_score_pairs(scorer: CrossEncoderScorer) -> None:
    queries = ["egfr inhibitor", "insulin", "dose", "a"]
    rows = scorer.tokenize_pairs(queries, TEXTS, TITLES)
    assert len(rows) == len(TEXTS) and all("input_ids" in row for row in rows)
    np.testing.assert_allclose(
        scorer.score_tokens(rows), scorer.score_pairs(queries, TEXTS, TITLES), atol=1e-6
    )
    assert scorer.score_tokens([]).shape == (0,)
    with pytest.raises(ModelInputError):
        scorer.tokenize_pairs(["q"], TEXTS)


class TestBiEncoderScorer:
    def test_scores_are_cosines_of_minilm_embeddings(
        self, minilm_scorer: Any, offline_profile: Any
    ) -> None:
        texts = [
            "Erlotinib is an EGFR tyrosine kinase inhibitor for lung cancer.",
            "Insulin glargine lowers blood glucose in diabetes.",
        ]
        scores = minilm_scorer.score("gefitinib EGFR inhibitor", texts, titles=["Erlotinib", ""])
        assert scores.shape == (2,) and scores.dtype == np.float32
        assert scores[0] > scores[1]
        encoder = minilm_scorer.encoder
        query = encoder.encode(["gefitinib EGFR inhibitor"])[0]
        documents = encoder.encode(["Erlotinib. " + texts[0], texts[1]])
        np.testing.assert_allclose(scores, documents @ query, atol=1e-5)

    def test_score_pairs_and_the_embedding_cache_change_nothing(self, minilm_scorer: Any) -> None:
        texts = [
            "Erlotinib is an EGFR inhibitor.",
            "Insulin lowers glucose.",
            "Erlotinib is an EGFR inhibitor.",
        ]
        queries = ["gefitinib", "diabetes", "lung cancer"]
        first = minilm_scorer.score_pairs(queries, texts)
        hits_before = minilm_scorer.cache_hits
        again = minilm_scorer.score_pairs(queries, texts)
        assert minilm_scorer.cache_hits >= hits_before + 3  # second pass encodes no document
        np.testing.assert_allclose(first, again, atol=1e-6)
        single = [minilm_scorer.score(q, [t])[0] for q, t in zip(queries, texts, strict=True)]
        np.testing.assert_allclose(first, single, atol=1e-5)

    def test_is_not_loadable_as_an_embedding_role(self, offline_profile: Any) -> None:
        with pytest.raises(ValueError, match="load_cross_encoder"):
            load_encoder(offline_profile.spec("medcpt-rerank"), offline_profile)
