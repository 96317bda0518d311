"""Evaluation metrics against hand-computed values (issue 6 acceptance)."""

from math import log2

import pytest

from pipeline.evaluation.judging import ResultItem, judge
from pipeline.evaluation.metrics import (
    dcg,
    first_occurrences,
    first_relevant_rank,
    hit_at_k,
    ndcg_at_k,
    rank_by_score,
    recall_at_k,
    reciprocal_rank,
    term_coverage,
)
from pipeline.evaluation.querysets import EvalQuery
from pipeline.evaluation.runner import query_metrics

pytestmark = pytest.mark.unit


class TestHitAndRank:
    def test_first_relevant_rank_is_one_based(self):
        assert first_relevant_rank([0, 0, 1, 2]) == 3
        assert first_relevant_rank([0, 0]) is None

    @pytest.mark.parametrize(
        ("gains", "k", "expected"),
        [([0, 0, 1], 3, 1.0), ([0, 0, 1], 2, 0.0), ([], 5, 0.0), ([2], 1, 1.0)],
    )
    def test_hit_at_k(self, gains, k, expected):
        assert hit_at_k(gains, k) == expected

    def test_negative_grades_are_not_relevant(self):
        assert hit_at_k([-1, 0], 2) == 0.0

    @pytest.mark.parametrize(
        ("gains", "k", "expected"),
        [([0, 1], 10, 0.5), ([0, 0, 0, 2], 10, 0.25), ([1, 1], 10, 1.0), ([0] * 10 + [1], 10, 0.0)],
    )
    def test_reciprocal_rank_cut_at_k(self, gains, k, expected):
        assert reciprocal_rank(gains, k) == expected


class TestRecall:
    def test_plain_recall_divides_by_all_relevant(self):
        # 2 of 4 relevant documents in the first 3 ranks
        assert recall_at_k([1, 0, 2], relevant_count=4, k=3) == 0.5

    def test_capped_recall_divides_by_min_relevant_k(self):
        assert recall_at_k([1, 0, 2], relevant_count=4, k=2, capped=True) == 0.5  # 1 / 2
        assert recall_at_k([1, 0, 2], relevant_count=4, k=3, capped=True) == pytest.approx(2 / 3)

    def test_no_relevant_documents_gives_zero(self):
        assert recall_at_k([1], relevant_count=0, k=5) == 0.0


class TestNdcg:
    def test_graded_ndcg_by_hand(self):
        # run: a(2) x(0) c(1) y(0) b(2); qrels: a=2, b=2, c=1, d=1 (d not retrieved)
        gains = [2, 0, 1, 0, 2]
        dcg_value = 2 / log2(2) + 1 / log2(4) + 2 / log2(6)  # 3.2737056...
        ideal = 2 / log2(2) + 2 / log2(3) + 1 / log2(4) + 1 / log2(5)  # 4.1925360...
        assert dcg(gains, 10) == pytest.approx(3.2737056144690831)
        assert ndcg_at_k(gains, [2, 2, 1, 1], 10) == pytest.approx(dcg_value / ideal)
        assert ndcg_at_k(gains, [2, 2, 1, 1], 10) == pytest.approx(0.78084, abs=1e-5)

    def test_ideal_uses_every_judged_document_and_ignores_zero_grades(self):
        # one relevant retrieved at rank 1, but 2 more relevant judged and not retrieved
        expected = 1.0 / (1 + 1 / log2(3) + 1 / log2(4))
        assert ndcg_at_k([1, 0, 0], [1, 1, 1, 0, 0], 10) == pytest.approx(expected)

    def test_cut_off_at_k(self):
        assert ndcg_at_k([0] * 10 + [2], [2], 10) == 0.0
        assert ndcg_at_k([0, 2], [2], 1) == 0.0

    def test_perfect_ranking_is_one_and_no_relevant_is_zero(self):
        assert ndcg_at_k([2, 1], [1, 2], 10) == pytest.approx(1.0)
        assert ndcg_at_k([0, 0], [0, 0], 10) == 0.0

    def test_ties_in_the_ideal_ranking_do_not_matter(self):
        # equal grades: any order of the ideal gives the same IDCG
        assert ndcg_at_k([1, 1], [1, 1], 10) == pytest.approx(1.0)

    def test_score_ties_follow_trec_eval_order(self):
        # trec_eval sorts by score descending, then document id descending
        order = rank_by_score({"d1": 1.0, "d2": 1.0, "d3": 2.0})
        assert order == ["d3", "d2", "d1"]
        qrels = {"d1": 1}
        gains = [qrels.get(doc, 0) for doc in order]
        assert ndcg_at_k(gains, qrels.values(), 10) == pytest.approx(1 / log2(4))  # 0.5


