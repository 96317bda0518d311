"""GPU check: every model family on CUDA in fp16 against fp32 on the CPU, ONNX Runtime's
CUDA provider when present, and batched throughput at batch 1..256, in one table.

Made for a lent GPU machine: no network, nothing installed, under 8 minutes. Each family
is built with *random* weights in a temporary folder, in the layout its real weights are
published in, and loaded through the product's own loaders (``models.loader``), so the
same code path runs as with real weights:

| family          | full size (default) stands for              | ``--quick`` |
|-----------------|---------------------------------------------|-------------|
| hf-text         | PubMedBERT / MedCPT query+article (BERT-base, 110M) | 2 x 32 BERT |
| molformer       | MoLFormer-XL (47M; BERT-shaped stand-in, no remote code) | 1 x 32 |
| cross-encoder   | MedCPT cross-encoder (BERT-base + 1 logit)  | 2 x 32      |
| open-clip       | BiomedCLIP (ViT-B/16 + BERT-base text tower, 196M) | tiny CLIP |
| timm            | UNI2-h (ViT-H/14, SwiGLU, 8 register tokens, 681M) | tiny ViT |

Checks: embeddings compare by the smallest row cosine between CUDA fp16 and CPU fp32
(>= 0.995), scores by the largest absolute difference (<= 0.02 + 2 % of the largest
score). Throughput: items (texts, pairs, images) per second at each batch size, short
query texts / SMILES for the embedders, passages cut at 2048 characters for the
cross-encoder, random 256 px PNGs for the image towers (decoding included). Peak
memory: CUDA allocator peak of one call over inputs that fill ``max_tokens`` exactly, at
the token budget (16384 padded tokens) or 64 images.

Usage::

    python -m bench.gpu_check                       # on the GPU machine
    python -m bench.gpu_check --measurements-out gpu.json   # also numbers for plan-gpus
    python -m bench.gpu_check --quick               # smoke test; on a CPU it says "no CUDA"
    python -m bench.gpu_check --layouts             # every production layout in half precision

``--layouts`` (run it first on a lent GPU): every family in the layout of each production
role (tests/models/tiny_models.py: BERT for MedCPT / PubMedBERT and the MedCPT
cross-encoder, MPNet, open_clip with a native ViT (laion), open_clip with a timm tower and
an HF text tower (BiomedCLIP), a timm ViT with UNI2-h's kwargs) at tiny size with random
weights, loaded through the product's loaders in fp16 on CUDA (bf16 on a CPU, the same
casts) and compared with fp32 on the CPU; then every role of ``--real-profile`` (default
configs/profiles/production.yaml) whose weights resolve locally, in fp16 on CUDA. One table
(family, layout, dtype, ok, ms per batch of 32); exit status 1 on any failure.

``--measurements-out`` writes the JSON that ``biomed-search plan-gpus --measurements``
reads (weights GiB, activation MiB per 1k tokens / per image, items/s, saturating batch).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import string
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


import numpy as np
import torch

from models.loader import load_role
from models.specs import EncoderSpec, ModelProfile

__all__ = ["FAMILIES", "CaseResult", "format_table", "main", "run_case"]

BATCHES = (1, 8, 32, 64, 128, 256)
QUICK_BATCHES = (1, 8, 32)
COSINE_MIN = 0.995
TOKEN_BUDGET = 16384  # padded tokens per forward pass (models.max_tokens_per_forward)
QUERIES = [
    "osimertinib side effects in EGFR mutated lung cancer",
    "gefitinib dosage for patients with hepatic impairment",
    "rivaroxaban bleeding risk and renal function",
    "olaparib maintenance therapy in ovarian cancer",
]
SMILES = [
    "CC(=O)OC1=CC=CC=C1C(=O)O",
    "CN1C=NC2=C1C(=O)N(C(=O)N2C)C",
    "CC(C)CC1=CC=C(C=C1)C(C)C(=O)O",
    "COC1=C(C=C2C(=C1)N=CN=C2NC3=CC(=C(C=C3)F)Cl)OCCCN4CCOCC4",
]
WORDS = [
    "the", "patient", "dose", "tablet", "kinase", "inhibitor", "lung", "cancer", "treatment",
    "warning", "liver", "renal", "bleeding", "risk", "adverse", "reaction", "clinical",
    "study", "placebo", "response", "survival",
]


@dataclass(frozen=True)
class Size:
    """Architecture numbers of one build size."""

    hidden: int
    layers: int
    heads: int
    vocab: int
    image_size: int


TINY = Size(hidden=32, layers=2, heads=2, vocab=200, image_size=32)
BASE = Size(hidden=768, layers=12, heads=12, vocab=30522, image_size=224)


# -- building random models in their published layouts ------------------------------------
def _vocabulary(size: int) -> list[str]:
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
              *string.ascii_lowercase, *string.digits, *string.punctuation,
              *(f"##{c}" for c in string.ascii_lowercase + string.digits), *WORDS]
    tokens = list(dict.fromkeys(tokens))
    return tokens + [f"[unused{i}]" for i in range(max(0, size - len(tokens)))]


def _bert_folder(folder: Path, size: Size, seed: int, layers: int | None = None,
                 num_labels: int | None = None) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(_vocabulary(size.vocab)) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(vocab=str(vocab_file), model_max_length=512)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=size.hidden,
                        num_hidden_layers=layers or size.layers, num_attention_heads=size.heads,
                        intermediate_size=4 * size.hidden, max_position_embeddings=512,
                        num_labels=num_labels or 2)
    model = BertForSequenceClassification(config) if num_labels else BertModel(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _hub_cache(cache: Path, repo_id: str, source: Path) -> Path:
    import shutil

    commit = "0" * 40
    repository = cache / f"models--{repo_id.replace('/', '--')}"
    shutil.copytree(source, repository / "snapshots" / commit, dirs_exist_ok=True)
    (repository / "refs").mkdir(parents=True, exist_ok=True)
    (repository / "refs" / "main").write_text(commit, encoding="utf-8")
    return cache


def _clip_folder(folder: Path, size: Size, root: Path) -> Path:
    import shutil

    import open_clip

    text_tower = _bert_folder(root / "clip-text", size, seed=5)
    hub_id = "gpu-check/text-tower"
    _hub_cache(root / "hub", hub_id, text_tower)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(3)
    text_cfg = {"hf_model_name": hub_id, "hf_tokenizer_name": hub_id, "hf_proj_type": "mlp",
                "hf_pooler_type": "cls_last_hidden_state_pooler", "context_length": 256}
    # BiomedCLIP's vision tower is timm's (its open_clip_config.json names it)
    vision_cfg = {"timm_model_name": "vit_base_patch16_224" if size is BASE else "test_vit",
                  "timm_model_pretrained": False, "timm_pool": "", "timm_proj": "linear",
                  "image_size": size.image_size}
    config = {"model_cfg": {"embed_dim": 512 if size is BASE else 16,
                            "vision_cfg": vision_cfg, "text_cfg": text_cfg},
              "preprocess_cfg": {"mean": [0.48145466, 0.4578275, 0.40821073],
                                 "std": [0.26862954, 0.26130258, 0.27577711]}}
    (folder / "open_clip_config.json").write_text(json.dumps(config), encoding="utf-8")
    local_text = {**text_cfg, "hf_model_name": str(text_tower), "hf_model_pretrained": True}
    model = open_clip.create_model(f"local-dir:{folder}", text_cfg=local_text)
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")
    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        if (text_tower / name).is_file():
            shutil.copy(text_tower / name, folder / name)
    return folder


UNI2_KWARGS: dict[str, Any] = {
    "img_size": 224, "patch_size": 14, "depth": 24, "num_heads": 24, "init_values": 1.0e-5,
    "embed_dim": 1536, "mlp_ratio": 5.33334, "num_classes": 0, "no_embed_class": True,
    "mlp_layer": "timm.layers.SwiGLUPacked", "act_layer": "torch.nn.SiLU", "reg_tokens": 8,
    "dynamic_img_size": True,
}
"""The production profile's UNI2-h ``model_kwargs`` (string layer references)."""


