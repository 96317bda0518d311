"""SPEC A-3 structure search on real Milvus Lite and PostgreSQL: ChEMBL approved drugs
ingested through the ingest runner into a structure collection, then queried the way
chemists paste structures (atom order randomised, salt forms) through
``structure_recall``. The learned SMILES encoder is not what this tests (tests/models
does), so the runner gets the hashing bag-of-words encoder and stays fast."""

from __future__ import annotations

import csv
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from rdkit import Chem

from deployments.runtime import EmbeddedPostgres
from pipeline.ingest.read_compounds import compound_record
from pipeline.ingest.runner import IngestRunner
from pipeline.schema import Node, ScopeFilter
from pipeline.settings import PipelineSettings
from pipeline.stores.milvus import MilvusVectorStore
from pipeline.stores.registry import PostgresDocumentRegistry
from pipeline.structure import morgan_fingerprint, standardize, tanimoto
from pipeline.structure_search import structure_recall
from pipeline.vocabulary import default_vocabulary
from tests.support.fakes import HashingTextEncoder

pytestmark = [pytest.mark.integration, pytest.mark.slow]

COMPOUNDS = Path(__file__).resolve().parents[3] / "shared/data/compounds/chembl_approved_drugs.csv"
KB = "structure-it"
COLLECTION = "chemical"
SEED = 20240611
SAMPLE = 260
SALT_PAIRS = 30
#: Counter-ions a user may paste with a free base (hydrochloride, maleate, ditosylate).
COUNTER_IONS = ("Cl", "OC(=O)/C=C\\C(=O)O", "Cc1ccc(S(=O)(=O)O)cc1.Cc1ccc(S(=O)(=O)O)cc1")


def _table() -> list[dict[str, str]]:
    if not COMPOUNDS.exists():
        pytest.skip(f"ChEMBL approved-drugs table not found at {COMPOUNDS}")
    with open(COMPOUNDS, encoding="utf-8", newline="") as handle:
        return [row for row in csv.DictReader(handle) if row["pref_name"] and row["smiles"]]


def _choose(rows: list[dict[str, str]]) -> tuple[list[dict], list[tuple[dict, dict]]]:
    """A seeded sample of compounds whose input structure is unique in the table (two
    records of the very same structure cannot be told apart by structure), plus
    ``SALT_PAIRS`` (salt record, free-base record) pairs of the same parent."""
    structures = {row["molecule_chembl_id"]: standardize(row["smiles"]) for row in rows}
    rows = [row for row in rows if structures[row["molecule_chembl_id"]] is not None]
    sources = Counter(structures[row["molecule_chembl_id"]].source_smiles for row in rows)
    unique = [
        row for row in rows if sources[structures[row["molecule_chembl_id"]].source_smiles] == 1
    ]
    free_bases = {}
    for row in unique:
        structure = structures[row["molecule_chembl_id"]]
        if structure.is_source_parent:
            free_bases.setdefault(structure.inchikey, row)
    salts = [
        row
        for row in unique
        if "." in row["smiles"]
        and structures[row["molecule_chembl_id"]].inchikey in free_bases
        and structures[row["molecule_chembl_id"]].heavy_atoms >= 6
    ]
    generator = random.Random(SEED)
    pairs = [
        (salt, free_bases[structures[salt["molecule_chembl_id"]].inchikey])
        for salt in generator.sample(salts, SALT_PAIRS)
    ]
    paired = {row["molecule_chembl_id"] for pair in pairs for row in pair}
    rest = [row for row in unique if row["molecule_chembl_id"] not in paired]
    sample = [row for pair in pairs for row in pair] + generator.sample(rest, SAMPLE)
    return sample, pairs


def _document_id(row: dict[str, str]) -> str:
    return f"chembl-{row['molecule_chembl_id']}"


def _randomised(smiles: str, seed: int) -> str:
    (randomised,) = Chem.MolToRandomSmilesVect(Chem.MolFromSmiles(smiles), 1, randomSeed=seed)
    return randomised


