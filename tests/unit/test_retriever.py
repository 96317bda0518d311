"""Retriever end to end over in-memory fakes of the ports (issue 2 allows fakes here; the
real stores, models and Ray Serve are exercised in tests/integration)."""

import asyncio
from collections import Counter

import pytest

from pipeline.errors import BackendUnavailable, InvalidRequest
from pipeline.ports import ModelPorts, RetrieverPorts
from pipeline.retriever import Retriever
from pipeline.schema import SearchRequest
from pipeline.settings import PipelineSettings
from tests.support import corpus
from tests.support.fakes import (
    FailingCrossEncoder,
    FailingEncoder,
    HashingTextEncoder,
    InMemoryRegistry,
    InMemoryVectorStore,
    OverlapCrossEncoder,
)

pytestmark = pytest.mark.unit

STAGES = {
    "intent",
    "routing",
    "plan:biomed_text",
    "plan:chemical",
    "supplement",
    "rrf",
    "injection",
    "tier2",
    "assembly",
}


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


def make_retriever(stores, vocabulary, *, cross_encoder=None, encoders=None, **settings):
    store, registry = stores
    encoder = HashingTextEncoder()
    roles = {"pubmedbert": encoder, "molformer": encoder, "general-text": encoder}
    roles.update(encoders or {})
    models = ModelPorts(encoders=roles, cross_encoder=cross_encoder or OverlapCrossEncoder())
    ports = RetrieverPorts(store=store, models=models, registry=registry)
    return Retriever(PipelineSettings(**settings), ports, vocabulary)


async def test_search_end_to_end_names_every_stage(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary)
    response = await retriever.search(SearchRequest(query="osimertinib side effects"))
    assert response.intent.workflow == "drug_entity"
    assert [(p.collection, p.encoder) for p in response.route] == [
        ("biomed_text", "pubmedbert"),
        ("chemical", "molformer"),
    ]
    names = {stage.name for stage in response.trace}
    assert names >= STAGES
    top = response.chunks[0]
    assert top.document_id == "tagrisso" and top.biomed_section == "adverse_reactions"
    assert all(c.document_id in {"tagrisso", "cmp-osimertinib"} for c in response.chunks[:3])
    assert response.doc_aggs[0].document_id == "tagrisso"
    assert top.score_parts.ce is not None and top.score_parts.entity == 1.0
    tier2 = next(stage for stage in response.trace if stage.name == "tier2")
    assert "rerank_t2_domain" in tier2.decisions


async def test_smiles_query_routes_to_chemical_only(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary)
    response = await retriever.search(SearchRequest(query=f"SMILES {corpus.GEFITINIB_SMILES}"))
    assert [p.collection for p in response.route] == ["chemical"]
    assert response.chunks[0].document_id == "cmp-gefitinib"


async def test_a3_structure_named_by_its_drug_finds_the_compound(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary)
    response = await retriever.search(SearchRequest(query="SMILES of gefitinib"))
    assert response.intent.workflow == "chemical"
    assert response.chunks[0].document_id == "cmp-gefitinib"
    plan = next(stage for stage in response.trace if stage.name == "plan:chemical")
    assert "structure_exact:1" in plan.decisions


async def test_a3_words_with_slashes_are_not_structures(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary)
    response = await retriever.search(SearchRequest(query="OS/PFS results for osimertinib"))
    assert response.intent.workflow != "chemical"
    assert "biomed_text" in [plan.collection for plan in response.route]


async def test_failed_cross_encoder_falls_back_and_is_recorded(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary, cross_encoder=FailingCrossEncoder())
    response = await retriever.search(SearchRequest(query="osimertinib side effects"))
    tier2 = next(stage for stage in response.trace if stage.name == "tier2")
    assert tier2.degraded and "rerank_t2_fallback_existing_scores" in tier2.decisions
    assert response.chunks


async def test_failed_encoder_skips_its_plans_with_a_trace_entry(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary, encoders={"molformer": FailingEncoder()})
    response = await retriever.search(SearchRequest(query="osimertinib side effects"))
    chemical = next(stage for stage in response.trace if stage.name == "plan:chemical")
    assert chemical.degraded and "plan_failed" in chemical.decisions
    assert response.chunks[0].document_id == "tagrisso"


