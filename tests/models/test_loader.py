"""Loading roles from the shipped profiles: the production profile fails clearly without
weights; the offline default profile loads every enabled role for real."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.errors import ModelNotAvailableError
from models.loader import load_cross_encoder, load_encoder, load_role
from models.protocols import PairScorer, TextEmbedder
from models.specs import ModelProfile
from tests.models.helpers import PRODUCTION_PROFILE


@pytest.mark.unit
@pytest.mark.parametrize("role", ModelProfile.from_yaml(PRODUCTION_PROFILE).enabled_roles())
def test_production_role_without_weights_fails_with_one_clear_message(
    role: str, tmp_path: Path
) -> None:
    profile = ModelProfile.from_yaml(PRODUCTION_PROFILE).model_copy(
        update={"hf_cache_dir": tmp_path, "device": "cpu"}
    )
    source = profile.roles[role].source.removeprefix("hf-hub:")
    with pytest.raises(ModelNotAvailableError) as caught:
        load_role(role, profile)
    message = str(caught.value)
    assert role in message and source in message
    assert "local folder" in message and "Hugging Face cache" in message
    assert caught.value.__cause__ is None and caught.value.__context__ is None


@pytest.mark.unit
def test_disabled_role_is_not_loaded(offline_profile: ModelProfile) -> None:
    with pytest.raises(ModelNotAvailableError, match="disabled"):
        load_role("biomedclip", offline_profile)
    with pytest.raises(ModelNotAvailableError, match="disabled"):
        load_encoder(offline_profile.roles["uni2"], offline_profile)


@pytest.mark.unit
def test_embedding_role_is_not_a_scorer(offline_profile: ModelProfile) -> None:
    with pytest.raises(ValueError, match="load_encoder"):
        load_cross_encoder(offline_profile.roles["general-text"], offline_profile)


@pytest.mark.slow
@pytest.mark.parametrize(
    "role", ["pubmedbert", "medcpt-query", "medcpt-article", "molformer", "medcpt-rerank"]
)
def test_default_profile_loads_every_enabled_role(role: str, offline_profile: ModelProfile) -> None:
    model = load_role(role, offline_profile)
    spec = offline_profile.roles[role]
    if spec.is_scorer:
        assert isinstance(model, PairScorer)
        assert model.score("egfr", ["lung cancer", "insulin"], titles=["t", None]).shape == (2,)
    else:
        assert isinstance(model, TextEmbedder)
        vectors = model.encode(["CCO", "lung cancer"], titles=["t", "u"])
        assert vectors.shape == (2, spec.dimension) and vectors.dtype == np.float32
