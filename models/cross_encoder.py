"""The cross-encoder role (family ``cross-encoder``): AutoModelForSequenceClassification over
``[query, "title. text"]`` pairs, one raw logit per pair (R-T2-3).

Model card followed: ``ncbi/MedCPT-Cross-Encoder``: the tokenizer is called on
``[query, article]`` pairs with ``truncation=True, max_length=512`` and the score is the
single output logit. Texts are first cut to ``max_chars`` characters (2048 by default,
R-T2-3); a pair still over ``max_tokens`` is truncated longest-first, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from transformers import AutoModelForSequenceClassification

from models.batching import BatchLimits, Forward, run_in_sub_batches
from models.errors import ModelInputError
from models.inputs import join_title, text_list, title_list
from models.runtime import (
    batch_limits_for,
    build_forward,
    configure_threads,
    load_tokenizer_and_model,
    model_dtype,
    model_stage,
    torch_device_for,
)
from models.specs import EncoderSpec, ModelProfile
from models.tokens import TokenizerAdapter, effective_max_length, model_input_names

__all__ = [
    "DEFAULT_RERANK_MAX_CHARS",
    "CrossEncoderScorer",
    "LogitModule",
    "PairScorer",
    "load_cross_encoder_scorer",
    "query_text",
    "rerank_documents",
]

DEFAULT_RERANK_MAX_CHARS = 2048
"""Characters of each text kept before pairing (R-T2-3), unless the spec sets ``max_chars``."""


def rerank_documents(
    texts: Sequence[str], titles: Sequence[str | None] | None, max_chars: int | None
) -> list[str]:
    """The document side of rerank pairs: ``"title. text"`` (text alone when the title is
    empty), the text cut to ``max_chars`` characters first (default 2048, R-T2-3).

    Raises:
        ModelInputError: texts not a list of str, or titles that do not line up.
    """
    items = text_list(texts)
    paired_titles = title_list(titles, len(items)) or [""] * len(items)
    limit = DEFAULT_RERANK_MAX_CHARS if max_chars is None else max_chars
    return [
        join_title(title, text[:limit]) for title, text in zip(paired_titles, items, strict=True)
    ]


def query_text(query: str) -> str:
    """The query, checked.

    Raises:
        ModelInputError: the query is not a str.
    """
    if not isinstance(query, str):
        raise ModelInputError(f"query is {type(query).__name__}, expected str")
    return query


class LogitModule(torch.nn.Module):
    """A sequence-classification model returning the last logit of each pair, float32
    ``(b,)`` (the only logit for one-label models such as MedCPT-Cross-Encoder)."""

    def __init__(self, model: torch.nn.Module, input_names: Sequence[str]):
        super().__init__()
        self.model = model
        self.input_names = tuple(input_names)

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        """Token arrays ``(b, s)`` int64 of the pairs, one per ``input_names`` entry in that
        order -> the last logit of each pair, ``(b,)`` float32 (raw, not a probability).

        Raises:
            ValueError: the number of inputs differs from ``input_names``.
        """
        named = dict(zip(self.input_names, inputs, strict=True))
        output = self.model(**named)
        logits = output[0] if isinstance(output, tuple) else output.logits
        return logits[:, -1].float()


class PairScorer:
    """The call shape of the cross-encoder role: ``score`` (one query, many texts) and
    ``score_pairs`` (pairs of different queries, for batching across requests), both
    returning ``(n,)`` float32 in input order, ``(0,)`` for no texts. Subclasses score
    formatted rows in ``_score_rows(questions, documents)``; ``spec.max_chars`` cuts texts.
    """

    spec: EncoderSpec

    def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """Score texts against a query (R-T2-3).

        Raises:
            ModelInputError: query not a str, texts not a list of str, titles misaligned.
        """
        question = query_text(query)
        documents = rerank_documents(texts, titles, self.spec.max_chars)
        return self._score_rows([question] * len(documents), documents)

    def score_pairs(
        self,
        queries: Sequence[str],
        texts: Sequence[str],
        titles: Sequence[str | None] | None = None,
    ) -> np.ndarray:
        """Score ``(queries[i], texts[i])`` pairs of different queries in one pass: what a
        serving replica uses to batch pairs across concurrent requests. (n,) float32.

        Raises:
            ModelInputError: queries and texts of different lengths, or bad inputs.
        """
        return self._score_rows(*self._pairs(queries, texts, titles))

    def _pairs(
        self,
        queries: Sequence[str],
        texts: Sequence[str],
        titles: Sequence[str | None] | None,
    ) -> tuple[list[str], list[str]]:
        """``(questions, documents)`` of ``(queries[i], texts[i])`` pairs, checked."""
        if len(queries) != len(texts):
            raise ModelInputError(f"{len(queries)} queries for {len(texts)} texts")
        documents = rerank_documents(texts, titles, self.spec.max_chars)
        return [query_text(q) for q in queries], documents

    def _score_rows(self, questions: list[str], documents: list[str]) -> np.ndarray:
        raise NotImplementedError


class CrossEncoderScorer(PairScorer):
    """``score(query, texts, titles=None) -> np.ndarray (n,) float32``: one raw logit per
    ``[query, "title. text"]`` pair, in input order; ``(0,)`` for no texts."""

    def __init__(
        self, spec: EncoderSpec, adapter: TokenizerAdapter, forward: Forward, limits: BatchLimits
    ):
        self.spec = spec
        self.adapter = adapter
        self.forward = forward
        self.limits = limits

    def _score_rows(self, questions: list[str], documents: list[str]) -> np.ndarray:
        return self.score_tokens(self.adapter.rows(questions, documents))

    def tokenize_pairs(
        self,
        queries: Sequence[str],
        texts: Sequence[str],
        titles: Sequence[str | None] | None = None,
    ) -> list[dict[str, np.ndarray]]:
        """The CPU half of :meth:`score_pairs`: one unpadded row per ``[queries[i], "title.
        text"]`` pair (R-T2-3), ``(s,)`` int32 arrays by input name, for
        :meth:`score_tokens`. A serving replica tokenises a request with it while the model
        runs the previous batch: tokenising was 73 % of a 256-pair call on one thread on
        an H200 (issue 16). Arrays, not lists: queued requests hold their rows (about 4
        KiB a pair of 320 tokens, not 17 as Python ints).

        Raises:
            ModelInputError: queries and texts of different lengths, or bad inputs.
        """
        rows = self.adapter.rows(*self._pairs(queries, texts, titles))
        return [
            {name: np.asarray(ids, dtype=np.int32) for name, ids in row.items()} for row in rows
        ]

    def score_tokens(self, rows: Sequence[Mapping[str, Sequence[int]]]) -> np.ndarray:
        """The model half: ``(n,)`` float32 logits of rows from :meth:`tokenize_pairs`, in
        order, in token-budgeted sub-batches; ``(0,)`` for no rows."""
        if not rows:
            return np.zeros((0,), dtype=np.float32)
        return run_in_sub_batches(
            rows, self.adapter.input_names, self.adapter.pad_token_id, self.forward, self.limits
        )


def load_cross_encoder_scorer(spec: EncoderSpec, profile: ModelProfile) -> CrossEncoderScorer:
    """Load a ``cross-encoder`` role with ``AutoModelForSequenceClassification`` from the
    resolved local folder (``local_files_only=True``), on the profile's runtime.

    Raises:
        ModelNotAvailableError: weights not available locally, or loading, moving to the
            device, exporting or the warm-up scoring of one pair failed (the original
            exception is the ``__cause__``).
    """
    folder, tokenizer, model = load_tokenizer_and_model(
        spec, profile, AutoModelForSequenceClassification
    )
    configure_threads(profile)
    device = torch_device_for(spec, profile)
    with model_stage(spec, "moving to the device"):
        model = model.to(device=device, dtype=model_dtype(device, profile, spec)).eval()
    input_names = model_input_names(tokenizer, model)
    adapter = TokenizerAdapter(tokenizer, input_names, effective_max_length(spec, tokenizer, model))
    module = LogitModule(model, input_names).eval()
    with model_stage(spec, "preparing the runtime"):
        forward = build_forward(
            module,
            spec,
            profile,
            input_names,
            adapter.example_inputs(),
            folder,
            extra_key={"head": "last-logit"},
        )
    scorer = CrossEncoderScorer(spec, adapter, forward, batch_limits_for(profile))
    with model_stage(spec, "warm-up"):
        scorer.score("warm-up", ["warm-up"])
    return scorer