async def test_every_plan_failing_is_backend_unavailable(stores, vocabulary):
    failing = FailingEncoder()
    retriever = make_retriever(
        stores, vocabulary, encoders={"pubmedbert": failing, "molformer": failing}
    )
    with pytest.raises(BackendUnavailable, match="every retrieval plan failed"):
        await retriever.search(SearchRequest(query="osimertinib side effects"))


async def test_slow_plan_times_out_and_is_recorded(stores, vocabulary):
    class Slow(HashingTextEncoder):
        async def encode(self, texts, titles=None):
            await asyncio.sleep(1.0)
            return self.encode_sync(texts)

    retriever = make_retriever(
        stores, vocabulary, encoders={"molformer": Slow()}, budgets={"plan_ms": 100}
    )
    response = await retriever.search(SearchRequest(query="osimertinib side effects"))
    chemical = next(stage for stage in response.trace if stage.name == "plan:chemical")
    assert "plan_timeout" in chemical.decisions


async def test_a_stalled_registry_degrades_scope_and_names_instead_of_failing(stores, vocabulary):
    """PostgreSQL waiting on its pool (down, or wedged) must not use up the request:
    the scope lookup and the Tier-2 name back-fill give up at the plan budget."""
    store, registry = stores

    class Stalled(type(registry)):
        async def collections_for_scope(self, scope):
            await asyncio.sleep(30)

        async def lookup_documents(self, document_ids):
            await asyncio.sleep(30)

    stalled = Stalled()
    stalled.__dict__.update(registry.__dict__)  # the same registered documents
    retriever = make_retriever((store, stalled), vocabulary, budgets={"plan_ms": 200})
    response = await retriever.search(
        SearchRequest(query="osimertinib side effects", kb_ids=["labels"])
    )
    scope = next(stage for stage in response.trace if stage.name == "scope")
    assert scope.degraded and response.chunks  # the route alone still answers


async def test_cross_encoder_never_sees_more_than_the_cap(stores, vocabulary):
    cross_encoder = OverlapCrossEncoder()
    retriever = make_retriever(
        stores, vocabulary, cross_encoder=cross_encoder, tier2={"max_candidates": 4}
    )
    await retriever.search(
        SearchRequest(query="side effects diarrhoea rash", page_size=1, similarity_threshold=0.0)
    )
    assert cross_encoder.batch_sizes and max(cross_encoder.batch_sizes) <= 4


async def test_a1_page_four_continues_the_reranked_order(stores, vocabulary):
    # A-1 (replaces R-REQ-3's switch): page 4 is the continuation of pages 1..3 of the
    # same reranked order, not a slice of another order.
    cross_encoder = OverlapCrossEncoder()
    retriever = make_retriever(stores, vocabulary, cross_encoder=cross_encoder)

    async def page(number, size):
        return await retriever.search(
            SearchRequest(
                query="side effects tablets dose",
                page=number,
                page_size=size,
                similarity_threshold=0.0,
            )
        )

    whole = await page(1, 8)
    pages = [await page(number, 2) for number in (1, 2, 3, 4)]
    assert [c.chunk_id for p in pages for c in p.chunks] == [c.chunk_id for c in whole.chunks]
    assert len({p.total for p in pages}) == 1 and len(pages[3].chunks) == 2
    tier2 = next(stage for stage in pages[3].trace if stage.name == "tier2")
    assert "rerank_t2_domain" in tier2.decisions


@pytest.mark.parametrize("rerank", [True, False])
async def test_total_equals_what_can_be_paged_with_page_size_one(stores, vocabulary, rerank):
    retriever = make_retriever(stores, vocabulary, request={"rerank_page_limit": 1000})
    seen, page, total = [], 1, None
    while True:
        response = await retriever.search(
            SearchRequest(query="side effects of tablets", page=page, page_size=1, rerank=rerank)
        )
        total = response.total if total is None else total
        assert response.total == total
        if not response.chunks:
            break
        assert len(response.chunks) == 1
        seen.append(response.chunks[0].chunk_id)
        page += 1
    assert len(seen) == total and len(set(seen)) == total


