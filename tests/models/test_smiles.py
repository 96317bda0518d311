"""SMILES encoders: canonicalisation, rxnfp's regex tokenizer, the smiles-bert family on a
tiny random BERT over rxnfp's vocabulary, and the molformer family's loader path."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from models.errors import ModelInputError, ModelNotAvailableError
from models.loader import load_encoder
from models.smiles import SMILES_REGEX_PATTERN, build_smiles_tokenizer, canonicalize_smiles
from models.specs import EncoderSpec, InvalidSmilesPolicy
from models.text import TransformerTextEncoder
from tests.models.helpers import ProfileFactory
from tests.models.tiny_models import HIDDEN

pytestmark = pytest.mark.unit

ASPIRIN = "CC(=O)Oc1ccccc1C(=O)O"
ASPIRIN_KEKULE = "OC(=O)C1=CC=CC=C1OC(C)=O"
SMILES = [
    ASPIRIN,
    "COc1cc2ncnc(Nc3ccc(F)c(Cl)c3)c2cc1OCCCN1CCOCC1",
    "C[C@@H](N)C(=O)O",
    "[Na+].[Cl-]",
    "C#Cc1cccc(Nc2ncnc3cc(OCCOC)c(OCCOC)cc23)c1",
]


def smiles_spec(source: Path, **fields: object) -> EncoderSpec:
    base: dict[str, object] = {
        "role": "molformer",
        "family": "smiles-bert",
        "source": str(source),
        "dimension": HIDDEN,
        "pooling": "cls",
        "max_tokens": 512,
        "modality": "smiles",
    }
    return EncoderSpec(**{**base, **fields})


@pytest.fixture(scope="module")
def encoder(tiny_smiles_folder: Path, make_profile: ProfileFactory) -> TransformerTextEncoder:
    loaded = load_encoder(smiles_spec(tiny_smiles_folder), make_profile(max_batch_size=2))
    assert isinstance(loaded, TransformerTextEncoder)
    return loaded


class TestCanonicalisation:
    def test_equivalent_smiles_canonicalise_alike(self) -> None:
        policy = InvalidSmilesPolicy.ENCODE_RAW
        assert canonicalize_smiles(ASPIRIN_KEKULE, policy) == canonicalize_smiles(ASPIRIN, policy)

    def test_unparseable_smiles_is_kept_under_encode_raw(self) -> None:
        assert canonicalize_smiles("  gefitinib ", InvalidSmilesPolicy.ENCODE_RAW) == "gefitinib"

    @pytest.mark.parametrize("bad", ["C1CC(", "gefitinib", "   "])
    def test_unparseable_smiles_raises_under_error(self, bad: str) -> None:
        with pytest.raises(ModelInputError, match="not a valid SMILES"):
            canonicalize_smiles(bad, InvalidSmilesPolicy.ERROR)


class TestSmilesTokenizer:
    @pytest.mark.parametrize("smiles", [*SMILES, "CC(=O)O.OCC>>CC(=O)OCC", "C%12CC%12"])
    def test_tokens_match_rxnfp_regex(self, tiny_smiles_folder: Path, smiles: str) -> None:
        tokenizer = build_smiles_tokenizer(tiny_smiles_folder / "vocab.txt")
        tokens = tokenizer.convert_ids_to_tokens(tokenizer(smiles)["input_ids"])
        assert tokens == ["[CLS]", *re.findall(SMILES_REGEX_PATTERN, smiles), "[SEP]"]

    def test_unmatched_characters_become_unknown(self, tiny_smiles_folder: Path) -> None:
        tokenizer = build_smiles_tokenizer(tiny_smiles_folder / "vocab.txt")
        assert "[UNK]" in tokenizer.convert_ids_to_tokens(tokenizer("gefitinib")["input_ids"])


class TestSmilesBertEncoder:
    def test_shape_dtype_norm(self, encoder: TransformerTextEncoder) -> None:
        vectors = encoder.encode(SMILES)
        assert vectors.shape == (len(SMILES), HIDDEN) and vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    def test_batched_equals_one_by_one(self, encoder: TransformerTextEncoder) -> None:
        single = np.stack([encoder.encode([smiles])[0] for smiles in SMILES])
        np.testing.assert_allclose(encoder.encode(SMILES), single, atol=1e-5)

    def test_equivalent_smiles_embed_alike(self, encoder: TransformerTextEncoder) -> None:
        vectors = encoder.encode([ASPIRIN, ASPIRIN_KEKULE])
        np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)

    def test_invalid_smiles_falls_back_to_raw_text(self, encoder: TransformerTextEncoder) -> None:
        assert encoder.encode(["gefitinib", "C1CC("]).shape == (2, HIDDEN)

    def test_long_smiles_is_truncated(self, encoder: TransformerTextEncoder) -> None:
        assert encoder.encode(["C" * 5000]).shape == (1, HIDDEN)

    def test_error_policy_raises(
        self, tiny_smiles_folder: Path, make_profile: ProfileFactory
    ) -> None:
        strict = load_encoder(
            smiles_spec(tiny_smiles_folder, invalid_smiles="error"), make_profile()
        )
        with pytest.raises(ModelInputError):
            strict.encode([ASPIRIN, "C1CC("])

    def test_onnx_equals_torch(
        self, tiny_smiles_folder: Path, make_profile: ProfileFactory
    ) -> None:
        spec = smiles_spec(tiny_smiles_folder)
        expected = load_encoder(spec, make_profile()).encode(SMILES)
        actual = load_encoder(spec, make_profile(runtime="onnx")).encode(SMILES)
        np.testing.assert_allclose(actual, expected, atol=1e-4)

    def test_missing_vocabulary_raises_model_not_available(
        self, tmp_path: Path, make_profile: ProfileFactory
    ) -> None:
        with pytest.raises(ModelNotAvailableError, match="vocabulary"):
            load_encoder(smiles_spec(tmp_path), make_profile())


class TestMolformerFamily:
    def test_default_path_refuses_a_non_molformer_folder(
        self, tiny_bert_folder: Path, make_profile: ProfileFactory
    ) -> None:
        spec = EncoderSpec(
            role="molformer",
            family="molformer",
            source=str(tiny_bert_folder),
            dimension=HIDDEN,
            modality="smiles",
        )
        with pytest.raises(ModelNotAvailableError, match="not 'molformer'"):
            load_encoder(spec, make_profile())

    def test_opt_in_remote_code_loads_through_auto_classes_with_mean_pooling(
        self, tiny_bert_folder: Path, make_profile: ProfileFactory
    ) -> None:
        spec = EncoderSpec(
            role="molformer",
            family="molformer",
            source=str(tiny_bert_folder),
            dimension=HIDDEN,
            modality="smiles",
            trust_remote_code=True,
        )
        encoder = load_encoder(spec, make_profile())
        vectors = encoder.encode([ASPIRIN, ASPIRIN_KEKULE, "gefitinib"])
        assert vectors.shape == (3, HIDDEN)
        np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)
