"""Builders of tiny random models, one per family, saved the way the real ones are published
(``save_pretrained`` folders, an ``open_clip_config.json`` folder, a timm ``config.json``
folder, a Hugging Face hub cache layout), so the tests load them through the same loaders.
"""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path

import open_clip
import timm
import torch
from timm.models import save_for_hf
from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizer

__all__ = [
    "CLIP_DIMENSION",
    "HIDDEN",
    "MAX_POSITIONS",
    "TIMM_DIMENSION",
    "TINY_BERT_HUB_ID",
    "build_hub_cache",
    "build_tiny_bert",
    "build_tiny_cross_encoder",
    "build_tiny_open_clip",
    "build_tiny_smiles_bert",
    "build_tiny_timm_vit",
]

HIDDEN = 32
MAX_POSITIONS = 128
CLIP_DIMENSION = 16
TIMM_DIMENSION = 32
TINY_BERT_HUB_ID = "tiny-org/tiny-bert"
_COMMIT = "0123456789abcdef0123456789abcdef01234567"
_WORDS = (
    "gefitinib erlotinib insulin egfr inhibitor kinase lung cancer glucose blood the a of and "
    "is in for with dose tablet patients treatment warning"
)


def _vocabulary() -> list[str]:
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    characters = list(string.ascii_lowercase + string.digits + string.punctuation)
    pieces = [f"##{character}" for character in string.ascii_lowercase + string.digits]
    return specials + characters + pieces + _WORDS.split()


def _config(vocab_size: int, **extra: object) -> BertConfig:
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_POSITIONS,
        **extra,
    )


def _tokenizer(folder: Path) -> BertTokenizer:
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(_vocabulary()) + "\n", encoding="utf-8")
    return BertTokenizer(vocab_file=str(vocab_file), model_max_length=MAX_POSITIONS)


def build_tiny_bert(folder: Path) -> Path:
    """A 2-layer, 32-wide random BERT encoder + word-piece tokenizer, ``save_pretrained``."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    tokenizer = _tokenizer(folder)
    BertModel(_config(len(tokenizer))).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_tiny_cross_encoder(folder: Path) -> Path:
    """A tiny random ``BertForSequenceClassification`` with one label (MedCPT's shape)."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(1)
    tokenizer = _tokenizer(folder)
    BertForSequenceClassification(_config(len(tokenizer), num_labels=1)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_tiny_smiles_bert(folder: Path, rxnfp_folder: Path) -> Path:
    """A tiny random ``BertModel`` over rxnfp's SMILES vocabulary (``vocab.txt`` copied)."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(2)
    shutil.copy(rxnfp_folder / "vocab.txt", folder / "vocab.txt")
    size = len((folder / "vocab.txt").read_text(encoding="utf-8").splitlines())
    BertModel(_config(size)).save_pretrained(folder)
    return folder


def build_hub_cache(cache_dir: Path, repo_id: str, source_folder: Path) -> Path:
    """Lay ``source_folder`` out as a cached hub repo (``models--org--name/snapshots/<sha>``
    + ``refs/main``), as ``hf download`` leaves it. Returns the cache folder."""
    repository = cache_dir / f"models--{repo_id.replace('/', '--')}"
    snapshot = repository / "snapshots" / _COMMIT
    shutil.copytree(source_folder, snapshot, dirs_exist_ok=True)
    (repository / "refs").mkdir(parents=True, exist_ok=True)
    (repository / "refs" / "main").write_text(_COMMIT, encoding="utf-8")
    return cache_dir


def build_tiny_open_clip(folder: Path, text_tower_folder: Path) -> Path:
    """A tiny CLIP in BiomedCLIP's layout: ``open_clip_config.json`` naming an HF text tower
    by hub id (:data:`TINY_BERT_HUB_ID`, to be found in a hub cache), tokenizer files in
    the folder, full weights in ``open_clip_pytorch_model.bin``; 16-d output."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(3)
    text_cfg = {
        "hf_model_name": TINY_BERT_HUB_ID,
        "hf_tokenizer_name": TINY_BERT_HUB_ID,
        "hf_proj_type": "mlp",
        "hf_pooler_type": "cls_last_hidden_state_pooler",
        "context_length": 24,
    }
    model_cfg = {
        "embed_dim": CLIP_DIMENSION,
        "vision_cfg": {
            "image_size": 32,
            "layers": 1,
            "width": 32,
            "head_width": 16,
            "patch_size": 8,
            "mlp_ratio": 2.0,
        },
        "text_cfg": text_cfg,
    }
    config = {
        "model_cfg": model_cfg,
        "preprocess_cfg": {
            "mean": [0.48145466, 0.4578275, 0.40821073],
            "std": [0.26862954, 0.26130258, 0.27577711],
        },
    }
    (folder / "open_clip_config.json").write_text(json.dumps(config), encoding="utf-8")
    local_text = {**text_cfg, "hf_model_name": str(text_tower_folder), "hf_model_pretrained": True}
    model = open_clip.create_model(f"local-dir:{folder}", text_cfg=local_text)
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")
    for name in ("vocab.txt", "tokenizer_config.json", "tokenizer.json", "special_tokens_map.json"):
        if (text_tower_folder / name).is_file():
            shutil.copy(text_tower_folder / name, folder / name)
    return folder


def build_tiny_timm_vit(folder: Path) -> Path:
    """A tiny random timm ViT (32 px, patch 8, 1 block, 32-wide, no head) saved with
    ``save_for_hf``: ``config.json`` + weights, as a hub repo such as UNI2-h holds them."""
    torch.manual_seed(4)
    model_args = {
        "img_size": 32,
        "patch_size": 8,
        "embed_dim": TIMM_DIMENSION,
        "depth": 1,
        "num_heads": 2,
        "num_classes": 0,
    }
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, **model_args)
    save_for_hf(model, str(folder), model_args=model_args)
    return folder
