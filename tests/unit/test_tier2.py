"""R-T2-1..11: Tier-2 fused rerank and its policy."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.drug_coverage import combination_entity_caps
from pipeline.errors import BackendUnavailable
from pipeline.rerank import (
    boost_terms_for_query,
    first_stage_evidence,
    min_max_normalise,
    post_rrf_rerank,
)
from pipeline.schema import QueryRetrievalIntent
from pipeline.scoring import member_topic_terms
from pipeline.settings import (
    CrossDrugTerms,
    PipelineSettings,
    RerankPolicy,
    Tier2Preset,
    Tier2Settings,
    load_yaml,
)
from tests.unit.helpers import hit, ids

pytestmark = pytest.mark.unit

DRUG = QueryRetrievalIntent(
    workflow="drug_entity", section_cues=("warnings",), require_entity_match=True
)


def scores_by_id(mapping):
    async def cross_encoder(query, nodes):
        return np.array([mapping[item.node.node_id] for item in nodes], dtype=np.float32)

    return cross_encoder


async def rerank(nodes, query, intent, vocabulary, cross_encoder, tier2=None, **kwargs):
    return await post_rrf_rerank(
        nodes,
        query,
        intent,
        vocabulary=vocabulary,
        settings=tier2 or Tier2Settings(),
        cross_encoder=cross_encoder,
        **kwargs,
    )


async def test_r_t2_1_image_nodes_pass_through_at_the_end(vocabulary):
    nodes = [hit("img", modality="image"), hit("t1"), hit("t2")]
    outcome = await rerank(
        nodes, "q", QueryRetrievalIntent(), vocabulary, scores_by_id({"t1": 0.0, "t2": 1.0})
    )
    assert ids(outcome.nodes) == ["t2", "t1", "img"]
    assert "ce" not in outcome.nodes[-1].score_parts


async def test_r_t2_2_final_score_formula_drug_entity_profile(vocabulary):
    nodes = [
        hit(
            "good",
            text="Tagrisso warnings",
            primary_drugs=["osimertinib"],
            biomed_section="warnings",
        ),
        hit("cross", text="Gefitinib tablets", primary_drugs=["gefitinib"]),
        hit("plain", text="nothing"),
    ]
    outcome = await rerank(
        nodes,
        "Tagrisso warnings",
        DRUG,
        vocabulary,
        scores_by_id({"good": 1.0, "cross": 3.0, "plain": 2.0}),
    )
    parts = {item.node.node_id: item for item in outcome.nodes}
    # drug_entity: w_ce 0.35, w_entity 0.35, w_sec 0.10, w_xdrug 3.0; ce_norm over [1, 3]
    assert parts["good"].score == pytest.approx(0.35 * 0.0 + 0.35 * 1.0 + 0.10 * 1.0)
    assert parts["cross"].score == pytest.approx(0.35 * 1.0 - 3.0)
    assert parts["plain"].score == pytest.approx(0.35 * 0.5)
    assert ids(outcome.nodes) == ["good", "plain", "cross"]
    assert outcome.decisions == ["rerank_t2_domain"]
    assert parts["cross"].score_parts["xdrug"] == 1.0


def test_r_t2_3_min_max_normalisation():
    assert min_max_normalise(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert min_max_normalise(np.array([5.0, 5.0])).tolist() == [1.0, 1.0]
    assert min_max_normalise(np.array([])).size == 0


async def test_r_t2_3_texts_reach_the_cross_encoder_in_pool_order(vocabulary):
    seen = []

    async def cross_encoder(query, nodes):
        seen.extend(ids(nodes))
        return np.zeros(len(nodes), dtype=np.float32)

    await rerank([hit("a"), hit("b")], "q", QueryRetrievalIntent(), vocabulary, cross_encoder)
    assert seen == ["a", "b"]


@pytest.mark.parametrize("failure", ["raise", "short", "nan"])
async def test_r_t2_4_failure_falls_back_to_existing_scores(vocabulary, failure):
    nodes = [hit("a", score=0.05), hit("b", score=0.04)]

    async def cross_encoder(query, items):
        if failure == "raise":
            raise RuntimeError("model crashed")
        if failure == "short":
            return np.ones(1, dtype=np.float32)
        return np.array([np.nan, np.nan], dtype=np.float32)

    outcome = await rerank(nodes, "q", QueryRetrievalIntent(), vocabulary, cross_encoder)
    assert ids(outcome.nodes) == ["a", "b"]
    assert [item.score for item in outcome.nodes] == [0.05, 0.04]
    assert outcome.degraded and "rerank_t2_fallback_existing_scores" in outcome.decisions
    # the fallback order still carries a [0, 1] similarity, non-increasing.
    similarities = [item.score_parts["similarity"] for item in outcome.nodes]
    assert similarities == sorted(similarities, reverse=True) and min(similarities) >= 0


def test_r_t2_5_boost_terms_are_query_drugs_else_related(vocabulary):
    assert boost_terms_for_query("Tagrisso warnings", vocabulary) == ["osimertinib"]
    assert boost_terms_for_query("EGFR mutation", vocabulary) == [
        "gefitinib",
        "erlotinib",
        "osimertinib",
    ]


async def test_r_t2_8_profile_chosen_by_workflow(vocabulary):
    nodes = [hit("sec", text="x", biomed_section="warnings"), hit("ce", text="y")]
    regulatory = QueryRetrievalIntent(workflow="regulatory", section_cues=("warnings",))
    outcome = await rerank(
        nodes,
        "prescribing information warnings",
        regulatory,
        vocabulary,
        scores_by_id({"sec": 0.0, "ce": 1.0}),
    )
    scores = {item.node.node_id: item.score for item in outcome.nodes}
    assert scores == pytest.approx({"sec": 0.35, "ce": 0.30})


async def test_r_t2_9_chemical_takes_higher_of_fused_and_molformer(vocabulary):
    chemical = QueryRetrievalIntent(workflow="chemical", require_entity_match=True)
    nodes = [
        hit("mol", text="osimertinib compound", primary_drugs=["osimertinib"], smiles="C"),
        hit("other", text="unrelated"),
    ]

    async def molformer(items):
        assert ids(items) == ["mol"]  # only entity score > 0 takes part
        return np.array([0.99], dtype=np.float32)

    outcome = await rerank(
        nodes,
        "osimertinib compound",
        chemical,
        vocabulary,
        scores_by_id({"mol": 0.0, "other": 1.0}),
        chemical_scores=molformer,
    )
    assert ids(outcome.nodes) == ["mol", "other"]
    assert outcome.nodes[0].score == pytest.approx(0.99)


@pytest.mark.parametrize(
    ("policy", "decision", "order"),
    [
        (RerankPolicy.DOMAIN, "rerank_t2_domain", ["b", "a"]),
        (RerankPolicy.GENERAL, "rerank_t2_general", ["b", "a"]),
        (RerankPolicy.NONE, "rerank_t2_passthrough", ["a", "b"]),
    ],
)
async def test_r_t2_11_policy_records_its_decision(vocabulary, policy, decision, order):
    outcome = await rerank(
        [hit("a"), hit("b")],
        "q",
        QueryRetrievalIntent(),
        vocabulary,
        scores_by_id({"a": 0.0, "b": 1.0}),
        policy=policy,
    )
    assert outcome.decisions[0] == decision
    assert ids(outcome.nodes) == order


async def test_r_t2_11_general_policy_is_cross_encoder_only(vocabulary):
    nodes = [hit("cross", text="gefitinib", primary_drugs=["gefitinib"]), hit("b")]
    outcome = await rerank(
        nodes,
        "osimertinib",
        DRUG,
        vocabulary,
        scores_by_id({"cross": 1.0, "b": 0.0}),
        policy=RerankPolicy.GENERAL,
    )
    assert ids(outcome.nodes) == ["cross", "b"]
    assert outcome.nodes[0].score == 1.0


def test_a4_first_stage_evidence_is_rank_based_and_skips_injected():
    nodes = [
        hit("inj").model_copy(update={"score_parts": {"injected": 1.0}}),
        hit("a"),
        hit("b"),
    ]
    evidence = first_stage_evidence(nodes, k=10.0)
    assert evidence.tolist() == pytest.approx([0.0, 1.0, 11.0 / 12.0])


def test_a4_seed_preset_is_the_spec_table_and_tuned_adds_first_stage():
    seed = Tier2Settings(preset="seed").weights_for("drug_entity")
    assert (seed.w_ce, seed.w_entity, seed.w_sec, seed.w_xdrug, seed.w_first) == (
        0.35,
        0.35,
        0.10,
        3.0,
        0.0,
    )
    tuned = Tier2Settings(preset="tuned")
    assert all(weights.w_first > 0 for weights in tuned.profile_weights.values())
    override = Tier2Settings(
        preset="tuned",
        profile_weights={"default": {"w_ce": 1.0, "w_entity": 0, "w_sec": 0, "w_xdrug": 1}},
    )
    assert override.weights_for("general").w_ce == 1.0
    assert override.weights_for("drug_entity") == tuned.weights_for("drug_entity")


async def test_a4_first_stage_term_keeps_the_first_stage_winner(vocabulary):
    # The scorer prefers "b" slightly; the first stage ranked "a" first by far: with the
    # first-stage term the refinement cannot erase that evidence.
    nodes = [hit("a"), *(hit(f"n{i}") for i in range(8)), hit("b")]
    scores = {"a": 0.9, "b": 1.0, **{f"n{i}": 0.0 for i in range(8)}}
    tier2 = Tier2Settings(
        profile_weights={
            "default": {"w_ce": 0.4, "w_entity": 0, "w_sec": 0, "w_xdrug": 1, "w_first": 0.6}
        }
    )
    outcome = await rerank(
        nodes, "q", QueryRetrievalIntent(), vocabulary, scores_by_id(scores), tier2=tier2
    )
    assert ids(outcome.nodes)[:2] == ["a", "b"]
    seed = await rerank(nodes, "q", QueryRetrievalIntent(), vocabulary, scores_by_id(scores))
    assert ids(seed.nodes)[0] == "b"


async def test_a4_unscored_node_takes_its_first_stage_evidence(vocabulary):
    async def partial(query, items):
        return np.array([np.nan, 0.0, 1.0], dtype=np.float32)

    outcome = await rerank(
        [hit("unscored"), hit("low"), hit("high")], "q", QueryRetrievalIntent(), vocabulary, partial
    )
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert parts["unscored"]["ce"] == pytest.approx(1.0)  # rank 1: evidence 1.0
    assert parts["low"]["ce"] == 0.0 and parts["high"]["ce"] == 1.0


async def test_a3_text_scorer_never_orders_structure_hits(vocabulary):
    structure = hit("mol").model_copy(update={"score_parts": {"structure": 0.4}})
    outcome = await rerank(
        [structure, hit("text")],
        "q",
        QueryRetrievalIntent(),
        vocabulary,
        scores_by_id({"mol": 1.0, "text": 0.0}),
    )
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert parts["mol"]["ce"] == pytest.approx(0.4)


async def test_a3_structure_only_query_is_ordered_by_structure_similarity(vocabulary):
    called = []

    async def scorer(query, items):
        called.append(True)
        return np.zeros(len(items), dtype=np.float32)

    nodes = [
        hit("near").model_copy(update={"score_parts": {"structure": 0.6}}),
        hit("plain"),
        hit("same").model_copy(update={"score_parts": {"structure": 1.0}}),
    ]
    outcome = await rerank(
        nodes, "CCO", QueryRetrievalIntent(), vocabulary, scorer, structure_only=True
    )
    assert ids(outcome.nodes) == ["same", "near", "plain"]
    assert not called and outcome.decisions == ["rerank_t2_structure"]
    assert [item.score_parts["similarity"] for item in outcome.nodes][:2] == [1.0, 0.6]


@settings(max_examples=60, deadline=None)
@given(
    scores=st.lists(
        st.one_of(st.floats(-20, 20, allow_nan=False), st.just(float("nan"))),
        min_size=1,
        max_size=12,
    ),
    preset=st.sampled_from(list(Tier2Preset)),
    workflow=st.sampled_from(["general", "drug_entity", "regulatory", "chemical"]),
)
async def test_a2_similarity_is_in_unit_range_and_monotone_with_order(
    vocabulary, scores, preset, workflow
):
    nodes = [
        hit(
            f"n{i}",
            text="gefitinib warnings" if i % 3 == 0 else "osimertinib",
            primary_drugs=["gefitinib"] if i % 3 == 0 else ["osimertinib"],
            biomed_section="warnings" if i % 2 else "dosage",
        )
        for i in range(len(scores))
    ]
    intent = QueryRetrievalIntent(
        workflow=workflow, section_cues=("warnings",), require_entity_match=True
    )

    async def scorer(query, items):
        return np.array(scores, dtype=np.float32)

    outcome = await rerank(
        nodes,
        "osimertinib warnings",
        intent,
        vocabulary,
        scorer,
        tier2=Tier2Settings(preset=preset),
    )
    similarities = [item.score_parts["similarity"] for item in outcome.nodes]
    assert all(0.0 <= value <= 1.0 for value in similarities)
    assert similarities == sorted(similarities, reverse=True)


async def test_a2_image_in_the_window_goes_last_and_does_not_zero_the_rest(vocabulary):
    import time

    from pipeline.context import SearchContext
    from pipeline.embeddings import EmbeddingService
    from pipeline.schema import SearchRequest
    from pipeline.settings import PipelineSettings
    from pipeline.tier2_stage import Tier2Stage

    settings = PipelineSettings(tier2={"max_candidates": 2})
    stage = Tier2Stage(settings, EmbeddingService({}, settings), vocabulary, None, None, None)
    request = SearchRequest(query="q")
    context = SearchContext(
        request, "q", QueryRetrievalIntent(), None, 0.3, 5, None, time.monotonic() + 60
    )
    nodes = [hit("img", modality="image"), hit("t1"), hit("t2"), hit("t3")]
    ranked = await stage.rank(context, nodes, [])
    assert ids(ranked) == ["t1", "t2", "t3", "img"]
    similarities = [item.score_parts["similarity"] for item in ranked]
    assert similarities == sorted(similarities, reverse=True)
    assert similarities[1] > 0 and similarities[-1] == 0.0


async def test_r_t2_4_a_failing_molformer_keeps_the_fused_order(vocabulary):
    chemical = QueryRetrievalIntent(workflow="chemical", require_entity_match=True)
    nodes = [
        hit("mol", text="osimertinib compound", primary_drugs=["osimertinib"], smiles="C"),
        hit("other", text="unrelated"),
    ]

    async def molformer_down(items):
        raise BackendUnavailable("Encoder-molformer: no replica")

    outcome = await rerank(
        nodes,
        "osimertinib compound",
        chemical,
        vocabulary,
        scores_by_id({"mol": 1.0, "other": 0.0}),
        chemical_scores=molformer_down,
    )
    assert ids(outcome.nodes) == ["mol", "other"]  # the fused (cross-encoder) order
    assert outcome.decisions == [
        "rerank_t2_domain",
        "rerank_t2_9_skipped: BackendUnavailable: Encoder-molformer: no replica",
    ]


@pytest.mark.parametrize(
    ("terms", "warfarin_penalised"),
    [(CrossDrugTerms.BOOST_TERMS, 1.0), (CrossDrugTerms.QUERY_DRUGS, 0.0)],
)
async def test_r_t2_7_cross_drug_terms_for_a_class_question(vocabulary, terms, warfarin_penalised):
    # "anticoagulant" names no drug: its boost terms are the members the leaflets list
    # (apixaban ... rivaroxaban), and the seed penalised a warfarin chunk as another drug
    nodes = [
        hit("warfarin", text="Warfarin is an oral anticoagulant; INR checks.",
            primary_drugs=["warfarin"]),
        hit("apixaban", text="Eliquis tablets.", primary_drugs=["apixaban"]),
    ]
    query = "which anticoagulant needs INR monitoring"
    assert "warfarin" not in boost_terms_for_query(query, vocabulary)
    outcome = await rerank(
        nodes, query, QueryRetrievalIntent(), vocabulary,
        scores_by_id({"warfarin": 1.0, "apixaban": 0.2}),
        tier2=Tier2Settings(cross_drug_terms=terms),
    )
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert parts["warfarin"]["xdrug"] == warfarin_penalised
    assert parts["apixaban"]["xdrug"] == 0.0
    assert ids(outcome.nodes)[0] == ("apixaban" if warfarin_penalised else "warfarin")

    named = await rerank(  # a question that names a drug is protected either way
        nodes, "apixaban INR monitoring", QueryRetrievalIntent(), vocabulary,
        scores_by_id({"warfarin": 1.0, "apixaban": 0.2}),
        tier2=Tier2Settings(cross_drug_terms=terms),
    )
    assert {i.node.node_id: i.score_parts["xdrug"] for i in named.nodes}["warfarin"] == 1.0


@pytest.mark.parametrize(
    ("terms", "penalised"),
    [(CrossDrugTerms.QUERY_DRUGS, 1.0), (CrossDrugTerms.QUERY_DRUGS_IN_POOL, 0.0)],
)
async def test_r_t2_7_a_drug_without_its_own_chunks_protects_nothing(vocabulary, terms, penalised):
    # No candidate is atorvastatin's own document (the kb has no atorvastatin leaflet):
    # penalising every other drug's chunk zeroed the page; the passing mention is the answer
    nodes = [
        hit("mention", text="Sunitinib leaflet. " + "x " * 300 + "atorvastatin and muscle pain",
            primary_drugs=["sunitinib"]),
        hit("other", text="Opdivo: muscle pain.", primary_drugs=["nivolumab"]),
    ]
    query = "atorvastatin muscle pain"
    assert vocabulary.match_drug_entities(query) == ["atorvastatin"]
    outcome = await rerank(
        nodes, query, QueryRetrievalIntent(), vocabulary,
        scores_by_id({"mention": 0.9, "other": 0.5}),
        tier2=Tier2Settings(cross_drug_terms=terms),
    )
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert parts["mention"]["xdrug"] == parts["other"]["xdrug"] == penalised
    assert (parts["mention"]["similarity"] > 0) is (penalised == 0.0)

    with_own = [*nodes, hit("own", text="Lipitor tablets.", primary_drugs=["atorvastatin"])]
    outcome = await rerank(  # with its own chunk in the window, the others are penalised
        with_own, query, QueryRetrievalIntent(), vocabulary,
        scores_by_id({"mention": 0.9, "other": 0.5, "own": 0.1}),
        tier2=Tier2Settings(cross_drug_terms=terms),
    )
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert parts["other"]["xdrug"] == 1.0 and parts["own"]["xdrug"] == 0.0
    assert ids(outcome.nodes)[0] == "own"


def test_a7_topic_terms_leave_out_the_names_the_question_uses(vocabulary):
    from pipeline.scoring import topic_terms

    assert topic_terms("osimertinb rash", vocabulary) == ["rash"]  # the typo is a name too
    assert topic_terms("grapefruit juice with Ibrance", vocabulary) == ["grapefruit", "juice"]
    assert topic_terms("ibrutinib atrial fibrillation", vocabulary) == ["atrial", "fibrillation"]
    # a medicine named as what failed is no entity of the question, nor a topic
    failed = "Zyrtec isn't cutting it, is fexofenadine better for hay fever?"
    assert [m.surface for m in vocabulary.find(failed)] == ["fexofenadine", "hay fever"]
    assert "zyrtec" not in topic_terms(failed, vocabulary)


@pytest.mark.parametrize(("w_topic", "first"), [(0.0, "indication"), (0.1, "rash")])
async def test_a7_the_topic_tells_the_named_drugs_own_chunks_apart(vocabulary, w_topic, first):
    # Every chunk of the leaflet earns the entity score; only the rash chunk says "rash".
    # A chunk of another drug that mentions both gets no topic credit (not its leaflet).
    nodes = [
        hit("indication", text="Tagrisso is used to treat lung cancer.",
            primary_drugs=["osimertinib"]),
        hit("rash", text="Tagrisso side effects: rash, dry skin.", primary_drugs=["osimertinib"]),
        hit("other", text="Unlike osimertinib, this may cause rash.", primary_drugs=["gefitinib"]),
    ]
    weights = {name: {**row.model_dump(), "w_topic": w_topic}
               for name, row in Tier2Settings(preset="tuned").profile_weights.items()}
    outcome = await rerank(
        nodes, "osimertinb rash", QueryRetrievalIntent(workflow="drug_entity"), vocabulary,
        scores_by_id({"indication": 0.62, "rash": 0.6, "other": 0.1}),
        tier2=Tier2Settings(preset="tuned", profile_weights=weights),
    )
    assert ids(outcome.nodes)[0] == first
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    if w_topic:
        assert parts["rash"]["topic"] == 1.0 and parts["indication"]["topic"] == 0.0
        assert parts["other"]["topic"] == 0.0
    else:
        assert "topic" not in parts["rash"]


@pytest.mark.parametrize("cover", [True, False])
async def test_a10_a_question_naming_two_drugs_opens_with_one_chunk_of_each(vocabulary, cover):
    nodes = [
        hit(f"tasigna-{i}", text=f"Tasigna part {i}.", primary_drugs=["nilotinib"])
        for i in range(4)
    ] + [hit("glivec-0", text="Glivec capsules.", primary_drugs=["imatinib"])]
    ce = {f"tasigna-{i}": 0.9 - 0.1 * i for i in range(4)} | {"glivec-0": 0.1}
    query = "gleevec vs tasigna"
    assert sorted(vocabulary.match_drug_entities(query)) == ["imatinib", "nilotinib"]
    outcome = await rerank(
        nodes, query, QueryRetrievalIntent(workflow="drug_entity"), vocabulary,
        scores_by_id(ce), tier2=Tier2Settings(cover_named_drugs=cover),
    )
    order = ids(outcome.nodes)
    if cover:
        assert order[:2] == ["tasigna-0", "glivec-0"]
        assert order[2:] == ["tasigna-1", "tasigna-2", "tasigna-3"]
        assert any(d.startswith("rerank_cover_named_drugs") for d in outcome.decisions)
    else:
        assert order[-1] == "glivec-0"
    similarities = [item.score_parts["similarity"] for item in outcome.nodes]
    assert similarities == sorted(similarities, reverse=True)  # A-2 still holds


async def test_a10_one_named_drug_or_leaders_already_first_change_nothing(vocabulary):
    tier2 = Tier2Settings(cover_named_drugs=True)
    single = [hit("a", text="Tasigna.", primary_drugs=["nilotinib"]), hit("b", text="x")]
    outcome = await rerank(
        single, "tasigna rash", QueryRetrievalIntent(), vocabulary,
        scores_by_id({"a": 0.2, "b": 0.9}), tier2=tier2,
    )
    assert not any(d.startswith("rerank_cover") for d in outcome.decisions)
    both = [
        hit("t", text="Tasigna.", primary_drugs=["nilotinib"]),
        hit("g", text="Glivec.", primary_drugs=["imatinib"]),
        hit("t2", text="Tasigna again.", primary_drugs=["nilotinib"]),
    ]
    outcome = await rerank(
        both, "gleevec vs tasigna", QueryRetrievalIntent(), vocabulary,
        scores_by_id({"t": 0.9, "g": 0.8, "t2": 0.1}), tier2=tier2,
    )
    assert ids(outcome.nodes) == ["t", "g", "t2"]
    assert not any(d.startswith("rerank_cover") for d in outcome.decisions)


@pytest.mark.parametrize("fixed", [True, False])
async def test_a22_a_fixed_combination_of_the_named_substances_leads(vocabulary, fixed):
    nodes = [
        hit("norvir", text="Norvir warnings.", primary_drugs=["ritonavir"]),
        hit("paxlovid", text="Paxlovid is used for COVID-19.",
            primary_drugs=["nirmatrelvir and ritonavir"]),
        hit("other", text="Something else."),
    ]
    query = "nirmatrelvir taken together with ritonavir"
    outcome = await rerank(
        nodes, query, QueryRetrievalIntent(workflow="drug_entity"), vocabulary,
        scores_by_id({"norvir": 0.6, "paxlovid": 0.4, "other": 0.0}),
        tier2=Tier2Settings(preset="tuned", fixed_combinations=fixed),
    )
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert parts["paxlovid"]["entity"] == 1.0
    assert parts["norvir"]["entity"] == (0.75 if fixed else 1.0)
    assert ids(outcome.nodes)[0] == ("paxlovid" if fixed else "norvir")
    assert ("rerank_fixed_combination" in outcome.decisions) is fixed


@pytest.mark.parametrize(
    "query",
    [
        "nirmatrelvir versus ritonavir",  # weighs one against the other
        "ritonavir and nirmatrelvir interaction",
        "can I take ritonavir and nirmatrelvir together",  # whether they mix
        "can you have nirmatrelvir with ritonavir",
        "should I take nirmatrelvir with ritonavir",
        "mixing nirmatrelvir with ritonavir",
        "does nirmatrelvir affect ritonavir",
        "ritonavir warnings",  # one substance
    ],
)
async def test_a22_comparisons_and_single_drugs_keep_r_t2_5(vocabulary, query):
    nodes = [
        hit("norvir", text="Norvir warnings.", primary_drugs=["ritonavir"]),
        hit("paxlovid", text="Paxlovid.", primary_drugs=["nirmatrelvir and ritonavir"]),
    ]
    outcome = await rerank(
        nodes, query, QueryRetrievalIntent(workflow="drug_entity"), vocabulary,
        scores_by_id({"norvir": 1.0, "paxlovid": 0.0}), tier2=Tier2Settings(preset="tuned"),
    )
    assert {item.score_parts["entity"] for item in outcome.nodes} == {1.0}


def test_a22_a_brand_in_primary_drugs_is_its_substances(vocabulary):
    nodes = [
        hit("norvir", text="Norvir.", primary_drugs=["ritonavir"]),
        hit("paxlovid", text="Paxlovid.", primary_drugs="Paxlovid"),  # a string, a brand
        hit("none", text="Nothing."),
    ]
    caps = combination_entity_caps(nodes, "nirmatrelvir plus ritonavir", vocabulary)
    assert caps == [0.75, 1.0, 0.75]
    # "can I" that asks about one product, not whether two mix
    question = "nirmatrelvir ritonavir tablets: can I use them after the expiry date?"
    assert combination_entity_caps(nodes, question, vocabulary) == caps
    assert combination_entity_caps(nodes[:1], "nirmatrelvir plus ritonavir", vocabulary) is None
    # a part named beside its combination: the user asks about both products
    assert combination_entity_caps(nodes, "Paxlovid and Norvir", vocabulary) is None


def test_a22_a_product_of_more_substances_is_no_product_of_the_named_ones(vocabulary):
    # Ondexxya reverses apixaban and rivaroxaban; its primary drugs list all three
    nodes = [
        hit("eliquis", text="Eliquis.", primary_drugs=["apixaban"]),
        hit("ondexxya", text="Ondexxya.",
            primary_drugs=["andexanet alfa", "apixaban", "rivaroxaban"]),
    ]
    assert combination_entity_caps(nodes, "apixaban and rivaroxaban dosing", vocabulary) is None
    # a chunk that names both, each its own entry (R-ING-3 on literature), is no product
    both = [*nodes, hit("paper", text="Apixaban and rivaroxaban.",
                        primary_drugs=["apixaban", "rivaroxaban"])]
    assert combination_entity_caps(both, "apixaban and rivaroxaban dosing", vocabulary) is None


async def test_a22_substances_meet_by_their_canonical_names(vocabulary):
    # the leaflet writes the INN "beclometasone", the question the same; the vocabulary
    # reads both as beclomethasone, and a product of two of the three is no answer
    nodes = [
        hit("bevespi", text="Bevespi.", primary_drugs=["glycopyrronium", "formoterol"]),
        hit("trimbow", text="Trimbow.",
            primary_drugs=["beclometasone/formoterol/glycopyrronium"]),
    ]
    query = "beclometasone, formoterol and glycopyrronium in a single inhaler"
    assert "beclomethasone" in vocabulary.match_drug_entities(query)
    outcome = await rerank(
        nodes, query, QueryRetrievalIntent(workflow="drug_entity"), vocabulary,
        scores_by_id({"bevespi": 1.0, "trimbow": 0.0}), tier2=Tier2Settings(preset="tuned"),
    )
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert (parts["trimbow"]["entity"], parts["bevespi"]["entity"]) == (1.0, 0.75)


def test_a15_member_topic_terms_leave_out_class_names_and_head_words(vocabulary):
    terms = member_topic_terms("antifungal for toenail fungus", vocabulary)
    assert "toenail" in terms and "fungus" in terms
    assert "antifungal" not in terms  # the class the vocabulary reads
    assert member_topic_terms("KRAS inhibitor", vocabulary) == []  # "inhibitor" names a kind
    assert member_topic_terms("posaconazole for toenail fungus", vocabulary) == []  # a drug


@pytest.mark.parametrize(("member_entity", "first"), [("whole", "member"), ("by_topic", "answer")])
async def test_a15_a_class_member_earns_its_entity_score_by_the_question_topic(
    vocabulary, member_entity, first
):
    # "antifungal" names posaconazole (a member the leaflets list) but no drug: the seed
    # scores every posaconazole chunk as the named drug's, whatever the condition asked
    query = "antifungal for toenail fungus"
    assert "posaconazole" in boost_terms_for_query(query, vocabulary)
    nodes = [
        hit(
            "member",
            text="Noxafil treats invasive aspergillosis in the lungs.",
            primary_drugs=["posaconazole"],
        ),
        hit(
            "answer",
            text="A nail solution for fungus of the toenail.",
            primary_drugs=["efinaconazole"],
        ),
        hit("other", text="Hand cream.", primary_drugs=["urea"]),
    ]
    outcome = await rerank(
        nodes,
        query,
        QueryRetrievalIntent(),
        vocabulary,
        scores_by_id({"member": 0.8, "answer": 1.0, "other": 0.0}),
        tier2=Tier2Settings(member_entity=member_entity),
    )
    parts = {item.node.node_id: item.score_parts for item in outcome.nodes}
    assert ids(outcome.nodes)[0] == first
    assert parts["member"]["entity"] == (1.0 if member_entity == "whole" else 0.0)
    assert ("rerank_member_entity_by_topic" in outcome.decisions) is (member_entity != "whole")
    # a question that names a drug keeps the seed's entity score
    named = await rerank(
        nodes,
        "posaconazole for toenail fungus",
        QueryRetrievalIntent(),
        vocabulary,
        scores_by_id({"member": 0.8, "answer": 1.0, "other": 0.0}),
        tier2=Tier2Settings(member_entity=member_entity),
    )
    assert {i.node.node_id: i.score_parts["entity"] for i in named.nodes}["member"] == 1.0


async def test_a15_keeps_the_seed_without_topic_words_and_in_the_chemical_workflow(vocabulary):
    nodes = [
        hit("member", text="Noxafil for aspergillosis.", primary_drugs=["posaconazole"]),
        hit("other", text="Hand cream.", primary_drugs=["urea"]),
    ]
    by_topic = Tier2Settings(member_entity="by_topic")
    scores = scores_by_id({"member": 0.5, "other": 1.0})

    async def member_entity(query, workflow="general"):
        intent = QueryRetrievalIntent(workflow=workflow)
        outcome = await rerank(nodes, query, intent, vocabulary, scores, tier2=by_topic)
        member = next(i for i in outcome.nodes if i.node.node_id == "member")
        return member.score_parts["entity"], outcome.decisions

    # "antifungals" alone leaves no topic word to choose members by
    entity, decisions = await member_entity("antifungals")
    assert entity == 1.0 and "rerank_member_entity_by_topic" not in decisions
    # R-T2-9 picks the chemical workflow's nodes by entity score > 0: left as the seed
    assert (await member_entity("antifungal for toenail fungus", "chemical"))[0] == 1.0
    # a share of the topic words is that share of the score
    entity, decisions = await member_entity("antifungal for aspergillosis fungus")
    assert entity == pytest.approx(0.5) and "rerank_member_entity_by_topic" in decisions


def test_a15_is_the_default_profile_and_production_keeps_the_seed():
    profiles = Path(__file__).resolve().parents[2] / "configs" / "profiles"
    chosen = {
        name: PipelineSettings(**load_yaml(profiles / f"{name}.yaml")["pipeline"]).tier2
        for name in ("default", "production")
    }
    assert chosen["default"].member_entity == "by_topic"
    assert chosen["production"].member_entity == "whole" == Tier2Settings().member_entity