async def test_a2_threshold_drops_low_similarity(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary)
    loose = await retriever.search(SearchRequest(query="lung problems", similarity_threshold=0.0))
    strict = await retriever.search(SearchRequest(query="lung problems", similarity_threshold=0.6))
    assert strict.total < loose.total
    assert strict.chunks and all(chunk.similarity >= 0.6 for chunk in strict.chunks)
    assert any(chunk.similarity < 0.6 for chunk in loose.chunks)


async def test_a_threshold_that_leaves_nothing_says_so(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary)
    empty = await retriever.search(SearchRequest(query="lung problems", similarity_threshold=1.0))
    assert empty.total == 0 and not empty.chunks
    assert len(empty.warnings) == 1 and empty.warnings[0].startswith("similarity_threshold:")
    assert "below 1" in empty.warnings[0]
    loose = await retriever.search(SearchRequest(query="lung problems", similarity_threshold=0.0))
    assert loose.total and loose.warnings == []


async def test_kb_scope_restricts_results(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary)
    response = await retriever.search(
        SearchRequest(
            query="side effects blood pressure", kb_ids=["papers"], similarity_threshold=0.0
        )
    )
    assert response.chunks and {c.kb_id for c in response.chunks} == {"papers"}


async def test_other_namespace_uses_general_route(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary)
    response = await retriever.search(SearchRequest(query="osimertinib", namespace="general"))
    assert [p.collection for p in response.route] == ["general_text"]
    routing = next(stage for stage in response.trace if stage.name == "routing")
    assert "route_general_default" in routing.decisions


async def test_sequential_plans_give_the_same_answer(stores, vocabulary):
    request = SearchRequest(query="gefitinib side effects")
    parallel = await make_retriever(stores, vocabulary).search(request)
    sequential = await make_retriever(stores, vocabulary, parallel_plans=False).search(request)
    assert [c.chunk_id for c in parallel.chunks] == [c.chunk_id for c in sequential.chunks]


async def test_query_embeddings_are_cached(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary)
    await retriever.search(SearchRequest(query="olaparib dose"))
    misses = retriever.embeddings.cache_misses
    await retriever.search(SearchRequest(query="olaparib dose"))
    assert retriever.embeddings.cache_misses == misses


