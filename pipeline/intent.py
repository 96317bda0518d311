"""Query intent detection (SPEC.md section 2, R-INT-1..7, A-5, A-6).

The intent comes from the query text only. Rules are a table walked in order; the first
that matches wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.schema import QueryRetrievalIntent, Workflow
from pipeline.section_lay_cues import TREATMENT_CAUSED, TREATMENT_REQUEST_CUES
from pipeline.section_symptoms import names_a_side_effect
from pipeline.section_vocabulary import cue_alternation, query_section_cues
from pipeline.structure import is_structure_token, structure_tokens
from pipeline.vocabulary import Vocabulary, default_vocabulary
from pipeline.vocabulary_loader import shipped_indication_symptoms

__all__ = [
    "INTENT_RULES",
    "detect_retrieval_intent",
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


#: After a class's name: "SSRIs for anxiety", "anticoagulant to prevent stroke".
_CLASS_FOR_RE = re.compile(r"\s+(?:for(?! (?:which|whom)\b)|to (?:treat|prevent)|against)\b", re.I)


def _says_what_a_medicine_did(query: str) -> bool:
    """A-26: it says what a medicine did, "my tablets gave me a rash" (``TREATMENT_CAUSED``)."""
    caused = _TREATMENT_CAUSED_RE
    assert caused is not None  # the table is non-empty
    return bool(caused.search(query))


def _asks_for_treatment(query: str) -> bool:
    """A-26: ``query`` asks what treats or prevents a condition ("antibiotic for Delhi
    belly"), not what a medicine did ("my tablets for diabetes gave me a rash")."""
    request = _TREATMENT_REQUEST_RE
    assert request is not None  # the table is non-empty
    return bool(request.search(query)) and not _says_what_a_medicine_did(query)


def section_cues_for(
    query: str,
    extended: bool = False,
    names_medicine: bool = True,
    drugs: Sequence[str] = (),
    treatment_cue: bool = False,
    class_request: bool = False,
    general_cue: bool = False,
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
    ``indications_and_usage``. With ``general_cue`` (A-27), every question that names no
    drug and cues nothing else cues ``indications_and_usage``, a request or not ("acid
    reflux and heartburn", "EGFR tyrosine kinase inhibitor tablets"), unless it says what
    a medicine did ("my tablets for diabetes gave me a rash"): in a collection of drug
    labels, a question about a condition or a kind of medicine is answered first by what
    the medicines are for. Without ``extended``, R-INT-6 as the seed wrote it
    (``warnings``, ``dosage``, ``indications_and_usage``).
    """
    cues = query_section_cues(query, seed=not extended, names_medicine=names_medicine)
    if extended and drugs and not cues:
        table = shipped_indication_symptoms()
        treated = frozenset().union(*(table.get(drug.lower(), ()) for drug in drugs))
        if names_a_side_effect(query, treated):
            return ("adverse_reactions",)
    # a question that names a drug asks about that drug; its own cues say what
    if general_cue:
        asks = not _says_what_a_medicine_did(query)
    else:
        asks = treatment_cue and (class_request or _asks_for_treatment(query))
    if extended and not (cues or drugs) and asks:
        # "can you crush tablets for epilepsy": a medicine named by a plain word is asked
        # about as A-18 reads it ("tablets", "cream" are no drug or class)
        return query_section_cues(query, names_medicine=True) or ("indications_and_usage",)
    return cues


def _inferred(query: str, cues: tuple[str, ...], named: tuple[str, ...]) -> bool:
    """A-27: ``cues`` are A-26's or A-27's indications, which no word of ``query`` names
    (not A-18's words read as if a medicine were named: "can you crush tablets")."""
    inferred = cues != named and cues == ("indications_and_usage",)
    return inferred and not query_section_cues(query, names_medicine=True)


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
    the cues the query names. Regulatory suppresses ``chemical_collection`` (R-INT-2).
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
        general_cue: A-27, every question that names no drug and cues nothing else cues
            the indications (``section_cues_for``; ``treatment_cue`` then adds nothing).
            A cue of A-26 or A-27 is marked ``section_cues_implied``: the question's
            words did not name it.
    """
    vocabulary = vocabulary or default_vocabulary()
    drugs = tuple(vocabulary.match_drug_entities(query))
    # A-18's lay cues ask about a medicine's leaflet: a drug, a brand or a class
    classes = [m for m in vocabulary.find(query) if m.entity.semantic_type == "class"]
    names_medicine = bool(drugs) or bool(classes)
    # a class asked for a condition, "SSRIs for anxiety", "statins for cholesterol"
    class_request = any(_CLASS_FOR_RE.match(query, m.end) for m in classes)
    named = section_cues_for(query, extended_section_cues, names_medicine, drugs)
    cues = section_cues_for(
        query,
        extended_section_cues,
        names_medicine,
        drugs,
        treatment_cue,
        class_request,
        general_cue,
    )
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
                section_cues_implied=rule.workflow != "chemical" and _inferred(query, cues, named),
            )
    raise AssertionError("R-INT-5 always matches")  # pragma: no cover
