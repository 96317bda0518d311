"""A-24: conditions by the names questions use (``pipeline.condition_names``), in the
shipped vocabulary, and in the BM25 query."""

import pytest

from pipeline.condition_names import (
    core_condition_rows,
    core_name,
    leaflet_lay_names,
    other_spelling,
    phrase_counts,
    plural_name,
    plural_word,
    short_forms,
)
from pipeline.lexical import lexical_query_text
from pipeline.settings import LexicalSettings
from pipeline.vocabulary import default_vocabulary


@pytest.fixture(scope="module")
def vocabulary():
    return default_vocabulary()


@pytest.mark.parametrize(
    ("title", "names"),
    [
        ("Essential (primary) hypertension", ["hypertension"]),
        ("Acute hepatitis B", ["hepatitis B"]),
        ("Unspecified malaria", ["malaria"]),
        ("Influenza due to unidentified influenza virus", ["Influenza"]),
        ("Osteoporosis without current pathological fracture", ["Osteoporosis"]),
        ("Obesity, unspecified", ["Obesity"]),
        ("Varicella [chickenpox]", ["Varicella", "chickenpox"]),
        (
            "Human immunodeficiency virus [HIV] disease",
            ["Human immunodeficiency virus disease", "HIV", "HIV disease"],
        ),
        # the bracket of a qualifier names a cause, not the condition
        ("Sepsis due to Escherichia coli [E. coli]", ["Sepsis"]),
        # an eponym or abbreviation that is an English word stays out
        ("Febrile neutrophilic dermatosis [Sweet]", ["Febrile neutrophilic dermatosis"]),
        # names joined, listed or cut short give none
        ("Atrial fibrillation and flutter", []),
        ("Sedative, hypnotic, or anxiolytic related disorders", []),
        ("Pain in joint", ["Pain in joint"]),
        ("Hepatitis A with hepatic coma", ["Hepatitis A"]),
        # less its body site, one word is a kind of finding, not a condition (it is one
        # where another title writes it alone); a name of several words is one, and so is
        # a name whose "unspecified" is no site
        ("Effusion, unspecified joint", []),
        ("Dissection of unspecified site of aorta", []),
        ("Cyst of unspecified orbit", []),
        ("Furuncle unspecified hand", []),
        ("Sepsis, unspecified organism", ["Sepsis"]),
        ("Leukemia of unspecified cell type", ["Leukemia"]),
        ("Hemiplegia, unspecified affecting unspecified side", ["Hemiplegia"]),
        ("Varicose veins of unspecified lower extremity with pain", ["Varicose veins"]),
        ("Osteoarthritis, unspecified site", ["Osteoarthritis"]),
        # a bracket of one word inside a title, or after "X of Y", renames one word only
        (
            "Persistent mood [affective] disorders",
            ["Persistent mood disorders", "affective disorders"],
        ),
        ("Complication of respirator [ventilator]", ["Complication of respirator"]),
        ("Third [oculomotor] nerve palsy", ["Third nerve palsy", "oculomotor nerve palsy"]),
        ("Acute obstructive laryngitis [croup]", ["obstructive laryngitis", "croup"]),
        ("Dentofacial anomalies [including malocclusion]", ["Dentofacial anomalies"]),
        ("Enuresis not due to a substance or known physiological condition", ["Enuresis"]),
    ],
)
def test_a24_core_name_drops_the_qualifiers_of_an_icd_title(title, names):
    assert core_name(title) == names


def test_a24_core_rows_need_the_labels_to_write_the_name():
    texts = ["High blood pressure (hypertension) and hypertension.", "hypertension again"]
    icd = [
        ("I10", "Essential (primary) hypertension"),
        ("A54", "Unspecified malaria"),  # no label writes it
        ("Z21", "Unspecified hypertension"),  # not a disease chapter
    ]
    known: dict[str, object] = {}
    rows = core_condition_rows(icd, texts, known)
    assert rows == [{"c": "hypertension", "t": "disease", "a": []}]
    assert "hypertension" in known
    # a name the vocabulary already has stays where it is
    assert core_condition_rows(icd, texts, {"hypertension": {}}) == []


def test_a24_core_rows_count_the_name_in_the_spelling_the_labels_use():
    # ICD writes "hemorrhoids"; the leaflets "haemorrhoids" (A-25's "piles" needs the row)
    texts = ["haemorrhoids (piles)", "bleeding haemorrhoids", "haemorrhoids"]
    icd = [("K649", "Unspecified hemorrhoids")]
    assert core_condition_rows(icd, texts, {}) == []
    respell = {"hemorrhoids": "haemorrhoids"}
    rows = core_condition_rows(icd, texts, {}, respell)
    assert rows == [{"c": "hemorrhoids", "t": "disease", "a": []}]


def test_a24_lay_names_are_pairs_the_leaflets_write_both_ways():
    both = ["Shingles (herpes zoster) may occur."] * 2 + ["Herpes zoster (shingles) is common."]
    one_way = ["Inflammation of the pancreas (pancreatitis) was seen."] * 5
    cause = ["Shortness of breath (heart failure) was reported."] * 5
    texts = both + one_way + cause
    names = leaflet_lay_names(texts, ["herpes zoster", "pancreatitis", "shortness of breath"])
    assert names == {"herpes zoster": ["shingles"]}