def _timm_kwargs(size: Size) -> dict[str, Any]:
    if size is BASE:
        return dict(UNI2_KWARGS)
    return {"img_size": 32, "patch_size": 8, "embed_dim": 32, "depth": 1, "num_heads": 2,
            "num_classes": 0}


def _timm_folder(folder: Path, size: Size) -> Path:
    import timm
    from timm.models import save_for_hf

    from models.timm_encoder import resolve_layer_references

    torch.manual_seed(4)
    kwargs = _timm_kwargs(size)
    spec = EncoderSpec(role="uni2", family="timm", source=str(folder), dimension=1,
                       modality="image", model_kwargs=kwargs)
    model = timm.create_model("vit_large_patch16_224", pretrained=False,
                              **resolve_layer_references(kwargs, spec))
    save_for_hf(model, str(folder), model_args=dict(kwargs))  # layers as dotted names
    return folder


# -- the cases ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Family:
    """One model family: how to build it and which production models it stands for."""

    family: str
    label: str
    stands_for: tuple[str, ...]
    kind: str  # "text" | "pairs" | "image"
    build: Callable[[Path, Size], dict[str, Any]]


def _text_spec(folder: Path, size: Size) -> dict[str, Any]:
    _bert_folder(folder, size, seed=0)
    return {"role": "pubmedbert", "family": "hf-text", "dimension": size.hidden,
            "pooling": "mean", "max_tokens": 512}


