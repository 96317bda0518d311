"""A-51: drug classes named by their INN stem, their members the stored documents'
subjects."""

import pytest

from pipeline.scoring import boost_terms_for_query
from pipeline.stem_classes import STEM_CLASSES, StemClass, stem_class_members

pytestmark = pytest.mark.unit

BENZODIAZEPINES = StemClass("benzodiazepines", ["benzodiazepine"], r"azepam|azolam")
PPIS = StemClass("proton pump inhibitors", ["prazole"], r"(?<!pi)prazole")


def test_a51_members_are_the_stems_drugs_the_documents_are_about():
    drugs = ["temazepam", "triazolam", "midazolam", "bromazepam", "zolpidem", "azepam"]
    openings = [
        "Temazepam | Temazepam capsules are indicated for insomnia",
        "Halcion | triazolam Triazolam tablets are indicated for insomnia",
        "Midazolam | midazolam injection for sedation",
        "Midazolam in sodium chloride | midazolam for sedation",
        "Edluar | zolpidem tartrate for insomnia",
    ]
    (row,) = stem_class_members([BENZODIAZEPINES], drugs, openings)
    # most documents first, then by name; bromazepam names no document; zolpidem no stem
    assert row["members"] == ["midazolam", "temazepam", "triazolam"]
    assert row["c"] == "benzodiazepines" and "benzodiazepine" in row["names"]


def test_a51_a_stem_that_ends_another_family_is_written_out():
    openings = ["aripiprazole for schizophrenia", "omeprazole for reflux"]
    (row,) = stem_class_members([PPIS], ["aripiprazole", "omeprazole"], openings)
    assert row["members"] == ["omeprazole"]


def test_a51_a_class_with_no_member_in_the_documents_is_left_out():
    assert stem_class_members([BENZODIAZEPINES], ["temazepam"], ["aspirin for pain"]) == []


def test_a51_every_class_is_named_by_its_own_name():
    for cls in STEM_CLASSES:
        assert cls.names[0] == cls.c


@pytest.mark.parametrize(
    ("question", "member"),
    [
        ("benzodiazepine sleeping pill for insomnia", "temazepam"),
        ("which taxane chemotherapy for metastatic prostate cancer", "cabazitaxel"),
        ("meglitinide taken before meals for type 2 diabetes", "repaglinide"),
        ("a triptan for acute migraine", "sumatriptan"),
        ("volatile anaesthetic for maintenance of general anaesthesia", "sevoflurane"),
    ],
)
def test_a51_the_shipped_vocabulary_has_the_stem_members(vocabulary, question, member):
    assert member in boost_terms_for_query(question, vocabulary, class_limit=12)


def test_a51_a_class_keeps_more_members_than_a_gene(vocabulary):
    question = "benzodiazepine sleeping pill for insomnia"
    six = boost_terms_for_query(question, vocabulary, related_limit=6)
    twelve = boost_terms_for_query(question, vocabulary, related_limit=6, class_limit=12)
    assert len(six) == 6 and "temazepam" not in six and "temazepam" in twelve
    # a gene's related drugs keep R-T2-5's limit
    gene = boost_terms_for_query("EGFR mutation", vocabulary, related_limit=6, class_limit=12)
    assert len(gene) <= 6
