"""Hugging Face text encoders (family hf-text) on a tiny random BERT, loaded from a folder
and from a hub cache through the same loader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from transformers import AutoTokenizer

from models.errors import ModelInputError, ModelNotAvailableError
from models.loader import load_encoder
from models.text import TransformerTextEncoder
from tests.models.helpers import ProfileFactory, tiny_text_spec
from tests.models.tiny_models import HIDDEN, TINY_BERT_HUB_ID

pytestmark = pytest.mark.unit

TEXTS = [
    "gefitinib is an egfr kinase inhibitor",
    "insulin lowers blood glucose",
    "a",
    "erlotinib tablet dose for lung cancer patients with egfr",
    "warning " * 400,
]


@pytest.fixture(scope="module", params=["cls", "mean"])
def encoder(
    request: pytest.FixtureRequest, tiny_bert_folder: Path, make_profile: ProfileFactory
) -> TransformerTextEncoder:
    spec = tiny_text_spec(tiny_bert_folder, pooling=request.param)
    loaded = load_encoder(spec, make_profile(max_batch_size=2, max_tokens_per_forward=64))
    assert isinstance(loaded, TransformerTextEncoder)
    return loaded


def test_the_tiny_models_tokenizer_knows_its_words(tiny_bert_folder: Path) -> None:
    # every test model shares this tokenizer; built without its vocabulary (transformers 5
    # ignores vocab_file=) every word is [UNK] and different texts look alike to the model
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert_folder)
    ids = tokenizer("insulin glucose")["input_ids"]
    assert tokenizer.unk_token_id not in ids
    assert len(set(ids)) == len(ids) == 4  # [CLS] insulin glucose [SEP]


class TestTransformerTextEncoder:
    def test_shape_dtype_and_unit_norm(self, encoder: TransformerTextEncoder) -> None:
        vectors = encoder.encode(TEXTS)
        assert vectors.shape == (len(TEXTS), HIDDEN)
        assert vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    def test_a_cpu_encoder_takes_the_cpu_token_cap(
        self, tiny_bert_folder: Path, make_profile: ProfileFactory
    ) -> None:
        spec = tiny_text_spec(tiny_bert_folder)
        profile = make_profile(device="cpu", max_tokens_per_forward=4096)
        loaded = load_encoder(spec, profile.model_copy(update={"cpu_max_tokens_per_forward": 8}))
        assert isinstance(loaded, TransformerTextEncoder)
        assert loaded.limits.max_tokens_per_forward == 8
        # one row per forward pass at this cap: the same vectors as one big pass
        wide = load_encoder(spec, profile.model_copy(update={"cpu_max_tokens_per_forward": 4096}))
        np.testing.assert_allclose(loaded.encode(TEXTS), wide.encode(TEXTS), atol=1e-5)

    def test_batched_equals_one_by_one(self, encoder: TransformerTextEncoder) -> None:
        batched = encoder.encode(TEXTS)
        single = np.stack([encoder.encode([text])[0] for text in TEXTS])
        np.testing.assert_allclose(batched, single, atol=1e-5)

    def test_order_is_kept_under_length_sorting(self, encoder: TransformerTextEncoder) -> None:
        forward = encoder.encode(TEXTS)
        backward = encoder.encode(TEXTS[::-1])
        np.testing.assert_allclose(forward, backward[::-1], atol=1e-5)

    def test_overlong_input_is_truncated_not_an_error(
        self, encoder: TransformerTextEncoder
    ) -> None:
        long_text = "gefitinib " * 5000
        longer_text = long_text + "insulin " * 5000
        vectors = encoder.encode([long_text, longer_text])
        np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-5)

    def test_empty_input_gives_an_empty_matrix(self, encoder: TransformerTextEncoder) -> None:
        assert encoder.encode([]).shape == (0, HIDDEN)

    @pytest.mark.parametrize("bad", ["one string", [b"bytes"], [None]])
    def test_bad_input_raises_model_input_error(
        self, encoder: TransformerTextEncoder, bad: object
    ) -> None:
        with pytest.raises(ModelInputError):
            encoder.encode(bad)  # type: ignore[arg-type]

    def test_titles_must_line_up(self, encoder: TransformerTextEncoder) -> None:
        with pytest.raises(ModelInputError, match="2 titles for 1 texts"):
            encoder.encode(["text"], titles=["a", "b"])

    def test_titles_are_ignored_by_the_text_format(self, encoder: TransformerTextEncoder) -> None:
        np.testing.assert_allclose(
            encoder.encode(["lung cancer"], titles=["egfr"]),
            encoder.encode(["lung cancer"]),
            atol=1e-6,
        )


class TestFormatting:
    def test_title_text_pair_uses_both_segments(
        self, tiny_bert_folder: Path, make_profile: ProfileFactory
    ) -> None:
        spec = tiny_text_spec(
            tiny_bert_folder, role="medcpt-article", pooling="cls", input_format="title-text-pair"
        )
        encoder = load_encoder(spec, make_profile())
        assert isinstance(encoder, TransformerTextEncoder)
        rows = encoder.adapter.rows(["egfr"], ["lung cancer"])
        assert rows[0]["token_type_ids"] == [0, 0, 0, 1, 1, 1]
        paired = encoder.encode(["lung cancer"], titles=["egfr"])
        alone = encoder.encode(["lung cancer"])
        assert not np.allclose(paired, alone, atol=1e-4)
        batched = encoder.encode(TEXTS, titles=["egfr"] * len(TEXTS))
        single = np.stack([encoder.encode([text], titles=["egfr"])[0] for text in TEXTS])
        np.testing.assert_allclose(batched, single, atol=1e-5)

    def test_title_dot_text_joins_into_one_sequence(
        self, tiny_bert_folder: Path, make_profile: ProfileFactory
    ) -> None:
        spec = tiny_text_spec(tiny_bert_folder, input_format="title-dot-text")
        encoder = load_encoder(spec, make_profile())
        np.testing.assert_allclose(
            encoder.encode(["lung cancer"], titles=["egfr"]),
            encoder.encode(["egfr. lung cancer"]),
            atol=1e-6,
        )

    def test_query_limit_truncates_to_max_tokens(
        self, tiny_bert_folder: Path, make_profile: ProfileFactory
    ) -> None:
        spec = tiny_text_spec(tiny_bert_folder, role="medcpt-query", pooling="cls", max_tokens=8)
        encoder = load_encoder(spec, make_profile())
        assert isinstance(encoder, TransformerTextEncoder)
        assert len(encoder.adapter.rows(["egfr " * 50])[0]["input_ids"]) == 8


class TestLoading:
    def test_hub_id_loads_from_the_local_cache(
        self, make_profile: ProfileFactory, tiny_bert_folder: Path
    ) -> None:
        from_cache = load_encoder(tiny_text_spec(TINY_BERT_HUB_ID), make_profile())
        from_folder = load_encoder(tiny_text_spec(tiny_bert_folder), make_profile())
        np.testing.assert_allclose(from_cache.encode(TEXTS), from_folder.encode(TEXTS), atol=1e-6)

    def test_uncached_hub_id_raises_model_not_available(self, make_profile: ProfileFactory) -> None:
        spec = tiny_text_spec("ncbi/MedCPT-Query-Encoder", role="medcpt-query", dimension=768)
        with pytest.raises(ModelNotAvailableError, match="not in the local Hugging Face cache"):
            load_encoder(spec, make_profile())

    def test_folder_without_weights_raises_model_not_available(
        self, tmp_path: Path, tiny_bert_folder: Path, make_profile: ProfileFactory
    ) -> None:
        for name in ("config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json"):
            (tmp_path / name).write_bytes((tiny_bert_folder / name).read_bytes())
        with pytest.raises(ModelNotAvailableError, match="loading failed") as caught:
            load_encoder(tiny_text_spec(tmp_path), make_profile())
        assert "pubmedbert" in str(caught.value)
        assert isinstance(caught.value.__cause__, OSError)  # the original, kept as the cause

    def test_wrong_dimension_is_reported(
        self, tiny_bert_folder: Path, make_profile: ProfileFactory
    ) -> None:
        with pytest.raises(ModelNotAvailableError, match="dimension 768 but"):
            load_encoder(tiny_text_spec(tiny_bert_folder, dimension=768), make_profile())