def test_a24_a_bracket_at_a_clause_start_counts_once():
    # "Herpes zoster (shingles)" at a clause's start is one pair, not one per run length
    texts = ["Herpes zoster (shingles).", "Shingles (herpes zoster) may occur."]
    assert leaflet_lay_names(texts, ["herpes zoster"]) == {}
    assert leaflet_lay_names(texts * 2, ["herpes zoster"]) == {"herpes zoster": ["shingles"]}


def test_a24_a_lay_name_used_mostly_otherwise_is_no_name():
    pairs = ["Wind (flatulence) and flatulence (wind)."] * 3
    other_uses = ["The wind blew."] * 100
    assert leaflet_lay_names(pairs, ["flatulence"]) == {"flatulence": ["wind"]}
    assert leaflet_lay_names(pairs + other_uses, ["flatulence"]) == {}


def test_a24_shorthand_spelling_and_counts():
    assert short_forms("hepatitis C") == ["hep C"]
    assert short_forms("COVID-19") == ["COVID"]
    assert short_forms("hypertension") == []
    respell = {"anemia": "anaemia", "hemolytic": "haemolytic"}
    assert other_spelling("Acquired hemolytic anemia", respell) == "Acquired haemolytic anaemia"
    assert other_spelling("hypertension", respell) is None
    counts = phrase_counts(["Hepatitis B, or hepatitis b-like."], ["hepatitis B", "hepatitis"])
    assert counts == {"hepatitis B": 1, "hepatitis": 2}


@pytest.mark.parametrize(
    ("question", "condition"),
    [
        ("tablets for high blood pressure", "hypertension"),
        ("hep C treatment", "hepatitis C"),
        ("something for the flu", "Influenza"),
        ("what can stop me getting covid", "COVID-19"),
        ("shingles rash", "Zoster"),
        ("chickenpox treatment", "chickenpox"),
        ("iron deficiency anaemia", "Iron deficiency anemia"),
        ("HIV prevention", "HIV"),
        ("malaria tablets for travel", "Malaria"),
        ("had a heart attack last year", "myocardial infarction"),
    ],
)
def test_a24_the_shipped_vocabulary_reads_everyday_condition_names(vocabulary, question, condition):
    found = [
        e.canonical for e in vocabulary.match_entities(question) if e.semantic_type == "disease"
    ]
    assert condition in found


@pytest.mark.parametrize(
    ("name", "plural"),
    [
        ("Migraine", "Migraines"),
        ("Urinary tract infection", "Urinary tract infections"),
        ("Allergy", "Allergies"),
        ("Hypertensive emergency", "Hypertensive emergencies"),
        ("nasal polyp", "nasal polyps"),
        ("Psoriasis", None),  # -sis: the plural is no name people write
        ("Measles", None),
        ("Rash", None),
        ("COVID-19", None),
        ("hepatitis B", None),  # a letter, not a noun
    ],
)
def test_a54_plural_name(name, plural):
    assert plural_name(name) == plural


@pytest.mark.parametrize(
    ("question", "condition"),
    [
        ("what stops my migraines coming back", "Migraine"),
        ("recurrent urinary tract infections in women", "Urinary tract infection"),
        ("do PPIs heal peptic ulcers", "peptic ulcer"),  # a curated lay name's plural
    ],
)
def test_a54_the_shipped_vocabulary_reads_a_condition_in_the_plural(
    vocabulary, question, condition
):
    found = [
        e.canonical for e in vocabulary.match_entities(question) if e.semantic_type == "disease"
    ]
    assert found == [condition]


def test_a54_plural_word():
    assert plural_word("allergy") == "allergies"
    assert plural_word("day") == "days"
    assert plural_word("inhibitor") == "inhibitors"
    assert plural_word("SSRI") == "SSRIs"


def test_a54_the_build_keeps_only_plurals_the_stored_texts_write(vocabulary):
    # ICD's "Pain in right hand" is a row; "pain in right hands" is written nowhere
    found = [e.canonical for e in vocabulary.match_entities("pain in right hands")]
    assert "Pain in right hand" not in found
    assert "Pain in right hand" in [
        e.canonical for e in vocabulary.match_entities("pain in right hand")
    ]
    # nor once or twice ("duodenal ulcers"), nor a group's plural that names a society
    assert vocabulary.match_entities("duodenal ulcers") == []
    assert vocabulary.match_entities("Infectious Diseases Society of America") == []


@pytest.mark.parametrize("question", ["pain in my chest", "inflammation of the pancreas"])
def test_a24_body_parts_are_no_conditions(vocabulary, question):
    # the leaflets write "chest pain (angina pectoris)", "inflammation of the pancreas
    # (pancreatitis)" one way only: a description, not a name
    found = {e.canonical.lower() for e in vocabulary.match_entities(question)}
    assert not found & {"angina pectoris", "pancreatitis", "acute pancreatitis"}


@pytest.mark.parametrize("on", [True, False])
def test_a24_the_bm25_query_carries_the_condition_name(vocabulary, on):
    settings = LexicalSettings(condition_names=on, word_form="as_written")
    words = lexical_query_text("hep C treatment", vocabulary, settings).split()
    assert ("hepatitis" in words) is on
    # the condition's own name adds nothing
    plain = lexical_query_text("hepatitis C treatment", vocabulary, settings).split()
    assert plain.count("hepatitis") == 1
