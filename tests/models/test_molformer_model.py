"""The built-in MoLFormer (no remote code): published key names, save/load round trip,
linear attention and masked-mean pooling against hand computations, bf16, the tokenizer
and the service loader on a tiny random model in the published folder layout."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

import models.molformer as molformer_module
from models.errors import ModelNotAvailableError
from models.loader import load_encoder
from models.molformer_checkpoint import encoder_state_dict, load_molformer_model
from models.molformer_model import MolformerConfig, MolformerModel, masked_mean_pool
from models.molformer_tokenizer import build_molformer_tokenizer
from models.specs import EncoderSpec
from models.text import TransformerTextEncoder
from tests.models import tiny_models
from tests.models.helpers import ProfileFactory
from tests.models.tiny_models import HIDDEN

pytestmark = pytest.mark.unit

ASPIRIN = "CC(=O)Oc1ccccc1C(=O)O"
ASPIRIN_KEKULE = "OC(=O)C1=CC=CC=C1OC(C)=O"
LAYERS, HEADS, FEATURES, VOCAB, INTERMEDIATE = 2, 4, 8, 40, 48

# The base-model keys of ibm/MoLFormer-XL-both-10pct (hub modeling_molformer.py module
# names; the published file stores them under "molformer." next to the MLM head).
PUBLISHED_LAYER_KEYS = (
    "attention.self.query.weight",
    "attention.self.query.bias",
    "attention.self.key.weight",
    "attention.self.key.bias",
    "attention.self.value.weight",
    "attention.self.value.bias",
    "attention.self.feature_map.weight",
    "attention.output.dense.weight",
    "attention.output.dense.bias",
    "attention.output.LayerNorm.weight",
    "attention.output.LayerNorm.bias",
    "intermediate.dense.weight",
    "intermediate.dense.bias",
    "output.dense.weight",
    "output.dense.bias",
    "output.LayerNorm.weight",
    "output.LayerNorm.bias",
)
PUBLISHED_MODEL_KEYS = ("embeddings.word_embeddings.weight", "LayerNorm.weight", "LayerNorm.bias")
PUBLISHED_HEAD_KEYS = (
    "lm_head.transform.dense.weight",
    "lm_head.transform.dense.bias",
    "lm_head.transform.LayerNorm.weight",
    "lm_head.transform.LayerNorm.bias",
    "lm_head.decoder.weight",
)


def published_encoder_keys(layers: int = LAYERS) -> set[str]:
    keys = set(PUBLISHED_MODEL_KEYS)
    for index in range(layers):
        keys |= {f"encoder.layer.{index}.{name}" for name in PUBLISHED_LAYER_KEYS}
    return keys


def published_shape(key: str) -> tuple[int, ...]:
    """Shape of a published key for the tiny config (hidden 32, 4 heads of 8)."""
    if key.endswith("word_embeddings.weight") or key == "lm_head.decoder.weight":
        return (VOCAB, HIDDEN)
    if key.endswith("feature_map.weight"):
        return (HIDDEN // HEADS, FEATURES)
    if "intermediate.dense" in key:
        return (INTERMEDIATE, HIDDEN) if key.endswith("weight") else (INTERMEDIATE,)
    if key.endswith("output.dense.weight") and "attention" not in key:
        return (HIDDEN, INTERMEDIATE)
    if key.endswith(("query.weight", "key.weight", "value.weight", "dense.weight")):
        return (HIDDEN, HIDDEN)
    return (HIDDEN,)


def tiny_config(**fields: object) -> MolformerConfig:
    base: dict[str, object] = {
        "vocab_size": VOCAB,
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "intermediate_size": INTERMEDIATE,
        "num_random_features": FEATURES,
        "max_position_embeddings": 64,
    }
    return MolformerConfig(**{**base, **fields})


def tiny_model(seed: int = 0) -> MolformerModel:
    torch.manual_seed(seed)
    return MolformerModel(tiny_config()).eval()


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Three rows of 9 tokens; row 1 has 3 padding positions, row 2 has 5."""
    generator = torch.Generator().manual_seed(7)
    ids = torch.randint(4, VOCAB, (3, 9), generator=generator)
    mask = torch.ones(3, 9, dtype=torch.long)
    mask[1, 6:] = 0
    mask[2, 4:] = 0
    ids[mask == 0] = 2
    return ids, mask


