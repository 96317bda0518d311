"""Every SPEC.md number is a typed setting with the spec's default, loadable from YAML."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from pipeline.settings import PipelineSettings, RerankPolicy, load_yaml

pytestmark = pytest.mark.unit


def test_spec_defaults():
    settings = PipelineSettings()
    assert settings.rrf.k == 60  # R-RRF-1
    assert settings.routing.collection_recall_top_k == 20  # R-RT-2
    assert settings.supplement.inject_min_new == 2  # R-INJ-1
    assert settings.supplement.inject_boost == 100.0  # R-INJ-1
    assert (
        settings.supplement.entity_weight,
        settings.supplement.lexical_weight,
        settings.supplement.dense_weight,
    ) == (2.0, 1.0, 0.1)  # R-SUP-4
    assert (settings.supplement.per_document_limit, settings.supplement.min_limit) == (4, 8)
    assert settings.supplement.related_drugs_limit == 4  # R-SUP-1
    assert settings.tier2.related_drugs_limit == 6  # R-T2-5
    assert settings.tier2.ce_max_chars == 2048 and settings.tier2.ce_max_tokens == 512  # R-T2-3
    assert settings.tier1.max_chars == 2048 and settings.tier1.entity_window_chars == 512
    assert settings.tier2.policy is RerankPolicy.DOMAIN  # R-T2-11
    assert settings.request.similarity_threshold == 0.2  # R-REQ-1
    assert settings.request.vector_similarity_weight == 0.3
    assert settings.request.top_k == 1024 and settings.request.rerank_page_limit == 3
    assert settings.final_top_k == 5
    assert settings.hybrid.hybrid_text_collections == ("biomed_text", "medcpt_text")  # R-HYB-4


def test_yaml_overrides_and_collection_rows(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(
        "pipeline:\n  rrf: {k: 10}\n  collections:\n    chemical: {enabled: false}\n"
        "  tier2:\n    profile_weights:\n"
        "      default: {w_ce: 1, w_entity: 0, w_sec: 0, w_xdrug: 0}\n"
    )
    settings = PipelineSettings.from_yaml(path)
    assert settings.rrf.k == 10
    assert "chemical" not in settings.enabled_collections()
    assert settings.collections["chemical"].query_encoder == "molformer"  # row kept
    assert settings.tier2.weights_for("general").w_ce == 1


@pytest.mark.parametrize(
    "data",
    [
        {"rrf": {"k": -1}},
        {"request": {"similarity_threshold": 2}},
        {"unknown": 1},
        {"tier2": {"policy": "magic"}},
        {"ingest": {"chunk_tokens": 50, "chunk_overlap": 60}},
    ],
)
def test_invalid_values_are_rejected(data):
    with pytest.raises(ValidationError):
        PipelineSettings.model_validate(data)


def test_fusion_by_kb_applies_only_when_the_whole_scope_agrees():
    hybrid = PipelineSettings(
        hybrid={"fusion": "rrf", "fusion_by_kb": {"labels": "replace", "other": "replace"}}
    ).hybrid
    assert hybrid.fusion_for((), names_drugs=True) == "rrf"  # unscoped
    assert hybrid.fusion_for(("labels",), names_drugs=True) == "replace"
    assert hybrid.fusion_for(("labels", "other"), names_drugs=True) == "replace"
    # papers has no override
    assert hybrid.fusion_for(("labels", "papers"), names_drugs=True) == "rrf"
    # A-13: a question that names no drug gets the fusion of a kb without its own choice
    assert hybrid.fusion_for(("labels",), names_drugs=False) == "rrf"
    seed = hybrid.model_copy(update={"fusion_by_kb_needs_drugs": False})
    assert seed.fusion_for(("labels",), names_drugs=False) == "replace"
    with pytest.raises(ValidationError):
        PipelineSettings(hybrid={"fusion_by_kb": {"labels": "cosine"}})


def test_a16_the_gate_reads_entity_types_from_the_profile():
    assert PipelineSettings().hybrid.fusion_by_kb_related_types is None  # A-13 as written
    hybrid = PipelineSettings(hybrid={"fusion_by_kb_related_types": ["gene"]}).hybrid
    assert hybrid.fusion_by_kb_related_types == ("gene",)
    with pytest.raises(ValidationError, match="fusion_by_kb_related_types"):
        PipelineSettings(hybrid={"fusion_by_kb_related_types": ["genes"]})
    profiles = Path(__file__).resolve().parents[2] / "configs" / "profiles"
    chosen = {
        name: PipelineSettings(**load_yaml(profiles / f"{name}.yaml")["pipeline"]).hybrid
        for name in ("default", "production")
    }
    assert chosen["default"].fusion_by_kb_related_types == ("gene",)
    assert chosen["production"].fusion_by_kb_related_types is None  # the seed's A-13


def test_a14_term_weighting_by_kb_follows_the_fusion_rule():
    hybrid = PipelineSettings(
        hybrid={"term_weighting": "pool_idf", "term_weighting_by_kb": {"labels": "uniform"}}
    ).hybrid
    assert PipelineSettings().hybrid.term_weighting == "uniform"  # the seed's R-HYB-3
    assert hybrid.term_weighting_for((), names_drugs=True) == "pool_idf"
    assert hybrid.term_weighting_for(("labels",), names_drugs=True) == "uniform"
    assert hybrid.term_weighting_for(("labels", "papers"), names_drugs=True) == "pool_idf"
    assert hybrid.term_weighting_for(("labels",), names_drugs=False) == "pool_idf"
    seed = hybrid.model_copy(update={"fusion_by_kb_needs_drugs": False})
    assert seed.term_weighting_for(("labels",), names_drugs=False) == "uniform"
    with pytest.raises(ValidationError):
        PipelineSettings(hybrid={"term_weighting": "bm25"})


def test_entity_filter_by_kb_follows_the_same_scope_rule():
    tier1 = PipelineSettings(
        tier1={"entity_filter": False, "entity_filter_by_kb": {"a": True}}
    ).tier1
    assert not tier1.entity_filter_for(())
    assert tier1.entity_filter_for(("a",))
    assert not tier1.entity_filter_for(("a", "b"))
    assert PipelineSettings().tier1.entity_filter_for(("b",))  # the seed: on
