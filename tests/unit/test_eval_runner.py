"""The evaluation runner, failure classes, pool recording and reports over the in-memory
fakes of the ports (the real stores are exercised in tests/integration)."""

import asyncio
import json

import pytest

from pipeline.evaluation.ablations import ABLATIONS, settings_for
from pipeline.evaluation.diagnosis import CorpusFacts, StoreCorpusProbe, classify_miss
from pipeline.evaluation.eagle import route_accuracy
from pipeline.evaluation.querysets import EvalQuery, QuerySet
from pipeline.evaluation.recording import RecordingVectorStore
from pipeline.evaluation.report import (
    markdown_answerable_table,
    markdown_misses,
    markdown_table,
    write_reports,
)
from pipeline.evaluation.runner import AblationTarget, EvalOptions, evaluate
from pipeline.ports import ModelPorts, RetrieverPorts
from pipeline.retriever import Retriever
from pipeline.schema import ScopeFilter
from pipeline.settings import PipelineSettings
from tests.support import corpus
from tests.support.fakes import (
    HashingTextEncoder,
    InMemoryRegistry,
    InMemoryVectorStore,
    OverlapCrossEncoder,
)

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def stores(vocabulary):
    encoder = HashingTextEncoder()
    store = InMemoryVectorStore()
    registry = InMemoryRegistry()

    async def fill():
        nodes, lexical = corpus.text_nodes(vocabulary)
        await store.upsert(
            "biomed_text", nodes, encoder.encode_sync([n.text for n in nodes]), lexical
        )
        compounds = corpus.compound_nodes()
        await store.upsert(
            "chemical", compounds, encoder.encode_sync([n.metadata["smiles"] for n in compounds])
        )
        await registry.register_documents(corpus.documents())

    asyncio.run(fill())
    return store, registry


def targets(stores, vocabulary, names=None):
    store, registry = stores
    pool = RecordingVectorStore(store)
    encoder = HashingTextEncoder()
    rows = []
    for ablation in ABLATIONS:
        if names and ablation.name not in names:
            continue
        retriever = Retriever(
            settings_for(PipelineSettings(), ablation),
            RetrieverPorts(
                store=pool,
                models=ModelPorts(
                    encoders={"pubmedbert": encoder, "molformer": encoder, "general-text": encoder},
                    cross_encoder=OverlapCrossEncoder(),
                ),
                registry=registry,
            ),
            vocabulary,
        )
        rows.append(AblationTarget(ablation.name, ablation.description, retriever.search, pool))
    return rows


def probe(stores):
    store, registry = stores
    encoder = HashingTextEncoder()

    async def vector(collection, text):
        return encoder.encode_sync([text])[0]

    return StoreCorpusProbe(registry=registry, store=store, collection_vector=vector)


NAME_SET = QuerySet(
    "tiny",
    "name",
    (
        EvalQuery(
            "q-hit",
            "Tagrisso side effects",
            k=3,
            expected_names=("tagrisso",),
            expected_section="adverse_reactions",
            must_include_terms=("Tagrisso",),
        ),
        EvalQuery("q-corpus", "erlotinib rash", k=3, expected_names=("tarceva",)),
        EvalQuery(
            "q-section",
            "Iressa storage",
            k=3,
            expected_names=("iressa",),
            expected_section="storage",
        ),
        EvalQuery("q-route", "sleep duration and blood pressure", k=3, expected_names=("aspirin",)),
    ),
)


class TestClassifyMiss:
    def test_order_corpus_route_recall_ranking(self):
        stored = CorpusFacts({"doc": ("chemical",)})
        assert (
            classify_miss(hit=True, facts=None, searched_collections=None, recalled=None)[0]
            == "hit"
        )
        assert (
            classify_miss(
                hit=False,
                facts=CorpusFacts({}, "none"),
                searched_collections={"biomed_text"},
                recalled=[],
            )[0]
            == "corpus_gap"
        )
        assert (
            classify_miss(
                hit=False, facts=stored, searched_collections={"biomed_text"}, recalled=[]
            )[0]
            == "route_gap"
        )
        assert (
            classify_miss(hit=False, facts=stored, searched_collections={"chemical"}, recalled=[])[
                0
            ]
            == "recall_gap"
        )
        kind, why = classify_miss(
            hit=False,
            facts=stored,
            searched_collections={"chemical"},
            recalled=["dense:chemical@7"],
        )
        assert kind == "ranking_gap" and "dense:chemical@7" in why

    def test_unknown_pool_is_unclassified(self):
        assert (
            classify_miss(hit=False, facts=None, searched_collections=None, recalled=None)[0]
            == "unclassified"
        )


class TestRecordingStore:
    async def test_records_only_inside_a_recording(self, stores):
        store, _ = stores
        pool = RecordingVectorStore(store)
        vector = HashingTextEncoder().encode_sync(["lung"])[0]
        await pool.search_dense("biomed_text", vector, 3)
        with pool.recording() as recording:
            await pool.search_lexical("biomed_text", "tagrisso", 3)
            await pool.search_dense("biomed_text", vector, 2, ScopeFilter(document_ids=("iressa",)))
        assert [(c.kind, c.scoped_to_documents) for c in recording.calls] == [
            ("lexical", False),
            ("dense", True),
        ]
        assert recording.searched_collections == {"biomed_text"}
        assert all(item.document_id == "iressa" for item in recording.calls[1].hits)


