"""A-38: a question that names a product by its brand puts that product's own chunks
before other products of the same substance (``pipeline.brand_products``), through
Tier-2's entity score."""

import pytest

from pipeline.brand_products import brand_entity_caps, product_titles
from pipeline.schema import QueryRetrievalIntent
from pipeline.settings import Tier2Settings
from tests.unit.helpers import hit, ids
from tests.unit.test_tier2 import rerank, scores_by_id

pytestmark = pytest.mark.unit


def leaflets():
    return [
        hit("tenofovir", text="Tenofovir disoproxil 245 mg with food.",
            title="Tenofovir", primary_drugs=["tenofovir"]),
        hit("vemlidy", text="Vemlidy 25 mg with food.", title="Vemlidy",
            primary_drugs=["tenofovir"]),
        hit("truvada", text="Truvada.", title="Truvada",
            primary_drugs=["emtricitabine and tenofovir"]),
        hit("other", text="Something else.", title="Xarelto", primary_drugs=["rivaroxaban"]),
    ]  # fmt: skip


def test_product_titles_read_the_title_else_the_document_name():
    assert product_titles({"title": "Arnuity Ellipta, Fluticasone Furoate"}) == {
        "arnuity ellipta", "fluticasone furoate",
    }  # fmt: skip
    assert product_titles({"document_name": "Vemlidy (tenofovir) — EMA package leaflet"}) == {
        "vemlidy"
    }


def test_a_brand_caps_the_other_products_of_its_substance(vocabulary):
    caps = brand_entity_caps(leaflets(), "vemlidy 25mg - take w/ food or not?", vocabulary)
    # a combination holding the substance is another product too; other drugs keep theirs
    assert caps == [0.75, 1.0, 0.75, 1.0]


@pytest.mark.parametrize(
    "query",
    [
        "tenofovir dose",  # the substance's own name
        "tenofovir disoproxil dose",  # a salt of it
        "vemlydy dose",  # misspelt: no brand read
        "Truvada for PrEP",  # a brand with no chunk in this window
    ],
)
def test_no_brand_or_no_chunk_of_it_changes_nothing(vocabulary, query):
    nodes = leaflets() if query != "Truvada for PrEP" else leaflets()[:2]
    assert brand_entity_caps(nodes, query, vocabulary) is None


@pytest.mark.parametrize("on", [True, False])
async def test_a38_the_named_brand_leads_its_generic(vocabulary, on):
    nodes = leaflets()  # min-max over the window: the cross-encoder's gap is 0.05 of 0.75
    ce = {"tenofovir": 0.75, "vemlidy": 0.7, "truvada": 0.2, "other": 0.0}
    outcome = await rerank(
        nodes,
        "vemlidy 25mg - take w/ food or not?",
        QueryRetrievalIntent(workflow="drug_entity"),
        vocabulary,
        scores_by_id(ce),
        tier2=Tier2Settings(preset="tuned", brand_products=on),
    )
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert parts["vemlidy"]["entity"] == 1.0
    assert parts["tenofovir"]["entity"] == (0.75 if on else 1.0)
    assert ids(outcome.nodes)[0] == ("vemlidy" if on else "tenofovir")
    assert ("rerank_brand_product" in outcome.decisions) is on
