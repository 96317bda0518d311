"""Medicines a question names as what failed or cannot be taken (A-29): "the Zyrtec isn't
cutting it any more, what else can my doctor prescribe?", "tablets for UC now that
steroids haven't worked", "antiplatelet for AF when the patient can't take an
anticoagulant". The medicine (or class) named there is the question's context, not its
answer: matched as an entity it anchors every stage on its own leaflets (R-T1-2's entity
filter keeps only chunks that name it, R-T2-5 boosts them, R-T2-7 penalises every other
medicine). Pure functions over a question's matches; stored texts are read as written.

Overdoses ("too much insulin", "overdosed on heroin") are not context here: a reversal
question's answer names the drug taken (A-11).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.vocabulary_entities import EntityMatch

__all__ = ["CONTEXT_TYPES", "without_context_drugs"]

#: The entity types a failure clause drops: a medicine or a class of them.
CONTEXT_TYPES: frozenset[str] = frozenset({"drug", "class"})

_APOSTROPHE = "['\u2019]?"
_NOT = rf"(?:n{_APOSTROPHE}t|\s+not)"
#: Up to two words between the name and the clause, none a word that starts another
#: clause or names another thing: "steroid creams failed", "instead of picking up
#: methadone", not "switched to Baraclude after previous tx failed" or "switching from
#: sildenafil to riociguat".
_GAP = (
    r"(?:(?!(?:to|for|with|and|or|but|after|when|because|since|if|in|on|anything)\b)"
    r"[\w'\u2019-]+\s+){0,2}?"
)
#: Verbs of a treatment that does its job ("isn't working", "don't seem to be holding
#: back", "hasn't controlled", "stopped touching").
_DOES_ITS_JOB = r"(?:work|help|control|hold|keep|touch|cut|clear|stop|improv|lift|shift|do)\w*"

#: After the name: "isn't working", "haven't helped", "stopped working", "failed",
#: "did nothing", "quit working", "-refractory".
_FAILED_AFTER = re.compile(
    rf"[\s)]*{_GAP}(?:"
    rf"(?:is|are|was|were|has|have|had|did|does|do){_NOT}\s+"
    rf"(?:(?:seem\s+to|been|be|really|even|ever|properly)\s+)*{_DOES_ITS_JOB}"
    r"|(?:did|does|do|doing)\s+nothing|(?:has\s+|have\s+)?(?:stopped|quit|ceased)\s+\w+ing"
    r"|no\s+longer\s+\w+|failed|(?:is|are|was|were)\s+not\s+tolerated"
    r"|-?(?:resistant|refractory))\b",
    re.IGNORECASE,
)

#: After the name, a side effect ("gave me a rash", "keeps making me sick"): context only
#: in a question that asks for something else (``_ASKS_FOR_ANOTHER``); "Tagrisso gave me
#: a rash" alone asks about Tagrisso's side effects (A-21).
_HARMED_AFTER = re.compile(
    rf"[\s)]*{_GAP}(?:keeps?\s+|kept\s+)?(?:make|makes|made|making|give|gives|gave|giving)"
    r"\s+me\b",
    re.IGNORECASE,
)
_ASKS_FOR_ANOTHER = re.compile(
    r"\b(?:else|other|another|alternatives?|instead|options?|switch\w*|replace\w*)\b",
    re.IGNORECASE,
)

#: Before the name: "can't take", "instead of", "intolerant of", "refractory to",
#: "progressing on", "fed up with", "came off", "despite".
_FAILED_BEFORE = re.compile(
    rf"\b(?:(?:can{_APOSTROPHE}t|can\s*not|could{_NOT}|unable\s+to)"
    r"\s+(?:take|tolerate|use|have|be\s+on|stay\s+on|swallow)"
    r"|instead\s+of|other\s+than|alternatives?\s+to|intoleran(?:t|ce)\s+(?:of|to)"
    r"|allergic\s+to|refractory\s+to|resistant\s+to|failure\s+of|failed(?:\s+on)?"
    r"|(?:inadequate|insufficient|poor)\s+response\s+to|switch(?:ed|ing)?\s+from"
    rf"|(?:not|never|did{_NOT})\s+respond(?:ed|ing)?\s+to"
    r"|(?:progress(?:ed|ing|ion)?|relaps(?:e|es|ed|ing)|not\s+improving|worse)\s+(?:on|despite)"
    r"|despite|(?:fed\s+up|sick|tired|done)\s+with|(?:came|come|coming)\s+off"
    r"|stopped\s+taking|tried)"
    rf"\s+(?:(?:the|an?|my|any|his|her|their|every|all)\s+)?{_GAP}$",
    re.IGNORECASE,
)


def _in_failure_clause(text: str, match: EntityMatch) -> bool:
    before = text[max(0, match.start - 80) : match.start]
    if _FAILED_AFTER.match(text, match.end) or _FAILED_BEFORE.search(before):
        return True
    return bool(_HARMED_AFTER.match(text, match.end) and _ASKS_FOR_ANOTHER.search(text))


def without_context_drugs(text: str, matches: Sequence[EntityMatch]) -> list[EntityMatch]:
    """``matches`` (entity hits in the question ``text``, in text order) less the
    medicines and classes it names as what failed, is not tolerated or is to be replaced
    (A-29): "the Zyrtec isn't cutting it, what else for my hives" keeps the hives and drops
    Zyrtec. A question whose every match is such a name keeps them all: "why isn't my
    Ozempic working?" asks about Ozempic (measured: dropping a sole name too lost "instead
    of picking up methadone every day" 3 -> 6 and found nothing more)."""
    context = [
        m
        for m in matches
        if m.entity.semantic_type in CONTEXT_TYPES and _in_failure_clause(text, m)
    ]
    if not context or len(context) == len(matches):
        return list(matches)
    return [m for m in matches if m not in context]