class TestPublishedLayout:
    def test_save_pretrained_round_trip_keeps_names_and_outputs(self, tmp_path: Path) -> None:
        model = tiny_model()
        assert set(model.state_dict()) == published_encoder_keys()
        model.save_pretrained(tmp_path)
        loaded = load_molformer_model(tmp_path)
        ids, mask = batch()
        with torch.no_grad():
            before, after = model(ids, attention_mask=mask), loaded(ids, attention_mask=mask)
        assert torch.equal(before.last_hidden_state, after.last_hidden_state)
        assert torch.equal(before.pooler_output, after.pooler_output)
        assert loaded.config.num_random_features == FEATURES
        assert loaded.config.linear_attention_eps == 1e-6

    @pytest.mark.parametrize("file_name", ["model.safetensors", "pytorch_model.bin"])
    def test_published_key_names_load_with_nothing_missing_or_unexpected(
        self, tmp_path: Path, file_name: str
    ) -> None:
        generator = torch.Generator().manual_seed(3)
        names = [f"molformer.{key}" for key in published_encoder_keys()] + list(PUBLISHED_HEAD_KEYS)
        state = {
            name: torch.randn(published_shape(name.removeprefix("molformer.")), generator=generator)
            for name in names
        }
        bare = encoder_state_dict(state)
        assert set(bare) == published_encoder_keys()
        result = MolformerModel(tiny_config()).load_state_dict(bare, strict=True)
        assert not result.missing_keys and not result.unexpected_keys

        tiny_config().save_pretrained(tmp_path)
        if file_name.endswith(".safetensors"):
            save_file(state, tmp_path / file_name)
        else:
            torch.save(state, tmp_path / file_name)
        loaded = load_molformer_model(tmp_path)
        weight = "encoder.layer.1.attention.self.feature_map.weight"
        assert torch.equal(loaded.state_dict()[weight], state[f"molformer.{weight}"])

    def test_missing_or_foreign_keys_are_an_error(self, tmp_path: Path) -> None:
        state = dict(tiny_model().state_dict())
        state.pop("encoder.layer.0.attention.self.feature_map.weight")
        state["encoder.layer.0.attention.self.rotary.inv_freq"] = torch.ones(4)
        tiny_config().save_pretrained(tmp_path)
        save_file(state, tmp_path / "model.safetensors")
        with pytest.raises(ValueError, match=r"feature_map\.weight.*inv_freq"):
            load_molformer_model(tmp_path)

    def test_a_non_molformer_config_is_an_error(self, tiny_bert_folder: Path) -> None:
        with pytest.raises(ValueError, match="not 'molformer'"):
            load_molformer_model(tiny_bert_folder)


