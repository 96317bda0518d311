"""Query-set readers on small fixtures, and the shipped sets' shapes."""

import json
from pathlib import Path

import pytest

from pipeline.evaluation.ablations import ABLATIONS, resolve_ablations, settings_for
from pipeline.evaluation.querysets import read_beir, read_jsonl_queries, read_qrels
from pipeline.settings import PipelineSettings, StageSwitches

pytestmark = pytest.mark.unit

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.fixture
def beir_folder(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "queries.jsonl").write_text(
        "\n".join(
            json.dumps(row)
            for row in [
                {"_id": "q1", "text": "statins breast cancer"},
                {"_id": "q2", "text": "deafness"},
                {"_id": "q3", "text": "unjudged"},
            ]
        )
        + "\n"
    )
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\tMED-10\t2\nq1\tMED-11\t1\nq2\tMED-20\t0\nq2\tMED-21\t1\n"
    )
    return tmp_path


class TestBeir:
    def test_reads_queries_and_graded_qrels(self, beir_folder):
        query_set = read_beir(beir_folder, name="tiny")
        assert query_set.judgement == "qrels"
        assert [q.query_id for q in query_set] == ["q1", "q2"]  # unjudged q3 dropped
        first = query_set.queries[0]
        assert first.text == "statins breast cancer"
        assert first.judgements == {"MED-10": 2, "MED-11": 1}
        assert first.relevant_ids == ("MED-10", "MED-11")
        assert query_set.queries[1].relevant_ids == ("MED-21",)  # grade 0 is not relevant

    def test_split_queries_file_wins(self, beir_folder):
        (beir_folder / "queries.test.jsonl").write_text('{"_id": "q2", "text": "hearing"}\n')
        assert [q.text for q in read_beir(beir_folder)] == ["hearing"]

    def test_limit(self, beir_folder):
        assert len(read_beir(beir_folder).limited(1)) == 1

    def test_bad_qrels_row(self, tmp_path):
        path = tmp_path / "bad.tsv"
        path.write_text("q1\tMED-1\n")
        with pytest.raises(ValueError, match="3 tab-separated"):
            read_qrels(path)

    def test_missing_queries(self, tmp_path):
        (tmp_path / "qrels").mkdir()
        (tmp_path / "qrels" / "test.tsv").write_text("q\td\t1\n")
        with pytest.raises(FileNotFoundError):
            read_beir(tmp_path)


class TestJsonl:
    def test_reads_name_judged_rows(self, tmp_path):
        path = tmp_path / "dev.jsonl"
        path.write_text(
            json.dumps(
                {
                    "id": "d-1",
                    "query": "Cabometyx dosage",
                    "k": 5,
                    "expected_doc_name_substrings": ["Cabometyx"],
                    "expected_section": "dosage_and_administration",
                }
            )
            + "\n\n"
            + json.dumps(
                {
                    "id": "e-1",
                    "query": "savolitinib",
                    "workflow": "compound_match",
                    "must_include_terms": ["savolitinib"],
                    "expected_doc_name_substrings": ["savolitinib"],
                    "route_hint": {"collections": ["eagle_chemical"]},
                }
            )
            + "\n"
        )
        query_set = read_jsonl_queries(path)
        assert query_set.judgement == "name"
        first, second = query_set.queries
        assert first.expected_names == ("cabometyx",)
        assert first.expected_section == "dosage_and_administration"
        assert second.k == 5
        assert second.route_hint == {"collections": ("eagle_chemical",)}
        assert second.label_workflow == "compound_match"
        assert second.must_include_terms == ("savolitinib",)

    def test_rejects_a_row_without_query(self, tmp_path):
        path = tmp_path / "bad.jsonl"
        path.write_text('{"id": "x"}\n')
        with pytest.raises(ValueError, match="needs a query"):
            read_jsonl_queries(path)

    def test_rejects_non_json(self, tmp_path):
        path = tmp_path / "bad.jsonl"
        path.write_text("not json\n")
        with pytest.raises(ValueError, match="not JSON"):
            read_jsonl_queries(path)


@pytest.mark.skipif(not SHARED.exists(), reason="shared data not present")
class TestShippedSets:
    def test_nfcorpus_test_split(self):
        query_set = read_beir(SHARED / "nfcorpus")
        assert len(query_set) == 323
        assert all(q.relevant_ids for q in query_set)

    def test_drug_kb_dev(self):
        query_set = read_jsonl_queries(SHARED / "drug_kb_dev.jsonl")
        assert len(query_set) == 26
        assert sum(1 for q in query_set if q.expected_section) == 7

    def test_eaglerag_aligned(self):
        query_set = read_jsonl_queries(SHARED / "eaglerag_eval" / "eval_queries.aligned.jsonl")
        assert len(query_set) == 46
        assert all(q.route_hint is not None for q in query_set)


class TestAblations:
    def test_all_and_full(self):
        assert [a.name for a in resolve_ablations("all")] == [a.name for a in ABLATIONS]
        assert [a.name for a in resolve_ablations("full")] == ["full"]

    def test_ladder_order_is_kept(self):
        assert [a.name for a in resolve_ablations("full,bm25")] == ["bm25", "full"]

    def test_unknown_name_lists_the_valid_ones(self):
        with pytest.raises(ValueError, match="valid: all, bm25"):
            resolve_ablations("bm25,tier3")

    def test_each_row_adds_one_stage(self):
        switched = [sum(a.stages.model_dump().values()) for a in ABLATIONS]
        assert switched == [1, 1, 2, 3, 4, 5, 6]
        assert ABLATIONS[-1].stages.model_dump() == dict.fromkeys(
            ABLATIONS[-1].stages.model_dump(), True
        )

    def test_a_stage_switched_off_in_the_config_is_off_in_every_row(self):
        configured = PipelineSettings(stages=StageSwitches(tier1=False))
        full = settings_for(configured, ABLATIONS[-1])
        assert full.stages.tier1 is False and full.stages.tier2 is True
        assert settings_for(PipelineSettings(), ABLATIONS[0]).stages.dense is False
