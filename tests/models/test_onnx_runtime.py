"""The ONNX Runtime path: export from the loaded model, cached on disk, equal to torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from models.loader import load_cross_encoder, load_encoder
from models.onnx_runtime import OnnxForward
from models.specs import EncoderSpec, ModelProfile
from tests.models.helpers import ProfileFactory, tiny_text_spec
from tests.models.tiny_models import HIDDEN

pytestmark = pytest.mark.unit

TEXTS = [
    "gefitinib is an egfr kinase inhibitor",
    "insulin",
    "erlotinib tablet dose for lung cancer patients with egfr " * 3,
    "warning " * 400,
]


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_text_encoder_onnx_equals_torch(
    tiny_bert_folder: Path, make_profile: ProfileFactory, pooling: str
) -> None:
    spec = tiny_text_spec(tiny_bert_folder, pooling=pooling)
    torch_encoder = load_encoder(spec, make_profile(runtime="torch"))
    onnx_encoder = load_encoder(spec, make_profile(runtime="onnx", max_batch_size=3))
    assert isinstance(onnx_encoder.forward, OnnxForward)
    onnx_vectors = onnx_encoder.encode(TEXTS)
    assert onnx_vectors.shape == (len(TEXTS), HIDDEN)
    assert onnx_vectors.dtype == np.float32
    np.testing.assert_allclose(onnx_vectors, torch_encoder.encode(TEXTS), atol=1e-4)


def test_title_pairs_onnx_equals_torch(
    tiny_bert_folder: Path, make_profile: ProfileFactory
) -> None:
    spec = tiny_text_spec(tiny_bert_folder, pooling="cls", input_format="title-text-pair")
    titles = ["egfr", "", "lung cancer", "insulin"]
    torch_vectors = load_encoder(spec, make_profile()).encode(TEXTS, titles=titles)
    onnx_vectors = load_encoder(spec, make_profile(runtime="onnx")).encode(TEXTS, titles=titles)
    np.testing.assert_allclose(onnx_vectors, torch_vectors, atol=1e-4)


def test_cross_encoder_onnx_equals_torch(
    tiny_cross_encoder_folder: Path, make_profile: ProfileFactory
) -> None:
    spec = EncoderSpec(
        role="medcpt-rerank",
        family="cross-encoder",
        source=str(tiny_cross_encoder_folder),
        max_tokens=512,
    )
    torch_scores = load_cross_encoder(spec, make_profile()).score("egfr inhibitor", TEXTS)
    onnx_scorer = load_cross_encoder(spec, make_profile(runtime="onnx"))
    assert isinstance(onnx_scorer.forward, OnnxForward)
    onnx_scores = onnx_scorer.score("egfr inhibitor", TEXTS)
    assert onnx_scores.shape == (len(TEXTS),)
    np.testing.assert_allclose(onnx_scores, torch_scores, atol=1e-4)


def test_role_runtime_overrides_the_profile(
    tiny_bert_folder: Path, make_profile: ProfileFactory
) -> None:
    spec = tiny_text_spec(tiny_bert_folder, runtime="onnx")
    assert isinstance(load_encoder(spec, make_profile(runtime="torch")).forward, OnnxForward)


def test_export_is_cached_and_shared_by_roles(
    tiny_bert_folder: Path, make_profile: ProfileFactory, tmp_path: Path
) -> None:
    profile = make_profile(runtime="onnx", onnx_cache_dir=tmp_path)
    first = load_encoder(tiny_text_spec(tiny_bert_folder, role="pubmedbert"), profile)
    exported = sorted(tmp_path.glob("*.onnx"))
    assert len(exported) == 1
    modified = exported[0].stat().st_mtime_ns
    second = load_encoder(tiny_text_spec(tiny_bert_folder, role="general-text"), profile)
    assert second.forward.path == first.forward.path == exported[0]
    assert exported[0].stat().st_mtime_ns == modified
    other = load_encoder(tiny_text_spec(tiny_bert_folder, pooling="cls"), profile)
    assert other.forward.path != first.forward.path
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.slow
def test_real_minilm_onnx_equals_torch(
    minilm_encoder: Any, offline_profile: ModelProfile, tmp_path: Path
) -> None:
    profile = offline_profile.model_copy(update={"runtime": "onnx", "onnx_cache_dir": tmp_path})
    onnx_encoder = load_encoder(profile.spec("general-text"), profile)
    texts = ["gefitinib EGFR inhibitor", "Take one tablet daily. " * 60, "insulin"]
    np.testing.assert_allclose(onnx_encoder.encode(texts), minilm_encoder.encode(texts), atol=1e-4)


def test_real_minilm_int8_stays_close_to_float32(
    minilm_encoder, offline_profile, tmp_path: Path
) -> None:
    """``runtime: onnx-int8``: the dynamic int8 quantisation of the export is cached beside
    it and its vectors stay close to the float32 model's (per-channel weights; per tensor
    fell to a mean cosine of 0.96 on NFCorpus queries)."""
    texts = [
        "osimertinib side effects",
        "What is the recommended dose of rivaroxaban for atrial fibrillation?",
        "Store below 30 degrees Celsius in the original package.",
        "EGFR T790M mutation-positive non-small cell lung cancer",
    ]
    profile = offline_profile.model_copy(
        update={"runtime": "onnx-int8", "onnx_cache_dir": tmp_path / "onnx"}
    )
    int8_encoder = load_encoder(profile.spec("general-text"), profile)
    quantised = sorted((tmp_path / "onnx").glob("*.int8-per-channel.onnx"))
    assert len(quantised) == 1
    assert len(sorted((tmp_path / "onnx").glob("*.onnx"))) == 2  # float32 + int8
    reference = np.asarray(minilm_encoder.encode(texts), dtype=np.float32)
    vectors = np.asarray(int8_encoder.encode(texts), dtype=np.float32)
    assert vectors.shape == reference.shape
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() > 0.97, cosines
    assert not np.allclose(vectors, reference, atol=1e-4)  # it really is another model
    # a second load reuses the cached file
    load_encoder(profile.spec("general-text"), profile)
    assert sorted((tmp_path / "onnx").glob("*.int8-per-channel.onnx")) == quantised
