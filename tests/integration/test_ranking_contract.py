"""A-1 and A-2 over HTTP on real stores with the real MiniLM: one similarity on one
[0, 1] scale that the threshold filters, and pages that never repeat or skip."""

from __future__ import annotations

from typing import Any

import pytest

from deployments.config import config_from_data, load_config_data
from deployments.inprocess import local_model_ports
from deployments.service import SearchService
from tests.support.budgets import SLOW_MACHINE_BUDGETS
from tests.support.http import app_client
from tests.support.slices import DEFAULT_PRODUCTS, ingest_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PRODUCTS = (
    *DEFAULT_PRODUCTS, "imbruvica", "keytruda", "zejula", "tarceva", "pradaxa", "praxbind"
)

#: 50 varied questions: drug names, brands, sections, lay phrasing, classes, a SMILES,
#: off-topic words, a gene, misspellings.
QUERIES = [
    "osimertinib side effects",
    "Tagrisso warnings",
    "Iressa dosage",
    "gefitinib interstitial lung disease",
    "olaparib anaemia",
    "Lynparza tablets twice a day",
    "rivaroxaban bleeding risk",
    "Xarelto dose for children",
    "cabozantinib diarrhoea",
    "Cabometyx how to take",
    "ibrutinib atrial fibrillation",
    "Imbruvica infections",
    "apixaban hip replacement",
    "Eliquis missed dose",
    "pembrolizumab infusion reactions",
    "Keytruda immune side effects",
    "niraparib platelets",
    "Zejula blood pressure",
    "erlotinib rash",
    "Tarceva smoking",
    "EGFR mutation lung cancer",
    "PARP inhibitor ovarian cancer",
    "anticoagulant kidney problems",
    "what is Tagrisso used for",
    "can I drive while taking Lynparza",
    "how to store Xarelto",
    "pregnancy and breast-feeding",
    "liver problems",
    "tablets contain lactose",
    "children and adolescents",
    "COc1cc(N(C)CCN(C)C)c(Nc2nccc(-c3cn(C)c4ccccc34)n2)cc1NC(=O)C=C",
    "SMILES of gefitinib",
    "compound similar to aspirin",
    "osimertinib plus chemotherapy",
    "rivaroxaban combined with aspirin",
    "drug label warnings for olaparib",
    "prescribing information dosage and administration",
    "BRCA mutation",
    "heart failure",
    "dizziness",
    "osimertinb",
    "rivaroxiban",
    "what happens if I take too much",
    "allergic reaction",
    "stop taking",
    "the weather in Paris",
    "a",
    "0.5%",
    "side effects",
    "dose",
]
PAGED = QUERIES[:10]


@pytest.fixture(scope="module")
def config_data(tmp_path_factory):
    return load_config_data(
        "default",
        data_dir=tmp_path_factory.mktemp("ranking"),
        overrides={
            "stores": {"collection_prefix": "rank_"},
            "pipeline": {"budgets": SLOW_MACHINE_BUDGETS},  # paths, not speed
        },
    )


@pytest.fixture(scope="module")
async def client(config_data, endpoints):
    config = config_from_data(config_data)
    report = await ingest_slice(config, endpoints, "ranking", PRODUCTS, id_prefix="rank-")
    assert report.documents_written > 0 and not report.failures
    ports, _models = local_model_ports(config)
    service = SearchService(config, endpoints, ports)
    await service.start()
    async with app_client(service) as opened:
        yield opened
    await service.close()


async def search(client, **body: Any) -> dict[str, Any]:
    response = await client.post("/v1/search", json={"kb_ids": ["ranking"], **body})
    assert response.status_code == 200, response.text
    return response.json()


async def test_a2_similarity_in_unit_range_monotone_and_thresholded(client):
    seen_below = 0
    for query in QUERIES:
        everything = await search(client, query=query, page_size=40, similarity_threshold=0.0)
        similarities = [chunk["similarity"] for chunk in everything["chunks"]]
        assert all(0.0 <= value <= 1.0 for value in similarities), (query, similarities)
        assert similarities == sorted(similarities, reverse=True), query
        threshold = 0.3
        kept = await search(client, query=query, page_size=40, similarity_threshold=threshold)
        expected = [c["chunk_id"] for c in everything["chunks"] if c["similarity"] >= threshold]
        assert [c["chunk_id"] for c in kept["chunks"]] == expected, query
        assert all(chunk["similarity"] >= threshold for chunk in kept["chunks"])
        seen_below += len(everything["chunks"]) - len(expected)
    assert seen_below > 0  # the threshold did filter something over the 50 queries


@pytest.mark.parametrize("query", PAGED)
async def test_a1_pages_never_repeat_or_skip(client, query):
    one_page = await search(client, query=query, page_size=40, page=1)
    pages = [await search(client, query=query, page_size=5, page=page) for page in range(1, 9)]
    concatenated = [chunk["chunk_id"] for page in pages for chunk in page["chunks"]]
    assert len(concatenated) == len(set(concatenated)), query
    assert concatenated == [chunk["chunk_id"] for chunk in one_page["chunks"]], query
    totals = {page["total"] for page in pages} | {one_page["total"]}
    assert len(totals) == 1, (query, totals)


async def test_a9_local_representatives_only_when_asked_for(client):
    # the leaflet's address and phone list is set apart at ingest (section contacts) and
    # recalled only for a question that cues it
    def sections(response: dict[str, Any]) -> list[str]:
        return [chunk["biomed_section"] for chunk in response["chunks"]]

    for query in ("Tagrisso", "Xarelto dose for children", "Lynparza contents of the pack"):
        plain = await search(client, query=query, page_size=40, similarity_threshold=0.0)
        assert plain["chunks"] and "contacts" not in sections(plain), query
    asked = await search(
        client,
        query="Tagrisso local representative phone number",
        page_size=10,
        similarity_threshold=0.0,
    )
    assert "contacts" in sections(asked)
    assert any("Tel" in chunk["content"] for chunk in asked["chunks"][:3])


async def test_a11_a_reversal_question_opens_with_the_reversal_agent(client):
    # Praxbind's leaflet names dabigatran (Pradaxa), whose own leaflet answers a plain
    # question first; asked what reverses it, the reversal agent comes first
    def first_document(response: dict[str, Any]) -> str:
        return response["chunks"][0]["document_id"]

    plain = await search(client, query="Pradaxa before emergency surgery", page_size=5)
    assert "pradaxa" in first_document(plain)
    for query in ("how to reverse Pradaxa before emergency surgery", "antidote for Pradaxa"):
        asked = await search(client, query=query, page_size=5)
        assert "praxbind" in first_document(asked), (query, asked["chunks"][0]["chunk_id"])
        decisions = [d for stage in asked["trace"] for d in stage["decisions"]]
        assert "rerank_reversal_agents" in decisions