class TextCountingEncoder(HashingTextEncoder):
    """Counts how often each text is encoded."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: Counter[str] = Counter()

    async def encode(self, texts, titles=None):
        self.texts.update(texts)
        return await super().encode(texts, titles)


@pytest.mark.parametrize("cache_size", [0, 1024])
async def test_each_query_text_is_encoded_once_per_request_and_role(stores, vocabulary, cache_size):
    # the biomed_text plan, the chemical plan (R-RT-5) and the supplement all embed
    # "Lynparza nausea"; without the cache they used to encode it once each
    encoders = {role: TextCountingEncoder() for role in ("pubmedbert", "molformer")}
    retriever = make_retriever(stores, vocabulary, encoders=encoders, query_cache_size=cache_size)
    await retriever.search(SearchRequest(query="Lynparza nausea"))
    for role, encoder in encoders.items():
        assert encoder.texts, role
        assert max(encoder.texts.values()) == 1, (role, encoder.texts)


async def test_supplement_injects_entity_anchored_hits(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary, routing={"collection_recall_top_k": 1})
    response = await retriever.search(SearchRequest(query="Lynparza nausea"))
    injection = next(stage for stage in response.trace if stage.name == "injection")
    supplement = next(stage for stage in response.trace if stage.name == "supplement")
    assert supplement.items_out > 0
    assert any(decision.startswith("injected:") for decision in injection.decisions)
    assert response.chunks[0].document_id == "lynparza"


@pytest.mark.parametrize(
    ("field", "request_kwargs", "settings", "message"),
    [
        ("query", {"query": "x" * 50}, {"request": {"max_query_chars": 10}}, "10 characters"),
        ("page_size", {"query": "x", "page_size": 500}, {}, "<= 100"),
        # past the old fixed schema cap (1000) the message still gives the configured one
        ("page_size", {"query": "x", "page_size": 5000}, {}, "<= 100"),
        ("page", {"query": "x", "page": 10**6}, {"request": {"max_page": 2000}}, "<= 2000"),
        ("top_k", {"query": "x", "top_k": 100}, {"request": {"top_k": 50}}, "<= 50"),
    ],
)
async def test_configured_bounds_name_the_field(
    stores, vocabulary, field, request_kwargs, settings, message
):
    retriever = make_retriever(stores, vocabulary, **settings)
    with pytest.raises(InvalidRequest) as caught:
        await retriever.search(SearchRequest(**request_kwargs))
    assert caught.value.field == field and message in str(caught.value)


async def test_a_lower_configured_top_k_is_the_default_not_an_error(stores, vocabulary):
    retriever = make_retriever(stores, vocabulary, request={"top_k": 3})
    response = await retriever.search(SearchRequest(query="olaparib", page_size=5))
    assert 0 < response.total <= 3


async def test_tier1_reuses_stored_vectors(stores, vocabulary):
    encoder = HashingTextEncoder()
    retriever = make_retriever(
        stores, vocabulary, encoders={"pubmedbert": encoder, "molformer": encoder}
    )
    response = await retriever.search(SearchRequest(query="sleep blood pressure"))
    plan = next(stage for stage in response.trace if stage.name == "plan:biomed_text")
    assert "tier1_cosine:pubmedbert" in plan.decisions  # the cosine re-sort did run
    # query encodes only (batch size 1): node texts came back with their stored vectors
    assert set(encoder.calls) == {1}


@pytest.mark.parametrize("fusion", ["replace", "rrf"])
async def test_hybrid_fusion_mode_is_recorded_and_rrf_keeps_both_legs(stores, vocabulary, fusion):
    retriever = make_retriever(stores, vocabulary, hybrid={"fusion": fusion})
    response = await retriever.search(
        SearchRequest(query="osimertinib side effects", similarity_threshold=0.0, rerank=False)
    )
    plan = next(stage for stage in response.trace if stage.name == "plan:biomed_text")
    assert f"hybrid_alpha:0.3:{fusion}:uniform" in plan.decisions
    if fusion == "rrf":  # a third RRF vote: every kept chunk carries an RRF score
        assert all(chunk.score_parts.rrf is not None for chunk in response.chunks)


@pytest.mark.parametrize("corrected", [True, False])
async def test_a12_every_stage_reads_the_corrected_query(stores, vocabulary, corrected):
    encoders = {"pubmedbert": TextCountingEncoder()}
    routing = {"search_corrected_query": corrected}
    retriever = make_retriever(stores, vocabulary, encoders=encoders, routing=routing)
    response = await retriever.search(SearchRequest(query="Lynpaza nausea", highlight=True))
    intent = next(stage for stage in response.trace if stage.name == "intent")
    assert "corrected:Lynpaza\u2192Lynparza" in intent.decisions
    assert ("searched_as:Lynparza nausea" in intent.decisions) is corrected
    assert response.intent.corrections == ("Lynpaza\u2192Lynparza",)
    encoded = " ".join(encoders["pubmedbert"].texts)
    assert ("Lynparza nausea" in encoded) is corrected
    assert ("Lynpaza" in encoded) is not corrected
    marked = " ".join(chunk.highlight or "" for chunk in response.chunks)
    assert ("<em>Lynparza</em>" in marked) is corrected
    if corrected:  # the misspelt question is answered as the well-spelt one is
        spelt = await make_retriever(stores, vocabulary).search(
            SearchRequest(query="Lynparza nausea")
        )
        assert [c.chunk_id for c in response.chunks] == [c.chunk_id for c in spelt.chunks]


@pytest.mark.parametrize("corrected", [True, False])
async def test_a19_every_stage_reads_a_misspelt_symptom_corrected(stores, vocabulary, corrected):
    encoders = {"pubmedbert": TextCountingEncoder()}
    routing = {"correct_misspelt_words": corrected}
    retriever = make_retriever(stores, vocabulary, encoders=encoders, routing=routing)
    response = await retriever.search(SearchRequest(query="Lynparza nausia", highlight=True))
    intent = next(stage for stage in response.trace if stage.name == "intent")
    assert ("corrected:nausia\u2192nausea" in intent.decisions) is corrected
    assert ("searched_as:Lynparza nausea" in intent.decisions) is corrected
    assert response.intent.corrections == (("nausia\u2192nausea",) if corrected else ())
    encoded = " ".join(encoders["pubmedbert"].texts)
    assert ("Lynparza nausea" in encoded) is corrected
    marked = " ".join(chunk.highlight or "" for chunk in response.chunks)
    assert ("<em>nausea</em>" in marked) is corrected
    if corrected:  # answered as the well-spelt question is
        spelt = await make_retriever(stores, vocabulary).search(
            SearchRequest(query="Lynparza nausea")
        )
        assert [c.chunk_id for c in response.chunks] == [c.chunk_id for c in spelt.chunks]


async def test_a19_a_misspelt_drug_and_word_are_both_corrected_drug_first(stores, vocabulary):
    response = await make_retriever(stores, vocabulary).search(
        SearchRequest(query="Lynpaza nausia")
    )
    assert response.intent.corrections == ("Lynpaza\u2192Lynparza", "nausia\u2192nausea")


@pytest.mark.parametrize(
    ("query", "needs_drugs", "related_types", "fusion"),
    [
        ("osimertinib side effects", True, None, "replace"),  # a drug: the kb's choice
        ("headache after an SGLT2 inhibitor", True, None, "replace"),  # a class, not first
        ("side effects blood pressure", True, None, "rrf"),  # names none: the profile's
        ("side effects blood pressure", False, None, "replace"),  # the kb's choice for all
        # only a gene's related drugs make the question drug-named
        ("headache after an SGLT2 inhibitor", True, ("gene",), "rrf"),  # a class
        ("medicine for type 2 diabetes", True, ("gene",), "rrf"),  # a curated condition
        ("medicine for type 2 diabetes", True, None, "replace"),
        ("EGFR inhibitor rash", True, ("gene",), "replace"),  # a gene target
        ("osimertinib side effects", True, ("gene",), "replace"),  # a drug, always
    ],
)
async def test_a13_a_question_without_drugs_gets_the_profile_fusion(
    stores, vocabulary, query, needs_drugs, related_types, fusion
):
    hybrid = {
        "fusion": "rrf",
        "fusion_by_kb": {"papers": "replace"},
        "fusion_by_kb_needs_drugs": needs_drugs,
        "fusion_by_kb_related_types": related_types,
        # A-14 follows the same rule: the kb's own choice for questions that name drugs
        "term_weighting": "pool_idf",
        "term_weighting_by_kb": {"papers": "uniform"},
    }
    retriever = make_retriever(stores, vocabulary, hybrid=hybrid)
    response = await retriever.search(SearchRequest(query=query, kb_ids=["papers"]))
    plan = next(stage for stage in response.trace if stage.name == "plan:biomed_text")
    weighting = "uniform" if fusion == "replace" else "pool_idf"
    assert f"hybrid_alpha:0.3:{fusion}:{weighting}" in plan.decisions


@pytest.mark.parametrize("glossed", [True, False])
async def test_a25_every_stage_reads_a_lay_condition_name_glossed(stores, vocabulary, glossed):
    encoders = {"pubmedbert": TextCountingEncoder()}
    routing = {"gloss_lay_names": glossed}
    retriever = make_retriever(stores, vocabulary, encoders=encoders, routing=routing)
    response = await retriever.search(SearchRequest(query="cream for piles"))
    intent = next(stage for stage in response.trace if stage.name == "intent")
    assert ("searched_as:cream for piles (haemorrhoids)" in intent.decisions) is glossed
    encoded = " ".join(encoders["pubmedbert"].texts)
    assert ("cream for piles (haemorrhoids)" in encoded) is glossed
    assert "cream for piles" in encoded


async def test_a25_the_intent_is_read_before_the_gloss(stores, vocabulary):
    # "(nausea and vomiting of pregnancy)" would cue the pregnancy warnings; the question
    # asked for a treatment
    response = await make_retriever(stores, vocabulary).search(
        SearchRequest(query="tablets for morning sickness")
    )
    intent = next(stage for stage in response.trace if stage.name == "intent")
    assert any("(nausea and vomiting of pregnancy)" in d for d in intent.decisions)
    assert response.intent.section_cues == ("indications_and_usage",)  # A-26, no warnings


@pytest.mark.parametrize("cued", [True, False])
async def test_a26_a_treatment_request_cues_the_indications_by_setting(stores, vocabulary, cued):
    routing = {"treatment_section_cue": cued, "general_section_cue": False}
    retriever = make_retriever(stores, vocabulary, routing=routing)
    response = await retriever.search(SearchRequest(query="antibiotic for travellers' diarrhoea"))
    assert response.intent.section_cues == (("indications_and_usage",) if cued else ())


@pytest.mark.parametrize("cued", [True, False])
async def test_a27_a_question_that_names_no_drug_cues_the_indications_by_setting(
    stores, vocabulary, cued
):
    routing = {"general_section_cue": cued}
    retriever = make_retriever(stores, vocabulary, routing=routing)
    response = await retriever.search(SearchRequest(query="acid reflux and heartburn"))
    assert response.intent.section_cues == (("indications_and_usage",) if cued else ())
    assert response.intent.section_cues_implied is cued


def _plan_decisions(response) -> list[str]:
    return next(stage for stage in response.trace if stage.name == "plan:biomed_text").decisions


def _text_chunks(response) -> list[tuple[str, str]]:
    return [
        (c.document_id, c.biomed_section) for c in response.chunks if c.collection == "biomed_text"
    ]


async def test_a28_a_no_drug_treatment_question_fuses_the_indications(stores, vocabulary):
    request = SearchRequest(
        query="medicine for lung cancer", kb_ids=["labels"], similarity_threshold=0.0
    )
    fused = await make_retriever(stores, vocabulary).search(request)
    assert "recall_sections:indications_and_usage" in _plan_decisions(fused)
    assert _text_chunks(fused)[0] == ("iressa", "indications_and_usage")
    assert len({section for _, section in _text_chunks(fused)}) > 1  # others stay
    seed = await make_retriever(stores, vocabulary, hybrid={"section_recall": False}).search(
        request
    )
    assert not any(d.startswith("recall_sections") for d in _plan_decisions(seed))


async def test_a28_a_kb_without_sections_keeps_its_order(stores, vocabulary):
    request = SearchRequest(query="medicine for blood pressure", kb_ids=["papers"])
    retriever = make_retriever(stores, vocabulary)
    first, again = [await retriever.search(request) for _ in range(2)]
    seed = await make_retriever(stores, vocabulary, hybrid={"section_recall": False}).search(
        request
    )
    assert "recall_sections:indications_and_usage" in _plan_decisions(first)
    # no chunk of the papers is an indications section: remembered, not searched again
    assert not any(d.startswith("recall_sections") for d in _plan_decisions(again))
    assert _text_chunks(first) == _text_chunks(again) == _text_chunks(seed)
    assert _text_chunks(first)


@pytest.mark.parametrize("glossed", [True, False])
async def test_a30_every_stage_reads_an_overdose_said_in_other_words(stores, vocabulary, glossed):
    encoders = {"pubmedbert": TextCountingEncoder()}
    routing = {"gloss_overdoses": glossed}
    retriever = make_retriever(stores, vocabulary, encoders=encoders, routing=routing)
    query = "took too many paracetamol tablets, what is the antidote"
    response = await retriever.search(SearchRequest(query=query))
    intent = next(stage for stage in response.trace if stage.name == "intent")
    searched = "took too many paracetamol tablets (paracetamol overdose), what is the antidote"
    assert (f"searched_as:{searched}" in intent.decisions) is glossed
    assert ("(paracetamol overdose)" in " ".join(encoders["pubmedbert"].texts)) is glossed
