"""SPEC A-3 structure search, pure parts: which tokens are structures, standardisation
(salts and charges to the parent), Morgan fingerprints and Tanimoto, the store's sparse
encoding, structure recall ordering on the in-memory store, and R-INT-1 delegating to
all of it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rdkit import Chem, DataStructs
from rdkit.Chem import rdFingerprintGenerator

from pipeline.evaluation.recording import RecordingVectorStore
from pipeline.intent import detect_retrieval_intent, looks_like_smiles, smiles_tokens
from pipeline.ports import VectorStore
from pipeline.schema import Node
from pipeline.stores.milvus import _tanimoto_from_cosine
from pipeline.stores.milvus_schema import (
    FINGERPRINT_BITS_FIELD,
    FINGERPRINT_FIELD,
    INCHIKEY_FIELD,
    NO_STRUCTURE_DIMENSION,
    build_schema,
    collection_info_from_description,
    fingerprint_to_sparse,
    node_to_row,
    structure_fields,
)
from pipeline.structure import (
    COUNTER_ION_SMILES,
    FINGERPRINT_BYTES,
    fingerprint_on_bits,
    is_structure_token,
    morgan_fingerprint,
    standardize,
    structure_tokens,
    tanimoto,
    trim_token,
)
from pipeline.structure_search import structure_recall
from tests.support.fakes import InMemoryVectorStore

pytestmark = pytest.mark.unit

ERLOTINIB = "COCCOc1cc2ncnc(Nc3cccc(C#C)c3)c2cc1OCCOC"
ERLOTINIB_HCL = f"{ERLOTINIB}.Cl"
LAPATINIB = "CS(=O)(=O)CCNCc1ccc(-c2ccc3ncnc(Nc4ccc(OCc5cccc(F)c5)c(Cl)c4)c3c2)o1"
TOSIC_ACID = "Cc1ccc(S(=O)(=O)O)cc1"
ASPIRIN = "CC(=O)Oc1ccccc1C(=O)O"
IBUPROFEN = "CC(C)Cc1ccc(C(C)C(=O)O)cc1"


class TestStructureTokens:
    @pytest.mark.parametrize(
        "token",
        [
            "OS/PFS",
            "AND/OR",
            "CO",
            "NaCl",
            "IL-6",
            "PD-1",
            "HER2",
            "5-FU",
            "niraparib",
            "osimertinib",
            "COVID-19",
            "NSCLC",
            "CNS",
            "SCC",
            "NOS",
            "BID",
            "ECOG",
            "CCCCC",  # five atoms, no ring
            "[Na+]",
            "",
        ],
    )
    def test_words_and_small_fragments_are_not_structures(self, token):
        assert not is_structure_token(token)

    @pytest.mark.parametrize(
        "token",
        [
            ERLOTINIB,
            ERLOTINIB_HCL,
            f"{LAPATINIB}.{TOSIC_ACID}.{TOSIC_ACID}",
            ASPIRIN,
            "c1ccccc1",
            "C1CC1",  # a ring is enough
            "CCOC(C)=O",  # six heavy atoms are enough
            "CN1CCC[C@H]1c1cccnc1",
            "c1ccccc1,",
            "(c1ccccc1).",
            "'CCOC(C)=O'",
        ],
    )
    def test_real_smiles_are_structures(self, token):
        assert is_structure_token(token)

    def test_structure_tokens_trims_and_keeps_query_order(self):
        query = f"compare ({ASPIRIN}) with {ERLOTINIB_HCL}. AND/OR OS/PFS"
        assert structure_tokens(query) == [ASPIRIN, ERLOTINIB_HCL]

    @pytest.mark.parametrize(
        ("token", "trimmed"),
        [
            ("(CCO)", "CCO"),
            ("CCOC(C)=O,", "CCOC(C)=O"),
            ("(CC(=O)O", "CC(=O)O"),
            ("C1CC1)", "C1CC1"),
        ],
    )
    def test_trim_token_drops_prose_punctuation_and_wrapping_parentheses(self, token, trimmed):
        assert trim_token(token) == trimmed


class TestStandardize:
    def test_unparsable_input_gives_none(self):
        assert standardize("not a smiles") is None
        assert standardize("") is None
        assert standardize("C1CC") is None  # unclosed ring

    def test_salt_has_the_free_base_as_parent(self):
        salt, base = standardize(ERLOTINIB_HCL), standardize(ERLOTINIB)
        assert salt is not None and base is not None
        assert salt.inchikey == base.inchikey
        assert salt.canonical_smiles == base.canonical_smiles
        assert salt.fragments_removed == 1 and not salt.is_source_parent
        assert base.is_source_parent
        assert salt.source_smiles != base.source_smiles

    @pytest.mark.parametrize(
        ("salt", "parent"),
        [
            (f"{LAPATINIB}.{TOSIC_ACID}.{TOSIC_ACID}", LAPATINIB),  # ditosylate
            ("CN(C)CCC(c1ccc(Cl)cc1)c1ccccn1.OC(=O)/C=C\\C(=O)O", "CN(C)CCC(c1ccc(Cl)cc1)c1ccccn1"),
            ("C1CNCCN1.OC(=O)CC(O)(CC(=O)O)C(=O)O", "C1CNCCN1"),  # citrate > piperazine
            ("O.O.CC(N)Cc1ccccc1.OS(=O)(=O)O", "CC(N)Cc1ccccc1"),  # hydrate + sulfate
        ],
    )
    def test_counter_ions_and_solvents_are_stripped(self, salt, parent):
        assert standardize(salt).inchikey == standardize(parent).inchikey

    @pytest.mark.parametrize(
        ("charged", "neutral"),
        [
            ("CCCC(CCC)C(=O)[O-].[Na+]", "CCCC(CCC)C(=O)O"),  # sodium valproate
            ("CC(C)Cc1ccc(C(C)C(=O)[O-])cc1.[K+]", IBUPROFEN),
            ("C[NH+](C)CCC(c1ccc(Cl)cc1)c1ccccn1.[Cl-]", "CN(C)CCC(c1ccc(Cl)cc1)c1ccccn1"),
        ],
    )
    def test_charged_forms_are_neutralised(self, charged, neutral):
        structure = standardize(charged)
        assert structure.inchikey == standardize(neutral).inchikey
        assert Chem.GetFormalCharge(Chem.MolFromSmiles(structure.canonical_smiles)) == 0
        assert structure.neutralised

    def test_permanent_cation_keeps_its_charge(self):
        carbachol = standardize("C[N+](C)(C)CCOC(N)=O.[Cl-]")
        assert carbachol.canonical_smiles == "C[N+](C)(C)CCOC(N)=O"

    def test_a_lone_counter_ion_is_its_own_parent(self):
        sodium_citrate = standardize("O=C([O-])CC(O)(CC(=O)[O-])C(=O)[O-].[Na+].[Na+].[Na+]")
        assert sodium_citrate.canonical_smiles == "O=C(O)CC(O)(CC(=O)O)C(=O)O"

    def test_counts_and_inchikey_shape(self):
        structure = standardize(ASPIRIN)
        assert (structure.heavy_atoms, structure.rings) == (13, 1)
        assert len(structure.inchikey) == 27 and structure.inchikey.count("-") == 2

    def test_randomised_smiles_give_the_same_parent(self):
        mol = Chem.MolFromSmiles(ERLOTINIB_HCL)
        keys = {
            standardize(smiles).inchikey
            for smiles in Chem.MolToRandomSmilesVect(mol, 10, randomSeed=7)
        }
        assert keys == {standardize(ERLOTINIB).inchikey}

    def test_counter_ion_table_parses(self):
        for smiles in COUNTER_ION_SMILES:
            assert Chem.MolFromSmiles(smiles) is not None, smiles


class TestFingerprint:
    def test_morgan_2048_packed_little_endian_like_milvus_binary_vectors(self):
        mol = Chem.MolFromSmiles(standardize(ERLOTINIB).canonical_smiles)
        packed = morgan_fingerprint(standardize(ERLOTINIB))
        assert isinstance(packed, bytes) and len(packed) == FINGERPRINT_BYTES == 256
        bits = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
        expected = bits.GetFingerprintAsNumPy(mol)
        on = fingerprint_on_bits(packed)
        assert on.tolist() == np.flatnonzero(expected).tolist()
        first = int(on[0])
        assert packed[first // 8] & (1 << (first % 8))  # Milvus docs: 1 << (i % 8)
        assert morgan_fingerprint(mol) == packed

    def test_tanimoto_matches_rdkit(self):
        generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
        smiles = [ERLOTINIB, LAPATINIB, ASPIRIN, IBUPROFEN, "c1ccccc1O"]
        for a in smiles:
            for b in smiles:
                mol_a = Chem.MolFromSmiles(standardize(a).canonical_smiles)
                mol_b = Chem.MolFromSmiles(standardize(b).canonical_smiles)
                expected = DataStructs.TanimotoSimilarity(
                    generator.GetFingerprint(mol_a), generator.GetFingerprint(mol_b)
                )
                ours = tanimoto(morgan_fingerprint(mol_a), morgan_fingerprint(mol_b))
                assert ours == pytest.approx(expected)

    def test_tanimoto_edge_cases(self):
        empty = bytes(FINGERPRINT_BYTES)
        assert tanimoto(empty, empty) == 0.0
        aspirin = morgan_fingerprint(standardize(ASPIRIN))
        assert tanimoto(aspirin, aspirin) == 1.0
        with pytest.raises(ValueError, match="256 bytes"):
            tanimoto(b"\x00", aspirin)


class TestStoreEncoding:
    def test_sparse_fingerprint_is_unit_length_on_the_on_bits(self):
        packed = morgan_fingerprint(standardize(ASPIRIN))
        sparse = fingerprint_to_sparse(packed)
        assert sorted(sparse) == fingerprint_on_bits(packed).tolist()
        assert math.isclose(sum(value * value for value in sparse.values()), 1.0)
        assert fingerprint_to_sparse(bytes(FINGERPRINT_BYTES)) == {NO_STRUCTURE_DIMENSION: 1.0}

    def test_structure_fields_from_metadata(self):
        fields = structure_fields({"smiles": ERLOTINIB_HCL})
        assert fields[INCHIKEY_FIELD] == standardize(ERLOTINIB).inchikey
        assert fields[FINGERPRINT_BITS_FIELD] == len(fields[FINGERPRINT_FIELD])
        none = structure_fields({"smiles": "not a smiles"})
        assert none == {
            FINGERPRINT_FIELD: {NO_STRUCTURE_DIMENSION: 1.0},
            FINGERPRINT_BITS_FIELD: 0,
            INCHIKEY_FIELD: "",
        }

    def test_rows_of_structure_collections_only_carry_structure_fields(self):
        node = Node(node_id="n1", text="aspirin", metadata={"smiles": ASPIRIN})
        vector = np.ones(4, dtype=np.float32)
        assert INCHIKEY_FIELD not in node_to_row(node, vector, None, hybrid=False)
        row = node_to_row(node, vector, None, hybrid=False, structure=True)
        assert row[INCHIKEY_FIELD] == standardize(ASPIRIN).inchikey
        assert row["metadata"]["smiles"] == ASPIRIN

    def test_description_tells_structure_collections(self):
        def description(schema):
            return {
                "collection_name": "chemical",
                "fields": [{"name": field.name, "params": field.params} for field in schema.fields],
            }

        plain = collection_info_from_description(description(build_schema(8, hybrid=False)))
        structure = collection_info_from_description(
            description(build_schema(8, hybrid=False, structure=True))
        )
        assert (plain.structure, structure.structure) == (False, True)
        assert (structure.dimension, structure.hybrid) == (8, False)

    @pytest.mark.parametrize(("query_bits", "row_bits", "shared"), [(40, 40, 40), (40, 55, 31)])
    def test_tanimoto_from_cosine_recovers_the_exact_value(self, query_bits, row_bits, shared):
        cosine = np.float32(shared / math.sqrt(query_bits * row_bits))
        expected = shared / (query_bits + row_bits - shared)
        assert _tanimoto_from_cosine(float(cosine), query_bits, row_bits) == expected
        assert _tanimoto_from_cosine(0.0, query_bits, row_bits) == 0.0


def _compound(node_id: str, smiles: str) -> Node:
    return Node(
        node_id=node_id,
        text=node_id,
        metadata={"smiles": smiles, "document_id": node_id, "kb_name": "kb"},
    )


class TestStructureRecall:
    @pytest.fixture
    async def store(self):
        store = InMemoryVectorStore()
        nodes = [
            _compound("a-erlotinib-hcl", ERLOTINIB_HCL),
            _compound("b-erlotinib-mesylate", f"{ERLOTINIB}.CS(=O)(=O)O"),
            _compound("c-erlotinib", ERLOTINIB),
            _compound("d-gefitinib", "COc1cc2ncnc(Nc3ccc(F)c(Cl)c3)c2cc1OCCCN1CCOCC1"),
            _compound("e-aspirin", ASPIRIN),
            _compound("f-no-structure", ""),
        ]
        await store.upsert("chemical", nodes, np.ones((len(nodes), 4), dtype=np.float32))
        return store

    async def test_exact_parent_first_then_tanimoto_neighbours(self, store):
        hits = await structure_recall(store, "chemical", [ERLOTINIB], depth=10)
        ids = [hit.node_id for hit in hits]
        # the free base typed as such, then the salt forms by node id, then neighbours
        assert ids[:3] == ["c-erlotinib", "a-erlotinib-hcl", "b-erlotinib-mesylate"]
        assert ids[3] == "d-gefitinib"
        assert "f-no-structure" not in ids
        assert [hit.score_parts["structure"] for hit in hits[:3]] == [1.0, 1.0, 1.0]
        neighbours = hits[3:]
        assert all(0 < hit.score < 1 for hit in neighbours)
        assert [hit.score for hit in neighbours] == sorted(
            (hit.score for hit in neighbours), reverse=True
        )
        assert all(hit.score_parts["structure"] == hit.score for hit in hits)
        assert len(ids) == len(set(ids))

    async def test_the_typed_salt_form_comes_first_then_the_free_base(self, store):
        mol = Chem.MolFromSmiles(ERLOTINIB_HCL)
        (randomised,) = Chem.MolToRandomSmilesVect(mol, 1, randomSeed=3)
        hits = await structure_recall(store, "chemical", [randomised], depth=2)
        assert [hit.node_id for hit in hits] == ["a-erlotinib-hcl", "c-erlotinib"]

    async def test_unparsable_or_missing_structures_recall_nothing(self, store):
        assert await structure_recall(store, "chemical", ["OS/PFS", "xyz"], depth=5) == []
        assert await structure_recall(store, "chemical", [], depth=5) == []
        with pytest.raises(ValueError, match="depth"):
            await structure_recall(store, "chemical", [ASPIRIN], depth=0)

    async def test_recording_store_records_structure_searches(self, store):
        recording_store = RecordingVectorStore(store)
        assert isinstance(recording_store, VectorStore)
        with recording_store.recording() as recording:
            await structure_recall(recording_store, "chemical", [ASPIRIN], depth=3)
        assert {call.kind for call in recording.calls} == {"structure"}
        assert len(recording.calls) == 2


class TestIntentDelegation:
    @pytest.mark.parametrize(
        "query",
        [
            "OS/PFS benefit of niraparib",
            "AND/OR criteria for trial eligibility",
            "IL-6 and PD-1 in HER2 positive disease",
            "5-FU dosing",
        ],
    )
    def test_abbreviations_are_not_the_chemical_workflow(self, vocabulary, query):
        assert detect_retrieval_intent(query, vocabulary).workflow != "chemical"
        assert smiles_tokens(query) == []

    @pytest.mark.parametrize("query", [f"similar to {ERLOTINIB}", f"{ERLOTINIB_HCL} targets"])
    def test_real_smiles_are_the_chemical_workflow(self, vocabulary, query):
        assert detect_retrieval_intent(query, vocabulary).workflow == "chemical"
        assert looks_like_smiles(query.split()[-1] if "similar" in query else query.split()[0])