class TestRunner:
    async def test_name_set_rows_and_failure_classes(self, stores, vocabulary):
        run = await evaluate(
            NAME_SET,
            targets(stores, vocabulary),
            EvalOptions(page_size=5),
            probe(stores),
            dataset="tiny",
        )
        assert [s.name for s in run.summaries] == [a.name for a in ABLATIONS]
        assert len(run.rows) == len(ABLATIONS) * len(NAME_SET)
        full = {row.query_id: row for row in run.rows_of("full")}
        assert full["q-hit"].failure == "hit"
        assert full["q-hit"].first_relevant_rank == 1
        assert full["q-hit"].workflow == "drug_entity"
        assert full["q-hit"].metrics["section_hit"] == 1.0
        assert full["q-hit"].metrics["term_coverage"] == 1.0
        assert full["q-corpus"].failure == "corpus_gap"
        assert full["q-section"].failure == "corpus_gap"
        assert "storage" in full["q-section"].failure_detail
        assert full["q-route"].failure == "route_gap"
        assert full["q-route"].route == ["biomed_text"]
        summary = run.summaries[-1]
        assert summary.metrics["hit@3"] == 0.25
        assert summary.failures == {"hit": 1, "corpus_gap": 2, "route_gap": 1}
        assert summary.metrics["section_hit"] == 0.5
        assert summary.answerable == 2  # q-hit and q-route have stored relevant documents
        assert summary.answerable_metrics["hit@3"] == 0.5

    async def test_recall_and_ranking_gaps(self, stores, vocabulary):
        query_set = QuerySet(
            "gaps",
            "name",
            (
                # k=1, one result: Iressa's adverse reactions chunk is recalled (BM25 on
                # "Iressa") but outranked -> ranking gap, or not recalled -> recall gap.
                EvalQuery(
                    "q",
                    "Iressa diarrhoea skin rash liver",
                    k=1,
                    expected_names=("iressa",),
                    expected_section="indications_and_usage",
                ),
            ),
        )
        run = await evaluate(
            query_set,
            targets(stores, vocabulary, {"bm25", "dense"}),
            EvalOptions(page_size=1),
            probe(stores),
        )
        classes = {row.ablation: row.failure for row in run.rows}
        assert set(classes.values()) <= {"ranking_gap", "recall_gap"}
        assert "ranking_gap" in classes.values() or "recall_gap" in classes.values()

    async def test_qrels_set_dedupes_documents(self, stores, vocabulary):
        query_set = QuerySet(
            "qrels",
            "qrels",
            (
                EvalQuery(
                    "q1", "Tagrisso lung problems", k=10, judgements={"tagrisso": 2, "iressa": 1}
                ),
            ),
        )
        run = await evaluate(
            query_set,
            targets(stores, vocabulary, {"full"}),
            EvalOptions(page_size=10),
            probe(stores),
        )
        row = run.rows[0]
        ids = [item["document_id"] for item in row.top]
        assert len(ids) == len(set(ids))
        assert row.metrics["ndcg@10"] > 0.5
        assert row.failure == "hit"

    async def test_checkpoint_after_each_ablation(self, stores, vocabulary):
        seen = []
        query_set = QuerySet("x", "name", NAME_SET.queries[:1])
        await evaluate(
            query_set,
            targets(stores, vocabulary, {"bm25", "dense"}),
            EvalOptions(),
            on_ablation=lambda run: seen.append(len(run.summaries)),
        )
        assert seen == [1, 2]

    async def test_errors_become_rows(self, vocabulary):
        async def broken(request):
            raise RuntimeError("store down")

        query_set = QuerySet("x", "name", (EvalQuery("q", "x", k=5, expected_names=("a",)),))
        run = await evaluate(query_set, [AblationTarget("full", "broken", broken)], EvalOptions())
        assert run.rows[0].failure == "error"
        assert run.summaries[0].errors == 1


class TestReports:
    async def test_markdown_json_and_chart(self, stores, vocabulary, tmp_path):
        run = await evaluate(
            NAME_SET,
            targets(stores, vocabulary, {"bm25", "full"}),
            EvalOptions(page_size=5),
            probe(stores),
            dataset="tiny",
        )
        table = markdown_table(run)
        assert table.splitlines()[0].startswith("| ablation | mrr@10 | hit@3")
        assert "bm25 (BM25 only)" in table and "full (+ Tier-2 (full))" in table
        assert "route_gap" in markdown_misses(run)
        assert markdown_answerable_table(run).startswith("On the 2 of 4 queries")
        paths = write_reports(run, tmp_path)
        data = json.loads(paths["json"].read_text())
        assert len(data["rows"]) == 8 and data["summaries"][1]["name"] == "full"
        assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "| ablation |" in paths["markdown"].read_text()


class TestEagle:
    async def test_route_hints(self, stores, vocabulary):
        query_set = QuerySet(
            "eagle",
            "name",
            (
                EvalQuery(
                    "e1",
                    "osimertinib molecular formula SMILES compound",
                    k=5,
                    expected_names=("osimertinib",),
                    route_hint={"umls": ("osimertinib",), "collections": ("eagle_chemical",)},
                    label_workflow="compound_match",
                ),
                EvalQuery(
                    "e2",
                    "gefitinib prescribing information label warnings",
                    k=5,
                    expected_names=("iressa",),
                    route_hint={"umls": ("gefitinib",)},
                    label_workflow="regulatory",
                ),
            ),
        )
        run = await evaluate(query_set, targets(stores, vocabulary, {"full"}), EvalOptions())
        result = route_accuracy(query_set.queries, run.rows, vocabulary)
        assert result["entity_recall"] == 1.0
        assert result["route_accuracy"] == 1.0
        assert result["workflow_agreement"] == 1.0
        assert result["counts"]["with_collection_hint"] == 1
