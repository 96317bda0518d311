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
    "MOLFORMER_SMILES_TOKENS",
    "TIMM_DIMENSION",
    "TINY_BERT_HUB_ID",
    "UNI2_TINY_OVERRIDES",
    "build_hub_cache",
    "build_tiny_bert",
    "build_tiny_biomedclip",
    "build_tiny_cross_encoder",
    "build_tiny_laion_clip",
    "build_tiny_molformer",
    "build_tiny_mpnet",
    "build_tiny_open_clip",
    "build_tiny_smiles_bert",
    "build_tiny_timm_vit",
    "build_tiny_uni2_vit",
    "tiny_uni2_kwargs",
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
    # one line per token: a repeated line ("a") would get an id past the vocabulary size
    return list(dict.fromkeys(specials + characters + pieces + _WORDS.split()))


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
    # ``vocab=`` (a path or a dict): transformers 5 ignores ``vocab_file=`` and leaves only
    # the special tokens, so every word would be [UNK]
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(_vocabulary()) + "\n", encoding="utf-8")
    return BertTokenizer(vocab=str(vocab_file), model_max_length=MAX_POSITIONS)


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


MOLFORMER_SMILES_TOKENS: tuple[str, ...] = (
    *("C", "c", "N", "n", "O", "o", "S", "s", "P", "p", "F", "Cl", "Br", "I"),
    *("(", ")", "=", "#", "-", "+", "/", "\\", ".", "@", "%10"),
    *(str(digit) for digit in range(1, 10)),
    *("[C@@H]", "[C@H]", "[nH]", "[Na+]", "[Cl-]", "[NH3+]", "[O-]"),
)
"""The tiny MoLFormer's SMILES tokens (after ``<bos> <eos> <pad> <mask>``, before ``<unk>``)."""


def build_tiny_molformer(folder: Path) -> Path:
    """A tiny random MoLFormer in the published ``ibm/MoLFormer-XL-both-10pct`` layout:
    ``config.json`` (the published keys, ``MolformerForMaskedLM`` + ``auto_map``), a
    ``model.safetensors`` with ``molformer.``-prefixed encoder keys plus ``lm_head.`` keys,
    ``vocab.json``, ``tokenizer_config.json`` and ``special_tokens_map.json``. 2 layers,
    32 wide, 4 heads, 8 random features."""
    from safetensors.torch import save_file

    from models.molformer_model import MolformerConfig, MolformerModel

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(5)
    tokens = ["<bos>", "<eos>", "<pad>", "<mask>", *MOLFORMER_SMILES_TOKENS, "<unk>"]
    vocabulary = {token: index for index, token in enumerate(tokens)}
    config = MolformerConfig(
        vocab_size=len(tokens),
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=HIDDEN,
        num_random_features=8,
        max_position_embeddings=MAX_POSITIONS,
        architectures=["MolformerForMaskedLM"],
        auto_map={
            "AutoConfig": "configuration_molformer.MolformerConfig",
            "AutoModel": "modeling_molformer.MolformerModel",
        },
        classifier_dropout_prob=None,
        classifier_skip_connection=True,
    )
    model = MolformerModel(config)
    state = {f"molformer.{key}": value for key, value in model.state_dict().items()}
    state["lm_head.transform.dense.weight"] = torch.randn(HIDDEN, HIDDEN)
    state["lm_head.transform.dense.bias"] = torch.zeros(HIDDEN)
    state["lm_head.transform.LayerNorm.weight"] = torch.ones(HIDDEN)
    state["lm_head.transform.LayerNorm.bias"] = torch.zeros(HIDDEN)
    state["lm_head.decoder.weight"] = torch.randn(len(tokens), HIDDEN)
    contiguous = {key: value.contiguous() for key, value in state.items()}
    save_file(contiguous, folder / "model.safetensors")
    config_dict = config.to_dict()
    config_dict["model_type"] = "molformer"
    (folder / "config.json").write_text(json.dumps(config_dict, indent=2), encoding="utf-8")
    (folder / "vocab.json").write_text(json.dumps(vocabulary), encoding="utf-8")
    special = {
        "cls_token": "<bos>",
        "sep_token": "<eos>",
        "pad_token": "<pad>",
        "mask_token": "<mask>",
        "unk_token": "<unk>",
    }
    tokenizer_config = {
        **special,
        "auto_map": {"AutoTokenizer": ["tokenization_molformer.MolformerTokenizer", None]},
        "tokenizer_class": "MolformerTokenizer",
        "model_max_length": 1000000000000000019884624838656,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config), encoding="utf-8")
    (folder / "special_tokens_map.json").write_text(json.dumps(special), encoding="utf-8")
    return folder


# -- tiny models in the layouts of the production profile (configs/profiles/production.yaml)
UNI2_TINY_OVERRIDES = {"img_size": 28, "depth": 2, "num_heads": 2, "embed_dim": 32}
"""What the tiny UNI2 changes in the production ``model_kwargs``: size only."""


