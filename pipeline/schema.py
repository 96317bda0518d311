"""Pydantic models for the retrieval pipeline: one model per concept (DESIGN.md module map).

Scoring code never mutates a node: it returns copies (``model_copy(update=...)``).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
)

from pipeline.scope_names import name_problem

__all__ = [
    "CHUNK_METADATA_KEYS",
    "Chunk",
    "CollectionQueryPlan",
    "DocAgg",
    "DocumentRecord",
    "ExpandedQuery",
    "Node",
    "NodeWithScore",
    "QueryRetrievalIntent",
    "QueryRouteDecision",
    "ScopeFilter",
    "ScoreParts",
    "SearchRequest",
    "SearchResponse",
    "StageTrace",
    "Workflow",
    "parse_drug_list",
]

Workflow = Literal["chemical", "regulatory", "combination", "drug_entity", "general"]

#: Chunk metadata keys every ingested node carries (R-ING-1).
CHUNK_METADATA_KEYS: tuple[str, ...] = (
    "node_id",
    "source_chunk_id",
    "document_id",
    "path",
    "file_name",
    "document_name",
    "source_uri",
    "kb_name",
    "tags",
    "primary_drugs",
    "biomed_section",
    "content_summary",
)


def parse_drug_list(value: Any) -> list[str]:
    """Normalise a ``primary_drugs`` value to a list of non-empty strings.

    Accepts a list/tuple, a single string, or a JSON array string (R-T2-7); anything else
    gives ``[]``. The one place metadata drug lists are parsed.
    """
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        return [str(item).strip() for item in value if str(item).strip()]
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                return [str(item).strip() for item in parsed if str(item).strip()]
        return [text]
    return []


class Node(BaseModel):
    """A stored chunk: ``node_id``, its ``text`` and metadata with the R-ING-1 keys.

    ``embedding`` optionally carries the stored document vector ((d,) float32 values, as a
    tuple) returned by a dense search, so Tier-1 can reuse it instead of re-encoding
    (DESIGN.md performance notes). It is never serialised.
    """

    model_config = ConfigDict(frozen=True)

    node_id: str
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    embedding: tuple[float, ...] | None = Field(default=None, exclude=True, repr=False)

    def meta(self, key: str, default: Any = "") -> Any:
        """Metadata value for ``key`` (``default`` when missing or None)."""
        value = self.metadata.get(key)
        return default if value is None else value

    @property
    def is_image(self) -> bool:
        """True for image nodes (``metadata["modality"] == "image"``), which Tier-2 passes
        through unscored (R-T2-1)."""
        return self.metadata.get("modality") == "image"


class NodeWithScore(BaseModel):
    """A node with a score. The extra fields carry the evidence behind the score for the
    response (R-REQ-5): the collection the node came from, vector (cosine, [0, 1]) and term
    (lexical, [0, 1]) similarity, and the Tier-2 score parts."""

    model_config = ConfigDict(frozen=True)

    node: Node
    score: float
    collection: str | None = None
    vector_similarity: float | None = None
    term_similarity: float | None = None
    score_parts: dict[str, float] = Field(default_factory=dict)

    @property
    def node_id(self) -> str:
        """The wrapped node's ``node_id``."""
        return self.node.node_id


class QueryRetrievalIntent(BaseModel):
    """Retrieval intent of one query (SPEC.md section 2), computed once per request (R-INT-7)."""

    model_config = ConfigDict(frozen=True)

    workflow: Workflow = "general"
    suppress_collections: tuple[str, ...] = ()
    section_cues: tuple[str, ...] = ()
    #: A-27: the indications were inferred, not named: Tier-2 weighs them, R-EXP-2 adds no words.
    section_cues_implied: bool = False
    require_entity_match: bool = False
    #: Typo corrections made in the query, drugs' (A-6) then other words' (A-19):
    #: ``"osimertinb→osimertinib"``, ``"nausia→nausea"``; later stages read them corrected.
    corrections: tuple[str, ...] = ()


class CollectionQueryPlan(BaseModel):
    """Search one collection with one encoder role, ``top_k`` hits (SPEC.md section 3)."""

    model_config = ConfigDict(frozen=True)

    collection: str
    encoder: str
    top_k: int = Field(20, ge=1)


class QueryRouteDecision(BaseModel):
    """The plans of one query plus retrieval hints (R-RT-10)."""

    model_config = ConfigDict(frozen=True)

    plans: tuple[CollectionQueryPlan, ...] = ()
    retrieval_hints: dict[str, Any] = Field(default_factory=dict)


