"""A-19: a misspelt word of a question that is no name is read as the word of the stored
leaflets and labels one edit from it."""

import pytest

from pipeline.settings import PipelineSettings
from pipeline.spelling import MIN_SPELLING_WORD, WordSpeller, default_speller
from pipeline.vocabulary import Vocabulary
from pipeline.vocabulary_entities import Entity
from pipeline.vocabulary_typos import TYPO_MAX_CHARS

pytestmark = pytest.mark.unit

WORDS = {
    "psoriasis": 87,
    "migraine": 144,
    "pneumonia": 192,
    "eczema": 85,
    "grapefruits": 3,
    "seizures": 40,
    "seizure": 60,
    "nausea": 500,
    # one edit from "cancel": equally used, so neither wins
    "cancer": 10,
    "candel": 10,
    "grapefruit": 0,  # never a misspelling, never a target
}
KNOWN = {"weight", "injection", "tablets", "every", "months"}


@pytest.fixture(scope="module")
def vocabulary():
    return Vocabulary([Entity("osimertinib", "drug", aliases=("Tagrisso",))], known_words=KNOWN)


@pytest.fixture(scope="module")
def speller():
    return WordSpeller(WORDS, KNOWN)


@pytest.mark.parametrize(
    ("word", "read_as"),
    [
        ("psoraisis", "psoriasis"),  # two letters swapped: one edit
        ("migrane", "migraine"),  # a letter dropped
        ("pnemonia", "pneumonia"),
        ("Psoraisis", "psoriasis"),  # case does not matter
        ("nauseaa", "nausea"),  # a letter doubled
        ("seizurs", "seizure"),  # one edit from both: the one more products use
    ],
)
def test_a19_a_misspelt_word_is_read_as_the_stored_word_one_edit_away(speller, word, read_as):
    assert speller.correction(word) == read_as


@pytest.mark.parametrize(
    "word",
    [
        "excema",  # two edits from "eczema"
        "weight",  # a known word
        "psoriasis",  # a spelling word itself
        "grapefruit",  # a word that is never a misspelling, and no target
        "cancel",  # one edit from two words used alike: no single reading
        "nausa",  # shorter than MIN_SPELLING_WORD
        "NAUSA",  # and written like an abbreviation
    ],
)
def test_a19_words_that_are_not_read_as_another(speller, word):
    assert speller.correction(word) is None


def test_a19_capitals_are_an_abbreviation_unless_the_whole_question_is_in_capitals(
    speller, vocabulary
):
    assert len("MIGRANE") >= MIN_SPELLING_WORD
    assert speller.corrections("MIGRANE criteria in trials", vocabulary) == []
    assert speller.corrected("MIGRANE PREVENTION", vocabulary)[0] == "migraine PREVENTION"


def test_a19_a_part_of_a_hyphenated_word_is_left_as_written(speller, vocabulary):
    assert speller.corrections("psoraisis-like rash", vocabulary) == []
    assert speller.corrections("post-migrane", vocabulary) == []


def test_a19_a_plural_or_singular_of_the_word_is_no_misspelling(speller):
    # "grapefruit" is one edit from "grapefruits": an inflection, not a typo
    assert WordSpeller({"grapefruits": 3}, set()).correction("grapefruit") is None
    assert WordSpeller({"seizure": 3}, set()).correction("seizures") is None


def test_a19_a_tie_goes_to_the_word_more_products_use():
    speller = WordSpeller({"cancer": 300, "candel": 2}, set())
    assert speller.correction("cancel") == "cancer"


def test_a19_a_tie_is_settled_between_entities_not_names():
    from pipeline.vocabulary_typos import TypoIndex

    # two names of the heaviest entity tie with one of a lighter entity
    index = TypoIndex({"abcdex": 0, "abcdey": 0, "abcdez": 1})
    assert index.lookup("abcdeq", prefer={0: 5, 1: 1}.__getitem__) == ("abcdex", 0)
    assert index.lookup("abcdeq", prefer={0: 1, 1: 1}.__getitem__) is None
    assert index.lookup("abcdeq") is None  # A-12's look-up: two entities equally close


def test_a19_corrected_text_keeps_everything_else_and_lists_the_corrections(
    speller, vocabulary
):
    text, fixes = speller.corrected("psoraisis injection every 3 months, or migrane?", vocabulary)
    assert text == "psoriasis injection every 3 months, or migraine?"
    assert [str(fix) for fix in fixes] == ["psoraisis\u2192psoriasis", "migrane\u2192migraine"]
    assert [(fix.start, fix.end) for fix in fixes] == [(0, 9), (39, 46)]


def test_a19_names_are_the_vocabulary_s_and_long_texts_are_documents(speller, vocabulary):
    # "Tagrisso" is a name: even one edit from a spelling word it would stay
    names = WordSpeller({"tagrisso": 5, "tagrissa": 9}, set())
    assert names.corrections("Tagrisso pnemonia", vocabulary) == []
    assert speller.corrections("Tagrisso pnemonia", vocabulary)[0].correction == "pneumonia"
    long_text = "pnemonia " + "x" * TYPO_MAX_CHARS
    assert speller.corrections(long_text, vocabulary) == []


@pytest.mark.parametrize(
    ("question", "read_as"),
    [
        ("psoraisis injection every 3 months", "psoriasis injection every 3 months"),
        ("rhuematoid arthritis tablets", "rheumatoid arthritis tablets"),
        ("schitzophrenia injection every month", "schizophrenia injection every month"),
        ("palpatations on Xarelto", "palpitations on Xarelto"),
        # real words stay, though one edit from a stored word
        ("can I drink grapefruit juice on Ranexa", "can I drink grapefruit juice on Ranexa"),
        ("I'm lactose intolerant", "I'm lactose intolerant"),
        ("trastuzumab biosimilars", "trastuzumab biosimilars"),
        ("Waldenstrom macroglobulinaemia", "Waldenstrom macroglobulinaemia"),
        # words of English text and of ICD-10-CM, though one edit from a stored word
        ("inulin prebiotic", "inulin prebiotic"),
        ("oesophageal varices banding", "oesophageal varices banding"),
        ("ureteral stent discomfort", "ureteral stent discomfort"),
        ("muscle relaxers for back pain", "muscle relaxers for back pain"),
        ("RECIST criteria", "RECIST criteria"),
        ("thrombo-embolism", "thrombo-embolism"),
        # a stop name of the drug table is a word to read misspellings as
        ("low potasium levels", "low potassium levels"),
    ],
)
def test_a19_the_shipped_speller_reads_questions(question, read_as):
    from pipeline.vocabulary import default_vocabulary

    assert default_speller().corrected(question, default_vocabulary())[0] == read_as


def test_a19_is_on_by_default_and_can_be_turned_off():
    assert PipelineSettings().routing.correct_misspelt_words is True
    off = PipelineSettings.model_validate({"routing": {"correct_misspelt_words": False}})
    assert off.routing.correct_misspelt_words is False
