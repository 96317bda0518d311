"""Section headings -> canonical sections (R-ING-2).

Label and leaflet headings map to the label sections the rules cue on
(``indications_and_usage``, ``warnings``, ``dosage_and_administration``, ...); paper
headings to IMRaD. EMA leaflet sections 1-6 map by number. The heading words live in
``pipeline.section_vocabulary.SECTION_TABLE`` beside the query cues of the same sections
(A-5), so a heading "Dose reduction" and a question "what dose" meet on
``dosage_and_administration``.
"""

from __future__ import annotations

import re

from pipeline.section_vocabulary import CANONICAL_SECTIONS, heading_section

__all__ = ["CANONICAL_SECTIONS", "EMA_LEAFLET_SECTIONS", "canonical_section"]

#: EMA package leaflet sections by number (R-ING-2).
EMA_LEAFLET_SECTIONS: dict[int, str] = {
    1: "indications_and_usage",
    2: "warnings",
    3: "dosage_and_administration",
    4: "adverse_reactions",
    5: "storage",
    6: "description",
}

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
    return heading_section(heading) or "body"