@pytest.fixture(scope="module")
async def compounds(milvus_server, postgres_server):
    """The sample ingested into a fresh structure collection; yields (store, sample,
    salt pairs)."""
    vocabulary = default_vocabulary()
    sample, pairs = _choose(_table())
    store = MilvusVectorStore(milvus_server.uri, collection_prefix="it_structure_")
    database = EmbeddedPostgres(postgres_server.data_dir, database="structure_it").start()
    registry = PostgresDocumentRegistry(database.dsn, max_size=2)
    await registry.open()
    await store.drop_collection(COLLECTION)
    await registry.delete_documents([_document_id(row) for row in sample])
    settings = PipelineSettings()
    spec = settings.collections[COLLECTION]
    runner = IngestRunner(
        store=store,
        registry=registry,
        encoders={spec.document_encoder: HashingTextEncoder(dimension=32)},
        settings=settings,
        vocabulary=vocabulary,
    )
    records = [
        compound_record(row["pref_name"], row["molecule_chembl_id"], row["smiles"], vocabulary)
        for row in sample
    ]
    report = await runner.run(records, KB)
    assert report.failures == [] and report.documents_written == len(sample)
    try:
        yield store, sample, pairs
    finally:
        await store.drop_collection(COLLECTION)
        await registry.delete_documents([_document_id(row) for row in sample])
        await registry.close()
        await store.close()


async def test_randomised_smiles_find_their_own_compound_at_rank_1(compounds):
    store, sample, _ = compounds
    rank_1 = 0
    changed = 0
    misses = []
    for index, row in enumerate(sample):
        query = _randomised(row["smiles"], SEED + index)
        changed += query != row["smiles"]
        hits = await structure_recall(store, COLLECTION, [query], depth=5)
        if hits and hits[0].node.metadata["document_id"] == _document_id(row):
            rank_1 += 1
        else:
            misses.append(row["pref_name"])
    assert changed >= 0.9 * len(sample)  # the queries really are other atom orders
    assert rank_1 / len(sample) >= 0.99, misses


async def test_salt_forms_in_the_table_find_their_free_base_within_top_2(compounds):
    store, _, pairs = compounds
    for index, (salt, free_base) in enumerate(pairs):
        hits = await structure_recall(store, COLLECTION, [_randomised(salt["smiles"], index)], 5)
        documents = [hit.node.metadata["document_id"] for hit in hits]
        assert documents[0] == _document_id(salt), salt["pref_name"]
        assert _document_id(free_base) in documents[:2], (salt["pref_name"], documents)
        assert hits[1].score == 1.0 and hits[1].score_parts["structure"] == 1.0


async def test_built_salt_forms_find_the_parent_within_top_2(compounds):
    store, sample, pairs = compounds
    paired = {row["molecule_chembl_id"] for pair in pairs for row in pair}
    bases = [
        row
        for row in sample
        if row["molecule_chembl_id"] not in paired and standardize(row["smiles"]).is_source_parent
    ][:30]
    assert len(bases) == 30
    for index, row in enumerate(bases):
        salt = f"{row['smiles']}.{COUNTER_IONS[index % len(COUNTER_IONS)]}"
        hits = await structure_recall(store, COLLECTION, [_randomised(salt, index)], depth=5)
        documents = [hit.node.metadata["document_id"] for hit in hits]
        assert _document_id(row) in documents[:2], (row["pref_name"], salt, documents)


async def test_fingerprint_search_is_the_exact_tanimoto_top_k(compounds):
    store, sample, _ = compounds
    fingerprints = {
        _document_id(row): morgan_fingerprint(standardize(row["smiles"])) for row in sample
    }
    for row in random.Random(SEED).sample(sample, 25):
        query = fingerprints[_document_id(row)]
        hits = await store.search_fingerprint(COLLECTION, query, top_k=10)
        expected = sorted((tanimoto(query, fp) for fp in fingerprints.values()), reverse=True)
        assert [round(hit.score, 9) for hit in hits] == [round(t, 9) for t in expected[:10]]
        for hit in hits:
            assert hit.vector_similarity == hit.score
            stored = fingerprints[hit.node.metadata["document_id"]]
            assert hit.score == pytest.approx(tanimoto(query, stored))


