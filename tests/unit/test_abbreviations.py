"""pipeline.abbreviations: the abbreviations a text defines (Schwartz-Hearst), which of them
name a condition, and what that does to the shipped vocabulary (a gene alias the labels
define as a condition is no gene: COPD, MDS, MCL, HCC)."""

from collections import Counter

import pytest

from pipeline.abbreviations import condition_abbreviations, defined_abbreviations

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "abbreviation", "long_form"),
    [
        ("with myelodysplastic syndromes (MDS) or AML", "MDS", "myelodysplastic syndromes"),
        ("used to treat adults with mantle cell lymphoma (MCL) who", "MCL", "mantle cell lymphoma"),
        ("called cytokine release syndrome (CRS).", "CRS", "cytokine release syndrome"),
        ("Tell your doctor if your chronic obstructive pulmonary disease (COPD) symptoms", "COPD",
         "chronic obstructive pulmonary disease"),
        ("forced expiratory volume in 1 s (FEV1)", "FEV1", "forced expiratory volume in 1 s"),
        ("an anaplastic lymphoma kinase (ALK) tumour", "ALK", "anaplastic lymphoma kinase"),
    ],
)  # fmt: skip
def test_a_definition_is_read_from_the_words_before_the_parenthesis(text, abbreviation, long_form):
    assert defined_abbreviations([text])[abbreviation] == Counter({long_form: 1})


@pytest.mark.parametrize(
    "text",
    [
        "take 2 tablets (OD) daily",  # the letters are not in the words before
        "the dose (mg) was lowered",  # fewer than two capitals
        "the European Medicines Agency (EMA) website",  # kept, but it is no condition
    ],
)
def test_parentheses_that_define_no_condition(text):
    assert condition_abbreviations(defined_abbreviations([text])) == {}


@pytest.mark.parametrize(
    ("long_form", "condition"),
    [
        ("mantle cell lymphoma", True),
        ("cytokine release syndrome", True),  # the head decides, not "cytokine"
        ("tuberous sclerosis complex", True),
        ("chronic obstructive pulmonary disease", True),
        ("anaplastic lymphoma kinase", False),  # a protein whatever "lymphoma" says
        ("tumour necrosis factor", False),
        ("cystic fibrosis transmembrane conductance regulator", False),
        ("glucose-6-phosphate dehydrogenase", False),
        ("european medicines agency", False),
    ],
)
def test_a_long_form_names_a_condition_by_its_head(long_form, condition):
    found = condition_abbreviations({"XYZ": Counter({long_form: 1})})
    assert (found == {"XYZ": long_form}) is condition


@pytest.mark.parametrize(
    "text",
    [
        "gene called breast cancer 1 (BRCA1) is",  # numbered: a gene, not the cancer
        "in Wilms tumour 1 (WT1) positive cells",
        "patients with COPD and asthma (COPD)",  # the long form holds the abbreviation
    ],
)
def test_numbered_names_and_self_definitions_are_no_conditions(text):
    assert condition_abbreviations(defined_abbreviations([text])) == {}


def test_a_plural_abbreviation_is_read_without_its_s():
    defined = defined_abbreviations(["infusion-associated reactions (IARs) were seen"])
    assert defined == {"IAR": Counter({"infusion-associated reactions": 1})}


def test_the_most_frequent_long_form_decides():
    defined = {"PCP": Counter({"pneumocystis jirovecii pneumonia": 3, "phencyclidine": 1})}
    assert condition_abbreviations(defined) == {"PCP": "pneumocystis jirovecii pneumonia"}
    defined = {"ABC": Counter({"abacavir": 3, "aneurysmal bone cyst disease": 1})}
    assert condition_abbreviations(defined) == {}


@pytest.mark.parametrize("abbreviation", ["COPD", "MDS", "MCL", "HCC", "TLS", "CRS", "PAH"])
def test_the_shipped_vocabulary_reads_no_gene_into_a_condition_the_labels_define(
    vocabulary, abbreviation
):
    matches = vocabulary.find(f"Trimbow for {abbreviation} patients")
    assert all(match.entity.semantic_type != "gene" for match in matches), [
        (match.surface, match.entity.canonical) for match in matches
    ]


@pytest.mark.parametrize(
    ("text", "gene"),
    [
        ("ALK-positive lung cancer", "ALK"),
        ("raised TNF levels", "TNF"),
        ("CFTR modulator", "CFTR"),
        ("mutation of the DMD gene", "DMD"),  # the labels write it as a gene too
        ("SCD expression", "SCD"),  # an official symbol: one definition is not enough
    ],
)
def test_genes_the_labels_define_as_proteins_stay_genes(vocabulary, text, gene):
    assert gene in [match.entity.canonical for match in vocabulary.find(text)]
