"""Hugging Face text encoders (family ``hf-text``): AutoModel + AutoTokenizer, CLS or mean
pooling, float32 vectors, L2-normalised unless the spec says ``normalize: false``.

Model cards followed:
  - MedCPT (``ncbi/MedCPT-Query-Encoder`` / ``ncbi/MedCPT-Article-Encoder``; Jin et al.
    2023): the ``[CLS]`` vector of the last hidden state, *not* normalised (relevance is
    the inner product of query and article embeddings: ``metric: ip``,
    ``normalize: false``); queries up to 64 tokens; articles as ``[title, abstract]``
    sentence pairs up to 512 tokens (``input_format: title-text-pair``).
  - sentence-transformers models (``NeuML/pubmedbert-base-embeddings``,
    ``all-MiniLM-L6-v2``): attention-masked mean of the last hidden state, then L2
    normalisation (their ``modules.json``: Transformer -> Pooling(mean) -> Normalize).

:class:`TransformerTextEncoder` is shared with the SMILES families, which only change the
tokenizer, the pooling and a pre-processing step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as functional
from transformers import AutoModel, PreTrainedTokenizerBase

from models.batching import BatchLimits, Forward, run_in_sub_batches
from models.inputs import join_title, text_list, title_list
from models.runtime import (
    batch_limits_for,
    build_forward,
    check_dimension,
    configure_threads,
    load_tokenizer_and_model,
    model_dtype,
    model_stage,
    torch_device_for,
)
from models.specs import EncoderSpec, InputFormat, ModelProfile, Pooling
from models.tokens import TokenizerAdapter, effective_max_length, model_input_names

__all__ = [
    "PooledTextModule",
    "TransformerTextEncoder",
    "build_transformer_text_encoder",
    "load_hf_text_encoder",
    "pool_hidden_states",
]

Preprocess = Callable[[list[str]], list[str]]


def pool_hidden_states(
    hidden: torch.Tensor, attention_mask: torch.Tensor, pooling: Pooling
) -> torch.Tensor:
    """Pool ``(b, s, h)`` hidden states to ``(b, h)`` float32: the first (``[CLS]``) token,
    or the mean over tokens where ``attention_mask`` is 1."""
    hidden = hidden.float()
    if pooling is Pooling.CLS:
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)


class PooledTextModule(torch.nn.Module):
    """A transformer encoder + pooling (+ L2 normalisation when ``normalize``), taking token
    arrays positionally (``input_names`` order) so one module serves torch and the ONNX
    export alike.

    Output: ``(b, h)`` float32; unit L2 norm per row when ``normalize``, else the pooled
    vector as is (MedCPT: the raw ``[CLS]`` vector, compared by inner product).
    """

    def __init__(
        self,
        model: torch.nn.Module,
        pooling: Pooling,
        input_names: Sequence[str],
        normalize: bool = True,
    ):
        super().__init__()
        self.model = model
        self.pooling = pooling
        self.input_names = tuple(input_names)
        self.normalize = normalize

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        """Token arrays ``(b, s)`` int64, one per ``input_names`` entry in that order (one
        of them ``attention_mask``) -> ``(b, h)`` float32, L2-normalised when
        ``normalize``.

        Raises:
            ValueError: the number of inputs differs from ``input_names``.
        """
        named = dict(zip(self.input_names, inputs, strict=True))
        output = self.model(**named)
        hidden = output[0] if isinstance(output, tuple) else output.last_hidden_state
        pooled = pool_hidden_states(hidden, named["attention_mask"], self.pooling)
        if not self.normalize:
            return pooled
        return functional.normalize(pooled, p=2.0, dim=-1)


class TransformerTextEncoder:
    """One text (or SMILES) embedding role backed by a transformer.

    ``encode(texts, titles=None) -> np.ndarray (n, dimension) float32`` in input order;
    rows L2-normalised unless ``spec.normalize`` is false (``metric: ip`` roles such as
    MedCPT, whose vector norms carry signal). Texts get ``spec.text_prefix``; with titles
    given, ``input_format: title-text-pair`` makes each input the ``[title, text]`` pair
    and ``title-dot-text`` the sequence ``"title. text"``. Inputs over ``max_tokens`` are
    truncated. Single and batched calls share one code path.
    """

    def __init__(
        self,
        spec: EncoderSpec,
        adapter: TokenizerAdapter,
        forward: Forward,
        limits: BatchLimits,
        preprocess: Preprocess | None = None,
    ):
        self.spec = spec
        self.dimension = int(spec.dimension or 0)
        self.adapter = adapter
        self.forward = forward
        self.limits = limits
        self.preprocess = preprocess

    def encode(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """Embed texts: ``(n, d)`` float32 (rows L2-normalised when ``spec.normalize``);
        ``(0, d)`` for no texts.

        Raises:
            ModelInputError: ``texts`` is not a list of str, or titles do not line up.
        """
        items = text_list(texts)
        paired_titles = title_list(titles, len(items))
        if self.preprocess is not None:
            items = self.preprocess(items)
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        pairs = paired_titles is not None and self.spec.input_format is InputFormat.TITLE_TEXT_PAIR
        if paired_titles is not None and self.spec.input_format is InputFormat.TITLE_DOT_TEXT:
            items = [
                join_title(title, item) for title, item in zip(paired_titles, items, strict=True)
            ]
        if self.spec.text_prefix:
            items = [self.spec.text_prefix + item for item in items]
        rows = self.adapter.rows(paired_titles, items) if pairs else self.adapter.rows(items)
        return run_in_sub_batches(
            rows, self.adapter.input_names, self.adapter.pad_token_id, self.forward, self.limits
        )


def build_transformer_text_encoder(
    spec: EncoderSpec,
    profile: ModelProfile,
    folder: Path,
    tokenizer: PreTrainedTokenizerBase,
    model: torch.nn.Module,
    preprocess: Preprocess | None = None,
) -> TransformerTextEncoder:
    """Wrap a loaded tokenizer + model as a role: device, dtype, pooling, normalisation
    (``spec.normalize``), runtime (torch or ONNX), batching; then check the output width
    against ``spec.dimension``. An unnormalised role's ONNX export is keyed apart from the
    normalised one of the same model.

    Raises:
        ModelNotAvailableError: the model's output width is not ``spec.dimension``, or
            moving it to the device, exporting it or the warm-up forward pass failed
            (the original exception is the ``__cause__``).
    """
    configure_threads(profile)
    device = torch_device_for(spec, profile)
    with model_stage(spec, "moving to the device"):
        model = model.to(device=device, dtype=model_dtype(device, profile, spec)).eval()
    input_names = model_input_names(tokenizer, model)
    adapter = TokenizerAdapter(tokenizer, input_names, effective_max_length(spec, tokenizer, model))
    module = PooledTextModule(model, spec.pooling, input_names, spec.normalize).eval()
    # The normalisation is part of the exported graph; the key of a normalised export
    # stays as it was, so existing caches remain valid.
    extra_key = None if spec.normalize else {"normalize": False}
    with model_stage(spec, "preparing the runtime"):
        forward = build_forward(
            module, spec, profile, input_names, adapter.example_inputs(), folder, extra_key
        )
    encoder = TransformerTextEncoder(spec, adapter, forward, batch_limits_for(profile), preprocess)
    with model_stage(spec, "warm-up"):  # valid as text and as SMILES
        check_dimension(spec, encoder.encode(["CCO"]).shape[1])
    return encoder


def load_hf_text_encoder(spec: EncoderSpec, profile: ModelProfile) -> TransformerTextEncoder:
    """Load an ``hf-text`` role: ``AutoTokenizer`` / ``AutoModel.from_pretrained`` from the
    resolved local folder (``local_files_only=True``; ``trust_remote_code`` from the spec;
    ``spec.model_kwargs`` passed on).

    Raises:
        ModelNotAvailableError: weights not available locally, or a dimension mismatch.
    """
    folder, tokenizer, model = load_tokenizer_and_model(spec, profile, AutoModel)
    return build_transformer_text_encoder(spec, profile, folder, tokenizer, model)
