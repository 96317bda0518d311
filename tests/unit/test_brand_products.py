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


def product(node_id, title, drugs, kind="leaflet", text=""):
    return hit(node_id, text=text or f"{title}.", title=title, primary_drugs=drugs, kind=kind)


def leaflets():
    return [
        product("tenofovir", "Tenofovir", ["tenofovir"], text="Tenofovir disoproxil 245 mg."),
        product("vemlidy", "Vemlidy", ["tenofovir"], text="Vemlidy 25 mg with food."),
        product("truvada", "Truvada", ["emtricitabine and tenofovir"]),
        product("other", "Xarelto", ["rivaroxaban"]),
    ]


def test_product_titles_read_the_title_else_the_document_name():
    assert product_titles({"title": "Arnuity Ellipta, Fluticasone Furoate"}) == {
        "arnuity ellipta",
        "fluticasone furoate",
    }
    assert product_titles({"document_name": "Vemlidy (tenofovir) — EMA package leaflet"}) == {
        "vemlidy"
    }
    assert product_titles({"title": "Gablofen, Lioresal (baclofen)"}) == {"gablofen", "lioresal"}
    assert product_titles({"title": "HUMIRA®"}) == {"humira"}


def test_a_brand_caps_the_other_products_of_its_substance(vocabulary):
    caps = brand_entity_caps(leaflets(), "vemlidy 25mg - take w/ food or not?", vocabulary)
    # a combination holding the substance is another product too; other drugs keep theirs
    assert caps == [0.75, 1.0, 0.75, 1.0]


@pytest.mark.parametrize(
    "query",
    [
        "tenofovir dose",  # the substance's own name
        "tenofovir disoproxil dose",  # a salt of it
        "vemlydy dose",  # misspelt, not yet corrected: no brand read
        "Truvada for PrEP",  # a brand with no chunk in this window
        "Vemlidy vs other tenofovir tablets",  # set beside the other products
        "which generics of Vemlidy are there",
        "is Vemlidy the same as tenofovir",  # the substance named by its own name too
    ],
)
def test_no_brand_no_chunk_of_it_or_other_products_asked_for_change_nothing(vocabulary, query):
    nodes = leaflets() if query != "Truvada for PrEP" else leaflets()[:2]
    assert brand_entity_caps(nodes, query, vocabulary) is None


def test_only_product_chunks_are_own_or_capped(vocabulary):
    nodes = [
        product("stub", "Glycopyrronium", ["glycopyrronium"], kind="compound"),
        product("sialanar", "Sialanar", ["glycopyrronium"]),
        product("paper", "Glycopyrronium for drooling", ["glycopyrronium"], kind="paper"),
        product("seebri", "Seebri Breezhaler", ["glycopyrronium"]),
    ]
    # a compound record titled by the substance is no brand's own chunk
    assert brand_entity_caps(nodes[:1] + nodes[3:], "glycopyrronium dose", vocabulary) is None
    # Sialanar's own chunk caps Seebri, not the compound record or the paper
    assert brand_entity_caps(nodes, "Sialanar dose for drooling", vocabulary) == [
        1.0, 1.0, 1.0, 0.75,
    ]  # fmt: skip


def test_each_brand_caps_only_where_its_own_chunk_is_in_the_window(vocabulary):
    nodes = [
        product("dabigatran", "Dabigatran Etexilate", ["dabigatran"]),
        product("xarelto", "Xarelto", ["rivaroxaban"]),
        product("rivaroxaban", "Rivaroxaban Accord", ["rivaroxaban"]),
    ]
    # Pradaxa has no chunk here: the dabigatran generic keeps its score
    caps = brand_entity_caps(nodes, "Pradaxa and Xarelto dosing in AF", vocabulary)
    assert caps == [1.0, 1.0, 0.75]


def test_the_longest_title_the_question_writes_is_the_product(vocabulary):
    nodes = [
        product("oral", "Abilify", ["aripiprazole"]),
        product("depot", "Abilify Maintena", ["aripiprazole"]),
    ]
    # only "Abilify" matches as a name; the question writes the depot's whole title
    assert brand_entity_caps(nodes, "Abilify Maintena injection how often", vocabulary) == [
        0.75, 1.0,
    ]  # fmt: skip
    assert brand_entity_caps(nodes, "Abilify tablets dose", vocabulary) == [1.0, 0.75]


@pytest.mark.parametrize("on", [True, False])
async def test_a38_the_named_brand_leads_its_generic(vocabulary, on):
    nodes = leaflets()  # min-max over the window: the cross-encoder's gap is 0.05 of 0.75
    ce = {"tenofovir": 0.75, "vemlidy": 0.7, "truvada": 0.2, "other": 0.0}
    outcome = await rerank(
        nodes, "vemlidy 25mg - take w/ food or not?", QueryRetrievalIntent(workflow="drug_entity"),
        vocabulary, scores_by_id(ce),
        tier2=Tier2Settings(preset="tuned", brand_products=on),
    )  # fmt: skip
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert parts["vemlidy"]["entity"] == 1.0
    assert parts["tenofovir"]["entity"] == (0.75 if on else 1.0)
    assert ids(outcome.nodes)[0] == ("vemlidy" if on else "tenofovir")
    assert ("rerank_brand_product" in outcome.decisions) is on
