"""Medicines a question names as what failed or cannot be taken (A-29): "the Zyrtec isn't
cutting it any more, what else can my doctor prescribe?", "tablets for UC now that
steroids haven't worked", "antiplatelet for AF when the patient can't take an
anticoagulant". The medicine (or class) named there is the question's context, not its
answer: matched as an entity it anchors every stage on its own leaflets (R-T1-2's entity
filter puts the chunks that name it first, or keeps only those in the seed, R-T2-5
boosts them, R-T2-7 penalises every other
medicine). Pure functions over a question's matches; stored texts are read as written.

An overdose or reversal question ("too many paracetamol", "overdose not responding to
naloxone") is read as written: its answer names the drug taken, or is the one named (A-11).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from pipeline.vocabulary_entities import EntityMatch

__all__ = ["CONTEXT_TYPES", "without_context_drugs"]

#: The entity types a failure clause drops: a medicine or a class of them.
CONTEXT_TYPES: frozenset[str] = frozenset({"drug", "class"})

_APOSTROPHE = "['\u2019\u00b4\u02bc]?"
_NOT = rf"(?:n{_APOSTROPHE}t|\s+not)"
#: Up to two words between the name and the clause, none a word that starts another
#: clause: "steroid creams failed", "instead of picking up methadone", not "switched to
#: Baraclude after previous tx failed"; nor may another name stand between them
#: (``_in_failure_clause``): "Ozempic nausea isn't stopping" is about the nausea.
_GAP = (
    r"(?:(?!(?:to|for|with|and|or|but|after|when|because|since|if|in|on|anything)\b)"
    r"[\w'\u2019-]+\s+){0,2}?"
)
#: Verbs of a treatment that does its job ("isn't working", "don't seem to be holding
#: back", "hasn't controlled", "stopped touching", "doesn't do anything").
_DOES_ITS_JOB = (
    r"(?:(?:work|help|control|hold|keep|touch|cut|clear|stop|improv|lift|shift)\w*"
    r"|do(?:es|ing)?\s+(?:anything|much|a\s+thing))"
)

#: After the name: "isn't working", "haven't helped", "won't work", "stopped working",
#: "failed", "did nothing", "quit working", "no longer helps", "-refractory".
_FAILED_AFTER = re.compile(
    rf"[\s)]*{_GAP}(?:"
    rf"(?:is|are|was|were|has|have|had|did|does|do|wo){_NOT}\s+"
    rf"(?:(?:seem\s+to|been|be|really|even|ever|properly)\s+)*{_DOES_ITS_JOB}"
    r"|(?:did|does|do|doing)\s+nothing|(?:has\s+|have\s+)?(?:stopped|quit|ceased)\s+\w+ing"
    rf"|no\s+longer\s+{_DOES_ITS_JOB}|failed|(?:is|are|was|were)\s+not\s+tolerated"
    r"|-?(?:resistant|refractory))\b",
    re.IGNORECASE,
)

#: After the name, a side effect ("gave me a rash", "keeps making me sick"): context only
#: where the question asks for another medicine (``_ASKS_FOR_ANOTHER``); "Tagrisso gave
#: me a rash" asks about Tagrisso's side effects (A-21).
_HARMED_AFTER = re.compile(
    rf"[\s)]*{_GAP}(?:keeps?\s+|kept\s+)?(?:make|makes|made|making|give|gives|gave|giving)"
    r"\s+me\b",
    re.IGNORECASE,
)
_KIND_OF_MEDICINE = (
    r"(?:\w+\s+)?(?:medicines?|medications?|meds|drugs?|treatments?|tablets?|pills?|"
    r"options?|therap(?:y|ies)|injections?|creams?|inhalers?|one)"
)
#: A question for a medicine other than the one named: "what else", "alternatives",
#: "another tablet", "other treatments", "switch to", "what next", "second-line".
_ASKS_FOR_ANOTHER = re.compile(
    r"\b(?:(?:what|anything|something|how)\s+else|alternatives?"
    rf"|(?:other|another|different)\s+{_KIND_OF_MEDICINE}"
    r"|switch(?:ed|ing)?\s+(?:to|from)(?!\s+(?:taking|using|having|injecting))"
    r"|what\s+(?:next|now|comes\s+next)"
    r"|next[\s-]+(?:line|step|option)|(?:second|third|later)[\s-]+line|escalat\w+"
    # an add-on is another medicine ("what add-on injections are there"); not
    # "added to", which also asks about the medicine added ("when added to metformin")
    r"|add[\s-]?ons?)\b",
    re.IGNORECASE,
)

#: Before the name: "instead of", "intolerant of", "refractory to", "progressing on",
#: "fed up with", "came off", "inadequate response to".
_FAILED_BEFORE = re.compile(
    r"\b(?:instead\s+of|other\s+than|alternatives?\s+to|intoleran(?:t|ce)\s+(?:of|to)"
    r"|allergic\s+to|refractory\s+to|resistant\s+to|failure\s+of|failed(?:\s+on)?"
    r"|(?:inadequate|insufficient|poor)\s+response\s+to|switch(?:ed|ing)?\s+from"
    rf"|(?:(?:not|never)|(?:has|have|had|did|does|do|is|are){_NOT})\s+respond(?:ed|ing)?\s+to"
    r"|(?:progress(?:ed|ing|ion)?|relaps(?:e|es|ed|ing)|not\s+improving)\s+(?:on|despite)"
    r"|(?:fed\s+up|sick|tired|done)\s+with|(?:came|come|coming)\s+off)"
    rf"\s+(?:(?:the|an?|my|any|his|her|their|every|all)\s+)?{_GAP}$",
    re.IGNORECASE,
)

#: Before the name: "can't take", "unable to tolerate", unless how or with what it is
#: taken follows ("can't take ibuprofen with lisinopril?", "can't take metformin with
#: food", "can't take X and Y together").
_CANT_TAKE_BEFORE = re.compile(
    rf"\b(?:can{_APOSTROPHE}t|can\s*not|could{_NOT}|unable\s+to)"
    r"\s+(?:take|tolerate|use|have|be\s+on|stay\s+on)"
    rf"\s+(?:(?:the|an?|my|any|his|her|their)\s+)?{_GAP}$",
    re.IGNORECASE,
)
_HOW_TAKEN_AFTER = re.compile(
    r"[\s)]*(?:[\w'\u2019-]+\s+){0,2}?(?:with|together|and|food|crush\w*|split\w*|while"
    r"|during|at\s+the\s+same\s+time|if|before|after)\b",
    re.IGNORECASE,
)

#: Before the name, cues that also open questions about the named medicine ("alcohol
#: despite taking metformin", "I've tried melatonin, how much"): context only where the
#: question asks for another medicine.
_WEAK_BEFORE = re.compile(
    r"\b(?:despite|tried|stopped\s+taking|worse\s+on)"
    rf"\s+(?:(?:the|an?|my|any|his|her|their|every|all)\s+)?{_GAP}$",
    re.IGNORECASE,
)
#: A-41: between two names of one list ("despite Symbicort plus montelukast", "metformin
#: and gliclazide haven't worked"): both share the clause of either. Not a comma or "or",
#: which offer the options asked about ("instead of warfarin, apixaban or rivaroxaban?").
_SAME_LIST = re.compile(
    r"\s*(?:and|plus|\+|&|as\s+well\s+as)\s+"
    r"(?:(?:the|an?|my|his|her|their|high[\s-]dose|low[\s-]dose|\d+\s*mg)\s+)*",
    re.IGNORECASE,
)
#: A reversal or overdose question keeps its names (A-11).
_OVERDOSE = re.compile(
    r"\b(?:overdos\w*|poison\w*|too\s+(?:much|many)|antidotes?|revers(?:e|es|ed|al))\b",
    re.IGNORECASE,
)


def _in_failure_clause(
    text: str, match: EntityMatch, others: Sequence[EntityMatch], asks_for_another: bool
) -> bool:
    before = text[max(0, match.start - 80) : match.start]
    after = _FAILED_AFTER.match(text, match.end)
    # another name between this one and its clause is what the clause is about
    if after and not any(match.end <= o.start < after.end() for o in others if o is not match):
        return True
    if _FAILED_BEFORE.search(before):
        return True
    if _CANT_TAKE_BEFORE.search(before) and not _HOW_TAKEN_AFTER.match(text, match.end):
        return True
    weak = _WEAK_BEFORE.search(before) or _HARMED_AFTER.match(text, match.end)
    return bool(asks_for_another and weak)


def without_context_drugs(text: str, matches: Sequence[EntityMatch]) -> list[EntityMatch]:
    """``matches`` (entity hits in the question ``text``, in text order) less the
    medicines and classes it names as what failed, is not tolerated or is to be replaced
    (A-29): "the Zyrtec isn't cutting it, what else for my hives" keeps the hives and drops
    Zyrtec. A question whose every match is such a name keeps them all: "my Ozempic has
    stopped working, why?" asks about Ozempic (measured: dropping a sole name too lost
    "instead of picking up methadone every day" 3 -> 6 and found nothing more). An
    overdose or reversal question keeps every name (A-11)."""
    if _OVERDOSE.search(text):
        return list(matches)
    asks = bool(_ASKS_FOR_ANOTHER.search(text))  # once per question, not per name
    context = {
        id(m)
        for m in matches
        if m.entity.semantic_type in CONTEXT_TYPES and _in_failure_clause(text, m, matches, asks)
    }
    listed = [
        (first, second)
        for first, second in pairwise(matches)
        if {first.entity.semantic_type, second.entity.semantic_type} <= CONTEXT_TYPES
        and _SAME_LIST.fullmatch(text, first.end, second.start)
    ]
    for pairs in (listed, reversed(listed)):  # forwards, then backwards
        for first, second in pairs:
            if id(first) in context or id(second) in context:
                context |= {id(first), id(second)}
    if not context or len(context) == len(matches):
        return list(matches)
    return [m for m in matches if id(m) not in context]
