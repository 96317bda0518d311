"""The words of each canonical section, in one table (R-ING-2, R-INT-6, A-5).

One table says, per canonical section (the ``biomed_section`` value ingest stores):
- ``headings``: the heading words that put a document section there (R-ING-2; used by
  ``pipeline.ingest.sections.canonical_section``);
- ``cues``: the words and lay phrasings of a question that ask for it (A-5; used by
  ``pipeline.intent.section_cues_for``), so a query cue names exactly the section value
  that is stored ("side effects" -> ``adverse_reactions``, "can I drive" -> ``warnings``).

The seed's R-INT-6 cues (``warning(s)`` -> ``warnings``, ``dosage``/``dosing`` ->
``dosage``, ``indications``/``usage`` -> ``indications_and_usage``) stay reachable as
``SEED_QUERY_CUES``; every one of their triggers is also a cue of the table, for the same
section (``dosage`` is the seed's name for ``dosage_and_administration``).

Patterns are case-insensitive regular expressions, matched word-bounded; rows and
patterns are data, not branches: add a phrasing by adding a string. A row's ``lay_cues``
(A-18, ``pipeline.section_lay_cues``: the lay words of the leaflet's sub-headings,
"forgot my injection", "grapefruit") count only in a question that names a medicine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from pipeline.section_lay_cues import (
    ADVERSE_LAY_CUES,
    DATED_DOSE,
    DESCRIPTION_LAY_CUES,
    DOSAGE_LAY_CUES,
    NOT_AN_AMOUNT_TAKEN,
    STORAGE_LAY_CUES,
    WARNINGS_LAY_CUES,
)

__all__ = [
    "CANONICAL_SECTIONS",
    "SECTION_TABLE",
    "SEED_QUERY_CUES",
    "SectionWords",
    "cue_alternation",
    "heading_section",
    "query_section_cues",
    "within_pattern",
]

#: A word that names a medicine in a question ("what is Tarceva for").
_NAME = r"[\w-]+(?: [\w-]+)?"


@dataclass(frozen=True)
class SectionWords:
    """The heading words and query cues of one canonical section."""

    section: str
    headings: tuple[str, ...] = ()
    cues: tuple[str, ...] = ()
    #: sub-headings that carry this section's text inside another section: an EMA
    #: leaflet's "Other medicines and Tasigna" sits in its section 2 (``warnings``)
    within: tuple[str, ...] = ()
    #: A-18: cues that count only in a question that names a medicine
    #: (``pipeline.section_lay_cues``): "does X cause", "grapefruit", "can I crush"
    lay_cues: tuple[str, ...] = ()
    #: phrasings inside which this section's cues do not count: "dose" in "since the
    #: Fycompa dose went up" dates a symptom (``DATED_DOSE``), it asks for no dosage
    not_within: tuple[str, ...] = ()

    @cached_property
    def heading_pattern(self) -> re.Pattern[str] | None:
        """``headings`` as one word-bounded, case-insensitive alternation; None when empty."""
        return cue_alternation(self.headings)

    @cached_property
    def cue_pattern(self) -> re.Pattern[str] | None:
        """``cues`` as one word-bounded, case-insensitive alternation; None when empty."""
        return cue_alternation(self.cues)

    @cached_property
    def lay_cue_pattern(self) -> re.Pattern[str] | None:
        """``lay_cues`` as one word-bounded, case-insensitive alternation; None when empty."""
        return cue_alternation(self.lay_cues)

    @cached_property
    def not_within_pattern(self) -> re.Pattern[str] | None:
        """``not_within`` as one word-bounded, case-insensitive alternation; None when empty."""
        return cue_alternation(self.not_within)

    @cached_property
    def within_pattern(self) -> re.Pattern[str] | None:
        """``within`` as one word-bounded, case-insensitive alternation; None when empty."""
        return cue_alternation(self.within)


def cue_alternation(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """``patterns`` as one word-bounded, case-insensitive alternation; None when empty."""
    if not patterns:
        return None
    return re.compile(r"\b(?:" + "|".join(f"(?:{p})" for p in patterns) + r")\b", re.I)


#: Per canonical section, heading words (checked in table order, the first row that
#: matches wins) and query cues. Order matters for headings only.
SECTION_TABLE: tuple[SectionWords, ...] = (
    SectionWords(
        "indications_and_usage",
        headings=(r"indications?", r"used for", r"what .* is"),
        cues=(
            r"indications?",
            r"usage",
            r"used (?:for|to treat|in)",
            r"what (?:is|are) " + _NAME + r" (?:used )?for",
            r"what does " + _NAME + r" treat",
            r"(?:approved|indicated|prescribed) (?:for|in)",
            r"what (?:is|are) " + _NAME + r" used",
        ),
    ),
    SectionWords(
        "dosage_and_administration",
        headings=(
            r"dosage",
            r"dosing",
            r"how to (?:take|use)",
            r"administration",
            r"doses?",
            r"dose (?:reduction|modification|adjustment)s?",
            r"missed doses?",
            r"overdos\w*",
            r"posology",
        ),
        cues=(
            r"dosage",
            r"dosing",
            # not the modifier of "high-dose methotrexate", "low-dose cytarabine",
            # "fixed-dose"; "can I re-dose" is
            r"(?:(?<!-)|(?<=\bre-))doses?",
            r"posology",
            r"how much",
            r"how often",
            r"how (?:to|should i|do i|should you|do you|is it) (?:take|use|inject|give|administer)",
            # "how is Darzalex given" (a new user's trial: no cue); the name is one word
            r"how (?:is|are) (?:it|this|they|[\w-]+) (?:given|taken|injected|infused|"
            r"administered)",
            r"miss(?:ed)? (?:a |my |one )?doses?",
            r"forg[oe]t(?:ten)? to (?:take|use)",
            r"(?:overdos\w*|too much" + NOT_AN_AMOUNT_TAKEN + r"|more than (?:i|you) should)",
            r"stop (?:taking|using)",
            r"dose (?:reduction|modification|adjustment)s?",
            # lay: "my child accidentally swallowed some of my Valdoxan tablets"
            r"(?:swallowed|took|taken) (?:some|too many|extra|an extra|several)",
            # clinicians' shorthand: "initiation regimen day 1 / day 8", "wk 0, wk 4 then q8w"
            r"regimens?",
            r"initiation",
            r"titrat\w*",
            r"q\d+\s?(?:h|d|w|wk|wks)",
            r"every \d+ (?:hours|days|weeks|months)",
            # food and timing of a dose: "with or without food" is in section 3 of 196
            # leaflets, section 2 of 39; "empty stomach" 32 / 9. Not "X with food and
            # drink" (section 2's interactions) nor "diarrhoea after eating" (a symptom).
            r"with or without (?:food|a meal|meals)",
            r"with (?:food|a meal|meals) or (?:without|fasting|fasted|on an empty stomach)",
            r"before or after (?:food|a meal|meals|eating)",
            r"(?:take|takes|taken|taking|swallow|swallowed|give|given) (?:[\w-]+ ){0,3}?"
            r"(?:with|without|before|after) (?:food|a meal|meals)",
            r"empty stomach",
        ),
        lay_cues=DOSAGE_LAY_CUES,
        not_within=DATED_DOSE,
    ),
    SectionWords(
        "contraindications",
        headings=(r"contraindicat\w*",),
        cues=(r"contraindicat\w*",),
    ),
    SectionWords(
        "warnings",
        headings=(
            r"boxed warning",
            r"warnings?",
            r"precautions?",
            r"before you (?:take|use)",
            r"pregnancy(?: and breast-?feeding)?",
            r"driving and using machines",
        ),
        cues=(
            r"warnings?",
            r"precautions?",
            r"before (?:taking|you take|using|you use|starting|i take|i use)",
            r"(?:can|may|should) (?:i|you) (?:drive|drink|breast-?feed|get pregnant)",
            r"driv(?:e|ing)",
            r"operat(?:e|ing) machine(?:s|ry)",
            r"use machines",
            r"alcohol",
            r"pregnan(?:t|cy)",
            r"breast-?feeding",
            # contraception advice is in section 2 of ~95% of the leaflets that give it
            r"contracept\w*",
            r"birth control",
            # tests and checks during treatment are in section 2: "tests ... before /
            # during treatment" 197 sections vs 21 in section 3, "monitor" 402 vs 187
            r"monitor(?:ing|ed)",
            r"(?:blood|liver|kidney|lab|laboratory) tests?",
            r"(?:LFTs?|U&Es?|TFTs?|FBCs?)",
            r"(?:be|get|been|are|is) (?:checked|tested)",
            r"check (?:my|your|the|their) (?:blood|liver|kidney|eyes|heart)",
            r"check(?:ing)? (?:LFTs?|U&Es?|TFTs?|FBCs?|bloods)",
            r"who (?:should|must|can) ?(?:not|n't) (?:take|use|have)",
            r"(?:should not|shouldn't|must not|cannot|can't) (?:take|use)",
            r"(?:do|did) not (?:take|use)",
            r"is (?:it|" + _NAME + r") safe",
            r"safe (?:to take|to use|in|during|for)",
            # "can I get my vaccinations while using Cibinqo": leaflets say it before use
            r"vaccinations?",
            r"(?:get|have|receive|getting|having) (?:a |my |the |any )?(?:live )?vaccines?",
            r"live vaccines?",
        ),
        lay_cues=WARNINGS_LAY_CUES,
    ),
    SectionWords(
        "adverse_reactions",
        headings=(r"adverse", r"side effects?", r"undesirable effects"),
        cues=(
            r"side[- ]?effects?",
            r"adverse (?:reactions?|events?|effects?|drug reactions?)",
            r"undesirable effects?",
            r"toxicit(?:y|ies)",
            r"tolerability",
            # lay: "will Erivedge make my hair fall out", "does it make you put on weight"
            r"(?:make|makes|made|making) (?:me|you|my|your|him|her|them|people|patients)",
        ),
        lay_cues=ADVERSE_LAY_CUES,
    ),
    SectionWords(
        "drug_interactions",
        headings=(r"interactions?",),
        cues=(r"interact(?:s|ions?|ing)?", r"other medicines"),
        within=(r"other medicines and", r"with food(?:,| and)? (?:drink|alcohol)"),
    ),
    SectionWords(
        "storage",
        headings=(r"stor(?:e|age)",),
        cues=(
            r"stor(?:e|es|ed|ing|age)",
            r"refrigerat\w*",
            r"fridge",
            r"freez\w*|frozen",
            r"(?:keep|kept) (?:in|at|out|below|away)",
            r"be kept",
            r"room temperature",
            r"expiry|expiration|shelf[- ]life",
            r"dispos(?:e|al)",
        ),
        lay_cues=STORAGE_LAY_CUES,
    ),
    # the leaflet's list of the holder's local representatives (addresses, phone
    # numbers), set apart from section 6 at ingest; recall leaves it out unless cued.
    SectionWords(
        "contacts",
        headings=(r"local representatives?",),
        cues=(
            r"local representatives?",
            r"(?:tele)?phone numbers?",
            r"contact (?:details|information|numbers?|address(?:es)?)",
            r"who (?:do|should|can) I contact",
        ),
    ),
    SectionWords(
        "description",
        headings=(
            r"contents of the pack",
            r"description",
            r"composition",
            r"what .* contains",
            r"ingredients?",
        ),
        cues=(
            r"ingredients?",
            r"excipients?",
            r"what (?:does )?" + _NAME + r" contains?",
            r"what is in (?:a |an |the )?",
            r"what " + _NAME + r" looks like",
            r"what does " + _NAME + r" look like",
            r"contents of the pack",
            r"pack sizes?",
            r"composition",
        ),
        lay_cues=DESCRIPTION_LAY_CUES,
    ),
    SectionWords(
        "clinical_pharmacology",
        headings=(r"pharmacolog\w*", r"mechanism of action", r"pharmacokinetic\w*"),
        cues=(
            r"mechanism of action",
            r"how (?:does|do) " + _NAME + r" work",
            r"pharmacokinetics?",
            r"pharmacodynamics?",
            r"half[- ]life",
        ),
    ),
    SectionWords(
        "overview", headings=(r"what is in this leaflet", r"package leaflet", r"overview")
    ),
    SectionWords("abstract", headings=(r"abstract", r"summary")),
    SectionWords("introduction", headings=(r"introduction", r"background")),
    SectionWords(
        "methods", headings=(r"methods?", r"materials", r"patients and methods", r"study design")
    ),
    SectionWords("results", headings=(r"results?", r"findings")),
    SectionWords("discussion", headings=(r"discussion", r"conclusions?")),
)

#: Every canonical section value ingest stores.
CANONICAL_SECTIONS: tuple[str, ...] = (
    "indications_and_usage",
    "dosage_and_administration",
    "warnings",
    "contraindications",
    "adverse_reactions",
    "drug_interactions",
    "storage",
    "description",
    "contacts",
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

#: R-INT-6 as the seed wrote it: (cue pattern, cue name). The seed preset of A-5.
SEED_QUERY_CUES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bwarnings?\b", re.I), "warnings"),
    (re.compile(r"\b(?:dosage|dosing)\b", re.I), "dosage"),
    (re.compile(r"\b(?:indications?|usage)\b", re.I), "indications_and_usage"),
)

#: The seed's cue names -> the canonical section they stand for.
SEED_CUE_SECTIONS: dict[str, str] = {
    "warnings": "warnings",
    "dosage": "dosage_and_administration",
    "indications_and_usage": "indications_and_usage",
}


_ROWS: dict[str, SectionWords] = {row.section: row for row in SECTION_TABLE}


def within_pattern(section: str) -> re.Pattern[str] | None:
    """The sub-heading pattern of ``section`` (``SectionWords.within``), or None."""
    row = _ROWS.get(section)
    return row.within_pattern if row is not None else None


def heading_section(heading: str) -> str | None:
    """The canonical section of a heading by the table's heading words (first row that
    matches), or None."""
    for row in SECTION_TABLE:
        pattern = row.heading_pattern
        if pattern is not None and pattern.search(heading):
            return row.section
    return None


def _spans(pattern: re.Pattern[str] | None, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)] if pattern is not None else []


def query_section_cues(
    query: str, seed: bool = False, names_medicine: bool = True
) -> tuple[str, ...]:
    """Sections a question asks for, de-duplicated, in order of first appearance in the
    query (A-5; R-INT-6 when ``seed``: the seed's three cues and names only). The lay
    cues of A-18 count when ``names_medicine`` (the question names a drug or class)."""
    found: list[tuple[int, str]] = []
    if seed:
        for pattern, cue in SEED_QUERY_CUES:
            match = pattern.search(query)
            if match:
                found.append((match.start(), cue))
    else:
        for row in SECTION_TABLE:
            patterns = [row.cue_pattern, row.lay_cue_pattern if names_medicine else None]
            aside = _spans(row.not_within_pattern, query)
            starts = [
                m.start()
                for p in patterns
                if p is not None
                for m in p.finditer(query)
                if not any(a <= m.start() < b for a, b in aside)
            ]
            if starts:
                found.append((min(starts), row.section))
    found.sort()
    return tuple(dict.fromkeys(cue for _, cue in found))
