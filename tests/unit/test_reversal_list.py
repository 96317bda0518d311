"""A-44: a reversal question's short BM25 query (A-32) joins the plan's candidates as its
own RRF list after R-HYB-1, so the antidote's chunk is not lost to the long question's
words and vector."""

import asyncio

import pytest

from pipeline.ports import ModelPorts, RetrieverPorts
from pipeline.retriever import Retriever
from pipeline.schema import SearchRequest
from pipeline.settings import PipelineSettings
from tests.support import corpus
from tests.support.fakes import (
    HashingTextEncoder,
    InMemoryRegistry,
    InMemoryVectorStore,
    OverlapCrossEncoder,
)

pytestmark = pytest.mark.unit

PRADAXA = "Pradaxa (dabigatran etexilate) — EMA package leaflet"
SECTIONS = [
    corpus.Section(
        "pradaxa",
        PRADAXA,
        section,
        text,
        ("dabigatran",),
    )
    for section, text in [
        (
            "dosage_and_administration",
            "Swallow Pradaxa capsules whole with water. If "
            "you take more Pradaxa capsules than you should, you may be bleeding; the "
            "hospital may give you a medicine.",
        ),
        (
            "warnings",
            "My mum should tell her doctor before taking Pradaxa capsules if she "
            "is bleeding; Pradaxa capsules can cause bleeding in the hospital.",
        ),
        (
            "adverse_reactions",
            "Pradaxa capsules can cause bleeding: in the nose, the "
            "gums, the urine; the week's worth of side effects.",
        ),
        (
            "storage",
            "Keep Pradaxa capsules in the blister; a week's worth of capsules in their pack.",
        ),
        (
            "description",
            "Each Pradaxa capsule contains dabigatran etexilate; capsules "
            "are sold in packs for a whole week's worth of doses.",
        ),
    ]
] + [
    corpus.Section(
        "praxbind",
        "Praxbind (idarucizumab) — EMA package leaflet",
        "indications_and_usage",
        "Idarucizumab is a specific reversal agent for dabigatran, the antidote used "
        "when its effects must be reversed quickly.",
        ("idarucizumab",),
    )
]
QUESTION = (
    "my mum swallowed a whole week's worth of her dabigatran capsules and is bleeding, "
    "can the hospital undo it?"
)


@pytest.fixture(scope="module")
def stores(vocabulary):
    encoder, store, registry = HashingTextEncoder(), InMemoryVectorStore(), InMemoryRegistry()

    async def fill():
        nodes, lexical = corpus.text_nodes(vocabulary, SECTIONS)
        await store.upsert(
            "biomed_text", nodes, encoder.encode_sync([n.text for n in nodes]), lexical
        )
        await registry.register_documents(corpus.documents(SECTIONS))

    asyncio.run(fill())
    return store, registry


async def first_stage(
    stores, vocabulary, on: bool, fusion: bool = True
) -> tuple[list[str], list[str]]:
    store, registry = stores
    encoder = HashingTextEncoder()
    models = ModelPorts(
        encoders={"pubmedbert": encoder, "molformer": encoder, "general-text": encoder},
        cross_encoder=OverlapCrossEncoder(),
    )
    settings = PipelineSettings(
        hybrid={"fusion": "replace", "reversal_list": on},
        stages={"hybrid_fusion": fusion, "tier1": False, "supplement": False, "tier2": False},
    )
    retriever = Retriever(settings, RetrieverPorts(store, models, registry), vocabulary)
    response = await retriever.search(
        SearchRequest(query=QUESTION, similarity_threshold=0.0, rerank=False, page_size=10)
    )
    plan = next(stage for stage in response.trace if stage.name == "plan:biomed_text")
    return [chunk.document_id for chunk in response.chunks], plan.decisions


async def test_a44_the_short_querys_hits_join_the_plan_as_their_own_list(stores, vocabulary):
    on, decisions = await first_stage(stores, vocabulary, on=True)
    off, plain = await first_stage(stores, vocabulary, on=False)
    assert any(d.startswith("reversal_list:") for d in decisions)
    assert not any(d.startswith("reversal_list:") for d in plain)
    # the antidote's chunk tops the short query; as its own list it rises in the plan
    assert on.index("praxbind") < off.index("praxbind")


async def test_a44_without_r_hyb_1_the_bm25_leg_already_holds_the_short_query(stores, vocabulary):
    on, decisions = await first_stage(stores, vocabulary, on=True, fusion=False)
    off, _ = await first_stage(stores, vocabulary, on=False, fusion=False)
    assert not any(d.startswith("reversal_list:") for d in decisions)
    assert on == off  # the RRF rung of the ablation ladder is A-32's
