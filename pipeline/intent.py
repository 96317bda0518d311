"""Query intent detection (SPEC.md section 2, R-INT-1..7, A-5, A-6, A-26, A-27).

The intent comes from the query text only. Rules are a table walked in order; the first
that matches wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.schema import QueryRetrievalIntent, Workflow
from pipeline.section_lay_cues import (
    MEDICINE_WORDS,
    NOT_ABOUT_A_CONDITION,
    TREATMENT_CAUSED,
    TREATMENT_REQUEST_CUES,
)
from pipeline.section_symptoms import names_a_side_effect
from pipeline.section_vocabulary import cue_alternation, query_section_cues
from pipeline.structure import is_structure_token, structure_tokens
from pipeline.vocabulary import Vocabulary, default_vocabulary
from pipeline.vocabulary_loader import shipped_indication_symptoms

__all__ = [
    "INTENT_RULES",
    "detect_retrieval_intent",
    "general_section_cues",
    "looks_like_smiles",
    "section_cues_for",
    "smiles_tokens",
]

_COMPOUND_CUE_RE = re.compile(r"\b(?:smiles|inchi|compound|ligand|molecular formula)\b", re.I)
_LABEL_CUE_RE = re.compile(
    r"\b(?:drug label|prescribing information|indications and usage|dosage and administration)\b",
    re.I,
)
_COMBINATION_CUE_RE = re.compile(r"\b(?:combination|combined with|co-administered|plus)\b", re.I)


def looks_like_smiles(token: str) -> bool:
    """True when ``token`` is a chemical structure (R-INT-1 as amended by SPEC A-3): RDKit
    parses it and it has a ring or at least six heavy atoms (``pipeline.structure``).

    ``c1ccccc1``, ``CC(=O)Oc1ccccc1C(=O)O`` and salt forms (``...OCCOC.Cl``) pass;
    ``COVID-19``, ``NSCLC``, ``HER2``, ``OS/PFS`` and ``AND/OR`` do not.
    """
    return is_structure_token(token)


def smiles_tokens(query: str) -> list[str]:
    """Whitespace-separated tokens of ``query`` that are structures, trimmed of
    surrounding punctuation (``pipeline.structure.structure_tokens``)."""
    return structure_tokens(query)


_TREATMENT_REQUEST_RE = cue_alternation(TREATMENT_REQUEST_CUES)
_TREATMENT_CAUSED_RE = cue_alternation(TREATMENT_CAUSED)
_MEDICINE_WORD_RE = cue_alternation(MEDICINE_WORDS)
_NOT_ABOUT_A_CONDITION_RE = cue_alternation(NOT_ABOUT_A_CONDITION)


#: After a class's name: "SSRIs for anxiety", "anticoagulant to prevent stroke".
_CLASS_FOR_RE = re.compile(r"\s+(?:for(?! (?:which|whom)\b)|to (?:treat|prevent)|against)\b", re.I)


def _matches(pattern: re.Pattern[str] | None, query: str) -> bool:
    assert pattern is not None  # built from a non-empty table
    return bool(pattern.search(query))


def _asks_for_treatment(query: str, class_request: bool) -> bool:
    """A-26: ``query`` asks what treats or prevents a condition ("antibiotic for Delhi
    belly", or ``class_request``: "SSRIs for anxiety"), not what a medicine did ("my
    tablets for diabetes gave me a rash")."""
    request, caused = _TREATMENT_REQUEST_RE, _TREATMENT_CAUSED_RE
    return class_request or (_matches(request, query) and not _matches(caused, query))


def _as_a_medicine_or_indications(query: str) -> tuple[str, ...]:
    """A-26, A-27: A-18's lay cues read as if a drug were named ("can you crush tablets
    for epilepsy" -> dosage; "tablets", "cream" are no drug or class), else the
    indications."""
    return query_section_cues(query, names_medicine=True) or ("indications_and_usage",)


def section_cues_for(
    query: str,
    extended: bool = False,
    names_medicine: bool = True,
    drugs: Sequence[str] = (),
    treatment_cue: bool = False,
    class_request: bool = False,
) -> tuple[str, ...]:
    """Section cues named by the query, de-duplicated, first-appearance order.

    ``extended`` (A-5, the product default through ``RoutingSettings``): the cues of
    ``pipeline.section_vocabulary.SECTION_TABLE``, lay phrasing included ("side effects",
    "what is X used for", "how to store", "can I drive", "if I miss a dose", "what is in
    X"), named by the canonical section values ingest stores; with ``names_medicine``
    also A-18's lay words ("does X cause", "grapefruit", "can I crush"); when it names
    ``drugs`` (canonical names of the drugs and brands it names; a class alone is none)
    and nothing else is cued, a symptom that none of their indications uses cues
    ``adverse_reactions`` (A-21, ``pipeline.section_symptoms``: "Tagrisso rash", "vivid
    dreams on Valdoxan"; not "Veoza hot flushes"). With ``treatment_cue`` (A-26), a
    question that names no drug, cues nothing else and asks for a treatment ("antibiotic
    for Delhi belly", ``pipeline.section_lay_cues.TREATMENT_REQUEST_CUES``; or
    ``class_request``: a class named and then "for", "SSRIs for anxiety") cues
    ``indications_and_usage``. Without ``extended``, R-INT-6 as the seed wrote it
    (``warnings``, ``dosage``, ``indications_and_usage``).
    """
    cues = query_section_cues(query, seed=not extended, names_medicine=names_medicine)
    if extended and drugs and not cues:
        table = shipped_indication_symptoms()
        treated = frozenset().union(*(table.get(drug.lower(), ()) for drug in drugs))
        if names_a_side_effect(query, treated):
            return ("adverse_reactions",)
    # a question that names a drug asks about that drug; its own cues say what
    asks = treatment_cue and not (cues or drugs) and _asks_for_treatment(query, class_request)
    if extended and asks:
        return _as_a_medicine_or_indications(query)
    return cues


def general_section_cues(query: str, names_a_medicine: bool) -> tuple[str, ...]:
    """A-27: the section cue of a question that names no drug and no section.

    In a collection of drug labels, a question about a condition or a kind of medicine
    is answered first by what the medicines are for: ``indications_and_usage`` ("acid
    reflux and heartburn", "EGFR tyrosine kinase inhibitor tablets"). Where
    ``names_a_medicine`` (a class, a plain word of ``MEDICINE_WORDS``, "iron tablets", or
    a treatment request as A-26 reads it), the question is read first with A-18's lay
    cues, as if a drug were named ("can you crush tablets" -> dosage, "how long do the
    eye drops last once opened" -> storage). A-21's side-effect words are not read:
    without a named drug's indications they cannot tell "ACE inhibitor cough" from
    "athlete's foot cream? itchy red rash between my toes" (52 such treatment questions
    of the evaluation sets turned to the side effects). No cue where it says what a
    medicine did ("my tablets for diabetes gave me a rash") or is about no condition
    ("drugs for which a REMS programme is required", ``NOT_ABOUT_A_CONDITION``).
    """
    if _matches(_TREATMENT_CAUSED_RE, query) or _matches(_NOT_ABOUT_A_CONDITION_RE, query):
        return ()
    if names_a_medicine:
        return _as_a_medicine_or_indications(query)
    return ("indications_and_usage",)


@dataclass(frozen=True)
class _Signals:
    query: str
    drugs: tuple[str, ...]
    cues: tuple[str, ...]


@dataclass(frozen=True)
class IntentRule:
    """One row of the R-INT table: when ``matches``, the intent has these fields."""

    rule_id: str
    workflow: Workflow
    matches: Callable[[_Signals], bool]
    suppress_chemical: bool
    require_entity_match: bool


def _is_chemical(signals: _Signals) -> bool:
    return bool(_COMPOUND_CUE_RE.search(signals.query)) or bool(smiles_tokens(signals.query))


def _is_regulatory(signals: _Signals) -> bool:
    return bool(_LABEL_CUE_RE.search(signals.query))


def _is_combination(signals: _Signals) -> bool:
    return bool(_COMBINATION_CUE_RE.search(signals.query)) and len(set(signals.drugs)) >= 2


#: R-INT-1..5, in order; the first rule that matches wins.
INTENT_RULES: tuple[IntentRule, ...] = (
    IntentRule("R-INT-1", "chemical", _is_chemical, False, True),
    IntentRule("R-INT-2", "regulatory", _is_regulatory, True, True),
    IntentRule("R-INT-3", "combination", _is_combination, False, True),
    IntentRule("R-INT-4", "drug_entity", lambda s: bool(s.drugs), False, True),
    IntentRule("R-INT-5", "general", lambda s: True, False, False),
)


def detect_retrieval_intent(
    query: str,
    vocabulary: Vocabulary | None = None,
    chemical_collection: str = "chemical",
    extended_section_cues: bool = True,
    treatment_cue: bool = True,
    general_cue: bool = True,
) -> QueryRetrievalIntent:
    """Intent of ``query`` (R-INT-1..6), from its text only.

    The chemical workflow carries no section cues (R-INT-1); every other workflow carries
    the query's section cues. Regulatory suppresses ``chemical_collection`` (R-INT-2).
    Drugs are counted after A-6 resolution: a drug named with its salt is one drug
    (``imatinib mesylate`` plus chemotherapy is not a combination), a misspelt drug is
    the drug it was read as, and the corrections are recorded on the intent.

    Args:
        query: the assembled query text.
        vocabulary: entity vocabulary; the shipped one when None.
        chemical_collection: name of the chemical collection to suppress.
        extended_section_cues: the A-5 cue table (default); False gives R-INT-6 as the
            seed wrote it.
        treatment_cue: A-26, a question that names no drug and asks for a treatment cues
            the indications when nothing else is cued (``section_cues_for``).
        general_cue: A-27 (``general_section_cues``), for every question that names no
            drug and no section and asks for no label (R-INT-2), in place of A-26. Its
            indications cue is marked ``section_cues_implied``: no word of the question
            names it, so it adds none to the sparse terms (R-EXP-2).
    """
    vocabulary = vocabulary or default_vocabulary()
    drugs = tuple(vocabulary.match_drug_entities(query))
    # A-18's lay cues ask about a medicine's leaflet: a drug, a brand or a class
    found = vocabulary.find(query)
    classes = [m for m in found if m.entity.semantic_type == "class"]
    names_medicine = bool(drugs) or bool(classes)
    # a class asked for a condition, "SSRIs for anxiety", "statins for cholesterol"
    class_request = any(_CLASS_FOR_RE.match(query, m.end) for m in classes)
    general = general_cue and extended_section_cues and not _LABEL_CUE_RE.search(query)
    cues = section_cues_for(
        query,
        extended_section_cues,
        names_medicine,
        drugs,
        treatment_cue and not general,
        class_request,
    )
    implied = False
    if general and not (cues or drugs):
        # a class or a plain word names a medicine, and A-26 read every request so; not
        # an ``other`` entity: most are lab values and proteins ("does high LDL
        # cholesterol cause a stroke" asks about no leaflet)
        plain = _matches(_MEDICINE_WORD_RE, query)
        asks = _asks_for_treatment(query, class_request)
        cues = general_section_cues(query, names_medicine or plain or asks)
        implied = cues == ("indications_and_usage",)
    signals = _Signals(query=query, drugs=drugs, cues=cues)
    corrections = tuple(vocabulary.corrections(query))
    for rule in INTENT_RULES:
        if rule.matches(signals):
            return QueryRetrievalIntent(
                workflow=rule.workflow,
                suppress_collections=(chemical_collection,) if rule.suppress_chemical else (),
                section_cues=() if rule.workflow == "chemical" else signals.cues,
                require_entity_match=rule.require_entity_match,
                corrections=corrections,
                section_cues_implied=implied and rule.workflow != "chemical",
            )
    raise AssertionError("R-INT-5 always matches")  # pragma: no cover
