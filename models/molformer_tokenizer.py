"""MoLFormer's SMILES tokenizer, built locally from the published tokenizer files.

Source: the ``ibm/MoLFormer-XL-both-10pct`` repository (model card
https://huggingface.co/ibm/MoLFormer-XL-both-10pct) and github.com/IBM/molformer: a regex
split of the SMILES string (the pattern below, the one in IBM's MoLFormer tokenizer: the
SMILES regex of Schwaller et al. without rxnfp's ``%(nnn)``/``|``/``>>`` extensions),
one token per regex match (characters the regex does not match are dropped, as the
regex's ``findall`` does), a word-level vocabulary from ``vocab.json``
(``{token: id}``), and ``<bos> tokens <eos>``. The special tokens are those of the
published ``tokenizer_config.json`` / ``special_tokens_map.json``: ``cls_token`` ``<bos>``
(id 0), ``sep_token`` ``<eos>`` (1), ``pad_token`` ``<pad>`` (2), ``mask_token``
``<mask>`` (3), ``unk_token`` ``<unk>`` (2361); they are read from those files when
present. No hub code runs: ``tokenizer_config.json``'s ``auto_map`` is ignored.

Not verified offline: that the published ``vocab.json`` is present in every snapshot (the
loader falls back to the ``model.vocab`` table of ``tokenizer.json``), and token-for-token
agreement with the hub tokenizer on real SMILES.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokenizers import Regex, Tokenizer, pre_tokenizers, processors
from tokenizers.models import WordLevel
from transformers import PreTrainedTokenizerFast

__all__ = ["MOLFORMER_REGEX_PATTERN", "MOLFORMER_SPECIAL_TOKENS", "build_molformer_tokenizer"]

MOLFORMER_REGEX_PATTERN = (
    r"(\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\(|\)|\.|=|#|-|\+|\\|\/|:|~|@|\?|>|\*|\$"
    r"|\%[0-9]{2}|[0-9])"
)
"""The SMILES regex of IBM's MoLFormer tokenizer (one token per match)."""

MOLFORMER_SPECIAL_TOKENS = {
    "cls_token": "<bos>",
    "sep_token": "<eos>",
    "pad_token": "<pad>",
    "mask_token": "<mask>",
    "unk_token": "<unk>",
}
"""The published ``tokenizer_config.json`` special tokens (defaults when a file is absent)."""


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _special_tokens(folder: Path) -> dict[str, str]:
    tokens = dict(MOLFORMER_SPECIAL_TOKENS)
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        path = folder / name
        if not path.is_file():
            continue
        settings = json.loads(path.read_text(encoding="utf-8"))
        for key in MOLFORMER_SPECIAL_TOKENS:
            text = _token_text(settings.get(key))
            if text:
                tokens[key] = text
    return tokens


def _vocabulary(folder: Path) -> dict[str, int]:
    vocab_file = folder / "vocab.json"
    if vocab_file.is_file():
        vocabulary = json.loads(vocab_file.read_text(encoding="utf-8"))
    else:
        fast_file = folder / "tokenizer.json"
        if not fast_file.is_file():
            raise FileNotFoundError(
                f"no MoLFormer vocabulary in {str(folder)!r} (vocab.json or tokenizer.json)"
            )
        vocabulary = json.loads(fast_file.read_text(encoding="utf-8")).get("model", {}).get("vocab")
    if not isinstance(vocabulary, dict) or not vocabulary:
        raise ValueError(f"{str(folder)!r}: the MoLFormer vocabulary is not a {{token: id}} table")
    return {str(token): int(index) for token, index in vocabulary.items()}


def build_molformer_tokenizer(
    folder: str | Path, model_max_length: int = 202
) -> PreTrainedTokenizerFast:
    """The MoLFormer tokenizer of a published-layout folder, as a fast tokenizer
    producing ``input_ids`` and ``attention_mask`` (``<bos> A <eos>``; pairs, unused by
    the service, as ``<bos> A <eos> B <eos>``).

    Raises:
        FileNotFoundError: no ``vocab.json`` and no ``tokenizer.json``.
        ValueError: the vocabulary is malformed or lacks a special token.
    """
    folder = Path(folder)
    vocabulary = _vocabulary(folder)
    special = _special_tokens(folder)
    missing = [token for token in special.values() if token not in vocabulary]
    if missing:
        raise ValueError(f"{str(folder)!r}: the MoLFormer vocabulary lacks {missing}")
    backend = Tokenizer(WordLevel(vocab=vocabulary, unk_token=special["unk_token"]))
    backend.pre_tokenizer = pre_tokenizers.Split(
        Regex(MOLFORMER_REGEX_PATTERN), behavior="removed", invert=True
    )
    begin, end = special["cls_token"], special["sep_token"]
    backend.post_processor = processors.TemplateProcessing(
        single=f"{begin} $A {end}",
        pair=f"{begin} $A {end} $B:1 {end}:1",
        special_tokens=[(begin, vocabulary[begin]), (end, vocabulary[end])],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        model_max_length=model_max_length,
        model_input_names=["input_ids", "attention_mask"],
        **special,
    )
