"""MoLFormer-XL in plain torch / transformers primitives: no hub remote code.

Sources (read, not copied):
  - Ross et al., "Large-scale chemical language representations capture molecular
    structure and properties", Nat. Mach. Intell. 4, 1256-1264 (2022), arXiv:2106.09553:
    a BERT-style post-LayerNorm encoder whose attention is *linear* attention with a
    generalized random feature map ``phi(x) = relu(x @ W)`` (Choromanski et al. / Performer
    style, ``num_random_features`` columns, ``W`` drawn block-orthogonal) and *rotary*
    position embeddings (Su et al., RoFormer) applied to queries and keys before the
    feature map; there is no learned position table.
  - The published checkpoint ``ibm/MoLFormer-XL-both-10pct`` (model card
    https://huggingface.co/ibm/MoLFormer-XL-both-10pct): ``config.json`` keys
    (``vocab_size`` 2362, ``hidden_size`` 768, ``num_hidden_layers`` 12,
    ``num_attention_heads`` 12, ``intermediate_size`` 768, ``hidden_act`` gelu,
    ``hidden_dropout_prob``, ``embedding_dropout_prob``, ``max_position_embeddings`` 202,
    ``layer_norm_eps`` 1e-12, ``linear_attention_eps`` 1e-6, ``num_random_features`` 32,
    ``feature_map_kernel`` relu, ``deterministic_eval``, ``pad_token_id`` 2), its weights
    ``model.safetensors`` / ``pytorch_model.bin`` saved from ``MolformerForMaskedLM``
    (base-model keys under the ``molformer.`` prefix, MLM head under ``lm_head.``), and
    its pooler: the attention-masked mean of the final (LayerNorm-ed) hidden state.

State-dict layout (per layer ``N``; the published file prefixes each with ``molformer.``)::

    embeddings.word_embeddings.weight                      (vocab, hidden)
    encoder.layer.N.attention.self.{query,key,value}.{weight,bias}
    encoder.layer.N.attention.self.feature_map.weight      (head_dim, num_random_features)
    encoder.layer.N.attention.output.dense.{weight,bias}
    encoder.layer.N.attention.output.LayerNorm.{weight,bias}
    encoder.layer.N.intermediate.dense.{weight,bias}       (intermediate, hidden)
    encoder.layer.N.output.dense.{weight,bias}             (hidden, intermediate)
    encoder.layer.N.output.LayerNorm.{weight,bias}
    LayerNorm.{weight,bias}                                 final LayerNorm

Loading a published folder: :mod:`models.molformer_checkpoint`.

Inference is always deterministic: the stored feature-map matrix is used as is (what the
model card's ``deterministic_eval=True`` selects); redrawing random features is a training
device and is not implemented. The linear-attention sums run in float32 whatever the
module dtype (fp16/bf16 sums over a sequence can overflow or lose precision).

Not verified offline (no network, the 187 MB checkpoint is not here): that the published
weight file holds exactly the key names above (they were read from the hub's modeling
code and config as stored by the search corpus, and the presence of ``feature_map.weight``
is inferred from ``deterministic_eval`` giving fixed outputs), the rotary base (10000, not
a config key), and numerical agreement with the hub implementation on the real weights.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn
from transformers import PretrainedConfig, PreTrainedModel
from transformers.activations import ACT2FN
from transformers.modeling_outputs import BaseModelOutputWithPooling

__all__ = ["BASE_MODEL_PREFIX", "MolformerConfig", "MolformerModel", "masked_mean_pool"]

BASE_MODEL_PREFIX = "molformer"
"""Prefix of the base-model keys in the published (``MolformerForMaskedLM``) checkpoint."""

ROTARY_BASE = 10000.0
"""RoFormer's frequency base; MoLFormer's config has no key for it."""


class MolformerConfig(PretrainedConfig):
    """The published ``config.json`` of MoLFormer-XL, keys unchanged (defaults: the
    ``ibm/MoLFormer-XL-both-10pct`` values). Unknown keys (``auto_map``,
    ``classifier_*``) are kept as attributes and written back on save.

    Raises:
        ValueError: ``hidden_size`` is not a multiple of ``num_attention_heads``, or the
            rotary head width is odd.
    """

    model_type = "molformer"

    def __init__(
        self,
        vocab_size: int = 2362,
        hidden_size: int = 768,
        num_hidden_layers: int = 12,
        num_attention_heads: int = 12,
        intermediate_size: int = 768,
        hidden_act: str = "gelu",
        hidden_dropout_prob: float = 0.1,
        embedding_dropout_prob: float = 0.2,
        max_position_embeddings: int = 202,
        initializer_range: float = 0.02,
        layer_norm_eps: float = 1e-12,
        linear_attention_eps: float = 1e-6,
        num_random_features: int = 32,
        feature_map_kernel: str = "relu",
        deterministic_eval: bool = False,
        pad_token_id: int = 2,
        **kwargs: Any,
    ):
        super().__init__(pad_token_id=pad_token_id, **kwargs)
        if hidden_size % num_attention_heads:
            raise ValueError(
                f"MoLFormer hidden_size {hidden_size} is not a multiple of "
                f"num_attention_heads {num_attention_heads}"
            )
        if (hidden_size // num_attention_heads) % 2:
            raise ValueError("MoLFormer's rotary embeddings need an even attention head width")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.embedding_dropout_prob = embedding_dropout_prob
        self.max_position_embeddings = max_position_embeddings
        self.initializer_range = initializer_range
        self.layer_norm_eps = layer_norm_eps
        self.linear_attention_eps = linear_attention_eps
        self.num_random_features = num_random_features
        self.feature_map_kernel = feature_map_kernel
        self.deterministic_eval = deterministic_eval

    @property
    def head_dim(self) -> int:
        """Width of one attention head: ``hidden_size // num_attention_heads``."""
        return self.hidden_size // self.num_attention_heads


