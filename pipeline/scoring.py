"""Entity, section, topic and cross-drug scores (R-ENT-1, R-T2-5..8, A-7, A-11), and the
sections recall sets aside unless cued (A-9). Pure functions."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.hybrid import sparse_score
from pipeline.schema import Node, NodeWithScore, parse_drug_list
from pipeline.section_vocabulary import within_pattern
from pipeline.settings import CrossDrugTerms, ProfileWeights, Tier2Settings
from pipeline.text import contains_term, path_blob, query_terms, tokens
from pipeline.vocabulary import Vocabulary

__all__ = [
    "CLASS_HEAD_WORDS",
    "PROFILE_WEIGHTS",
    "boost_terms_for_query",
    "combination_parts",
    "combination_parts_in_order",
    "condition_terms",
    "cross_drug_penalty",
    "drug_key",
    "drug_keys",
    "entity_boost_score",
    "entity_match_score",
    "member_topic_terms",
    "primary_drug_names",
    "protected_drugs",
    "section_match_score",
    "set_aside_sections",
    "substances_of",
    "topic_match_score",
    "topic_terms",
    "without_sections",
]

#: Entity types whose names a question uses to say *what* it asks about, not *which* part:
#: their names leave the topic terms (a disease stays: "ibrutinib atrial fibrillation").
NAMING_TYPES = frozenset({"drug", "class", "gene"})

#: Tier-2 weights per profile (R-T2-8); ``general`` uses ``default``.
PROFILE_WEIGHTS: dict[str, ProfileWeights] = dict(Tier2Settings().profile_weights)


#: How the vocabulary writes a fixed combination: "nirmatrelvir and ritonavir",
#: "dapagliflozin/metformin".
_COMBINATION_SPLIT = re.compile(r",?\s+and\s+|\s*/\s*|,\s+")


def combination_parts(name: str) -> frozenset[str]:
    """The substances of one drug name, lower-cased, without edge punctuation:
    ``{"nirmatrelvir", "ritonavir"}`` for ``nirmatrelvir and ritonavir``; ``{name}`` for a
    single substance (``epoetin alfa,`` -> ``{"epoetin alfa"}``)."""
    return frozenset(combination_parts_in_order(name))


def combination_parts_in_order(name: str) -> tuple[str, ...]:
    """:func:`combination_parts` in the order the name writes them, each once."""
    parts = (part.strip(" ,;.") for part in _COMBINATION_SPLIT.split(name.lower()))
    return tuple(dict.fromkeys(part for part in parts if part))


def substances_of(names: Sequence[str], vocabulary: Vocabulary) -> frozenset[str]:
    """The substances of drug ``names``, each by the vocabulary's canonical name, lower
    case: Trimbow's "beclometasone" is beclomethasone, a brand ("Paxlovid") its
    combination's substances, a name the vocabulary does not know itself."""
    parts = frozenset().union(*(combination_parts(name) for name in names))
    return frozenset().union(
        *(
            combination_parts(canonical)
            for part in parts
            for canonical in (vocabulary.match_drug_entities(part, correct_typos=False) or [part])
        )
    )


def drug_key(name: str) -> str:
    """One spelling of a drug name for comparing names: lower case, a fixed combination's
    substances in sorted order (``glecaprevir/pibrentasvir`` and ``glecaprevir and
    pibrentasvir`` -> ``glecaprevir / pibrentasvir``; the vocabulary and the leaflets
    write combinations both ways)."""
    return " / ".join(sorted(combination_parts(name)))


def drug_keys(drugs: Sequence[str]) -> frozenset[str]:
    """The query-side names of ``drugs`` to meet :func:`primary_drug_names`: each name
    lower-cased and its :func:`drug_key`."""
    return frozenset({drug.lower() for drug in drugs} | {drug_key(drug) for drug in drugs})


def primary_drug_names(metadata: Mapping[str, Any]) -> frozenset[str]:
    """A node's ``primary_drugs`` (R-ING-3), lower-cased, with each fixed combination's
    parts beside it: Paxlovid's ``nirmatrelvir and ritonavir`` is also ``nirmatrelvir``
    and ``ritonavir``, so a question naming either drug matches the product; and each
    name's :func:`drug_key`, so the vocabulary's ``nirmatrelvir/ritonavir`` matches it too."""
    names = {drug.lower() for drug in parse_drug_list(metadata.get("primary_drugs"))}
    keys = {drug_key(name) for name in names}
    return frozenset(names.union(keys, *(combination_parts(name) for name in names)))