async def test_structure_searches_respect_the_scope(compounds):
    store, sample, _ = compounds
    row = sample[0]
    structure = standardize(row["smiles"])
    fingerprint = morgan_fingerprint(structure)
    others = [_document_id(other) for other in sample[5:15]]
    scoped = ScopeFilter(document_ids=tuple(others))
    hits = await store.search_fingerprint(COLLECTION, fingerprint, 20, scope=scoped)
    assert hits and {hit.node.metadata["document_id"] for hit in hits} <= set(others)
    assert await store.search_inchikey(COLLECTION, structure.inchikey, 5, scope=scoped) == []
    in_kb = await store.search_inchikey(
        COLLECTION, structure.inchikey, 5, scope=ScopeFilter(kb_names=(KB,))
    )
    assert _document_id(row) in {hit.node.metadata["document_id"] for hit in in_kb}
    assert (
        await store.search_inchikey(
            COLLECTION, structure.inchikey, 5, scope=ScopeFilter(kb_names=("other-kb",))
        )
        == []
    )


async def test_rows_keep_the_given_smiles_and_add_the_standardised_parent(compounds):
    store, _, pairs = compounds
    salt, _free_base = pairs[0]
    structure = standardize(salt["smiles"])
    (hit,) = [
        hit
        for hit in await store.search_inchikey(COLLECTION, structure.inchikey, 10)
        if hit.node.metadata["document_id"] == _document_id(salt)
    ]
    metadata = hit.node.metadata
    assert metadata["smiles"] == salt["smiles"]
    assert metadata["canonical_smiles"] == structure.canonical_smiles
    assert metadata["inchikey"] == structure.inchikey
    assert hit.score == hit.vector_similarity == 1.0


async def test_collection_made_before_structure_search_asks_for_a_re_ingest(milvus_store):
    name = "structure_legacy"
    await milvus_store.drop_collection(name)
    await milvus_store.ensure_collection(name, 4, hybrid=False)
    fingerprint = morgan_fingerprint(standardize("c1ccccc1O"))
    try:
        with pytest.raises(ValueError, match="ingest the compounds again"):
            await milvus_store.ensure_collection(name, 4, hybrid=False, structure=True)
        assert await milvus_store.search_fingerprint(name, fingerprint, 5) == []
        assert await milvus_store.search_inchikey(name, "ISWSIDIOOBJBQZ-UHFFFAOYSA-N", 5) == []
    finally:
        await milvus_store.drop_collection(name)


async def test_rows_without_a_structure_are_stored_but_never_matched(milvus_store):
    name = "structure_empty"
    await milvus_store.drop_collection(name)
    await milvus_store.ensure_collection(name, 4, hybrid=False, structure=True)
    nodes = [
        Node(node_id="phenol", text="phenol", metadata={"smiles": "c1ccccc1O"}),
        Node(node_id="none", text="no structure", metadata={}),
        Node(node_id="bad", text="bad structure", metadata={"smiles": "C1CC"}),
    ]
    try:
        assert await milvus_store.upsert(name, nodes, np.ones((3, 4), dtype=np.float32)) == 3
        assert await milvus_store.count(name) == 3
        phenol = standardize("c1ccccc1O")
        hits = await milvus_store.search_fingerprint(name, morgan_fingerprint(phenol), 10)
        assert [hit.node_id for hit in hits] == ["phenol"]
        assert hits[0].score == 1.0
        assert await milvus_store.search_inchikey(name, "", 10) == []
        (fetched,) = await milvus_store.fetch(name, ["phenol"])
        assert fetched.metadata["inchikey"] == phenol.inchikey
        with pytest.raises(ValueError, match="256 bytes"):
            await milvus_store.search_fingerprint(name, b"\x01", 10)
    finally:
        await milvus_store.drop_collection(name)