class TestDedupeAndCoverage:
    def test_first_occurrences_keep_best_rank(self):
        assert first_occurrences(["a", "a", "b", "a", "c"]) == ["a", "b", "c"]

    def test_a_document_counts_once_at_its_best_rank(self):
        query = EvalQuery("q", "text", k=10, judgements={"B": 1})
        chunks = [
            ResultItem("a1", "A", "", "", ""),
            ResultItem("a2", "A", "", "", ""),
            ResultItem("b1", "B", "", "", ""),
        ]
        ranking = judge(query, chunks, "qrels")
        assert [item.document_id for item in ranking.items] == ["A", "B"]
        assert reciprocal_rank(ranking.gains) == 0.5  # rank 2, not 3

    def test_term_coverage(self):
        texts = ["Osimertinib tablets", "EGFR mutation"]
        assert term_coverage(texts, ["osimertinib", "egfr", "MET"]) == pytest.approx(2 / 3)
        assert term_coverage(texts, []) is None


class TestQueryMetrics:
    def test_name_judgement_with_section(self):
        query = EvalQuery(
            "d-reg-01",
            "before taking Iressa",
            k=5,
            expected_names=("iressa",),
            expected_section="warnings",
            must_include_terms=("Iressa", "liver"),
        )
        results = [
            ResultItem(
                "c1",
                "iressa",
                "Iressa (gefitinib) — EMA package leaflet",
                "dosage_and_administration",
                "biomed_text",
                "Take Iressa daily",
            ),
            ResultItem(
                "c2",
                "tagrisso",
                "Tagrisso (osimertinib) — EMA package leaflet",
                "warnings",
                "biomed_text",
                "Talk to your doctor",
            ),
            ResultItem(
                "c3",
                "iressa",
                "Iressa (gefitinib) — EMA package leaflet",
                "warnings",
                "biomed_text",
                "Tell your doctor about lung problems",
            ),
        ]
        ranking = judge(query, results, "name")
        metrics = query_metrics(query, ranking, "name", relevant_count=1)
        assert metrics["hit@5"] == 1.0
        assert metrics["hit@5_name"] == 1.0
        assert metrics["mrr@10"] == pytest.approx(1 / 3)  # strict hit at rank 3
        assert metrics["section_hit"] == 1.0
        assert metrics["recall@5"] == 1.0
        assert metrics["term_coverage"] == 0.5  # "iressa" found, "liver" not
        assert "ndcg@10" not in metrics

    def test_name_recall_unknown_without_corpus_facts(self):
        query = EvalQuery("q", "x", k=5, expected_names=("a",))
        ranking = judge(query, [ResultItem("1", "d", "A label", "", "")], "name")
        metrics = query_metrics(query, ranking, "name", relevant_count=None)
        assert metrics["recall@5"] is None
        assert metrics["section_hit"] is None

    def test_qrels_metrics(self):
        query = EvalQuery("q", "x", k=10, judgements={"A": 2, "B": 1, "C": 0})
        results = [ResultItem("1", "C", "", "", ""), ResultItem("2", "A", "", "", "")]
        metrics = query_metrics(query, judge(query, results, "qrels"), "qrels", None)
        assert metrics["hit@10"] == 1.0
        assert metrics["recall@10"] == 0.5
        assert metrics["mrr@10"] == 0.5
        assert metrics["ndcg@10"] == pytest.approx((2 / log2(3)) / (2 + 1 / log2(3)))
