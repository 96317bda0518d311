"""R-SUP-1..4: entity-anchored supplementary recall."""

import numpy as np
import pytest

from pipeline.schema import DocumentRecord, Node, QueryRetrievalIntent, ScopeFilter
from pipeline.settings import PipelineSettings
from pipeline.supplement import (
    names_drug_terms,
    rank_supplement_hits,
    resolve_drug_terms,
    supplement_collections,
    supplement_entity_anchored_hits,
)
from tests.support.fakes import HashingTextEncoder, InMemoryRegistry, InMemoryVectorStore
from tests.unit.helpers import hit, ids

pytestmark = pytest.mark.unit


def test_r_sup_1_query_drugs_first(vocabulary):
    assert resolve_drug_terms("Tagrisso and olaparib", vocabulary) == ["osimertinib", "olaparib"]


def test_r_sup_1_related_drugs_of_first_entity_when_no_drug(vocabulary):
    assert resolve_drug_terms("EGFR exon 19 deletion", vocabulary) == [
        "gefitinib",
        "erlotinib",
        "osimertinib",
    ]


def test_r_sup_1_known_drug_beats_related_drugs_q_exp_053(vocabulary):
    # everolimus is in the vocabulary and named by the query: it must win over the
    # related drugs of "neuroendocrine tumor" (the source's defect).
    assert resolve_drug_terms("neuroendocrine tumor everolimus outcomes", vocabulary) == [
        "everolimus"
    ]


@pytest.mark.parametrize(
    ("query", "any_type", "genes_only"),
    [
        ("Tagrisso rash", True, True),  # a drug counts under either gate
        ("headache after an SGLT2 inhibitor", True, False),  # a class with members
        ("antifungal for toenail fungus", True, False),
        ("medicine for type 2 diabetes", True, False),  # a curated condition
        ("EGFR inhibitor rash", True, True),  # a gene target with related drugs
        ("side effects blood pressure", False, False),  # no entity with related drugs
    ],
)
def test_a13_a16_names_drug_terms_by_entity_type(vocabulary, query, any_type, genes_only):
    assert names_drug_terms(query, vocabulary) is any_type
    assert names_drug_terms(query, vocabulary, ("gene",)) is genes_only


def test_r_sup_3_collections_per_workflow():
    settings = PipelineSettings()
    chemical = QueryRetrievalIntent(workflow="chemical", require_entity_match=True)
    regulatory = QueryRetrievalIntent(workflow="regulatory", suppress_collections=("chemical",))
    general = QueryRetrievalIntent()
    assert supplement_collections(chemical, settings) == [("chemical", "molformer")]
    assert supplement_collections(regulatory, settings) == [("biomed_text", "pubmedbert")]
    assert supplement_collections(general, settings) == [
        ("biomed_text", "pubmedbert"),
        ("chemical", "molformer"),
    ]


def test_r_sup_4_rank_formula():
    settings = PipelineSettings()
    hits = [
        hit("entity", vector=0.5, text="unrelated", primary_drugs=["olaparib"]),
        hit("lexical", vector=0.9, text="olaparib maintenance therapy"),
    ]
    ranked = rank_supplement_hits(hits, "olaparib maintenance", ["olaparib"], settings)
    assert ids(ranked) == ["entity", "lexical"]
    assert ranked[0].score == pytest.approx(2.0 * 1.0 + 0.0 + 0.1 * 0.5)
    assert ranked[1].score == pytest.approx(2.0 * 0.0 + 1.0 + 0.1 * 0.9)


async def test_r_sup_2_3_name_lookup_then_scoped_search_with_limit(vocabulary):
    settings = PipelineSettings()
    encoder = HashingTextEncoder()
    store = InMemoryVectorStore()
    registry = InMemoryRegistry()
    documents = {"d-lyn": "Lynparza (olaparib) leaflet", "d-tag": "Tagrisso (osimertinib) leaflet"}
    for doc_id, name in documents.items():
        await registry.register_documents([DocumentRecord(document_id=doc_id, name=name)])
    nodes = [
        Node(
            node_id=f"{doc}-{i}",
            text=f"{name} chunk {i}",
            metadata={"document_id": doc, "document_name": name},
        )
        for doc, name in documents.items()
        for i in range(12)
    ]
    await store.upsert("biomed_text", nodes, encoder.encode_sync([n.text for n in nodes]))

    async def encode_query(role, collection):
        return encoder.encode_sync(["olaparib"])[0]

    result = await supplement_entity_anchored_hits(
        "olaparib maintenance",
        QueryRetrievalIntent(workflow="drug_entity", require_entity_match=True),
        vocabulary=vocabulary,
        registry=registry,
        store=store,
        encode_query=encode_query,
        settings=settings,
    )
    assert result.drug_terms == ["olaparib"]
    assert result.document_ids == ["d-lyn"]
    # limit = min(20, max(1 * 4, 8)) = 8, all from the scoped document
    assert len(result.hits) == 8
    assert {h.node.metadata["document_id"] for h in result.hits} == {"d-lyn"}
    assert result.searched == ["biomed_text", "chemical"]


async def test_r_sup_2_lookup_respects_kb_scope(vocabulary):
    registry = InMemoryRegistry()
    await registry.register_documents(
        [DocumentRecord(document_id="d", name="olaparib", kb_name="kb1")]
    )

    async def encode_query(role, collection):
        return np.zeros(8, dtype=np.float32)

    result = await supplement_entity_anchored_hits(
        "olaparib",
        QueryRetrievalIntent(workflow="drug_entity", require_entity_match=True),
        vocabulary=vocabulary,
        registry=registry,
        store=InMemoryVectorStore(),
        encode_query=encode_query,
        settings=PipelineSettings(),
        scope=ScopeFilter(kb_names=("kb2",)),
    )
    assert result.document_ids == []
    assert registry.lookups[-1][1] == ["kb2"]
