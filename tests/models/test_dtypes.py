"""Half precision for every family: the profile's ``dtype`` rule, and each production layout
(tiny random weights) loaded and run in bfloat16 on the CPU, the same casts as float16 on
CUDA: BERT (MedCPT query/article, PubMedBERT, the MedCPT cross-encoder), MPNet
(general-text), open_clip with a native ViT (laion, general-vl), open_clip with a timm
tower and an HF text tower (BiomedCLIP) and a timm ViT with UNI2-h's kwargs.
MoLFormer's half-precision test lives with its family."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml

from models.loader import load_cross_encoder, load_encoder
from models.runtime import input_dtype, model_dtype
from models.specs import EncoderSpec, ModelProfile
from tests.models import tiny_models
from tests.models.helpers import PRODUCTION_PROFILE, ProfileFactory
from tests.models.test_image_encoders import IMAGES
from tests.models.tiny_models import CLIP_DIMENSION, HIDDEN

pytestmark = pytest.mark.unit

TEXTS = ["gefitinib egfr inhibitor in lung cancer", "insulin", "the dose of the tablet"]
COSINE_MIN = 0.97  # bfloat16 keeps ~3 significant digits; tiny random models, one-layer deep


def production_kwargs(role: str) -> dict[str, Any]:
    document = yaml.safe_load(PRODUCTION_PROFILE.read_text(encoding="utf-8"))
    return dict(document["models"]["roles"][role].get("model_kwargs") or {})


@pytest.fixture(scope="module")
def tiny_mpnet_folder(tiny_root: Path) -> Path:
    return tiny_models.build_tiny_mpnet(tiny_root / "mpnet")


@pytest.fixture(scope="module")
def tiny_laion_folder(tiny_root: Path) -> Path:
    return tiny_models.build_tiny_laion_clip(tiny_root / "laion-clip")


@pytest.fixture(scope="module")
def tiny_biomedclip_folder(tiny_root: Path, tiny_bert_folder: Path) -> Path:
    return tiny_models.build_tiny_biomedclip(tiny_root / "biomedclip", tiny_bert_folder)


@pytest.fixture(scope="module")
def uni2_kwargs() -> dict[str, Any]:
    return tiny_models.tiny_uni2_kwargs(production_kwargs("uni2"))


@pytest.fixture(scope="module")
def tiny_uni2_folder(tiny_root: Path, uni2_kwargs: dict[str, Any]) -> Path:
    return tiny_models.build_tiny_uni2_vit(tiny_root / "uni2", uni2_kwargs)


Case = Callable[[dict[str, Path], dict[str, Any]], EncoderSpec]
CASES: dict[str, Case] = {
    "medcpt-query (BERT, cls)": lambda f, k: EncoderSpec(
        role="medcpt-query",
        family="hf-text",
        source=str(f["bert"]),
        dimension=HIDDEN,
        pooling="cls",
        max_tokens=64,
    ),
    "medcpt-article (BERT, pairs)": lambda f, k: EncoderSpec(
        role="medcpt-article",
        family="hf-text",
        source=str(f["bert"]),
        dimension=HIDDEN,
        pooling="cls",
        input_format="title-text-pair",
    ),
    "pubmedbert (BERT, mean)": lambda f, k: EncoderSpec(
        role="pubmedbert", family="hf-text", source=str(f["bert"]), dimension=HIDDEN
    ),
    "general-text (MPNet)": lambda f, k: EncoderSpec(
        role="general-text",
        family="hf-text",
        source=str(f["mpnet"]),
        dimension=HIDDEN,
        max_tokens=100,
    ),
    "medcpt-rerank (BERT cross-encoder)": lambda f, k: EncoderSpec(
        role="medcpt-rerank", family="cross-encoder", source=str(f["cross"]), max_chars=2048
    ),
    "general-vl (open_clip native ViT)": lambda f, k: EncoderSpec(
        role="general-vl",
        family="open-clip",
        source=str(f["laion"]),
        dimension=CLIP_DIMENSION,
        modality="image",
    ),
    "biomedclip (open_clip timm + HF text)": lambda f, k: EncoderSpec(
        role="biomedclip",
        family="open-clip",
        source=str(f["biomedclip"]),
        dimension=CLIP_DIMENSION,
        modality="image",
    ),
    # laion's xlm-roberta CLIPs: open_clip's mixed precision converts only the HF tower's
    # linear layers, so its float32 embeddings fed half-precision weights (the H200 check)
    "open_clip native ViT + HF text": lambda f, k: EncoderSpec(
        role="biomedclip",
        family="open-clip",
        source=str(f["clip-hf-text"]),
        dimension=CLIP_DIMENSION,
        modality="image",
    ),
    "uni2 (timm ViT, UNI2 kwargs)": lambda f, k: EncoderSpec(
        role="uni2",
        family="timm",
        source=str(f["uni2"]),
        dimension=32,
        modality="image",
        model_kwargs=k,
    ),
}


@pytest.fixture(scope="module")
def folders(
    tiny_bert_folder: Path,
    tiny_cross_encoder_folder: Path,
    tiny_mpnet_folder: Path,
    tiny_laion_folder: Path,
    tiny_biomedclip_folder: Path,
    tiny_clip_folder: Path,
    tiny_uni2_folder: Path,
) -> dict[str, Path]:
    return {
        "bert": tiny_bert_folder,
        "cross": tiny_cross_encoder_folder,
        "mpnet": tiny_mpnet_folder,
        "laion": tiny_laion_folder,
        "biomedclip": tiny_biomedclip_folder,
        "clip-hf-text": tiny_clip_folder,
        "uni2": tiny_uni2_folder,
    }


def load(spec: EncoderSpec, profile: ModelProfile) -> Any:
    return load_cross_encoder(spec, profile) if spec.is_scorer else load_encoder(spec, profile)


def run(model: Any, spec: EncoderSpec) -> np.ndarray:
    if spec.is_scorer:
        return model.score("egfr inhibitor", TEXTS, ["Lung", None, "Dose"])
    if spec.modality == "image":
        return model.encode_images(IMAGES)
    titles = ["Lung cancer", "Diabetes", "Tablets"]
    return model.encode(TEXTS, titles if spec.input_format != "text" else None)


def modules_of(model: Any) -> list[torch.nn.Module]:
    """The torch modules a loaded role holds (its model, or its torch forward's)."""
    found = [value for value in vars(model).values() if isinstance(value, torch.nn.Module)]
    forward = getattr(model, "forward", None)
    if forward is not None and hasattr(forward, "module"):
        found.append(forward.module)
    return found


def parameter_dtypes(model: Any) -> set[torch.dtype]:
    return {p.dtype for module in modules_of(model) for p in module.parameters()}


class TestDtypeRule:
    @pytest.mark.parametrize(
        ("fields", "device", "expected"),
        [
            ({}, "cuda", torch.float16),  # existing profiles: fp16 true, dtype auto
            ({}, "cpu", torch.float32),
            ({"fp16": False}, "cuda", torch.float32),
            ({"dtype": "fp16"}, "cuda", torch.float16),
            ({"dtype": "fp16"}, "cpu", torch.float32),  # half on CUDA only
            ({"dtype": "bf16"}, "cpu", torch.bfloat16),
            ({"dtype": "bf16"}, "cuda", torch.bfloat16),
            ({"dtype": "fp32"}, "cuda", torch.float32),
        ],
    )
    def test_profile_dtype(self, fields: dict[str, Any], device: str, expected: Any) -> None:
        assert model_dtype(torch.device(device), ModelProfile(**fields)) is expected

    def test_onnx_runtime_stays_float32(self) -> None:
        spec = EncoderSpec(role="pubmedbert", family="hf-text", source="/m", dimension=4)
        profile = ModelProfile(dtype="bf16", runtime="onnx")
        assert model_dtype(torch.device("cpu"), profile, spec) is torch.float32

    def test_shipped_profiles_parse_with_auto(self) -> None:
        assert ModelProfile.from_yaml(PRODUCTION_PROFILE).dtype.value == "auto"
        with pytest.raises(ValueError, match="dtype"):
            ModelProfile(dtype="fp8")

    def test_input_dtype_is_the_consumers_not_the_first_parameter(self) -> None:
        class Tower(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.class_embedding = torch.nn.Parameter(torch.zeros(4))  # stays float32
                self.conv1 = torch.nn.Conv2d(3, 4, 2).to(torch.bfloat16)

        tower = Tower()
        assert next(tower.parameters()).dtype is torch.float32
        assert input_dtype(tower) is torch.bfloat16


@pytest.mark.parametrize("case", list(CASES))
def test_family_runs_in_bf16_like_fp32(
    case: str,
    folders: dict[str, Path],
    uni2_kwargs: dict[str, Any],
    make_profile: ProfileFactory,
) -> None:
    spec = CASES[case](folders, uni2_kwargs)
    reference = run(load(spec, make_profile(dtype="fp32")), spec)
    model = load(spec, make_profile(dtype="bf16"))
    assert torch.bfloat16 in parameter_dtypes(model)
    half = run(model, spec)
    assert half.dtype == np.float32 and half.shape == reference.shape
    assert np.isfinite(half).all()
    if spec.is_scorer:
        tolerance = 0.05 + 0.05 * float(np.max(np.abs(reference)))
        np.testing.assert_allclose(half, reference, atol=tolerance)
        return
    np.testing.assert_allclose(np.linalg.norm(half, axis=1), 1.0, atol=1e-3)
    cosines = np.sum(half * reference, axis=1)
    assert cosines.min() >= COSINE_MIN, cosines
    if spec.family.value == "open-clip":  # the text tower runs in half precision too
        texts = model.encode_texts(["chest x-ray"])
        assert texts.dtype == np.float32 and np.isfinite(texts).all()


def test_native_open_clip_keeps_mixed_precision(
    folders: dict[str, Path], uni2_kwargs: dict[str, Any], make_profile: ProfileFactory
) -> None:
    """The reported failure: open_clip's half precision leaves the native ViT's first
    parameter in float32 and ``conv1`` in half; pixels must follow ``conv1``."""
    spec = CASES["general-vl (open_clip native ViT)"](folders, uni2_kwargs)
    model = load_encoder(spec, make_profile(dtype="bf16"))
    visual = model.model.visual  # type: ignore[attr-defined]
    assert next(visual.parameters()).dtype is torch.float32
    assert visual.conv1.weight.dtype is torch.bfloat16
    assert model.encode_images(IMAGES[:1]).shape == (1, CLIP_DIMENSION)
