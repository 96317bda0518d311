"""MoLFormer (family ``molformer``): a SMILES transformer with linear attention, mean pooling.

Model card followed: ``ibm/MoLFormer-XL-both-10pct``
(https://huggingface.co/ibm/MoLFormer-XL-both-10pct; Ross et al., Nat. Mach. Intell. 2022):
the attention-masked mean of the last hidden state (768-d, the model's pooler output),
L2-normalised here, with the random feature map held fixed at inference (the card's
``deterministic_eval=True``). Inputs are RDKit-canonicalised first (the model was trained
on canonical SMILES); unparseable strings follow ``invalid_smiles`` (see
:mod:`models.smiles`).

Default path, no remote code: the architecture is :mod:`models.molformer_model` and the
tokenizer :mod:`models.molformer_tokenizer`, loading the published folder as is
(``config.json``, ``model.safetensors`` or ``pytorch_model.bin``, ``vocab.json`` /
``tokenizer.json`` and ``tokenizer_config.json``). The hub's own code
(``trust_remote_code``) does not import under transformers 5 and is a supply-chain risk in
a serving replica; it stays an explicit per-profile opt-in (``trust_remote_code: true`` on
the role), never the default, and its import failures are reported as
:class:`models.errors.ModelNotAvailableError`.
"""

from __future__ import annotations

import transformers
from transformers import AutoModel

from models.molformer_checkpoint import load_molformer_model
from models.molformer_tokenizer import build_molformer_tokenizer
from models.runtime import load_pretrained, load_tokenizer_and_model
from models.smiles import smiles_preprocessor
from models.sources import not_available, resolve_source
from models.specs import EncoderSpec, ModelProfile
from models.text import TransformerTextEncoder, build_transformer_text_encoder

__all__ = ["load_molformer_encoder"]


def _load_remote_code_encoder(spec: EncoderSpec, profile: ModelProfile) -> TransformerTextEncoder:
    """The opt-in path: the repository's own code through ``AutoModel`` /
    ``AutoTokenizer`` with ``trust_remote_code=True``.

    Raises:
        ModelNotAvailableError: weights missing, or the remote code failed to import or run.
    """
    try:
        folder, tokenizer, model = load_tokenizer_and_model(spec, profile, AutoModel)
    except (ImportError, AttributeError, TypeError) as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise not_available(
            spec,
            f"its remote code failed under transformers {transformers.__version__}: {reason}; "
            "drop trust_remote_code from the role to use the built-in MoLFormer",
        ) from None
    return build_transformer_text_encoder(
        spec, profile, folder, tokenizer, model, smiles_preprocessor(spec)
    )


def load_molformer_encoder(spec: EncoderSpec, profile: ModelProfile) -> TransformerTextEncoder:
    """Load a ``molformer`` role from the resolved local folder, without remote code
    unless the spec opts in (``trust_remote_code: true``): ``encode`` gives ``(n, d)``
    float32 L2-normalised vectors.

    ``spec.model_kwargs`` update the published config (``deterministic_eval: true`` is
    accepted; inference is deterministic either way).

    Raises:
        ModelNotAvailableError: the folder, its config, weights or vocabulary are missing,
            the folder is not a MoLFormer checkpoint, its weights do not match the
            architecture, the opt-in remote code fails, or the width is not
            ``spec.dimension``.
        ModelInputError: (at encode time) an unparseable SMILES under ``invalid_smiles: error``.
    """
    if spec.trust_remote_code:
        return _load_remote_code_encoder(spec, profile)
    folder = resolve_source(spec, profile.hf_cache_dir)
    model = load_pretrained(spec, lambda: load_molformer_model(folder, **spec.model_kwargs))
    tokenizer = load_pretrained(
        spec, lambda: build_molformer_tokenizer(folder, model.config.max_position_embeddings)
    )
    return build_transformer_text_encoder(
        spec, profile, folder, tokenizer, model, smiles_preprocessor(spec)
    )