class ExpandedQuery(BaseModel):
    """Dense query text, sparse terms and the intent (SPEC.md section 4)."""

    model_config = ConfigDict(frozen=True)

    dense_query: str
    sparse_terms: tuple[str, ...] = ()
    intent: QueryRetrievalIntent = Field(default_factory=QueryRetrievalIntent)


class ScopeFilter(BaseModel):
    """Scope of a request: knowledge bases, document ids, tags (R-RT-12); empty: no limit."""

    model_config = ConfigDict(frozen=True)

    kb_names: tuple[str, ...] = ()
    document_ids: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when no field restricts (no kb names, document ids or tags)."""
        return not (self.kb_names or self.document_ids or self.tags)


class DocumentRecord(BaseModel):
    """A row of the PostgreSQL ``documents`` registry (R-ING-6).

    ``collections`` and ``encoders`` are parallel: ``encoders[i]`` filled
    ``collections[i]`` (one encoder for all collections is also accepted on write).
    ``content_hash`` fingerprints the source content (resumable, idempotent ingest);
    ``metadata`` holds any further document-level keys."""

    model_config = ConfigDict(frozen=True)

    document_id: str
    name: str
    file_name: str = ""
    source_uri: str = ""
    kb_name: str = "default"
    namespace: str = "biomed"
    tags: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    encoders: tuple[str, ...] = ()
    content_hash: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class StageTrace(BaseModel):
    """One pipeline stage in the response trace: input and output sizes, time in ms, audit
    decisions (``rrf_dedupe``, ``rerank_t2_domain``, ...), and whether it degraded."""

    model_config = ConfigDict(populate_by_name=True)

    name: str
    ms: float = 0.0
    items_in: int = Field(
        0, serialization_alias="in", validation_alias=AliasChoices("in", "items_in")
    )
    items_out: int = Field(
        0, serialization_alias="out", validation_alias=AliasChoices("out", "items_out")
    )
    decisions: list[str] = Field(default_factory=list)
    degraded: bool = False
    error: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class SearchRequest(BaseModel):
    """``POST /v1/search`` body (R-REQ-1; field names follow RAGFlow's retrieval API).

    Bounds that depend on configuration (query length, page size, top_k cap) are checked
    by the ingress and ``Retriever`` against ``RequestSettings``; the static ones here."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    query: str = Field(  # empty or blank: the validator below names it, one message
        ...,
        description="the question; 1..request.max_query_chars characters (2000 by default)",
    )
    kb_ids: list[str] = Field(default_factory=list, max_length=64)
    document_ids: list[str] = Field(default_factory=list, max_length=4096)
    tags: list[str] = Field(default_factory=list, max_length=64)
    # upper bounds of page, page_size, top_k: configuration (request.*, Retriever.validate);
    # strict: JSON of another type is refused, not converted (true was page_size 1)
    page: int = Field(1, ge=1, strict=True, description="at most request.max_page (default 1000)")
    page_size: int | None = Field(
        None, ge=1, strict=True,
        description="default: final_top_k (5); at most request.max_page_size (100 by default)",
    )
    top_k: int = Field(
        1024, ge=1, strict=True,
        description="candidate pool cap; at most request.top_k (1024 by default), which is "
        "also the default when the field is left out",
    )
    similarity_threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,  # NaN passed "<= 1" checks only to be told it is not <= 1
        strict=True,
        description=(
            "default 0.2. Drops chunks whose `similarity` is below it. `similarity` is in "
            "[0, 1] and non-increasing down the results: in the reranked window clip((w_ce*ce "
            "+ w_first*first + w_entity*entity + w_sec*section + w_topic*topic - w_xdrug*xdrug)"
            " / reachable, 0, 1) with the weights of the query's workflow, reachable = w_ce + "
            "w_first (+ w_entity when the query names drugs, + w_sec when it has section cues,"
            " + w_topic when it has topic terms); for a structure query the Tanimoto similarity "
            "(1.0 = identical parent structure); past the window, and with rerank off, the "
            "first-stage evidence (k + 1) / (k + rank), capped by the chunk before it. "
            "The raw parts are in each chunk's score_parts."
        ),
    )
    vector_similarity_weight: float | None = Field(
        None, ge=0.0, le=1.0, allow_inf_nan=False, strict=True,
        description="dense weight; lexical weight is 1 - it (default 0.3)",
    )
    rerank: bool = Field(True, strict=True)
    highlight: bool = Field(False, strict=True)
    route_mode: Literal["hybrid", "text", "visual"] = "hybrid"
    namespace: str = Field("biomed", min_length=1, max_length=64)
    collections: list[str] | None = Field(
        None, max_length=16, description="search only these collections (default: as routed)"
    )

    @field_validator("query")
    @classmethod
    def _normalise_query(cls, value: str) -> str:
        # Assemble the query (SPEC.md 1.1): collapse whitespace, drop control characters.
        cleaned = "".join(ch if ch.isprintable() or ch.isspace() else " " for ch in value)
        cleaned = " ".join(cleaned.split())
        if not cleaned:
            raise ValueError("query must contain visible characters")
        return cleaned

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, value: str) -> str:
        # reaches SQL parameters and routing as the names below do
        if not value.isprintable():
            raise ValueError("must not contain control or format characters")
        return value

    @field_validator("kb_ids", "document_ids", "tags", "collections")
    @classmethod
    def _check_names(cls, values: list[str] | None) -> list[str] | None:
        for value in values or ():
            problem = name_problem(value)
            if problem is not None:
                raise ValueError(f"each value {problem}")
        return values

    def scope(self) -> ScopeFilter:
        """``kb_ids``, ``document_ids`` and ``tags`` as a ``ScopeFilter`` (R-RT-12)."""
        return ScopeFilter(
            kb_names=tuple(self.kb_ids),
            document_ids=tuple(self.document_ids),
            tags=tuple(self.tags),
        )


