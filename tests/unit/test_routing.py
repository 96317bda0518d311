"""R-RT-1..12: routing table."""

import pytest

from pipeline.routing import BiomedQueryRouteClassifier, apply_scope_aware_union
from pipeline.schema import QueryRouteDecision, ScopeFilter
from pipeline.settings import PipelineSettings

pytestmark = pytest.mark.unit

ALL_ON = {
    name: {"enabled": True}
    for name in (
        "biomed_text",
        "medcpt_text",
        "general_text",
        "chemical",
        "radiology",
        "pathology",
        "visual",
    )
}


def classifier(vocabulary, **routing):
    settings = PipelineSettings(collections=ALL_ON, routing=routing)
    return BiomedQueryRouteClassifier(settings, vocabulary)


def pairs(decision):
    return [(plan.collection, plan.encoder) for plan in decision.plans]


def test_r_rt_1_other_namespace_abstains(vocabulary):
    assert classifier(vocabulary).route("osimertinib", plugin_namespace="general") is None


def test_r_rt_2_recall_top_k_from_config(vocabulary):
    decision = classifier(vocabulary, collection_recall_top_k=7).route("aspirin for pain")
    assert {plan.top_k for plan in decision.plans} == {7}


def test_r_rt_3_chemical_task_routes_to_molformer_only_text_plans_skipped(vocabulary):
    decision = classifier(vocabulary).route("SMILES CC(=O)Oc1ccccc1C(=O)O")
    assert pairs(decision) == [("chemical", "molformer")]


def test_r_rt_4_text_mode_biomed_then_dual_searches(vocabulary):
    plain = classifier(vocabulary).route("sleep and diet")
    assert pairs(plain) == [("biomed_text", "pubmedbert")]
    dual = classifier(vocabulary, medcpt_dual_search=True, default_dual_text_search=True).route(
        "sleep and diet"
    )
    assert pairs(dual) == [
        ("biomed_text", "pubmedbert"),
        ("medcpt_text", "medcpt-query"),
        ("general_text", "general-text"),
    ]


def test_r_rt_5_drug_match_adds_chemical(vocabulary):
    assert pairs(classifier(vocabulary).route("osimertinib resistance")) == [
        ("biomed_text", "pubmedbert"),
        ("chemical", "molformer"),
    ]


def test_r_rt_5_entity_with_related_drugs_adds_chemical(vocabulary):
    assert ("chemical", "molformer") in pairs(classifier(vocabulary).route("EGFR signalling"))


def test_r_rt_6_radiology_keywords(vocabulary):
    assert ("radiology", "biomedclip") in pairs(classifier(vocabulary).route("chest x-ray opacity"))


def test_r_rt_7_pathology_keywords(vocabulary):
    assert ("pathology", "uni2") in pairs(
        classifier(vocabulary).route("H&E histology of the biopsy")
    )


def test_r_rt_8_visual_mode_image_or_combination(vocabulary):
    router = classifier(vocabulary)
    assert ("visual", "general-vl") in pairs(router.route("a figure", route_mode="visual"))
    assert ("visual", "general-vl") in pairs(router.route("what is this", has_image=True))
    assert ("visual", "general-vl") in pairs(router.route("nivolumab plus ipilimumab"))
    assert ("visual", "general-vl") not in pairs(router.route("nivolumab"))


def test_r_rt_9_exploratory_collections_appended(vocabulary):
    decision = classifier(vocabulary, exploratory_search_collections=("general_text",)).route(
        "diet"
    )
    assert pairs(decision)[-1] == ("general_text", "general-text")


def test_r_rt_10_entity_match_turns_off_parent_doc_retrieval(vocabulary):
    router = classifier(vocabulary)
    assert router.route("osimertinib").retrieval_hints["parent_doc_retrieval"] is False
    assert "parent_doc_retrieval" not in router.route("sleep and diet").retrieval_hints


def test_r_rt_11_regulatory_suppresses_chemical(vocabulary):
    decision = classifier(vocabulary).route("osimertinib prescribing information")
    assert "chemical" not in [plan.collection for plan in decision.plans]


def test_r_rt_12_scope_adds_ingested_collections_with_query_encoder(vocabulary):
    router = classifier(vocabulary)
    decision = router.route(
        "sleep and diet",
        scope=ScopeFilter(kb_names=("kb1",)),
        scope_collections=[("medcpt_text", "medcpt-article"), ("biomed_text", "pubmedbert")],
    )
    assert pairs(decision) == [("biomed_text", "pubmedbert"), ("medcpt_text", "medcpt-query")]
    unscoped = router.route("sleep and diet", scope_collections=[("medcpt_text", "medcpt-article")])
    assert pairs(unscoped) == [("biomed_text", "pubmedbert")]


@pytest.mark.parametrize("union", ["all", "query_modalities"])
def test_r_rt_12_scope_union_of_the_query_modalities_only(vocabulary, union):
    # A kb holding label text, compounds and images: a text question gets the chemical
    # and image collections only under the seed's ``all``; a structure question and an
    # attached image still reach theirs under ``query_modalities``.
    router = classifier(vocabulary, chemical_for_drug_queries=False, scope_union=union)
    held = [("biomed_text", "pubmedbert"), ("chemical", "molformer"), ("visual", "general-vl")]
    scope = ScopeFilter(kb_names=("kb1",))
    text = pairs(router.route("apixaban bleeding risk", scope=scope, scope_collections=held))
    if union == "all":
        assert text == held
    else:
        assert text == [("biomed_text", "pubmedbert")]
    smiles = pairs(router.route("CC(=O)Oc1ccccc1C(=O)O", scope=scope, scope_collections=held))
    assert ("chemical", "molformer") in smiles
    imaged = pairs(router.route("apixaban", has_image=True, scope=scope, scope_collections=held))
    assert ("visual", "general-vl") in imaged


def test_r_rt_12_union_keeps_suppressed_out_and_has_no_duplicates():
    decision = apply_scope_aware_union(
        QueryRouteDecision(),
        [("chemical", "molformer"), ("a", "x"), ("a", "x")],
        20,
        suppressed=("chemical",),
    )
    assert pairs(decision) == [("a", "x")]


def test_plans_are_unique_and_deterministic(vocabulary):
    router = classifier(vocabulary, exploratory_search_collections=("chemical", "biomed_text"))
    first = router.route("osimertinib plus savolitinib")
    assert len(set(pairs(first))) == len(pairs(first))
    assert pairs(first) == pairs(router.route("osimertinib plus savolitinib"))


def test_disabled_collections_are_skipped_and_reported(vocabulary):
    settings = PipelineSettings(collections={"chemical": {"enabled": False}})
    decision = BiomedQueryRouteClassifier(settings, vocabulary).route("osimertinib")
    assert pairs(decision) == [("biomed_text", "pubmedbert")]
    assert decision.retrieval_hints["skipped_collections"] == ["chemical"]
