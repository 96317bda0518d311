"""SMILES encoders: canonicalisation shared by the SMILES families, and the offline
``smiles-bert`` family (the BERT shipped in the ``rxnfp`` wheel, folder ``bert_ft``).

rxnfp (Schwaller et al., "Mapping the space of chemical reactions using attention-based
neural networks", Nat. Mach. Intell. 2021; github.com/rxn4chemistry/rxnfp): a 12-layer,
256-wide BERT over regex-split SMILES tokens; the fingerprint is the ``[CLS]`` vector of
the last hidden state (``RXNBERTFingerprintGenerator``). Importing ``rxnfp`` needs
``pkg_resources`` and other unpinned dependencies, so its tokenizer is rebuilt here with
the same regex (``SMI_REGEX_PATTERN``) and vocabulary as a fast ``tokenizers`` tokenizer.
Valid SMILES tokenise exactly as rxnfp does; characters the regex does not match (which
valid SMILES never contain outside brackets) become ``[UNK]`` instead of being dropped.

Invalid SMILES (documented choice, ``EncoderSpec.invalid_smiles``): a string RDKit cannot
parse is encoded as given (``encode-raw``, the default), because the chemical plan is also
queried with drug names (R-RT-5); ``error`` raises :class:`models.errors.ModelInputError`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rdkit import Chem, rdBase
from tokenizers import Regex, Tokenizer, pre_tokenizers, processors
from tokenizers.models import WordLevel
from transformers import BertModel, PreTrainedTokenizerFast

from models.errors import ModelInputError
from models.runtime import load_pretrained
from models.sources import not_available, resolve_source
from models.specs import EncoderSpec, InvalidSmilesPolicy, ModelProfile
from models.text import TransformerTextEncoder, build_transformer_text_encoder

__all__ = [
    "SMILES_REGEX_PATTERN",
    "build_smiles_tokenizer",
    "canonicalize_smiles",
    "load_smiles_bert_encoder",
    "smiles_preprocessor",
]

SMILES_REGEX_PATTERN = (
    r"(\%\([0-9]{3}\)|\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\||\(|\)|\.|=|#|-|\+|\\|\/|:"
    r"|~|@|\?|>>?|\*|\$|\%[0-9]{2}|[0-9])"
)
"""rxnfp's ``SMI_REGEX_PATTERN`` (``rxnfp/tokenization.py``), unchanged."""

_SPECIAL_TOKENS = {
    "pad_token": "[PAD]",
    "unk_token": "[UNK]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "mask_token": "[MASK]",
}


def canonicalize_smiles(smiles: str, policy: InvalidSmilesPolicy) -> str:
    """RDKit canonical SMILES of ``smiles`` (stripped); an unparseable string is returned
    stripped under ``encode-raw``.

    Raises:
        ModelInputError: under ``error``, for a blank string or one RDKit cannot parse.
    """
    text = smiles.strip()
    molecule = None
    if text:
        with rdBase.BlockLogs():
            molecule = Chem.MolFromSmiles(text)
    if molecule is not None:
        return Chem.MolToSmiles(molecule)
    if policy is InvalidSmilesPolicy.ERROR:
        raise ModelInputError(f"not a valid SMILES string (RDKit cannot parse it): {text[:80]!r}")
    return text


def smiles_preprocessor(spec: EncoderSpec) -> Callable[[list[str]], list[str]]:
    """The pre-processing step of a SMILES role: canonicalise each input when
    ``spec.canonicalize_smiles``, else only apply the invalid-SMILES policy's checks."""
    policy = spec.invalid_smiles

    def preprocess(items: list[str]) -> list[str]:
        canonical = [canonicalize_smiles(item, policy) for item in items]
        return canonical if spec.canonicalize_smiles else [item.strip() for item in items]

    return preprocess


def build_smiles_tokenizer(
    vocab_file: Path, model_max_length: int = 512
) -> PreTrainedTokenizerFast:
    """rxnfp's SMILES tokenizer as a fast tokenizer: whitespace split, then the SMILES
    regex (matches isolated), word-level vocabulary (one token per line of
    ``vocab_file``), ``[CLS] A [SEP]`` / ``[CLS] A [SEP] B [SEP]`` templates.

    Raises:
        FileNotFoundError: no vocabulary file.
        ValueError: the vocabulary lacks a special token.
    """
    tokens = Path(vocab_file).read_text(encoding="utf-8").splitlines()
    vocabulary: dict[str, int] = {}
    for index, token in enumerate(tokens):
        vocabulary.setdefault(token.strip(), index)
    missing = [token for token in _SPECIAL_TOKENS.values() if token not in vocabulary]
    if missing:
        raise ValueError(f"{vocab_file}: vocabulary lacks special tokens {missing}")
    backend = Tokenizer(WordLevel(vocab=vocabulary, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.WhitespaceSplit(),
            pre_tokenizers.Split(Regex(SMILES_REGEX_PATTERN), behavior="isolated"),
        ]
    )
    classify, separate = vocabulary["[CLS]"], vocabulary["[SEP]"]
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", classify), ("[SEP]", separate)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        model_max_length=model_max_length,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
        **_SPECIAL_TOKENS,
    )


def load_smiles_bert_encoder(spec: EncoderSpec, profile: ModelProfile) -> TransformerTextEncoder:
    """Load a ``smiles-bert`` role (rxnfp ``bert_ft``: ``BertModel`` + ``vocab.txt``):
    canonical SMILES in, ``spec.pooling`` (``cls`` for rxnfp) vectors out, ``(n, d)``
    float32 L2-normalised.

    Raises:
        ModelNotAvailableError: the folder, its ``vocab.txt`` or its weights are missing.
        ModelInputError: (at encode time) an unparseable SMILES under ``invalid_smiles: error``.
    """
    folder = resolve_source(spec, profile.hf_cache_dir)
    vocab_file = folder / "vocab.txt"
    if not vocab_file.is_file():
        raise not_available(spec, f"no SMILES vocabulary {str(vocab_file)!r}")
    tokenizer = load_pretrained(spec, lambda: build_smiles_tokenizer(vocab_file, spec.max_tokens))
    model = load_pretrained(
        spec,
        lambda: BertModel.from_pretrained(
            str(folder),
            local_files_only=True,
            **spec.model_kwargs,
        ),
    )
    return build_transformer_text_encoder(
        spec, profile, folder, tokenizer, model, smiles_preprocessor(spec)
    )