def _molformer_spec(folder: Path, size: Size) -> dict[str, Any]:
    _bert_folder(folder, replace_vocab(size, 2362), seed=2, layers=max(1, size.layers // 2))
    return {"role": "molformer", "family": "molformer", "dimension": size.hidden,
            "pooling": "mean", "max_tokens": 202, "modality": "smiles",
            "trust_remote_code": True}


def _cross_spec(folder: Path, size: Size) -> dict[str, Any]:
    _bert_folder(folder, size, seed=1, num_labels=1)
    return {"role": "medcpt-rerank", "family": "cross-encoder", "max_tokens": 512,
            "max_chars": 2048}


def _clip_spec(folder: Path, size: Size) -> dict[str, Any]:
    _clip_folder(folder, size, folder.parent)
    return {"role": "biomedclip", "family": "open-clip", "modality": "image",
            "dimension": 512 if size is BASE else 16}


def _timm_spec(folder: Path, size: Size) -> dict[str, Any]:
    _timm_folder(folder, size)
    kwargs = _timm_kwargs(size)
    return {"role": "uni2", "family": "timm", "modality": "image",
            "dimension": kwargs["embed_dim"], "model_kwargs": kwargs}


def replace_vocab(size: Size, vocab: int) -> Size:
    """``size`` with another vocabulary size (tiny sizes keep theirs)."""
    from dataclasses import replace

    return size if size is TINY else replace(size, vocab=vocab)


FAMILIES: dict[str, Family] = {
    "hf-text": Family("hf-text", "BERT-base (PubMedBERT, MedCPT)",
                      ("NeuML/pubmedbert-base-embeddings", "ncbi/MedCPT-Query-Encoder"),
                      "text", _text_spec),
    "molformer": Family("molformer", "MoLFormer-sized BERT", ("ibm/MoLFormer-XL-both-10pct",),
                        "smiles", _molformer_spec),
    "cross-encoder": Family("cross-encoder", "MedCPT-Cross (BERT-base)",
                            ("ncbi/MedCPT-Cross-Encoder",), "pairs", _cross_spec),
    "open-clip": Family("open-clip", "BiomedCLIP (ViT-B/16+BERT)",
                        ("microsoft/BiomedCLIP-PubMedBERT_256-vit_base_patch16_224",),
                        "image", _clip_spec),
    "timm": Family("timm", "UNI2-h (ViT-H/14)", ("MahmoodLab/UNI2-h",), "image", _timm_spec),
}


# -- inputs and runs --------------------------------------------------------------------
def _passage(seed: int, words: int = 400) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), size=words))


