"""A-6: one normalisation path (NFKC, case folding, Greek letters and their names,
hyphen/space variants, Unicode word tokens) for tokens, terms, matching and highlights."""

import pytest

from pipeline.hybrid import sparse_score
from pipeline.text import contains_term, fold, highlight, keyed, match_key, query_terms, tokens

pytestmark = pytest.mark.unit


def test_a6_unicode_word_tokens_cafe_naive():
    assert tokens("café naïve") == ["café", "naïve"]
    assert tokens("Café NAÏVE") == ["café", "naïve"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ｆｕｌｌ－ｗｉｄｔｈ", ["full-width"]),  # NFKC
        ("Straße", ["strasse"]),  # case folding
        ("ﬁlgrastim", ["filgrastim"]),  # ligature
        ("Sjögren’s syndrome", ["sjögren's", "syndrome"]),  # curly apostrophe
        ("EGFR–TKI", ["egfr-tki"]),  # en dash
    ],
)
def test_a6_tokens_are_nfkc_and_case_folded(text, expected):
    assert tokens(text) == expected


def test_a6_micro_sign_is_the_greek_mu():
    assert tokens("5 µg") == tokens("5 μg") == ["5", "mu-g"]


@pytest.mark.parametrize("text", ["TNF-α", "TNFα", "TNF-alpha", "TNFalpha", "TNF‐α", "tnf-Α"])
def test_a6_greek_letter_and_its_name_fold_to_one_token(text):
    assert tokens(text) == ["tnf-alpha"]


@pytest.mark.parametrize(
    ("text", "folded"),
    [("IL-1β", "il-1-beta"), ("PI3Kδ", "pi3k-delta"), ("κ light chain", "kappa light chain")],
)
def test_a6_other_greek_lettered_targets_fold(text, folded):
    assert fold(text) == folded


@pytest.mark.parametrize(
    "variant", ["TNF-α", "TNF α", "TNFα", "TNF-alpha", "TNF alpha", "TNFalpha"]
)
def test_a6_match_key_joins_hyphen_space_and_greek_variants(variant):
    assert match_key(variant) == "tnf alpha"


@pytest.mark.parametrize("variant", ["IL-1β", "IL1β", "IL-1 beta", "IL1-BETA", "IL-1beta"])
def test_a6_match_key_il_1_beta_variants(variant):
    assert match_key(variant) == "il 1 beta"


def test_a6_match_key_keeps_case_when_asked_and_greek_names_attached_in_lower_case():
    assert match_key("IL1-BETA", casefold=False) == "IL 1 beta"
    assert match_key("TNF ALPHA", casefold=False) == "TNF ALPHA"  # a word, not attached
    assert match_key("PD-1", casefold=False) == match_key("PD1", casefold=False) == "PD 1"


def test_a6_keyed_offsets_map_back_to_the_text():
    text = "Anti-TNFα therapy"
    _, folded = keyed(text)
    start = folded.key.index("tnf alpha")
    span = folded.span(start, start + len("tnf alpha"))
    assert text[span[0] : span[1]] == "TNFα"
    sensitive, _ = keyed("IL1-BETA levels")
    assert sensitive.key == "IL 1 beta levels" and sensitive.text == "IL1-BETA levels"


def test_a6_query_terms_fold_greek_and_extra_terms():
    assert query_terms("TNF-α inhibitor", ["IL-1β"]) == ["tnf-alpha", "inhibitor", "il-1-beta"]


@pytest.mark.parametrize("haystack", ["tnf-α therapy", "tnfα therapy", "tnf alpha therapy"])
def test_a6_contains_term_finds_every_variant(haystack):
    assert contains_term(haystack, "TNF-alpha")
    assert contains_term(haystack, "TNF-α")


def test_a6_contains_term_keeps_the_letter_boundary():
    assert not contains_term("methanol poisoning", "ethanol")
    assert contains_term("the ethanol level", "ethanol")
    assert not contains_term("vegfr inhibitors", "egfr")


def test_a6_sparse_score_meets_across_greek_spellings():
    assert sparse_score("TNF-alpha blocker", "A TNF-α blocker for arthritis") == 1.0
    assert sparse_score("naïve patients", "Treatment-naïve patients") == 0.5


def test_a6_highlight_marks_the_text_as_written():
    marked = highlight("Anti-TNF-α and TNFalpha and IL-1β", "TNF-alpha")
    assert marked == "Anti-<em>TNF-α</em> and <em>TNFalpha</em> and IL-1β"
    assert highlight("Café au lait spots", "cafe café") == "<em>Café</em> au lait spots"


def test_highlight_escapes_the_documents_own_markup():
    text = "Warfarin <img src=x onerror=alert(1)> & <em>fake</em> bleeding"
    marked = highlight(text, "warfarin bleeding")
    assert marked == ("<em>Warfarin</em> &lt;img src=x onerror=alert(1)&gt; &amp; "
                      "&lt;em&gt;fake&lt;/em&gt; <em>bleeding</em>")
    assert highlight("a < b", "zzzz") == "a &lt; b"  # no term found: escaped all the same


def test_highlight_marks_whole_numbers_only():
    # "alert(1)" marked every "1" of the text: "s1", "10", "2021"
    marked = highlight("1. What tagrisso is: 10 mg, s1, 2021, dose 1", "alert(1)")
    assert marked == "<em>1</em>. What tagrisso is: 10 mg, s1, 2021, dose <em>1</em>"
    assert highlight("HER2-positive, not HER", "HER2") == "<em>HER2</em>-positive, not HER"
    assert highlight("1,000 tablets; 0.5%, 1.25%; take 1.", "1") == (
        "1,000 tablets; 0.5%, 1.25%; take <em>1</em>.")
