"""Section headings -> canonical sections (R-ING-2).

Label and leaflet headings map to the label sections the rules cue on
(``indications_and_usage``, ``warnings``, ``dosage_and_administration``, ...); paper
headings to IMRaD. EMA leaflet sections 1-6 map by number.
"""

from __future__ import annotations

import re

__all__ = ["CANONICAL_SECTIONS", "EMA_LEAFLET_SECTIONS", "canonical_section"]

CANONICAL_SECTIONS: tuple[str, ...] = (
    "indications_and_usage",
    "dosage_and_administration",
    "warnings",
    "contraindications",
    "adverse_reactions",
    "drug_interactions",
    "storage",
    "description",
    "overview",
    "clinical_pharmacology",
    "abstract",
    "introduction",
    "methods",
    "results",
    "discussion",
    "compound",
    "body",
)

#: EMA package leaflet sections by number (R-ING-2).
EMA_LEAFLET_SECTIONS: dict[int, str] = {
    1: "indications_and_usage",
    2: "warnings",
    3: "dosage_and_administration",
    4: "adverse_reactions",
    5: "storage",
    6: "description",
}

#: Heading patterns, checked in order; the first match wins.
_ALIASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), section)
    for pattern, section in (
        (r"\bindications?\b|\bused for\b|\bwhat .* is\b", "indications_and_usage"),
        (
            r"\bdosage\b|\bdosing\b|\bhow to (?:take|use)\b|\badministration\b",
            "dosage_and_administration",
        ),
        (r"\bcontraindicat", "contraindications"),
        (
            r"\bboxed warning\b|\bwarnings?\b|\bprecautions?\b|\bbefore you (?:take|use)\b",
            "warnings",
        ),
        (r"\badverse\b|\bside effects?\b|\bundesirable effects\b", "adverse_reactions"),
        (r"\binteractions?\b", "drug_interactions"),
        (r"\bstor(?:e|age)\b", "storage"),
        (
            r"\bcontents of the pack\b|\bdescription\b|\bcomposition\b|\bwhat .* contains\b",
            "description",
        ),
        (r"\bpharmacolog|\bmechanism of action\b|\bpharmacokinetic", "clinical_pharmacology"),
        (r"\bwhat is in this leaflet\b|\bpackage leaflet\b|\boverview\b", "overview"),
        (r"\babstract\b|\bsummary\b", "abstract"),
        (r"\bintroduction\b|\bbackground\b", "introduction"),
        (r"\bmethods?\b|\bmaterials\b|\bpatients and methods\b|\bstudy design\b", "methods"),
        (r"\bresults?\b|\bfindings\b", "results"),
        (r"\bdiscussion\b|\bconclusions?\b", "discussion"),
    )
)

_EMA_NUMBER_RE = re.compile(r"^\s*(\d)\.\s")


def canonical_section(heading: str, kind: str = "document") -> str:
    """Canonical section of ``heading`` (R-ING-2): EMA leaflet numbers first, then the
    alias table; ``body`` when nothing matches (``compound`` for compound records)."""
    if kind == "compound":
        return "compound"
    if kind == "leaflet":
        number = _EMA_NUMBER_RE.match(heading)
        if number and int(number.group(1)) in EMA_LEAFLET_SECTIONS:
            return EMA_LEAFLET_SECTIONS[int(number.group(1))]
    for pattern, section in _ALIASES:
        if pattern.search(heading):
            return section
    return "body"
