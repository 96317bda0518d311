"""The in-process model ports (``deployments.local``) check their inputs before the
worker thread: a bare string would otherwise reach the model as a list of characters, and
titles must line up with texts. Real MiniLM (the offline profile's package weights)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from deployments.local import LocalCrossEncoder, LocalTextEncoder
from models.errors import ModelInputError
from models.inputs import text_batch
from pipeline.errors import InvalidInput

pytestmark = pytest.mark.unit


def test_text_batch_lists_texts_and_lines_up_titles() -> None:
    assert text_batch(("a", "b"), ("t", None)) == (["a", "b"], ["t", ""])
    assert text_batch(["a"]) == (["a"], None)
    with pytest.raises(ModelInputError, match="single string"):
        text_batch("abc")
    with pytest.raises(ModelInputError, match="single string"):
        text_batch(["abc"], "t")
    with pytest.raises(ModelInputError, match="2 titles for 1 texts"):
        text_batch(["abc"], ["t", "u"])
    with pytest.raises(ModelInputError, match=r"texts\[1\] is int"):
        text_batch(["abc", 3])


async def test_local_text_encoder_refuses_a_bare_string(minilm_encoder: Any) -> None:
    port = LocalTextEncoder(minilm_encoder)
    vectors = await port.encode(["aspirin dose"])
    np.testing.assert_allclose(vectors, minilm_encoder.encode(["aspirin dose"]), atol=1e-6)
    with pytest.raises(InvalidInput, match="single string"):
        await port.encode("aspirin dose")
    with pytest.raises(InvalidInput, match="2 titles for 1 texts"):
        await port.encode(["aspirin dose"], ["a", "b"])


async def test_local_cross_encoder_refuses_a_bare_string(minilm_scorer: Any) -> None:
    port = LocalCrossEncoder(minilm_scorer)
    scores = await port.score("dose", ["aspirin dose", "warfarin"])
    assert scores.shape == (2,)
    with pytest.raises(InvalidInput, match="single string"):
        await port.score("dose", "aspirin dose")
