"""Dense and sparse query expansion (SPEC.md section 4, R-EXP-1..2)."""

from __future__ import annotations

from pipeline.intent import detect_retrieval_intent
from pipeline.schema import ExpandedQuery, QueryRetrievalIntent
from pipeline.vocabulary import Vocabulary, default_vocabulary

__all__ = [
    "DENSE_EXPANSION_ENCODERS",
    "MAX_EXPANSION_TERMS",
    "expand",
    "expand_query_for_dense_retrieval",
    "expansion_terms",
    "sparse_terms_for",
]

#: Encoder roles whose dense query gets the entity suffix (R-EXP-1: PubMedBERT only).
DENSE_EXPANSION_ENCODERS: frozenset[str] = frozenset({"pubmedbert"})
MAX_EXPANSION_TERMS = 12
_ALIASES_PER_ENTITY = 2
_PATHWAYS_PER_ENTITY = 1


def expansion_terms(
    query: str, vocabulary: Vocabulary | None = None, max_terms: int = MAX_EXPANSION_TERMS
) -> list[str]:
    """The R-EXP-1 suffix terms: per matched entity, in order of first appearance, two of
    its names and one pathway; de-duplicated (case-insensitive), at most ``max_terms``.

    An entity's names are its canonical name and aliases, minus the form the query
    already uses (so ``Tagrisso`` contributes ``osimertinib``, ``AZD9291``).
    """
    vocabulary = vocabulary or default_vocabulary()
    terms: list[str] = []
    seen = {query.lower()}
    used_forms = {match.surface.lower() for match in vocabulary.find(query)}
    for entity in vocabulary.match_entities(query):
        names = [n for n in (entity.canonical, *entity.aliases) if n.lower() not in used_forms]
        picked = names[:_ALIASES_PER_ENTITY] + list(entity.pathways[:_PATHWAYS_PER_ENTITY])
        for term in picked:
            if term.lower() not in seen:
                seen.add(term.lower())
                terms.append(term)
    return terms[:max_terms]


def expand_query_for_dense_retrieval(query: str, vocabulary: Vocabulary | None = None) -> str:
    """``"{query} [biomed entities: a1, a2, p1, ...]"`` (R-EXP-1); the query unchanged when
    no entity matches."""
    terms = expansion_terms(query, vocabulary)
    if not terms:
        return query
    return f"{query} [biomed entities: {', '.join(terms)}]"


def sparse_terms_for(
    query: str, intent: QueryRetrievalIntent, vocabulary: Vocabulary | None = None
) -> tuple[str, ...]:
    """Matched drug names plus the intent's section cues with ``_`` as spaces (R-EXP-2),
    de-duplicated in order. A-27's inferred indications (``section_cues_implied``)
    add no words: "indications and usage" is no word of "acid reflux and heartburn", and
    as a term it is in almost no chunk (7 of 1,002 FDA indications, no leaflet), so it
    only lowers every chunk's overlap against the cosine (measured with the words: 25
    questions down for 51 up, against 9 down; eval-results/2026-12-06-general-indications-cue)."""
    vocabulary = vocabulary or default_vocabulary()
    drugs = vocabulary.match_drug_entities(query)
    named = () if intent.section_cues_implied else intent.section_cues
    cues = [cue.replace("_", " ") for cue in named]
    return tuple(dict.fromkeys([*drugs, *cues]))


def expand(
    query: str,
    encoder: str | None,
    vocabulary: Vocabulary | None = None,
    intent: QueryRetrievalIntent | None = None,
) -> ExpandedQuery:
    """Expand ``query`` for ``encoder`` (section 4). Called once with ``encoder=None`` for
    the global intent pass and once per plan; ``intent`` is the request's intent when
    already computed (R-INT-7).

    Only the PubMedBERT role's dense query gets the entity suffix (R-EXP-1); the sparse
    side always keeps the original query and adds drug names and section cues (R-EXP-2).
    """
    vocabulary = vocabulary or default_vocabulary()
    intent = intent or detect_retrieval_intent(query, vocabulary)
    dense = (
        expand_query_for_dense_retrieval(query, vocabulary)
        if encoder in DENSE_EXPANSION_ENCODERS
        else query
    )
    return ExpandedQuery(
        dense_query=dense, sparse_terms=sparse_terms_for(query, intent, vocabulary), intent=intent
    )