def build_tiny_mpnet(folder: Path) -> Path:
    """A 2-layer, 32-wide random MPNet + word-piece tokenizer (``<s>``/``</s>``/``<pad>``
    specials), ``save_pretrained``: the layout of ``sentence-transformers/all-mpnet-base-v2``
    (general-text)."""
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(5)
    words = ["<s>", "<pad>", "</s>", "<unk>", "[UNK]", "<mask>", *_vocabulary()[5:]]
    vocabulary = {word: index for index, word in enumerate(dict.fromkeys(words))}
    tokenizer = MPNetTokenizer(vocab=vocabulary, model_max_length=MAX_POSITIONS)
    config = MPNetConfig(
        vocab_size=len(vocabulary),
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_POSITIONS + 2,
    )
    MPNetModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


_CLIP_PREPROCESS = {
    "mean": [0.48145466, 0.4578275, 0.40821073],
    "std": [0.26862954, 0.26130258, 0.27577711],
}


def _save_open_clip(folder: Path, model_cfg: dict, **create_kwargs: object) -> None:
    config = {"model_cfg": model_cfg, "preprocess_cfg": _CLIP_PREPROCESS}
    (folder / "open_clip_config.json").write_text(json.dumps(config), encoding="utf-8")
    model = open_clip.create_model(f"local-dir:{folder}", **create_kwargs)
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")


def build_tiny_laion_clip(folder: Path) -> Path:
    """A tiny CLIP in ``laion/CLIP-ViT-B-32-laion2B-s34B-b79K``'s layout (general-vl):
    open_clip's *native* ViT (``conv1``, class and positional embeddings) and native text
    transformer with the OpenAI BPE tokenizer (vocabulary 49408, context 77), config in
    ``open_clip_config.json``, weights in ``open_clip_pytorch_model.bin``; 16-d output."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(6)
    model_cfg = {
        "embed_dim": CLIP_DIMENSION,
        "vision_cfg": {
            "image_size": 32,
            "layers": 1,
            "width": 32,
            "patch_size": 8,
            "head_width": 16,
        },
        "text_cfg": {
            "context_length": 77,
            "vocab_size": 49408,
            "width": 32,
            "heads": 2,
            "layers": 1,
        },
    }
    _save_open_clip(folder, model_cfg)
    return folder


def build_tiny_biomedclip(
    folder: Path, text_tower_folder: Path, text_tower_hub_id: str = TINY_BERT_HUB_ID
) -> Path:
    """A tiny CLIP in BiomedCLIP's layout (``microsoft/BiomedCLIP-PubMedBERT_256-...``): a
    *timm* vision tower (``timm_model_name``, timm's 64-wide ``test_vit`` at 32 px, no
    pooling, linear projection) and an HF text tower named by hub id
    (``text_tower_hub_id``, to be found in a hub cache holding ``text_tower_folder``;
    the published model names ``microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract``),
    tokenizer files in the folder; 16-d output."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(7)
    text_cfg = {
        "hf_model_name": text_tower_hub_id,
        "hf_tokenizer_name": text_tower_hub_id,
        "hf_proj_type": "mlp",
        "hf_pooler_type": "cls_last_hidden_state_pooler",
        "context_length": 24,
    }
    model_cfg = {
        "embed_dim": CLIP_DIMENSION,
        "vision_cfg": {
            "timm_model_name": "test_vit",
            "timm_model_pretrained": False,
            "timm_pool": "",
            "timm_proj": "linear",
            "image_size": 32,
        },
        "text_cfg": text_cfg,
    }
    local_text = {**text_cfg, "hf_model_name": str(text_tower_folder), "hf_model_pretrained": True}
    _save_open_clip(folder, model_cfg, text_cfg=local_text)
    for name in ("vocab.txt", "tokenizer_config.json", "tokenizer.json", "special_tokens_map.json"):
        if (text_tower_folder / name).is_file():
            shutil.copy(text_tower_folder / name, folder / name)
    return folder


def tiny_uni2_kwargs(production_kwargs: dict) -> dict:
    """The production profile's UNI2 ``model_kwargs`` (layer classes as dotted names) with
    :data:`UNI2_TINY_OVERRIDES`: patch 14, ``init_values``, SwiGLU, SiLU, 8 register
    tokens, no embed class, dynamic size all as in production."""
    return {**production_kwargs, **UNI2_TINY_OVERRIDES}


def build_tiny_uni2_vit(folder: Path, kwargs: dict) -> Path:
    """A tiny random timm ViT built with UNI2-h's kwargs (``kwargs``: from
    :func:`tiny_uni2_kwargs`), saved with ``save_for_hf`` (``config.json`` naming
    ``vit_giant_patch14_224`` + weights), as the UNI2-h hub repo holds it."""
    import importlib

    torch.manual_seed(8)
    resolved = {}
    for key, value in kwargs.items():
        if key.endswith("_layer") and isinstance(value, str):
            module, _, name = value.rpartition(".")
            value = getattr(importlib.import_module(module), name)
        resolved[key] = value
    model = timm.create_model("vit_giant_patch14_224", pretrained=False, **resolved)
    save_for_hf(model, str(folder), model_args=dict(kwargs))  # layers as dotted names
    return folder