class ScoreParts(BaseModel):
    """The raw parts behind a chunk's similarity: Tier-2's ``ce`` (scorer, min-max over
    the window, R-T2-3), ``entity``, ``section``, ``xdrug`` (R-T2-5..7), ``topic`` (A-7),
    ``first`` (A-4), the RRF score (R-RRF-1) and ``structure`` (Tanimoto, A-3). Absent
    parts are null."""

    ce: float | None = None
    entity: float | None = None
    section: float | None = None
    topic: float | None = None
    xdrug: float | None = None
    rrf: float | None = None
    first: float | None = None
    structure: float | None = None


class Chunk(BaseModel):
    """One result (R-REQ-5).

    ``similarity`` (A-2) is in [0, 1], non-increasing along the result order, and is what
    ``similarity_threshold`` filters. In the reranked window it is the Tier-2 fused score
    over the largest value this query can reach, ``clip((w_ce*ce + w_first*first + w_entity*
    entity + w_sec*section + w_topic*topic - w_xdrug*xdrug) / reachable, 0, 1)`` with
    ``reachable = w_ce + w_first`` (``+ w_entity`` when the query names drugs, ``+ w_sec``
    when it has section cues, ``+ w_topic`` when it has topic terms, A-7); for a
    structure query, the Tanimoto similarity of the structures (1.0 identical parent);
    past the window (and with ``rerank`` off) the first-stage evidence
    ``(k + 1) / (k + rank)``, capped by the similarity before it. ``score_parts`` keeps
    the raw parts. ``vector_similarity`` (cosine, [0, 1]), ``term_similarity`` (lexical,
    [0, 1]) and ``relevance = w * vector_similarity + (1 - w) * term_similarity``
    (``w = vector_similarity_weight``) are the first-stage evidence (R-REQ-5).
    """

    chunk_id: str
    content: str
    document_id: str = ""
    document_name: str = ""
    kb_id: str = ""
    collection: str = ""
    biomed_section: str = ""
    similarity: float
    vector_similarity: float = 0.0
    term_similarity: float = 0.0
    relevance: float = 0.0
    score_parts: ScoreParts = Field(default_factory=ScoreParts)
    positions: list[int] = Field(default_factory=list)
    highlight: str | None = None


class DocAgg(BaseModel):
    """Per document: how many of its chunks this response returned (R-REQ-5)."""

    document_id: str
    document_name: str
    count: int


class SearchResponse(BaseModel):
    """``POST /v1/search`` response (R-REQ-5). ``warnings``: what the caller may want to
    fix, naming the request field (a ``kb_ids`` value with no documents); else empty."""

    chunks: list[Chunk] = Field(default_factory=list)
    doc_aggs: list[DocAgg] = Field(default_factory=list)
    total: int = 0
    page: int = 1
    page_size: int = 5
    intent: QueryRetrievalIntent = Field(default_factory=QueryRetrievalIntent)
    route: list[CollectionQueryPlan] = Field(default_factory=list)
    trace: list[StageTrace] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