def entity_boost_score(metadata: Mapping[str, Any], drugs: Sequence[str]) -> float:
    """Entity boost (R-ENT-1): 1.0 when a ``primary_drugs`` value (or a part of a fixed
    combination, :func:`primary_drug_names`) equals a query drug (compared by
    :func:`drug_key`: a combination in either spelling), 0.5 when a query drug
    appears in the path / file_name / document_name / source_uri blob, else 0.0.
    Case-insensitive; blob hits follow the letter-boundary rule."""
    if not drugs:
        return 0.0
    wanted = {drug.lower() for drug in drugs}
    if primary_drug_names(metadata) & drug_keys(drugs):
        return 1.0
    blob = path_blob(metadata)
    if any(contains_term(blob, drug) for drug in wanted):
        return 0.5
    return 0.0


def entity_match_score(node: Node, drugs: Sequence[str], window: int = 512) -> float:
    """Tier-2 entity score (R-T2-5): 1.0 when ``entity_boost_score >= 1``; 0.75 when it is
    0.5 or a query drug is in ``text[:window]``; else 0.0. ``drugs`` are the boost terms:
    the query's drugs, else the related drugs of its entities."""
    boost = entity_boost_score(node.metadata, drugs)
    if boost >= 1.0:
        return 1.0
    if boost >= 0.5:
        return 0.75
    head = node.text[:window].lower()
    if any(contains_term(head, drug) for drug in drugs):
        return 0.75
    return 0.0


def section_match_score(node: Node, cues: Sequence[str], summary_window: int = 200) -> float:
    """Fraction of ``cues`` found in the blob of ``biomed_section`` / path /
    ``content_summary[:summary_window]`` (R-T2-6). A cue matches as written
    (``indications_and_usage``) or with underscores as spaces, or by a sub-heading of its
    section in the node's text (``SectionWords.within``: "Other medicines and Tasigna" in
    a leaflet's section 2 answers ``drug_interactions``). No cues: 0.0."""
    if not cues:
        return 0.0
    metadata = node.metadata
    blob = " ".join(
        (
            str(metadata.get("biomed_section") or ""),
            path_blob(metadata),
            str(metadata.get("content_summary") or "")[:summary_window],
        )
    ).lower()
    spaced_blob = blob.replace("_", " ")
    hits = sum(
        1
        for cue in cues
        if cue.lower() in blob
        or cue.lower().replace("_", " ") in spaced_blob
        or _within(cue, node.text)
    )
    return hits / len(cues)


def _within(cue: str, text: str) -> bool:
    pattern = within_pattern(cue)
    return pattern is not None and pattern.search(text) is not None


def boost_terms_for_query(
    query: str,
    vocabulary: Vocabulary,
    related_limit: int = 6,
    related_types: Sequence[str] | None = None,
    class_limit: int | None = None,
) -> list[str]:
    """Tier-2 boost terms (R-T2-5): the query's drugs; else ``related_drugs[:related_limit]``
    of each matched entity (of ``related_types``, None: any), de-duplicated in order;
    A-51: a class's first ``class_limit`` members (None: ``related_limit``)."""
    drugs = vocabulary.match_drug_entities(query)
    if drugs:
        return drugs
    related: list[str] = []
    for entity in vocabulary.match_entities(query):
        if related_types is None or entity.semantic_type in related_types:
            is_class = entity.semantic_type == "class" and class_limit is not None
            related.extend(entity.related_drugs[: class_limit if is_class else related_limit])
    return list(dict.fromkeys(related))


#: Entity types that name a medicine (A-36: a question naming one has no condition terms).
_MEDICINE_TYPES = frozenset({"drug", "class", "other"})


def condition_terms(query: str, vocabulary: Vocabulary) -> list[str]:
    """A-36: the conditions (``disease`` entities) ``query`` names, each as the
    vocabulary names it and as written, lower case, de-duplicated in order: "drug-induced
    methaemoglobinaemia, treatment" -> ``["methemoglobinemia", "methaemoglobinaemia"]``.
    [] when it also names a medicine (a drug, a class, or anything the vocabulary types
    ``other``: co-codamol or insulin, and also receptors and proteins, where it keeps
    the seed): the question is about that medicine, not only the condition. A gene
    target may stand beside the condition ("CD123-directed therapy for blastic
    plasmacytoid dendritic cell neoplasm")."""
    found = vocabulary.find(query)
    if any(match.entity.semantic_type in _MEDICINE_TYPES for match in found):
        return []
    terms = [
        name.lower()
        for match in found
        if match.entity.semantic_type == "disease"
        for name in (match.entity.canonical, match.surface)
    ]
    return list(dict.fromkeys(terms))


