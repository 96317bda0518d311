"""A-52: a class that "non-" negates is not the class asked for."""

import pytest

from pipeline.scoring import boost_terms_for_query
from pipeline.vocabulary import Vocabulary
from pipeline.vocabulary_entities import Entity

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def tiny():
    return Vocabulary(
        [
            Entity("dihydropyridines", "class", ("dihydropyridine",),
                   related_drugs=("amlodipine", "nifedipine")),
            Entity("calcium channel blockers", "class", ("calcium channel blocker",),
                   related_drugs=("amlodipine", "verapamil", "diltiazem")),
            Entity("non-benzodiazepine hypnotics", "class", ("non-benzodiazepine",),
                   related_drugs=("zolpidem",)),
            Entity("benzodiazepines", "class", ("benzodiazepine",),
                   related_drugs=("temazepam",)),
            Entity("amlodipine", "drug"),
        ]
    )  # fmt: skip


def names(vocabulary, text):
    return [match.entity.canonical for match in vocabulary.find(text)]


@pytest.mark.parametrize(
    "text",
    [
        "non-dihydropyridine calcium channel blocker for hypertension",
        "non dihydropyridine calcium channel blocker",
        "Non\u2011dihydropyridine calcium channel blocker",
        "nondihydropyridine calcium channel blocker",
    ],
)
def test_a52_non_negates_the_class_after_it(tiny, text):
    # "nondihydropyridine", one word, holds no name (R-VOC-1's letter boundary)
    assert names(tiny, text) == ["calcium channel blockers"]
    assert boost_terms_for_query(text, tiny) == ["amlodipine", "verapamil", "diltiazem"]


def test_a52_a_class_named_with_non_is_kept(tiny):
    assert names(tiny, "non-benzodiazepine sleeping pill") == ["non-benzodiazepine hypnotics"]


@pytest.mark.parametrize(
    "text",
    [
        "dihydropyridine calcium channel blocker for angina",
        "anon dihydropyridine",  # a word that ends in "non" negates nothing
    ],
)
def test_a52_no_non_no_change(tiny, text):
    assert "dihydropyridines" in names(tiny, text)


def test_a52_only_classes(tiny):
    # a drug after "non-" is left to the other rules
    assert names(tiny, "non-amlodipine regimen") == ["amlodipine"]


def test_a52_the_shipped_vocabulary(vocabulary):
    text = "non-dihydropyridine calcium channel blocker for hypertension"
    terms = boost_terms_for_query(text, vocabulary, class_limit=12)
    assert "verapamil" in terms and "diltiazem" in terms and "nimodipine" not in terms
