"""Fixtures for the model tests: tiny random models of every family, built once per session
in a temporary folder, and the real offline models (MiniLM, rxnfp) loaded once.

Nothing here touches the network: the hub is switched off before any Hugging Face import,
and hub ids resolve from a hub cache laid out in the temporary folder.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path
from typing import Any

import pytest

from models.loader import load_cross_encoder, load_encoder
from models.sources import resolve_source
from models.specs import ModelProfile
from tests.models import tiny_models
from tests.models.helpers import DEFAULT_PROFILE, ProfileFactory


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tiny-models")


@pytest.fixture(scope="session")
def tiny_bert_folder(tiny_root: Path) -> Path:
    return tiny_models.build_tiny_bert(tiny_root / "bert")


@pytest.fixture(scope="session")
def tiny_cross_encoder_folder(tiny_root: Path) -> Path:
    return tiny_models.build_tiny_cross_encoder(tiny_root / "cross-encoder")


@pytest.fixture(scope="session")
def hub_cache(tiny_root: Path, tiny_bert_folder: Path) -> Path:
    """A Hugging Face cache holding the tiny BERT as :data:`tiny_models.TINY_BERT_HUB_ID`."""
    return tiny_models.build_hub_cache(
        tiny_root / "hub-cache", tiny_models.TINY_BERT_HUB_ID, tiny_bert_folder
    )


@pytest.fixture(scope="session")
def tiny_smiles_folder(tiny_root: Path, offline_profile: ModelProfile) -> Path:
    rxnfp_folder = resolve_source(offline_profile.roles["molformer"])
    return tiny_models.build_tiny_smiles_bert(tiny_root / "smiles-bert", rxnfp_folder)


@pytest.fixture(scope="session")
def tiny_clip_folder(tiny_root: Path, tiny_bert_folder: Path) -> Path:
    return tiny_models.build_tiny_open_clip(tiny_root / "clip", tiny_bert_folder)


@pytest.fixture(scope="session")
def tiny_vit_folder(tiny_root: Path) -> Path:
    return tiny_models.build_tiny_timm_vit(tiny_root / "vit")


@pytest.fixture(scope="session")
def make_profile(tiny_root: Path, hub_cache: Path) -> ProfileFactory:
    """``make_profile(**fields)``: a CPU profile reading hub ids from the test hub cache and
    caching ONNX exports in the session's temporary folder."""

    def factory(**fields: Any) -> ModelProfile:
        base: dict[str, Any] = {
            "device": "cpu",
            "hf_cache_dir": hub_cache,
            "onnx_cache_dir": tiny_root / "onnx",
        }
        return ModelProfile(**{**base, **fields})

    return factory


@pytest.fixture(scope="session")
def offline_profile() -> ModelProfile:
    """The shipped offline default profile, forced onto the CPU."""
    profile = ModelProfile.from_yaml(DEFAULT_PROFILE)
    return profile.model_copy(update={"device": "cpu"})


@pytest.fixture(scope="session")
def minilm_encoder(offline_profile: ModelProfile) -> Any:
    """The real MiniLM model, as the default profile's ``general-text`` role."""
    return load_encoder(offline_profile.spec("general-text"), offline_profile)


@pytest.fixture(scope="session")
def rxnfp_encoder(offline_profile: ModelProfile) -> Any:
    """The real rxnfp SMILES BERT, as the default profile's ``molformer`` role."""
    return load_encoder(offline_profile.spec("molformer"), offline_profile)


@pytest.fixture(scope="session")
def minilm_scorer(offline_profile: ModelProfile) -> Any:
    """The default profile's ``medcpt-rerank`` role (bi-encoder scorer over MiniLM)."""
    return load_cross_encoder(offline_profile.spec("medcpt-rerank"), offline_profile)
