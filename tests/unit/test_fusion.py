"""R-RRF-1..6 and R-INJ-1, with hypothesis properties for RRF."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.fusion import dedupe_cross_collection, inject_supplement_candidates, merge_rrf
from tests.unit.helpers import hit, ids

pytestmark = pytest.mark.unit


def test_r_rrf_1_reciprocal_rank_sum():
    fused = merge_rrf([[hit("a"), hit("b")], [hit("b"), hit("c")]], k=60)
    scores = {item.node.node_id: item.score for item in fused}
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["c"] == pytest.approx(1 / 62)
    assert ids(fused) == ["b", "a", "c"]
    assert fused[0].score_parts["rrf"] == pytest.approx(scores["b"])


def test_r_rrf_1_k_from_argument():
    fused = merge_rrf([[hit("a")], [hit("b"), hit("a")]], k=1)
    assert {i.node.node_id: i.score for i in fused}["a"] == pytest.approx(1 / 2 + 1 / 3)


def test_weighted_rrf_lets_a_heavier_list_lead():
    # The R-HYB-1 ranking as a weighted vote (hybrid.fusion: rrf): weight 3 on the first
    # list outvotes two legs that agree with each other.
    lists = [[hit("a"), hit("b")], [hit("b"), hit("a")], [hit("b"), hit("a")]]
    assert ids(merge_rrf(lists, k=60)) == ["b", "a"]
    weighted = merge_rrf(lists, k=60, weights=(3.0, 1.0, 1.0))
    assert ids(weighted) == ["a", "b"]
    assert weighted[0].score == pytest.approx(3 / 61 + 2 / 62)


def test_weighted_rrf_rejects_a_weight_per_list_mismatch_or_negative_weight():
    with pytest.raises(ValueError, match="weights"):
        merge_rrf([[hit("a")], [hit("b")]], weights=(1.0,))
    with pytest.raises(ValueError, match="weights"):
        merge_rrf([[hit("a")], [hit("b")]], weights=(1.0, -0.5))


def test_r_rrf_2_empty_lists_contribute_no_phantom_ranks():
    with_empty = merge_rrf([[], [hit("a"), hit("b")], [], [hit("b")]], k=60)
    without = merge_rrf([[hit("a"), hit("b")], [hit("b")]], k=60)
    assert [(i.node.node_id, i.score) for i in with_empty] == [
        (i.node.node_id, i.score) for i in without
    ]


def test_r_rrf_2_zero_lists_is_empty_not_an_error():
    assert merge_rrf([]) == []
    assert merge_rrf([[], []]) == []


def test_r_rrf_3_single_list_passes_through_unchanged():
    single = [hit("x", score=0.9), hit("y", score=0.4)]
    assert merge_rrf([[], single, []]) == single


def test_r_rrf_4_key_falls_back_to_source_chunk_id_then_document_path():
    a = hit("", source_chunk_id="c1")
    b = hit("", source_chunk_id="c1", collection="chemical")
    c = hit("", document_id="d", path="p")
    d = hit("", document_id="d", path="p")
    fused = merge_rrf([[a, c], [b, d]])
    assert len(fused) == 2


def test_r_rrf_4_shared_chunk_keeps_one_deterministic_copy():
    left = hit("shared", score=0.9, collection="biomed_text")
    right = hit("shared", score=0.2, collection="chemical")
    first = merge_rrf([[left], [right]])
    second = merge_rrf([[right], [left]])
    assert len(first) == 1
    assert first[0].collection == second[0].collection == "biomed_text"


def test_r_rrf_5_dedupe_by_source_chunk_id_keeps_higher_ranked():
    nodes = [
        hit("a1", source_chunk_id="c1", collection="biomed_text"),
        hit("b", source_chunk_id="c2"),
        hit("a2", source_chunk_id="c1", collection="medcpt_text"),
        hit("d1", document_id="doc", path="p/1"),
        hit("d2", document_id="doc", path="p/1"),
        hit("plain"),
    ]
    assert ids(dedupe_cross_collection(nodes)) == ["a1", "b", "d1", "plain"]


def test_r_rrf_6_raw_scores_of_different_spaces_do_not_matter():
    low_space = [hit("a", score=0.001), hit("b", score=0.0005)]
    high_space = [hit("c", score=900.0), hit("d", score=800.0)]
    fused = merge_rrf([low_space, high_space])
    assert ids(fused)[:2] in (["a", "c"], ["c", "a"])
    assert fused[0].score == pytest.approx(1 / 61)


def test_r_inj_1_injects_up_to_min_new_unseen_hits_with_boost():
    merged = [hit("m1", score=0.03), hit("m2", score=0.02)]
    supplement = [
        hit("m1", score=3.0),
        hit("s1", score=2.5),
        hit("s2", score=2.0),
        hit("s3", score=1.0),
    ]
    result = inject_supplement_candidates(merged, supplement, min_new=2)
    assert ids(result) == ["s1", "s2", "m1", "m2"]
    assert result[0].score == pytest.approx(102.5)
    assert result[1].score == pytest.approx(102.0)


def test_r_inj_1_nothing_new_changes_nothing():
    merged = [hit("m1", source_chunk_id="c")]
    assert ids(inject_supplement_candidates(merged, [hit("other", source_chunk_id="c")])) == ["m1"]


node_ids = st.lists(st.sampled_from([f"n{i}" for i in range(12)]), unique=True, max_size=8)
hit_lists = st.lists(node_ids, max_size=5)


def build(lists):
    return [
        [hit(node_id, score=1.0 / (rank + 1)) for rank, node_id in enumerate(ids_)]
        for ids_ in lists
    ]


@settings(max_examples=200, deadline=None)
@given(hit_lists, st.randoms(use_true_random=False))
def test_r_rrf_property_order_independent_across_lists(lists, random):
    shuffled = list(lists)
    random.shuffle(shuffled)
    first = [(i.node.node_id, round(i.score, 12)) for i in merge_rrf(build(lists))]
    second = [(i.node.node_id, round(i.score, 12)) for i in merge_rrf(build(shuffled))]
    assert first == second


@settings(max_examples=200, deadline=None)
@given(hit_lists)
def test_r_rrf_property_no_duplicate_keys(lists):
    result = ids(merge_rrf(build(lists)))
    assert len(result) == len(set(result))
    assert set(result) == {node_id for ids_ in lists for node_id in ids_}


@settings(max_examples=200, deadline=None)
@given(hit_lists)
def test_r_rrf_property_empty_list_changes_nothing(lists):
    base = [(i.node.node_id, i.score) for i in merge_rrf(build(lists))]
    padded = [(i.node.node_id, i.score) for i in merge_rrf([*build(lists), []])]
    assert base == padded


@settings(max_examples=200, deadline=None)
@given(node_ids)
def test_r_rrf_property_single_non_empty_list_passes_through(single):
    built = build([single])[0]
    assert merge_rrf([[], built, []]) == built


def test_r_rrf_equal_fused_scores_tie_whatever_the_list_order():
    # n1 and n2 both get 1/61 + 1/62 + 1/68, summed in opposite orders when the lists are
    # reversed: a left-to-right float sum makes the two differ in the last bit.
    def lists(node, prefix):
        fill = [f"{prefix}{i}" for i in range(8)]
        return [[node], [fill[0], node], [*fill[1:8], node]]

    first, second = lists("n1", "a"), lists("n2", "b")
    forward = merge_rrf(build(first + second))
    backward = merge_rrf(build(first[::-1] + second))
    assert ids(forward) == ids(backward)
    assert ids(forward)[:2] == ["n1", "n2"]  # an exact tie, broken by key
    assert forward[0].score == forward[1].score
