"""R-HYB-1..4: dense + sparse fusion."""

import math

import pytest

from pipeline.hybrid import hybrid_fuse_dense_sparse, pool_term_weights, sparse_score
from tests.unit.helpers import hit, ids

pytestmark = pytest.mark.unit


def test_r_hyb_3_hits_over_terms_with_extra_terms():
    # terms: osimertinib, side, effects (stop words dropped) + extra "warnings"
    text = "Osimertinib can cause side effects such as diarrhoea."
    assert sparse_score("the side effects of osimertinib", text) == pytest.approx(1.0)
    assert sparse_score("osimertinib side effects", text, ["warnings"]) == pytest.approx(3 / 4)
    assert sparse_score("gefitinib rash", text) == 0.0


def test_r_hyb_3_in_unit_interval_and_empty_terms_give_zero():
    assert sparse_score("", "anything") == 0.0
    assert sparse_score("the of and", "the of and") == 0.0
    assert 0.0 <= sparse_score("a b c d", "b d") <= 1.0


def test_r_hyb_3_whole_words_and_phrases_only():
    assert sparse_score("met", "metastatic disease") == 0.0
    assert sparse_score("x", "dose", ["indications and usage"]) == 0.0
    assert sparse_score("x", "the indications and usage section", ["indications and usage"]) == 0.5


def test_r_hyb_1_combined_score_and_order():
    nodes = [
        hit("dense-only", vector=0.9, text="unrelated words here"),
        hit("both", vector=0.6, text="osimertinib side effects"),
    ]
    fused = hybrid_fuse_dense_sparse(nodes, "osimertinib side effects", [], alpha=0.3)
    assert ids(fused) == ["both", "dense-only"]
    assert fused[0].score == pytest.approx(0.3 * 0.6 + 0.7 * 1.0)
    assert fused[1].score == pytest.approx(0.3 * 0.9)
    assert fused[0].term_similarity == pytest.approx(1.0)


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_r_hyb_1_alpha_extremes(alpha):
    nodes = [hit("a", vector=0.2, text="match"), hit("b", vector=0.8, text="none")]
    fused = hybrid_fuse_dense_sparse(nodes, "match", [], alpha=alpha)
    assert ids(fused) == (["a", "b"] if alpha == 0.0 else ["b", "a"])


def test_r_hyb_2_missing_dense_counts_as_zero_and_inputs_are_not_mutated():
    original = hit("lexical-only", score=12.5, vector=None, text="match")
    fused = hybrid_fuse_dense_sparse([original], "match", [], alpha=0.5)
    assert fused[0].vector_similarity == 0.0 and fused[0].score == pytest.approx(0.5)
    assert original.score == 12.5


def test_r_hyb_1_rejects_alpha_out_of_range():
    with pytest.raises(ValueError, match="alpha"):
        hybrid_fuse_dense_sparse([], "q", [], alpha=1.5)


def test_r_hyb_1_rejects_an_unknown_term_weighting():
    with pytest.raises(ValueError, match="term_weighting"):
        hybrid_fuse_dense_sparse([], "q", [], alpha=0.3, term_weighting="bm25")


# -- term overlap weighted by each term's IDF over the candidate pool ---------------

#: A lay question's pool: BM25 recalled many chunks for its common words, one for the
#: disease it names.
POOL = [
    "Tell your doctor if your urine turns dark or you have pain in your hips.",
    "Dark urine, pain in the hips or spine: stop taking and call your doctor.",
    "Dark urine and pain in the hips are signs of liver problems.",
    "If your urine is dark or your hips ache, tell your nurse.",
    "Pain in the hips, dark urine and yellow skin may be serious.",
    "Urine may turn dark; hips and knees may be painful.",
    "Nityr is used to treat alkaptonuria in adults.",
    "Store below 25 degrees.",
]
QUESTION = "alkaptonuria, my urine is dark and my hips hurt"


def test_a14_pool_idf_is_bm25_idf_over_the_pool_and_absent_terms_weigh_most():
    weights = pool_term_weights(QUESTION, POOL, ["nitisinone"])
    n = len(POOL)
    assert weights["alkaptonuria"] == pytest.approx(math.log(1 + (n - 1 + 0.5) / 1.5))
    assert weights["dark"] == pytest.approx(math.log(1 + (n - 6 + 0.5) / 6.5))
    absent = math.log(1 + (n + 0.5) / 0.5)  # in no candidate: df 0, kept in the total
    assert weights["hurt"] == weights["nitisinone"] == pytest.approx(absent)
    assert absent > weights["alkaptonuria"] > weights["dark"] > 0.0
    assert pool_term_weights(QUESTION, []) == {} and pool_term_weights("", POOL) == {}


def test_a14_absent_terms_keep_the_seed_scale():
    """R-HYB-3 divides by every term; so does the weighted overlap: a chunk with every
    term the pool holds still misses the weight of the terms no candidate holds."""
    weights = pool_term_weights(QUESTION, POOL)
    held = sum(weights[t] for t in ("alkaptonuria", "urine", "dark", "hips"))
    assert sparse_score(QUESTION, " ".join(POOL), (), weights) == pytest.approx(
        held / (held + weights["hurt"])
    )
    assert sparse_score(QUESTION, " ".join(POOL), ()) == pytest.approx(4 / 5)


def test_a14_phrases_and_extra_terms_are_weighed_as_sparse_score_finds_them():
    # "liver problems" is one extra term, found as a phrase (letter-bounded); "urine"
    # repeated as an extra term counts once
    weights = pool_term_weights(QUESTION, POOL, ["liver problems", "urine", "liver prob"])
    n = len(POOL)
    assert weights["liver problems"] == pytest.approx(math.log(1 + (n - 1 + 0.5) / 1.5))
    # no candidate holds "liver prob" as a phrase: the largest weight
    assert weights["liver prob"] == pytest.approx(math.log(1 + (n + 0.5) / 0.5))
    assert list(weights).count("urine") == 1
    chunk = POOL[2]  # holds dark, urine, hips and "liver problems"
    expected = sum(weights[t] for t in ("urine", "dark", "hips", "liver problems"))
    terms = ("alkaptonuria", "urine", "dark", "hips", "hurt", "liver problems")
    assert sparse_score(QUESTION, chunk, ["liver problems"], weights) == pytest.approx(
        expected / sum(weights[t] for t in terms)
    )


def test_a14_weighted_overlap_stays_in_unit_interval():
    weights = pool_term_weights(QUESTION, POOL)
    scores = [sparse_score(QUESTION, text, (), weights) for text in POOL]
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert sparse_score(QUESTION, " ".join(POOL) + " hurt", (), weights) == pytest.approx(1.0)
    assert sparse_score(QUESTION, POOL[0], (), {}) == 0.0  # no weight: no evidence


def test_a14_the_rare_word_outranks_many_common_ones():
    """Uniform overlap (R-HYB-3) puts the chunks with the question's common words first;
    pool IDF puts the one chunk with the disease the question names first."""
    nodes = [hit(f"c{i}", vector=0.5, text=text) for i, text in enumerate(POOL)]
    uniform = hybrid_fuse_dense_sparse(nodes, QUESTION, [], alpha=0.3)
    weighted = hybrid_fuse_dense_sparse(nodes, QUESTION, [], alpha=0.3, term_weighting="pool_idf")
    assert ids(uniform).index("c6") == 6  # 1 of 5 terms; chunks c0-c5 hold 3
    assert ids(weighted)[0] == "c6"
    assert ids(nodes) == [f"c{i}" for i in range(len(POOL))]  # not mutated
