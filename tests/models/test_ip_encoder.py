"""Inner-product roles (``metric: ip``, ``normalize: false``): MedCPT's model card (Jin et
al. 2023) takes the raw ``[CLS]`` vector and scores by inner product, so the encoder must
not L2-normalise. A MedCPT-like spec over the tiny random BERT, through the real loader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.loader import load_encoder
from models.specs import EncoderSpec, Metric
from tests.models.helpers import PRODUCTION_PROFILE, ProfileFactory, tiny_text_spec
from tests.models.tiny_models import HIDDEN

pytestmark = pytest.mark.unit

TEXTS = ["gefitinib is an egfr kinase inhibitor", "insulin lowers blood glucose", "a"]
TITLES = ["egfr", "insulin", "the"]


def _medcpt_article_like(folder: Path, **fields: object) -> EncoderSpec:
    return tiny_text_spec(
        folder,
        role="medcpt-article",
        pooling="cls",
        input_format="title-text-pair",
        metric="ip",
        normalize=False,
        **fields,
    )


@pytest.mark.parametrize("runtime", ["torch", "onnx"])
def test_ip_role_returns_the_raw_cls_vector(
    runtime: str, tiny_bert_folder: Path, make_profile: ProfileFactory
) -> None:
    profile = make_profile(runtime=runtime)
    raw = load_encoder(_medcpt_article_like(tiny_bert_folder), profile)
    unit = load_encoder(
        tiny_text_spec(
            tiny_bert_folder, role="medcpt-article", pooling="cls", input_format="title-text-pair"
        ),
        profile,
    )
    vectors = raw.encode(TEXTS, titles=TITLES)
    normalised = unit.encode(TEXTS, titles=TITLES)
    assert vectors.shape == (len(TEXTS), HIDDEN) and vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    assert not np.allclose(norms, 1.0, atol=1e-3)  # not normalised
    np.testing.assert_allclose(np.linalg.norm(normalised, axis=1), 1.0, atol=1e-5)
    # Same direction: only the normalisation differs (under ONNX this also shows the
    # unnormalised export is cached apart from the normalised one of the same model).
    np.testing.assert_allclose(vectors / norms[:, None], normalised, atol=1e-4)


def test_cosine_role_cannot_skip_normalisation(tiny_bert_folder: Path) -> None:
    with pytest.raises(ValueError, match="metric cosine needs normalize: true"):
        tiny_text_spec(tiny_bert_folder, normalize=False)
    assert tiny_text_spec(tiny_bert_folder).metric is Metric.COSINE
    assert tiny_text_spec(tiny_bert_folder).normalize is True


def test_image_family_always_normalises() -> None:
    with pytest.raises(ValueError, match="always normalises"):
        EncoderSpec(
            role="uni2",
            family="timm",
            source="hf-hub:MahmoodLab/UNI2-h",
            dimension=1536,
            modality="image",
            metric="ip",
            normalize=False,
        )


def test_production_medcpt_roles_are_ip_and_unnormalised() -> None:
    from models.specs import ModelProfile

    profile = ModelProfile.from_yaml(PRODUCTION_PROFILE)
    for role in ("medcpt-query", "medcpt-article"):
        assert profile.roles[role].metric is Metric.IP
        assert profile.roles[role].normalize is False
    assert profile.roles["pubmedbert"].metric is Metric.COSINE
    assert profile.roles["pubmedbert"].normalize is True
