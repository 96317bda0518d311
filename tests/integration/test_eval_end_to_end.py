"""The evaluation runner end to end on real Milvus Lite and PostgreSQL: a tiny corpus,
every ablation row, corpus / route / ranking classes from the real registry and the
recorded candidate pool, and the three report files. The encoder is the hashing
bag-of-words fake (the models are tested in tests/models), so this stays fast."""

from __future__ import annotations

import json

import pytest

from deployments.runtime import EmbeddedPostgres
from pipeline.evaluation import (
    ABLATIONS,
    AblationTarget,
    EvalOptions,
    EvalQuery,
    QuerySet,
    RecordingVectorStore,
    StoreCorpusProbe,
    evaluate,
    settings_for,
)
from pipeline.evaluation.report import write_reports
from pipeline.ports import ModelPorts, RetrieverPorts
from pipeline.retriever import Retriever
from pipeline.settings import PipelineSettings
from pipeline.stores.milvus import MilvusVectorStore
from pipeline.stores.registry import PostgresDocumentRegistry
from tests.support import corpus
from tests.support.budgets import SLOW_MACHINE_BUDGETS
from tests.support.fakes import HashingTextEncoder, OverlapCrossEncoder

pytestmark = [pytest.mark.integration]

ENCODER = HashingTextEncoder(dimension=64)
# the classes of the rows are checked here, not speed: no plan may time out on a busy CI
SETTINGS = PipelineSettings(budgets=SLOW_MACHINE_BUDGETS)


@pytest.fixture(scope="module")
async def eval_stores(milvus_server, postgres_server, vocabulary_module):
    store = MilvusVectorStore(milvus_server.uri, collection_prefix="it_eval_")
    database = EmbeddedPostgres(postgres_server.data_dir, database="eval_it").start()
    registry = PostgresDocumentRegistry(database.dsn, max_size=2)
    await registry.open()
    nodes, lexical = corpus.text_nodes(vocabulary_module)
    await store.ensure_collection("biomed_text", ENCODER.dimension, hybrid=True)
    await store.upsert("biomed_text", nodes, ENCODER.encode_sync([n.text for n in nodes]), lexical)
    compounds = corpus.compound_nodes()
    await store.ensure_collection("chemical", ENCODER.dimension, hybrid=False)
    await store.upsert(
        "chemical", compounds, ENCODER.encode_sync([n.metadata["smiles"] for n in compounds])
    )
    await registry.register_documents(corpus.documents())
    try:
        yield store, registry
    finally:
        await registry.close()
        for name in ("biomed_text", "chemical"):
            await store.drop_collection(name)
        await store.close()


@pytest.fixture(scope="module")
def vocabulary_module():
    from pipeline.vocabulary import default_vocabulary

    return default_vocabulary()


QUERIES = QuerySet(
    "tiny",
    "name",
    (
        EvalQuery(
            "hit",
            "Tagrisso side effects",
            k=3,
            expected_names=("tagrisso",),
            expected_section="adverse_reactions",
        ),
        EvalQuery("corpus", "erlotinib rash", k=3, expected_names=("tarceva",)),
        EvalQuery("route", "sleep duration and blood pressure", k=3, expected_names=("aspirin",)),
        EvalQuery(
            "rank",
            "Lynparza nausea tiredness",
            k=1,
            expected_names=("lynparza",),
            expected_section="dosage_and_administration",
        ),
    ),
)


async def test_eval_runner_on_real_stores(eval_stores, vocabulary_module, tmp_path):
    store, registry = eval_stores
    pool = RecordingVectorStore(store)
    encoders = {"pubmedbert": ENCODER, "molformer": ENCODER, "general-text": ENCODER}
    targets = []
    for ablation in ABLATIONS:
        retriever = Retriever(
            settings_for(SETTINGS, ablation),
            RetrieverPorts(
                store=pool,
                models=ModelPorts(encoders=encoders, cross_encoder=OverlapCrossEncoder()),
                registry=registry,
            ),
            vocabulary_module,
        )
        targets.append(AblationTarget(ablation.name, ablation.description, retriever.search, pool))

    async def vector(collection, text):
        return ENCODER.encode_sync([text])[0]

    probe = StoreCorpusProbe(registry=registry, store=store, collection_vector=vector)
    run = await evaluate(QUERIES, targets, EvalOptions(page_size=5), probe, dataset="tiny")

    assert [summary.name for summary in run.summaries] == [a.name for a in ABLATIONS]
    errors = [(row.ablation, row.query_id, row.error) for row in run.rows if row.error]
    assert errors == []
    # a stage over budget contributes nothing and would change the classes below silently
    assert [(row.ablation, row.query_id) for row in run.rows if row.degraded] == []
    full = {row.query_id: row for row in run.rows_of("full")}
    assert full["hit"].failure == "hit"
    assert full["corpus"].failure == "corpus_gap"
    assert full["route"].failure == "route_gap"
    assert full["rank"].failure == "ranking_gap"  # the dosage chunk is recalled, not first
    assert full["rank"].first_relevant_rank is not None
    assert full["rank"].pool_size and full["rank"].pool_size >= 2
    assert "biomed_text" in full["hit"].searched_collections

    paths = write_reports(run, tmp_path)
    data = json.loads(paths["json"].read_text())
    assert len(data["rows"]) == len(ABLATIONS) * len(QUERIES)
    assert paths["chart"].stat().st_size > 1000
