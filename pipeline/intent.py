"""Query intent detection (SPEC.md section 2, R-INT-1..7).

The intent comes from the query text only. Rules are a table walked in order; the first
that matches wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.schema import QueryRetrievalIntent, Workflow
from pipeline.vocabulary import Vocabulary, default_vocabulary

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

#: R-INT-6: cue pattern -> canonical section cue.
_SECTION_CUES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bwarnings?\b", re.I), "warnings"),
    (re.compile(r"\b(?:dosage|dosing)\b", re.I), "dosage"),
    (re.compile(r"\b(?:indications?|usage)\b", re.I), "indications_and_usage"),
)

#: Beyond the source: the other leaflet sections users ask about by name. Off unless
#: ``extended_section_cues`` is set (RoutingSettings), so R-INT-6 holds as written.
_EXTENDED_SECTION_CUES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\b(?:side[- ]effects?|adverse (?:reactions?|events?|effects?))\b", re.I),
        "adverse_reactions",
    ),
    (re.compile(r"\b(?:store|storage|storing|stored)\b", re.I), "storage"),
    (re.compile(r"\bcontraindicat\w*", re.I), "contraindications"),
    (
        re.compile(r"\b(?:before (?:taking|you take|using|you use)|precautions?)\b", re.I),
        "warnings",
    ),
    (re.compile(r"\b(?:used for|used to treat|what is \S+ for)\b", re.I), "indications_and_usage"),
    (re.compile(r"\b(?:how (?:to|should I|do I) (?:take|use)|how much|doses?)\b", re.I), "dosage"),
    (
        re.compile(r"\b(?:ingredients?|contains|what \S+ looks like|contents of the pack)\b", re.I),
        "description",
    ),
)

# SMILES atoms outside brackets: B C N O P S F Cl Br I and aromatic b c n o p s.
_SMILES_CHARS_RE = re.compile(r"^[A-Za-z0-9@+\-\[\]()=#$/\\%.:*]+$")
_BRACKET_ATOM_RE = re.compile(r"\[[^\]]{1,12}\]")
_ORGANIC_ATOM_RE = re.compile(r"Cl|Br|[BCNOPSFI]|[bcnops]")
_SMILES_SYNTAX_RE = re.compile(r"[()=#\[\]@/\\]|[A-Za-z]\d")
_MIN_SMILES_CHARS = 4


def looks_like_smiles(token: str) -> bool:
    """True when ``token`` reads as a SMILES string (R-INT-1): only SMILES characters,
    every unbracketed letter an organic-subset atom, at least four characters, and either
    SMILES syntax (branches, bonds, ring closures, brackets) or at least eight atoms.

    ``c1ccccc1`` and ``CC(=O)Oc1ccccc1C(=O)O`` pass; ``COVID-19``, ``NSCLC`` and
    ``HER2`` do not (V, D, L, H, E, R are not organic-subset atoms).
    """
    token = token.strip(".,;:!?\"'")
    if len(token) < _MIN_SMILES_CHARS or not _SMILES_CHARS_RE.match(token):
        return False
    unbracketed = _BRACKET_ATOM_RE.sub("", token)
    letters = re.sub(r"[^A-Za-z]", "", unbracketed)
    atoms = _ORGANIC_ATOM_RE.findall(unbracketed)
    if sum(len(atom) for atom in atoms) != len(letters):
        return False
    has_syntax = bool(_SMILES_SYNTAX_RE.search(token))
    if not atoms and "[" not in token:
        return False
    if token.isalpha() and token.isupper() and len(token) < 8:
        return False  # acronyms made of atom letters ("CNS", "SCC", "NOS")
    return has_syntax or len(atoms) >= 8


def smiles_tokens(query: str) -> list[str]:
    """Whitespace-separated tokens of ``query`` that look like SMILES."""
    return [token.strip(".,;:!?\"'") for token in query.split() if looks_like_smiles(token)]


def section_cues_for(query: str, extended: bool = False) -> tuple[str, ...]:
    """Section cues named by the query, de-duplicated, first-appearance order (R-INT-6).

    ``extended`` adds the cues of the other leaflet sections (side effects, storage,
    contraindications, ...), beyond the source.
    """
    table = _SECTION_CUES + (_EXTENDED_SECTION_CUES if extended else ())
    found: list[tuple[int, str]] = []
    for pattern, cue in table:
        match = pattern.search(query)
        if match:
            found.append((match.start(), cue))
    found.sort()
    return tuple(dict.fromkeys(cue for _, cue in found))


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
    extended_section_cues: bool = False,
) -> QueryRetrievalIntent:
    """Intent of ``query`` (R-INT-1..6), from its text only.

    The chemical workflow carries no section cues (R-INT-1); every other workflow carries
    the cues the query names. Regulatory suppresses ``chemical_collection`` (R-INT-2).

    Args:
        query: the assembled query text.
        vocabulary: entity vocabulary; the shipped one when None.
        chemical_collection: name of the chemical collection to suppress.
        extended_section_cues: also cue the other leaflet sections (beyond the source).
    """
    vocabulary = vocabulary or default_vocabulary()
    signals = _Signals(
        query=query,
        drugs=tuple(vocabulary.match_drug_entities(query)),
        cues=section_cues_for(query, extended=extended_section_cues),
    )
    for rule in INTENT_RULES:
        if rule.matches(signals):
            return QueryRetrievalIntent(
                workflow=rule.workflow,
                suppress_collections=(chemical_collection,) if rule.suppress_chemical else (),
                section_cues=() if rule.workflow == "chemical" else signals.cues,
                require_entity_match=rule.require_entity_match,
            )
    raise AssertionError("R-INT-5 always matches")  # pragma: no cover