def _images(count: int, side: int = 256) -> list[bytes]:
    from PIL import Image

    rng = np.random.default_rng(0)
    result = []
    for _ in range(count):
        buffer = io.BytesIO()
        pixels = rng.integers(0, 255, size=(side, side, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(buffer, format="PNG")
        result.append(buffer.getvalue())
    return result


def _inputs(kind: str, count: int, long: bool = False) -> list[Any]:
    """``count`` inputs of ``kind``; ``long``: inputs that fill the role's ``max_tokens``
    exactly (single-letter words or a long alkane chain are one token each), so a batch's
    padded tokens are known for the activation measurement."""
    if kind == "image":
        images = _images(min(count, 8))
        return [images[i % len(images)] for i in range(count)]
    if long:
        if kind == "smiles":
            return ["C" * 600] * count
        letters = string.ascii_lowercase
        return [" ".join(letters[(i + j) % 26] for j in range(1200)) for i in range(count)]
    if kind == "smiles":
        return [SMILES[i % len(SMILES)] for i in range(count)]
    if kind == "pairs":
        return [_passage(i) for i in range(count)]
    return [QUERIES[i % len(QUERIES)] for i in range(count)]


def _run(model: Any, kind: str, items: Sequence[Any]) -> np.ndarray:
    if kind == "image":
        return model.encode_images(list(items))
    if kind == "pairs":
        return model.score(QUERIES[0], list(items))
    return model.encode(list(items))


def _compare(kind: str, reference: np.ndarray, candidate: np.ndarray) -> tuple[bool, str]:
    if kind == "pairs":
        difference = float(np.max(np.abs(reference - candidate)))
        tolerance = 0.02 + 0.02 * float(np.max(np.abs(reference)))
        return difference <= tolerance, f"max|d|={difference:.4f}"
    cosine = float(np.min(np.sum(reference * candidate, axis=1) / (
        np.linalg.norm(reference, axis=1) * np.linalg.norm(candidate, axis=1) + 1e-12)))
    return cosine >= COSINE_MIN, f"min cos={cosine:.4f}"


@dataclass
class CaseResult:
    """One row: a family on one engine (items/s by batch; memory in MiB)."""

    family: str
    label: str
    engine: str
    params_m: float = 0.0
    check: str = ""
    passed: bool | None = None
    throughput: dict[int, float] = field(default_factory=dict)
    weights_mib: float | None = None
    peak_mib: float | None = None
    activation_units: float | None = None
    note: str = ""


def _throughput(model: Any, kind: str, batches: Sequence[int], deadline: float) -> dict[int, float]:
    result: dict[int, float] = {}
    for batch in batches:
        if time.monotonic() > deadline:
            break
        items = _inputs(kind, batch)
        _run(model, kind, items)  # warm-up at this shape
        repeats, started = 0, time.perf_counter()
        while repeats < 2 or (time.perf_counter() - started < 0.3 and repeats < 20):
            _run(model, kind, items)
            repeats += 1
        result[batch] = batch * repeats / (time.perf_counter() - started)
    return result


def _params_m(model: Any) -> float:
    modules = [value for value in vars(model).values() if isinstance(value, torch.nn.Module)]
    forward = getattr(model, "forward", None)
    modules += [value for value in vars(forward).values() if isinstance(value, torch.nn.Module)] \
        if forward is not None and hasattr(forward, "__dict__") else []
    seen: dict[int, torch.nn.Parameter] = {}
    for module in modules:
        for parameter in module.parameters():
            seen[id(parameter)] = parameter
    return sum(p.numel() for p in seen.values()) / 1e6


def _free() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _profile(root: Path, spec: EncoderSpec, device: str, runtime: str = "torch") -> ModelProfile:
    """A validated profile holding ``spec`` (fp16 on CUDA, fp32 on the CPU)."""
    return ModelProfile.model_validate({
        "device": device, "fp16": device == "cuda", "runtime": runtime,
        "hf_cache_dir": root / "hub", "onnx_cache_dir": root / "onnx",
        "max_tokens_per_forward": TOKEN_BUDGET, "roles": {spec.role: spec},
    })


def run_case(family: Family, size: Size, root: Path, batches: Sequence[int],
             deadline: float) -> list[CaseResult]:
    """Build ``family`` at ``size`` under ``root``, check and time it; one row per engine."""
    folder = root / family.family
    spec = EncoderSpec(source=str(folder), **family.build(folder, size))
    label = family.label if size is BASE else f"tiny stand-in: {family.label}"
    kind = "smiles" if family.kind == "smiles" else family.kind
    check_items = _inputs(kind, 4)
    cpu_profile = _profile(root, spec, device="cpu")
    reference_model = load_role(spec.role, cpu_profile)
    params = _params_m(reference_model)
    reference = _run(reference_model, kind, check_items)
    rows: list[CaseResult] = []
    if not torch.cuda.is_available():  # check batch == one by one instead
        singles = np.concatenate([_run(reference_model, kind, [item]) for item in check_items])
        passed, check = _compare(kind, reference, singles)
        rows.append(CaseResult(family.family, label, "torch cpu fp32 (no CUDA)", params,
                               check=f"batch=single {check}", passed=passed,
                               throughput=_throughput(reference_model, kind, batches, deadline)))
        del reference_model
        _free()
        rows.append(CaseResult(family.family, label, "torch cuda fp16", params,
                               note="no CUDA: skipped"))
        return rows
    del reference_model
    _free()
    cuda_profile = _profile(root, spec, device="cuda")
    torch.cuda.reset_peak_memory_stats()
    model = load_role(spec.role, cuda_profile)
    weights = torch.cuda.memory_allocated() / 2**20
    passed, check = _compare(kind, reference, _run(model, kind, check_items))
    row = CaseResult(family.family, label, "torch cuda fp16", params, check, passed,
                     weights_mib=weights)
    row.throughput = _throughput(model, kind, batches, deadline)
    long_count = 64 if kind == "image" else max(1, TOKEN_BUDGET // spec.max_tokens)
    torch.cuda.reset_peak_memory_stats()
    _run(model, kind, _inputs(kind, long_count, long=True))
    row.peak_mib = torch.cuda.max_memory_allocated() / 2**20
    row.activation_units = long_count if kind == "image" else long_count * spec.max_tokens / 1000
    rows.append(row)
    del model
    _free()
    rows.append(_onnx_row(family, label, spec, cuda_profile, kind, reference, check_items,
                          params, batches, deadline))
    return rows


def _onnx_row(family: Family, label: str, spec: EncoderSpec, profile: ModelProfile, kind: str,
              reference: np.ndarray, check_items: Sequence[Any], params: float,
              batches: Sequence[int], deadline: float) -> CaseResult:
    import onnxruntime

    row = CaseResult(family.family, label, "onnxruntime cuda fp32", params)
    if family.family not in ("hf-text", "cross-encoder"):
        row.note = "not exported (torch only for this family)"
        return row
    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        row.note = "onnxruntime has no CUDAExecutionProvider (onnxruntime-gpu not installed)"
        return row
    model = load_role(spec.role, _profile(profile.onnx_cache_dir.parent, spec, "cuda", "onnx"))
    row.passed, row.check = _compare(kind, reference, _run(model, kind, check_items))
    row.throughput = _throughput(model, kind, batches, deadline)
    del model
    _free()
    return row


# -- output ---------------------------------------------------------------------------------
def format_table(rows: Sequence[CaseResult], batches: Sequence[int], device: str) -> str:
    """One table: family, stand-in, engine, params, check, items/s per batch, memory."""
    head = (f"{'family':<13} {'model (random weights)':<46} {'engine':<26} {'M params':>8} "
            f"{'check':<34} " + " ".join(f"{'b=' + str(b):>8}" for b in batches)
            + f" {'weights MiB':>11} {'peak MiB':>9}")
    lines = [f"device: {device}", head, "-" * len(head)]
    for row in rows:
        verdict = "" if row.passed is None else (" PASS" if row.passed else " FAIL")
        check = (row.check + verdict).strip() or row.note
        rates = " ".join(
            f"{row.throughput[b]:>8.0f}" if b in row.throughput else f"{'-':>8}" for b in batches
        )
        weights = f"{row.weights_mib:>11.0f}" if row.weights_mib is not None else f"{'-':>11}"
        peak = f"{row.peak_mib:>9.0f}" if row.peak_mib is not None else f"{'-':>9}"
        lines.append(f"{row.family:<13} {row.label[:46]:<46} {row.engine:<26} "
                     f"{row.params_m:>8.2f} {check[:34]:<34} {rates} {weights} {peak}")
        if row.note and row.check:
            lines.append(f"{'':<13} note: {row.note}")
    return "\n".join(lines)


def measurements(rows: Sequence[CaseResult], device: str) -> dict[str, Any]:
    """The ``plan-gpus --measurements`` JSON from the CUDA fp16 rows."""
    models: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row.engine != "torch cuda fp16" or not row.throughput or row.peak_mib is None:
            continue
        best = max(row.throughput.values())
        saturating = min(b for b, rate in row.throughput.items() if rate >= 0.9 * best)
        activation = max(0.0, row.peak_mib - (row.weights_mib or 0.0)) / (row.activation_units
                                                                          or 1.0)
        for source in FAMILIES[row.family].stands_for:
            models[source] = {
                "weights_gib": round((row.weights_mib or 0.0) / 1024, 3),
                "activation_mib_per_unit": round(activation, 2),
                "throughput_per_s": round(best, 1),
                "saturating_batch": int(saturating),
            }
    return {"device": device, "models": models}


# -- production layouts in half precision (--layouts) ---------------------------------------
LAYOUT_BATCH = 32
LAYOUT_TEXTS = [QUERIES[i % len(QUERIES)] + f" {WORDS[i % len(WORDS)]}" for i in range(32)]


@dataclass
class LayoutRow:
    """One row of the ``--layouts`` table."""

    family: str
    layout: str
    dtype: str
    ok: bool | None
    ms_per_batch: float | None = None
    note: str = ""


def _layout_specs(root: Path) -> list[tuple[str, EncoderSpec]]:
    """(layout, spec) of every production layout, tiny, built under ``root``."""
    import yaml

    from tests.models import tiny_models as tiny

    production = yaml.safe_load((Path(__file__).resolve().parents[1] / "configs" / "profiles"
                                 / "production.yaml").read_text(encoding="utf-8"))
    uni2 = tiny.tiny_uni2_kwargs(production["models"]["roles"]["uni2"]["model_kwargs"])
    bert = tiny.build_tiny_bert(root / "bert")
    tiny.build_hub_cache(root / "hub", tiny.TINY_BERT_HUB_ID, bert)
    cross = tiny.build_tiny_cross_encoder(root / "cross")
    mpnet = tiny.build_tiny_mpnet(root / "mpnet")
    laion = tiny.build_tiny_laion_clip(root / "laion")
    biomedclip = tiny.build_tiny_biomedclip(root / "biomedclip", bert)
    clip_hf = tiny.build_tiny_open_clip(root / "clip-hf-text", bert)
    uni2_folder = tiny.build_tiny_uni2_vit(root / "uni2", uni2)
    text = {"family": "hf-text", "dimension": tiny.HIDDEN}
    image = {"modality": "image", "dimension": tiny.CLIP_DIMENSION, "family": "open-clip"}
    return [
        ("BERT, cls (MedCPT query)", EncoderSpec(role="medcpt-query", source=str(bert),
                                                 pooling="cls", max_tokens=64, **text)),
        ("BERT, pairs (MedCPT article)", EncoderSpec(role="medcpt-article", source=str(bert),
                                                     pooling="cls",
                                                     input_format="title-text-pair", **text)),
        ("BERT, mean (PubMedBERT)", EncoderSpec(role="pubmedbert", source=str(bert), **text)),
        ("MPNet (all-mpnet-base-v2)", EncoderSpec(role="general-text", source=str(mpnet),
                                                  max_tokens=100, **text)),
        ("BERT + 1 logit (MedCPT cross)", EncoderSpec(role="medcpt-rerank", source=str(cross),
                                                      family="cross-encoder", max_chars=2048)),
        ("native ViT CLIP (laion)", EncoderSpec(role="general-vl", source=str(laion), **image)),
        ("timm ViT + HF text (BiomedCLIP)", EncoderSpec(role="biomedclip",
                                                        source=str(biomedclip), **image)),
        ("native ViT + HF text (laion xlm-r)", EncoderSpec(role="general-vl",
                                                           source=str(clip_hf), **image)),
        ("timm ViT, UNI2-h kwargs", EncoderSpec(role="uni2", family="timm",
                                                source=str(uni2_folder), modality="image",
                                                dimension=uni2["embed_dim"], model_kwargs=uni2)),
    ]


def _layout_kind(spec: EncoderSpec) -> str:
    return "pairs" if spec.is_scorer else "image" if spec.modality == "image" else "text"


def _layout_run(model: Any, spec: EncoderSpec, count: int) -> np.ndarray:
    kind = _layout_kind(spec)
    if kind == "text":
        if spec.input_format.value == "title-text-pair":
            return model.encode(LAYOUT_TEXTS[:count], ["Title"] * count)
        return model.encode(LAYOUT_TEXTS[:count])
    return _run(model, kind, _inputs(kind, count))


def _ms_per_batch(model: Any, spec: EncoderSpec) -> float:
    _layout_run(model, spec, LAYOUT_BATCH)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    times = []
    for _ in range(5):
        started = time.perf_counter()
        _layout_run(model, spec, LAYOUT_BATCH)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append((time.perf_counter() - started) * 1000)
    return float(np.median(times))


def _layout_profile(root: Path, device: str, dtype: str) -> ModelProfile:
    return ModelProfile.model_validate({"device": device, "dtype": dtype,
                                        "hf_cache_dir": root / "hub",
                                        "onnx_cache_dir": root / "onnx"})


def _healthy(kind: str, values: np.ndarray) -> bool:
    if not np.isfinite(values).all():
        return False
    return kind == "pairs" or bool(np.allclose(np.linalg.norm(values, axis=1), 1.0, atol=1e-2))


def layout_rows(root: Path, real_profile: Path | None) -> list[LayoutRow]:
    """Check every tiny production layout in half precision against fp32 on the CPU, then
    the real roles of ``real_profile`` whose weights resolve locally."""
    from models.loader import load_cross_encoder, load_encoder

    def load(spec: EncoderSpec, profile: ModelProfile) -> Any:
        return load_cross_encoder(spec, profile) if spec.is_scorer else load_encoder(spec, profile)

    cuda = torch.cuda.is_available()
    device, dtype = ("cuda", "fp16") if cuda else ("cpu", "bf16")
    minimum = 0.99 if cuda else 0.97
    rows: list[LayoutRow] = []
    for layout, spec in _layout_specs(root):
        kind = _layout_kind(spec)
        try:
            reference = _layout_run(load(spec, _layout_profile(root, "cpu", "fp32")), spec, 4)
            model = load(spec, _layout_profile(root, device, dtype))
            half = _layout_run(model, spec, 4)
            if kind == "pairs":
                passed, check = _compare(kind, reference, half)
            else:
                cosine = float(np.min(np.sum(reference * half, axis=1)))
                passed, check = cosine >= minimum, f"min cos={cosine:.4f}"
            passed = passed and _healthy(kind, half)
            rows.append(LayoutRow(spec.family.value, layout, dtype, passed,
                                  _ms_per_batch(model, spec), check))
            del model
        except Exception as error:  # a failed family is a row, not the end of the check
            rows.append(LayoutRow(spec.family.value, layout, dtype, False,
                                  note=f"{type(error).__name__}: {str(error)[:160]}"))
        _free()
    if real_profile is not None:
        rows.extend(_real_rows(real_profile, device, dtype, load))
    return rows


def _real_rows(path: Path, device: str, dtype: str, load: Callable[..., Any]) -> list[LayoutRow]:
    from models.errors import ModelNotAvailableError
    from models.sources import resolve_source

    profile = ModelProfile.from_yaml(path).model_copy(update={"device": device, "dtype": dtype})
    rows = []
    for role in profile.enabled_roles():
        spec = profile.spec(role)
        label = f"real: {spec.source}"[:46]
        try:
            resolve_source(spec, profile.hf_cache_dir)
        except ModelNotAvailableError:
            rows.append(LayoutRow(spec.family.value, label, dtype, None,
                                  note="weights not placed here: skipped"))
            continue
        try:
            model = load(spec, profile)
            values = _layout_run(model, spec, 4)
            rows.append(LayoutRow(spec.family.value, label, dtype,
                                  _healthy(_layout_kind(spec), values),
                                  _ms_per_batch(model, spec)))
            del model
        except Exception as error:
            rows.append(LayoutRow(spec.family.value, label, dtype, False,
                                  note=f"{type(error).__name__}: {str(error)[:160]}"))
        _free()
    return rows


def format_layout_table(rows: Sequence[LayoutRow], device: str) -> str:
    """family, layout, dtype, ok, ms per batch of 32, note."""
    head = (f"{'family':<13} {'layout':<46} {'dtype':<5} {'ok':<4} "
            f"{'ms/b32':>8}  note")
    lines = [f"device: {device}", head, "-" * len(head)]
    for row in rows:
        ok = "-" if row.ok is None else ("ok" if row.ok else "FAIL")
        ms = f"{row.ms_per_batch:>8.1f}" if row.ms_per_batch is not None else f"{'-':>8}"
        lines.append(f"{row.family:<13} {row.layout[:46]:<46} {row.dtype:<5} {ok:<4} {ms}  "
                     f"{row.note}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check and print the table; exit 1 when a CUDA comparison fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny models and batches 1..32 (smoke test; CPU is fine)")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"comma-separated subset of {', '.join(FAMILIES)}")
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="stop timing new batches after this many seconds")
    parser.add_argument("--measurements-out", type=Path, default=None)
    parser.add_argument("--layouts", action="store_true",
                        help="every production layout (tiny) in fp16 on CUDA (bf16 on a CPU), "
                             "then the real roles whose weights are placed; one table")
    parser.add_argument("--real-profile", type=Path,
                        default=Path(__file__).resolve().parents[1] / "configs" / "profiles"
                        / "production.yaml",
                        help="profile whose locally resolvable roles --layouts also checks")
    parser.add_argument("--no-real", action="store_true", help="--layouts: tiny layouts only")
    args = parser.parse_args(argv)
    if args.layouts:
        device = (f"cuda: {torch.cuda.get_device_name(0)} (fp16)" if torch.cuda.is_available()
                  else "no CUDA: bf16 on the CPU (the same casts as fp16 on CUDA)")
        with (tempfile.TemporaryDirectory(prefix="gpu-check-layouts-") as temporary,
              contextlib.redirect_stdout(sys.stderr)):
            rows = layout_rows(Path(temporary), None if args.no_real else args.real_profile)
        print(format_layout_table(rows, device))
        return 1 if any(row.ok is False for row in rows) else 0
    names = [name.strip() for name in args.families.split(",") if name.strip()]
    unknown = sorted(set(names) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown families {unknown}; valid: {', '.join(FAMILIES)}")
    size, batches = (TINY, QUICK_BATCHES) if args.quick else (BASE, BATCHES)
    device = (f"cuda: {torch.cuda.get_device_name(0)}" if torch.cuda.is_available()
              else "no CUDA (torch sees no GPU): CPU fp32 timings only")
    print(f"gpu_check: {device}; {'quick (tiny models)' if args.quick else 'full size'}",
          file=sys.stderr)
    deadline = time.monotonic() + args.budget_s
    rows: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as temporary:
        for name in names:
            started = time.monotonic()
            with contextlib.redirect_stdout(sys.stderr):
                rows.extend(run_case(FAMILIES[name], size, Path(temporary), batches, deadline))
            print(f"  {name}: {time.monotonic() - started:.1f} s", file=sys.stderr)
            # the rows so far, in case a time limit stops the run before the table
            print(format_table(rows, batches, device), file=sys.stderr)
    print(format_table(rows, batches, device))
    if args.measurements_out is not None:
        args.measurements_out.write_text(json.dumps(measurements(rows, device), indent=2))
    return 1 if any(row.passed is False for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