def cross_drug_penalty(node: Node, drugs: Sequence[str], window: int = 512) -> float:
    """Cross-drug penalty (R-T2-7): 1.0 when the node's ``primary_drugs`` (list, string or
    JSON array string) is non-empty and disjoint from the query drugs, and no query drug
    appears in ``text[:window]`` or the path blob; else 0.0.

    Reading of the rule: with no query drugs there is no drug to cross, so the penalty is
    0.0 (read literally, every node with drugs would be penalised on general queries).
    """
    if not drugs:
        return 0.0
    primary = primary_drug_names(node.metadata)
    if not primary:
        return 0.0
    wanted = {drug.lower() for drug in drugs}
    if primary & drug_keys(drugs):
        return 0.0
    head = node.text[:window].lower()
    blob = path_blob(node.metadata)
    if any(contains_term(head, drug) or contains_term(blob, drug) for drug in wanted):
        return 0.0
    return 1.0


def topic_terms(query: str, vocabulary: Vocabulary) -> list[str]:
    """The query's terms (R-HYB-3's: stop words left out) outside the names of the drugs,
    drug classes and genes it names, as written or misspelt: what it asks about them
    (``osimertinb rash`` -> ``["rash"]``; A-7). Every chunk of the named drug's leaflet
    earns the entity score; these terms tell its chunks apart. A medicine named as what
    failed (A-29, no entity of the question) is no topic either."""
    named = {
        token
        for match in vocabulary.find(query, keep_context=True)
        if match.entity.semantic_type in NAMING_TYPES
        for token in tokens(match.surface)
    }
    return [term for term in query_terms(query) if term not in named]


#: Words that name a kind of medicine, not what a question asks of it: in "KRAS inhibitor"
#: the vocabulary reads the gene, and "inhibitor" is left (A-15).
CLASS_HEAD_WORDS = frozenset(
    {
        f"{word}{plural}"
        for word in ("inhibitor", "blocker", "agonist", "antagonist", "modulator")
        for plural in ("", "s")
    }
    | {"antibody", "antibodies"}
)


def member_topic_terms(query: str, vocabulary: Vocabulary) -> list[str]:
    """The words by which a class member's chunk earns its entity score in a question
    that names no drug (A-15): :func:`topic_terms` less ``CLASS_HEAD_WORDS``, so the
    condition the question names ("toenail", "onychomycosis") chooses among the members
    of "antifungal". A question that names a drug: ``[]`` (its boost terms are its own)."""
    if vocabulary.match_drug_entities(query):
        return []
    return [term for term in topic_terms(query, vocabulary) if term not in CLASS_HEAD_WORDS]


def topic_match_score(node: Node, terms: Sequence[str]) -> float:
    """Fraction of ``terms`` (:func:`topic_terms`, or :func:`member_topic_terms` for A-15)
    found in the node's text as whole words (R-HYB-3's matching), in [0, 1]; no terms: 0.0
    (A-7)."""
    return sparse_score("", node.text, terms) if terms else 0.0


def set_aside_sections(sections: Sequence[str], cues: Sequence[str]) -> frozenset[str]:
    """The sections of ``sections`` (``HybridSettings.set_aside_sections``) that the
    question's section ``cues`` do not name (A-9): "phone number of the local
    representative for Tasigna" cues ``contacts`` and gets those chunks back."""
    cued = set(cues)
    return frozenset(section for section in sections if section not in cued)


def without_sections(hits: list[NodeWithScore], sections: frozenset[str]) -> list[NodeWithScore]:
    """``hits`` less those whose ``biomed_section`` is in ``sections``, order kept (A-9)."""
    if not sections:
        return hits
    return [hit for hit in hits if hit.node.metadata.get("biomed_section") not in sections]


def protected_drugs(
    nodes: Sequence[NodeWithScore],
    query: str,
    boost_terms: Sequence[str],
    vocabulary: Vocabulary,
    terms: CrossDrugTerms,
) -> list[str]:
    """The drugs whose chunks the R-T2-7 cross-drug penalty protects (``terms``, see
    :class:`pipeline.settings.CrossDrugTerms`): the boost terms, the query's drugs, or
    those of the query's drugs that are a ``primary_drugs`` value of some node in
    ``nodes`` (none: nothing is protected, and so no node is penalised)."""
    if terms is CrossDrugTerms.BOOST_TERMS:
        return list(boost_terms)
    named = vocabulary.match_drug_entities(query)
    if terms is CrossDrugTerms.QUERY_DRUGS or not named:
        return named
    present = {drug for item in nodes for drug in primary_drug_names(item.node.metadata)}
    return [drug for drug in named if drug_key(drug) in present]