def masked_mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """MoLFormer's pooler: ``(b, s, h)`` hidden states, ``(b, s)`` 0/1 mask -> ``(b, h)``
    float32 mean over the positions where the mask is 1 (an all-zero row gives zeros)."""
    mask = attention_mask.to(torch.float32).unsqueeze(-1)
    total = (hidden.to(torch.float32) * mask).sum(dim=1)
    return total / mask.sum(dim=1).clamp(min=1e-9)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def _rotary_tables(
    length: int, dim: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos``/``sin`` tables ``(length, dim)`` float32 for positions ``0..length-1``:
    angle ``p * base**(-2i/dim)``, the half-width frequencies repeated twice."""
    exponent = torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim
    frequencies = ROTARY_BASE ** (-exponent)
    positions = torch.arange(length, device=device, dtype=torch.float32)
    angles = positions[:, None] * frequencies[None, :]
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()


def _orthogonal_random_matrix(rows: int, columns: int) -> torch.Tensor:
    """``(rows, columns)`` Gaussian-like matrix built from orthogonal ``rows x rows``
    blocks, each column scaled to the norm of a Gaussian vector (Performer's ORF draw)."""
    blocks = []
    for _ in range(math.ceil(columns / rows)):
        gaussian = torch.randn(rows, rows)
        orthogonal, _ = torch.linalg.qr(gaussian)
        blocks.append(orthogonal * torch.linalg.norm(torch.randn(rows, rows), dim=0))
    return torch.cat(blocks, dim=1)[:, :columns].contiguous()


class MolformerFeatureMap(nn.Module):
    """``phi(x) = kernel(x @ weight)``; ``weight`` ``(head_dim, num_random_features)`` is a
    persistent buffer (stored in the checkpoint, never trained or redrawn here)."""

    def __init__(self, config: MolformerConfig):
        super().__init__()
        self.register_buffer(
            "weight", _orthogonal_random_matrix(config.head_dim, config.num_random_features)
        )
        self.kernel = ACT2FN[config.feature_map_kernel]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., head_dim)`` -> ``(..., num_random_features)`` in ``x``'s dtype (the
        attention passes float32 ``(b, heads, s, head_dim)``)."""
        return self.kernel(x @ self.weight.to(x.dtype))


class MolformerLinearSelfAttention(nn.Module):
    """Rotary + linear attention over ``(b, s, hidden)``; padded keys are dropped from
    both the key-value summary and the normaliser."""

    def __init__(self, config: MolformerConfig):
        super().__init__()
        self.heads = config.num_attention_heads
        self.head_dim = config.head_dim
        self.eps = config.linear_attention_eps
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.feature_map = MolformerFeatureMap(config)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.heads, self.head_dim).transpose(1, 2).float()

    def forward(self, hidden: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        """``hidden`` ``(b, s, hidden)``, ``key_mask`` ``(b, s)`` float 0/1 (0 = padding)
        -> context ``(b, s, hidden)`` in ``hidden``'s dtype; the sums run in float32 and
        the normaliser is clamped at ``linear_attention_eps``."""
        query, key = self._heads(self.query(hidden)), self._heads(self.key(hidden))
        value = self._heads(self.value(hidden))
        cos, sin = _rotary_tables(hidden.shape[1], self.head_dim, hidden.device)
        query = query * cos + _rotate_half(query) * sin
        key = key * cos + _rotate_half(key) * sin
        query_features = self.feature_map(query)  # (b, h, s, m)
        key_features = self.feature_map(key) * key_mask[:, None, :, None]
        summary = torch.einsum("bhsm,bhsd->bhmd", key_features, value)
        normaliser = torch.einsum("bhsm,bhm->bhs", query_features, key_features.sum(dim=2))
        context = torch.einsum("bhsm,bhmd->bhsd", query_features, summary)
        context = context / normaliser.clamp(min=self.eps).unsqueeze(-1)
        batch, _, length, _ = context.shape
        return context.transpose(1, 2).reshape(batch, length, -1).to(hidden.dtype)


class MolformerResidualOutput(nn.Module):
    """``LayerNorm(dropout(dense(x)) + residual)`` (BERT's post-LN sub-layer output)."""

    def __init__(self, config: MolformerConfig, in_features: int):
        super().__init__()
        self.dense = nn.Linear(in_features, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """``x`` ``(b, s, in_features)``, ``residual`` ``(b, s, hidden)`` -> ``(b, s, hidden)``."""
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class MolformerAttention(nn.Module):
    """Self-attention sub-layer: ``self`` (linear attention) + ``output`` (residual LN)."""

    def __init__(self, config: MolformerConfig):
        super().__init__()
        self.self = MolformerLinearSelfAttention(config)
        self.output = MolformerResidualOutput(config, config.hidden_size)

    def forward(self, hidden: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        """``hidden`` ``(b, s, hidden)``, ``key_mask`` ``(b, s)`` float 0/1 ->
        ``(b, s, hidden)``."""
        return self.output(self.self(hidden, key_mask), hidden)


class MolformerIntermediate(nn.Module):
    """Feed-forward expansion: ``act(dense(x))``, ``hidden -> intermediate``."""

    def __init__(self, config: MolformerConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.activation = ACT2FN[config.hidden_act]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(b, s, hidden)`` -> ``(b, s, intermediate)``."""
        return self.activation(self.dense(x))


class MolformerLayer(nn.Module):
    """One encoder block: attention sub-layer, then the feed-forward sub-layer."""

    def __init__(self, config: MolformerConfig):
        super().__init__()
        self.attention = MolformerAttention(config)
        self.intermediate = MolformerIntermediate(config)
        self.output = MolformerResidualOutput(config, config.intermediate_size)

    def forward(self, hidden: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        """``hidden`` ``(b, s, hidden)``, ``key_mask`` ``(b, s)`` float 0/1 ->
        ``(b, s, hidden)``."""
        attended = self.attention(hidden, key_mask)
        return self.output(self.intermediate(attended), attended)


class MolformerEmbeddings(nn.Module):
    """Token embeddings + embedding dropout (positions come from rotary, not a table)."""

    def __init__(self, config: MolformerConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(
            config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id
        )
        self.dropout = nn.Dropout(config.embedding_dropout_prob)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """``input_ids`` ``(b, s)`` int64 -> ``(b, s, hidden)`` in the module dtype."""
        return self.dropout(self.word_embeddings(input_ids))


class MolformerEncoder(nn.Module):
    """``num_hidden_layers`` :class:`MolformerLayer` blocks (``encoder.layer.N``)."""

    def __init__(self, config: MolformerConfig):
        super().__init__()
        self.layer = nn.ModuleList(MolformerLayer(config) for _ in range(config.num_hidden_layers))

    def forward(self, hidden: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        """``hidden`` ``(b, s, hidden)``, ``key_mask`` ``(b, s)`` float 0/1 ->
        ``(b, s, hidden)`` after every layer (no final LayerNorm)."""
        for block in self.layer:
            hidden = block(hidden, key_mask)
        return hidden


class MolformerPreTrainedModel(PreTrainedModel):
    """Config class, key prefix and weight initialisation shared by the MoLFormer models."""

    config_class = MolformerConfig
    base_model_prefix = BASE_MODEL_PREFIX

    def _init_weights(self, module: nn.Module) -> None:
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)


class MolformerModel(MolformerPreTrainedModel):
    """The MoLFormer encoder: embeddings, linear-attention layers, final ``LayerNorm``.

    ``forward(input_ids (b, s) int64, attention_mask (b, s) 0/1 or None)`` returns
    :class:`BaseModelOutputWithPooling`: ``last_hidden_state`` ``(b, s, hidden)`` in the
    module dtype, ``pooler_output`` ``(b, hidden)`` float32, the attention-masked mean of
    ``last_hidden_state`` (:func:`masked_mean_pool`).
    """

    def __init__(self, config: MolformerConfig):
        super().__init__(config)
        self.embeddings = MolformerEmbeddings(config)
        self.encoder = MolformerEncoder(config)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        """The token embedding table, ``(vocab_size, hidden_size)``."""
        return self.embeddings.word_embeddings

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        """Replace the token embedding table with ``value``."""
        self.embeddings.word_embeddings = value

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        **_: Any,
    ) -> BaseModelOutputWithPooling:
        """``input_ids`` ``(b, s)`` int64, ``attention_mask`` ``(b, s)`` 0/1 (None: all
        ones; other keyword arguments are ignored) -> ``last_hidden_state``
        ``(b, s, hidden)`` in the module dtype and ``pooler_output`` ``(b, hidden)``
        float32, the masked mean (:func:`masked_mean_pool`)."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        key_mask = attention_mask.to(torch.float32)
        hidden = self.encoder(self.embeddings(input_ids), key_mask)
        hidden = self.LayerNorm(hidden)
        return BaseModelOutputWithPooling(
            last_hidden_state=hidden, pooler_output=masked_mean_pool(hidden, attention_mask)
        )
