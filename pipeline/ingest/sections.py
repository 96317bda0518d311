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

__all__ = [
    "CANONICAL_SECTIONS",
    "EMA_LEAFLET_SECTIONS",
    "QRD_OPENINGS",
    "canonical_section",
    "heading_number",
    "leaflet_section_numbers",
]

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
        number = heading_number(heading)
        if number in EMA_LEAFLET_SECTIONS:
            return EMA_LEAFLET_SECTIONS[number]
    return heading_section(heading) or "body"


#: The sentences the EMA QRD template opens leaflet sections 2-5 with: where one stands is
#: where that section starts, whatever heading the text came under.
QRD_OPENINGS: dict[int, re.Pattern[str]] = {
    2: re.compile(r"^\W*Do not (?:take|use|give|have) [\w -]{1,40}? if you are allergic", re.I),
    3: re.compile(r"^\W*Always (?:take|use|give) (?:this medicine|\w+) exactly", re.I),
    4: re.compile(
        r"^\W*(?:Like all medicines,? this medicine can cause side effects"
        # the HIV leaflets' section 4 opens with weight and blood lipids (14 of 14)
        r"|During HIV therapy there may be an increase in weight)",
        re.I,
    ),
    5: re.compile(r"^\W*Keep (?:this medicine )?out of the sight and reach of children", re.I),
}


def leaflet_section_numbers(headings: list[str], texts: list[str]) -> list[int | None]:
    """The section number (1-6) each text of one leaflet belongs to, None for an
    unnumbered part ("What is in this leaflet"). A text that opens with a QRD opening
    (:data:`QRD_OPENINGS`) belongs to that section. Any other text under heading n moves
    back as far as the next such text's heading is late (the source split some leaflets
    one heading late: "4. Possible side effects" held "Always take this medicine exactly
    ...", and "3. How to take" the end of section 2), never before the section of the
    text above it."""
    numbers = [heading_number(heading) for heading in headings]
    anchors = [
        next((k for k, pattern in QRD_OPENINGS.items() if pattern.match(text)), None)
        for text in texts
    ]
    result: list[int | None] = []
    current = 1
    for index, number in enumerate(numbers):
        if number is None:
            result.append(None)
            continue
        if anchors[index] is not None:
            current = anchors[index]
        else:
            late = next(
                (numbers[j] - anchors[j] for j in range(index + 1, len(numbers))
                 if anchors[j] is not None and numbers[j] is not None),
                0,
            )
            current = max(number - max(late, 0), current)
        result.append(current)
    return result


def heading_number(heading: str) -> int | None:
    """The number of an EMA leaflet heading (``"4. Possible side effects"`` -> 4), None
    for an unnumbered one."""
    match = _EMA_NUMBER_RE.match(heading)
    return int(match.group(1)) if match else None
