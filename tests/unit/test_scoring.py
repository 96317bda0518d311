"""R-ENT-1, R-T2-5..8: entity, section and cross-drug scores."""

import pytest

from pipeline.schema import Node, NodeWithScore
from pipeline.scoring import (
    PROFILE_WEIGHTS,
    cross_drug_penalty,
    drug_key,
    entity_boost_score,
    entity_match_score,
    section_match_score,
    set_aside_sections,
    without_sections,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"primary_drugs": ["Osimertinib"]}, 1.0),
        ({"primary_drugs": '["gefitinib", "osimertinib"]'}, 1.0),
        ({"primary_drugs": "osimertinib"}, 1.0),
        ({"primary_drugs": ["gefitinib"], "document_name": "Osimertinib label"}, 0.5),
        ({"file_name": "label_osimertinib.pdf"}, 0.5),
        ({"source_uri": "https://x/osimertinib"}, 0.5),
        ({"path": "docs/other.pdf", "primary_drugs": []}, 0.0),
        ({"document_name": "dosimertinibx"}, 0.0),
    ],
)
def test_r_ent_1_entity_boost_score(metadata, expected):
    assert entity_boost_score(metadata, ["osimertinib"]) == expected


def test_r_ent_1_no_drugs_no_boost():
    assert entity_boost_score({"primary_drugs": ["x"]}, []) == 0.0


def node(text="", **metadata):
    return Node(node_id="n", text=text, metadata=metadata)


def test_r_t2_5_entity_score_levels():
    drugs = ["olaparib"]
    assert entity_match_score(node(primary_drugs=["olaparib"]), drugs) == 1.0
    assert entity_match_score(node(document_name="Lynparza (olaparib)"), drugs) == 0.75
    assert entity_match_score(node(text="Take olaparib twice daily"), drugs) == 0.75
    assert entity_match_score(node(text="x" * 600 + " olaparib"), drugs) == 0.0


@pytest.mark.parametrize(
    ("metadata", "cues", "expected"),
    [
        ({"biomed_section": "indications_and_usage"}, ["indications_and_usage"], 1.0),
        ({"content_summary": "Indications and usage: adults"}, ["indications_and_usage"], 1.0),
        ({"biomed_section": "warnings"}, ["warnings", "dosage"], 0.5),
        ({"path": "label/dosage_and_administration"}, ["dosage"], 1.0),
        ({"content_summary": "x" * 300 + " warnings"}, ["warnings"], 0.0),
        ({"biomed_section": "warnings"}, [], 0.0),
    ],
)
def test_r_t2_6_section_score(metadata, cues, expected):
    assert section_match_score(node(**metadata), cues) == expected


@pytest.mark.parametrize(
    ("text", "metadata", "expected"),
    [
        ("Gefitinib tablets", {"primary_drugs": ["gefitinib"]}, 1.0),
        ("Gefitinib tablets", {"primary_drugs": '["gefitinib"]'}, 1.0),
        ("Gefitinib tablets", {"primary_drugs": "gefitinib"}, 1.0),
        ("compared with osimertinib", {"primary_drugs": ["gefitinib"]}, 0.0),
        ("Gefitinib", {"primary_drugs": ["gefitinib"], "file_name": "osimertinib.pdf"}, 0.0),
        ("Gefitinib", {"primary_drugs": ["gefitinib", "osimertinib"]}, 0.0),
        ("no drugs", {}, 0.0),
    ],
)
def test_r_t2_7_cross_drug_penalty(text, metadata, expected):
    assert cross_drug_penalty(node(text, **metadata), ["osimertinib"]) == expected


def test_r_t2_7_no_query_drugs_no_penalty():
    assert cross_drug_penalty(node("x", primary_drugs=["gefitinib"]), []) == 0.0


@pytest.mark.parametrize(
    ("profile", "row"),
    [
        ("default", (0.50, 0.25, 0.15, 2.0)),
        ("regulatory", (0.30, 0.20, 0.35, 2.5)),
        ("drug_entity", (0.35, 0.35, 0.10, 3.0)),
        ("chemical", (0.25, 0.40, 0.10, 3.0)),
        ("combination", (0.35, 0.35, 0.10, 2.5)),
    ],
)
def test_r_t2_8_profile_weights_table(profile, row):
    weights = PROFILE_WEIGHTS[profile]
    assert (weights.w_ce, weights.w_entity, weights.w_sec, weights.w_xdrug) == row


def test_a9_set_aside_sections_unless_the_question_cues_them():
    assert set_aside_sections(("contacts",), ("warnings",)) == {"contacts"}
    assert set_aside_sections(("contacts",), ("contacts",)) == frozenset()
    hits = [
        NodeWithScore(node=Node(node_id=f"n{i}", text="", metadata={"biomed_section": s}), score=1)
        for i, s in enumerate(["warnings", "contacts", "description"])
    ]
    kept = without_sections(hits, frozenset({"contacts"}))
    assert [hit.node_id for hit in kept] == ["n0", "n2"]
    assert without_sections(hits, frozenset()) == hits


def test_a_combination_written_either_way_is_one_drug():
    assert drug_key("Glecaprevir/Pibrentasvir") == "glecaprevir / pibrentasvir"
    assert drug_key("pibrentasvir and glecaprevir") == "glecaprevir / pibrentasvir"
    assert drug_key("Osimertinib") == "osimertinib"
    # A question may write "glecaprevir/pibrentasvir" (the vocabulary reads Maviret as
    # "glecaprevir and pibrentasvir" since A-37); its leaflet's own drug is "glecaprevir
    # and pibrentasvir". A leaflet that lists the combination only among its interactions
    # is another product.
    maviret = Node(
        node_id="maviret",
        text="Like all medicines, this medicine can cause side effects.",
        metadata={"primary_drugs": ["glecaprevir and pibrentasvir"]},
    )
    assert entity_boost_score(maviret.metadata, ["glecaprevir/pibrentasvir"]) == 1.0
    assert entity_boost_score(maviret.metadata, ["pibrentasvir, glecaprevir"]) == 1.0
    assert cross_drug_penalty(maviret, ["glecaprevir/pibrentasvir"]) == 0.0
    other = Node(
        node_id="kaletra",
        text="Do not take it with sildenafil.",
        metadata={"primary_drugs": ["lopinavir and ritonavir"]},
    )
    assert entity_boost_score(other.metadata, ["glecaprevir/pibrentasvir"]) == 0.0
    assert cross_drug_penalty(other, ["glecaprevir/pibrentasvir"]) == 1.0
