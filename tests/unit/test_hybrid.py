"""R-HYB-1..4: dense + sparse fusion."""

import pytest

from pipeline.hybrid import hybrid_fuse_dense_sparse, sparse_score
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
