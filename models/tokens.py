"""Tokenisation for the transformer families: unpadded rows, truncated to the role's limit.

Rows are padded later, per sub-batch (:mod:`models.batching`). Over-long inputs and pairs
are truncated (``longest_first`` for pairs), never an error.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np
import torch
from transformers import PreTrainedTokenizerBase

from models.batching import pad_rows
from models.specs import EncoderSpec

__all__ = ["TokenizerAdapter", "effective_max_length", "model_input_names"]

_CANDIDATE_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_UNBOUNDED = 1_000_000


def model_input_names(
    tokenizer: PreTrainedTokenizerBase, model: torch.nn.Module
) -> tuple[str, ...]:
    """The token inputs both the tokenizer produces and the model's ``forward`` takes,
    in the order ``input_ids, attention_mask[, token_type_ids]``."""
    produced = set(tokenizer.model_input_names) | {"input_ids", "attention_mask"}
    parameters = inspect.signature(model.forward).parameters
    takes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    return tuple(
        name
        for name in _CANDIDATE_INPUTS
        if name in produced and (name in parameters or takes_kwargs)
    )


def effective_max_length(
    spec: EncoderSpec, tokenizer: PreTrainedTokenizerBase, model: torch.nn.Module
) -> int:
    """``spec.max_tokens``, lowered to what the tokenizer and position table allow."""
    limits = [spec.max_tokens]
    if 0 < tokenizer.model_max_length < _UNBOUNDED:
        limits.append(int(tokenizer.model_max_length))
    positions = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        limits.append(positions)
    return min(limits)


class TokenizerAdapter:
    """A Hugging Face tokenizer bound to a model's input names and a token limit."""

    def __init__(
        self, tokenizer: PreTrainedTokenizerBase, input_names: Sequence[str], max_length: int
    ):
        self.tokenizer = tokenizer
        self.input_names = tuple(input_names)
        self.max_length = max_length
        pad = tokenizer.pad_token_id
        self.pad_token_id = int(pad) if pad is not None else 0

    def rows(
        self, first: Sequence[str], second: Sequence[str] | None = None
    ) -> list[dict[str, list[int]]]:
        """Tokenise texts (or ``[first, second]`` pairs), truncated to ``max_length``
        tokens including special tokens; one dict of int lists per input, unpadded."""
        if not first:
            return []
        encoded = self.tokenizer(
            list(first),
            list(second) if second is not None else None,
            truncation=True,
            max_length=self.max_length,
            padding=False,
            return_attention_mask=True,
            return_token_type_ids="token_type_ids" in self.input_names,
        )
        return [
            {name: list(encoded[name][index]) for name in self.input_names}
            for index in range(len(first))
        ]

    def example_inputs(self) -> dict[str, np.ndarray]:
        """Two padded rows of different lengths, for tracing an ONNX export (a padded row
        keeps the attention-mask path in the traced graph)."""
        rows = self.rows(["C", "CC(=O)Oc1ccccc1C(=O)O is aspirin, a longer warm-up example text"])
        return pad_rows(rows, self.input_names, self.pad_token_id)