class TestForward:
    def test_shapes_and_masked_mean_pooling(self) -> None:
        model = tiny_model()
        ids, mask = batch()
        with torch.no_grad():
            output = model(ids, attention_mask=mask)
        assert output.last_hidden_state.shape == (3, 9, HIDDEN)
        assert output.pooler_output.shape == (3, HIDDEN)
        assert output.pooler_output.dtype == torch.float32
        hidden = output.last_hidden_state
        for row, length in enumerate(mask.sum(dim=1).tolist()):
            expected = hidden[row, :length].mean(dim=0)
            torch.testing.assert_close(output.pooler_output[row], expected)
        torch.testing.assert_close(masked_mean_pool(hidden, mask), output.pooler_output)

    def test_padding_does_not_change_a_row(self) -> None:
        model = tiny_model()
        ids, mask = batch()
        with torch.no_grad():
            padded = model(ids, attention_mask=mask)
            alone = model(ids[2:3, :4], attention_mask=mask[2:3, :4])
        torch.testing.assert_close(padded.last_hidden_state[2, :4], alone.last_hidden_state[0])
        torch.testing.assert_close(padded.pooler_output[2], alone.pooler_output[0])

    def test_linear_attention_equals_its_quadratic_form(self) -> None:
        """Paper: attention weights ``phi(q_i).phi(k_j) / sum_j phi(q_i).phi(k_j)`` with
        rotary-rotated q, k and padded keys excluded."""
        model = tiny_model()
        attention = model.encoder.layer[0].attention.self
        hidden = torch.randn(2, 6, HIDDEN, generator=torch.Generator().manual_seed(1))
        mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]], dtype=torch.float32)
        with torch.no_grad():
            actual = attention(hidden, mask)
            head = HIDDEN // HEADS
            q = attention.query(hidden).view(2, 6, HEADS, head).transpose(1, 2)
            k = attention.key(hidden).view(2, 6, HEADS, head).transpose(1, 2)
            v = attention.value(hidden).view(2, 6, HEADS, head).transpose(1, 2)
            position = torch.arange(6, dtype=torch.float32)[:, None]
            frequency = 10000.0 ** (-torch.arange(0, head, 2, dtype=torch.float32) / head)
            angle = torch.cat([position * frequency] * 2, dim=-1)

            def rotate(x: torch.Tensor) -> torch.Tensor:
                half = torch.cat([-x[..., head // 2 :], x[..., : head // 2]], dim=-1)
                return x * angle.cos() + half * angle.sin()

            weight = attention.feature_map.weight
            phi_q, phi_k = torch.relu(rotate(q) @ weight), torch.relu(rotate(k) @ weight)
            scores = (phi_q @ phi_k.transpose(-1, -2)) * mask[:, None, None, :]
            probabilities = scores / scores.sum(dim=-1, keepdim=True).clamp(min=1e-6)
            expected = (probabilities @ v).transpose(1, 2).reshape(2, 6, HIDDEN)
        torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)

    def test_bf16_on_cpu_agrees_with_fp32(self) -> None:
        model = tiny_model()
        ids, mask = batch()
        with torch.no_grad():
            reference = model(ids, attention_mask=mask).pooler_output
            half = model.to(torch.bfloat16)(ids, attention_mask=mask)
        assert half.last_hidden_state.dtype == torch.bfloat16
        assert half.pooler_output.dtype == torch.float32
        cosine = torch.nn.functional.cosine_similarity(reference, half.pooler_output, dim=-1)
        assert float(cosine.min()) > 0.99
        torch.testing.assert_close(half.pooler_output, reference, rtol=0.1, atol=0.1)


@pytest.fixture(scope="module")
def tiny_molformer_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_models.build_tiny_molformer(tmp_path_factory.mktemp("molformer") / "published")


def molformer_spec(source: Path, **fields: object) -> EncoderSpec:
    base: dict[str, object] = {
        "role": "molformer",
        "family": "molformer",
        "source": str(source),
        "dimension": HIDDEN,
        "pooling": "mean",
        "max_tokens": 202,
        "modality": "smiles",
        "model_kwargs": {"deterministic_eval": True},
    }
    return EncoderSpec(**{**base, **fields})


class TestTokenizer:
    def test_regex_tokens_with_bos_eos_and_published_special_ids(
        self, tiny_molformer_folder: Path
    ) -> None:
        tokenizer = build_molformer_tokenizer(tiny_molformer_folder)
        ids = tokenizer("C[C@@H](Cl)Br[Xe]")["input_ids"]
        tokens = tokenizer.convert_ids_to_tokens(ids)
        assert tokens == ["<bos>", "C", "[C@@H]", "(", "Cl", ")", "Br", "<unk>", "<eos>"]
        assert (tokenizer.cls_token_id, tokenizer.sep_token_id) == (0, 1)
        assert (tokenizer.pad_token_id, tokenizer.mask_token_id) == (2, 3)
        assert tokenizer.model_input_names == ["input_ids", "attention_mask"]

    def test_characters_outside_the_regex_are_dropped(self, tiny_molformer_folder: Path) -> None:
        tokenizer = build_molformer_tokenizer(tiny_molformer_folder)
        tokens = tokenizer.tokenize("C C x O")
        assert tokens == ["C", "C", "O"]

    def test_missing_vocabulary_is_an_error(self, tmp_path: Path) -> None:
        with pytest.raises(FileNotFoundError, match=r"vocab\.json"):
            build_molformer_tokenizer(tmp_path)


class TestServiceLoader:
    def test_encodes_smiles_without_remote_code(
        self,
        tiny_molformer_folder: Path,
        make_profile: ProfileFactory,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        def no_remote_code(*_: object, **__: object) -> None:
            raise AssertionError("the remote-code path ran")

        monkeypatch.setattr(molformer_module, "load_tokenizer_and_model", no_remote_code)
        encoder = load_encoder(molformer_spec(tiny_molformer_folder), make_profile())
        assert isinstance(encoder, TransformerTextEncoder)
        vectors = encoder.encode([ASPIRIN, ASPIRIN_KEKULE, "C[C@@H](N)C(=O)O", "[Na+].[Cl-]"])
        assert vectors.shape == (4, HIDDEN)
        assert vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)
        single = encoder.encode([ASPIRIN])
        np.testing.assert_allclose(single[0], vectors[0], atol=1e-5)

    def test_onnx_export_agrees_with_torch(
        self, tiny_molformer_folder: Path, make_profile: ProfileFactory
    ) -> None:
        smiles = [ASPIRIN, "C[C@@H](N)C(=O)O", "[Na+].[Cl-]"]
        torch_vectors = load_encoder(molformer_spec(tiny_molformer_folder), make_profile())
        onnx_vectors = load_encoder(
            molformer_spec(tiny_molformer_folder, runtime="onnx"), make_profile()
        )
        np.testing.assert_allclose(
            onnx_vectors.encode(smiles), torch_vectors.encode(smiles), atol=1e-5
        )

    def test_remote_code_is_opt_in_and_its_import_error_is_wrapped(
        self,
        tiny_molformer_folder: Path,
        make_profile: ProfileFactory,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        def broken_remote_code(*_: object, **__: object) -> None:
            raise ImportError("cannot import name 'find_pruneable_heads_and_indices'")

        monkeypatch.setattr(molformer_module, "load_tokenizer_and_model", broken_remote_code)
        spec = molformer_spec(tiny_molformer_folder, trust_remote_code=True)
        with pytest.raises(ModelNotAvailableError, match="remote code failed"):
            load_encoder(spec, make_profile())

    def test_folder_without_weights_is_not_available(
        self, tmp_path: Path, make_profile: ProfileFactory
    ) -> None:
        tiny_config().save_pretrained(tmp_path)
        with pytest.raises(ModelNotAvailableError, match="no MoLFormer weights"):
            load_encoder(molformer_spec(tmp_path), make_profile())
