"""Settings of a request and its run: request defaults and limits (R-REQ-1..5), stage
time budgets, stage switches, and ingest chunking / batching (R-ING-1..6). Re-exported
by ``pipeline.settings``.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from pipeline.settings_base import _Frozen

__all__ = ["IngestSettings", "RequestSettings", "StageBudgets", "StageSwitches"]


class RequestSettings(_Frozen):
    """Request defaults and limits (R-REQ-1..5)."""

    similarity_threshold: float = Field(0.2, ge=0.0, le=1.0)
    vector_similarity_weight: float = Field(0.3, ge=0.0, le=1.0)
    page_size: int = Field(5, ge=1)
    max_page_size: int = Field(100, ge=1)
    max_page: int = Field(1000, ge=1)
    top_k: int = Field(1024, ge=1)
    candidate_min: int = Field(128, ge=1)
    rerank_page_limit: int = Field(3, ge=0)
    max_query_chars: int = Field(2000, ge=1)


class StageBudgets(_Frozen):
    """Time budget per stage, in ms. A plan or the supplement over budget contributes
    nothing and is recorded as degraded; the cross-encoder over budget falls back (R-T2-4)."""

    plan_ms: float = Field(5000.0, gt=0)
    supplement_ms: float = Field(5000.0, gt=0)
    rerank_ms: float = Field(10000.0, gt=0)
    request_ms: float = Field(30000.0, gt=0)


class StageSwitches(_Frozen):
    """Which stages run; all on in production. Evaluation turns them off one by one for
    its ablations (BM25 only, dense only, hybrid, + Tier-1, + supplement, + Tier-2)."""

    dense: bool = True
    lexical: bool = True
    hybrid_fusion: bool = True
    tier1: bool = True
    supplement: bool = True
    tier2: bool = True


class IngestSettings(_Frozen):
    """Chunking and ingest batching (R-ING-1..6). Tokens are word tokens (letters/digits
    runs), a model-independent stand-in for sub-word tokens (about 1.3 sub-words each)."""

    chunk_tokens: int = Field(200, ge=16, le=2000)
    chunk_overlap: int = Field(30, ge=0, le=500)
    batch_documents: int = Field(64, ge=1)
    encode_batch: int = Field(64, ge=1)
    #: R-ING-4: biomedical entity hits per 100 words below which a user document counts
    #: as general text (labels, leaflets, papers and compounds are biomedical by kind).
    biomedical_density: float = Field(1.0, ge=0.0)
    max_primary_drugs: int = Field(5, ge=1)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> IngestSettings:
        if self.chunk_overlap >= self.chunk_tokens:
            raise ValueError("chunk_overlap must be smaller than chunk_tokens")
        return self
