"""MoLFormer (family ``molformer``): a SMILES transformer with remote code, mean pooling.

Model card followed: ``ibm/MoLFormer-XL-both-10pct``: ``AutoModel.from_pretrained(...,
deterministic_eval=True, trust_remote_code=True)`` and ``AutoTokenizer.from_pretrained(...,
trust_remote_code=True)``; SPEC.md section 0 asks for the attention-masked mean of the last
hidden state (768-d), L2-normalised here. Inputs are RDKit-canonicalised first (the model
was trained on canonical SMILES); unparseable strings follow ``invalid_smiles`` (see
:mod:`models.smiles`). ``deterministic_eval`` belongs in the profile's ``model_kwargs``.
"""

from __future__ import annotations

from transformers import AutoModel

from models.runtime import load_tokenizer_and_model
from models.smiles import smiles_preprocessor
from models.sources import not_available
from models.specs import EncoderSpec, ModelProfile
from models.text import TransformerTextEncoder, build_transformer_text_encoder

__all__ = ["load_molformer_encoder"]


def load_molformer_encoder(spec: EncoderSpec, profile: ModelProfile) -> TransformerTextEncoder:
    """Load a ``molformer`` role from the resolved local folder (``local_files_only=True``,
    remote code from that folder): ``(n, d)`` float32 L2-normalised vectors.

    Raises:
        ModelNotAvailableError: weights or remote code not available locally, or
            ``trust_remote_code`` is false in the spec.
        ModelInputError: (at encode time) an unparseable SMILES under ``invalid_smiles: error``.
    """
    if not spec.trust_remote_code:
        raise not_available(
            spec, "MoLFormer runs remote code from its repository; set trust_remote_code: true"
        )
    folder, tokenizer, model = load_tokenizer_and_model(spec, profile, AutoModel)
    return build_transformer_text_encoder(
        spec, profile, folder, tokenizer, model, smiles_preprocessor(spec)
    )
