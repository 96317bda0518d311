"""An overdose said in other words, glossed as one (A-30).

People write "taken too many paracetamol tablets", "overdosed on heroin", "swallowed a
whole packet of her warfarin" or "doubled up on her apixaban"; the labels write
"paracetamol overdose", "opioid overdose", "overdosage". Read as written, the drug is
only a drug: R-T1-2 ranks first the chunks that name it (for heroin, a methadone label), and
neither BM25 nor the dense query carries "overdose". Here the question every stage reads
gets "(<drug> overdose)" after the drug, as A-25 glosses a lay condition name; A-25 then
glosses a named condition in it ("heroin overdose" is the table's lay name of "opioid
overdose"). The drug itself stays an entity of the question: an antidote's label names
what it reverses (A-11), and "I took too many Fampyra tablets" asks for Fampyra's own
leaflet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.overdose_classes import class_overdose_of, names_a_class_at, overdose_told_by_result
from pipeline.overdose_questions import overdose_spans
from pipeline.reversal import REVERSAL_CUE, WEAK_REVERSAL_CUE, asks_for_reversal
from pipeline.text_normalise import APOSTROPHES
from pipeline.vocabulary import Vocabulary
from pipeline.vocabulary_entities import EntityMatch

__all__ = ["OVERDOSE_CUE", "glossed_overdoses", "overdose_glosses"]

#: Apostrophes of a possessive ("grandma's", "grandma\u2019s"): the match key's, and the
#: full-width one it folds.
_APOSTROPHES = APOSTROPHES + "\uff07"

#: Words that may stand between a cue and the name: "too many of her", "a whole packet
#: of his", "too many tablets of", "overdosed on grandma's".
_OWNER = (
    r"(?:(?:his|her|my|their|your|the|a|an|of|all|some|"
    rf"tablets?|pills?|capsules?|doses?|\w+[{_APOSTROPHES}]s)\s+){{0,3}}"
)

#: Something was taken: a verb of taking before the amount ("took too many", "has had
#: too much", "injected way too much", and since A-35 "after taking too much"; since
#: A-45 "necked", "sniffed", "rubbed", and the present "takes too many", "injects too
#: much"). "Can I take a few extra" asks, "makes too much cortisol" is the body's own and
#: "I'm on too much prednisolone" a dose to taper.
_ADVERB = r"(?:(?:way|far|much|about|all|maybe|possibly)\s+)?"
_TAKEN = (
    r"(?:took|taken|swallowed|ate|eaten|had|given|gave|injected|drank|drunk|used|"
    r"chewed|downed|necked|sniffed|snorted|rubbed|applied|injecting|injects|takes|swallows|"
    rf"after\s+(?:taking|injecting|using))\s+{_ADVERB}"
)

#: A-45: amounts that say an overdose after a verb of swallowing only, or after "took"
#: where "in one go" or "at once" follows the name (``_AT_ONCE``): "took extra
#: oxycodone", "swallowed a whole week's worth of", "necked a load of"; not "the nurse gave
#: extra morphine", "I've had a week's worth of amoxicillin", "took my whole week of
#: amoxicillin like the GP said".
_PERIOD = rf"(?:day|week|month)(?:[{_APOSTROPHES}]?s)?"
_PERIOD_AMOUNT = (
    rf"(?:a|an|the|his|her|my|their)\s+(?:(?:whole|entire)\s+{_PERIOD}(?:\s+worth)?"
    rf"|{_PERIOD}\s+worth)\s+of"
)
_SWALLOWED = r"(?:swallowed|downed|necked)\s+"
_TOOK = r"(?:took|taken|after\s+taking)\s+"
_AT_ONCE = re.compile(r"[\s,]*(?:in\s+one\s+go|(?:all\s+)?at\s+once)\b", re.IGNORECASE)
_TOOK_A_PERIOD = re.compile(
    rf"\b{_TOOK}{_ADVERB}{_PERIOD_AMOUNT}\s+{_OWNER}$",
    re.IGNORECASE,
)

#: More than a dose: "too many", "several extra", "a whole packet of", and since A-34 "a
#: handful of".
_AMOUNT = (
    r"(?:too\s+(?:many|much)|(?:several|a\s+few|too\s+many)\s+extra|"
    r"a\s+(?:whole\s+)?handful\s+of|"
    r"(?:a|an|the|his|her|my|their)\s+(?:whole|entire|full)\s+"
    r"(?:packet|pack|box|bottle|strip|blister|sheet|tub|jar)s?\s+of|"
    r"a\s+load\s+of|loads\s+of)"
)

#: Words before a drug's name that say more of it was taken than prescribed.
OVERDOSE_CUE = re.compile(
    rf"\b(?:{_TAKEN}{_AMOUNT}|(?:{_SWALLOWED}|{_TOOK}){_ADVERB}extra|"
    rf"{_SWALLOWED}{_ADVERB}{_PERIOD_AMOUNT}|overdos(?:ed|ing)\s+(?:on|with)|overdose\s+of|"
    rf"o\.?d\.?(?:[{_APOSTROPHES}]d|ed|ing)\s+on|doubled\s+up\s+on|"
    # a child's "got into the calpol"
    rf"got\s+into)\s+{_OWNER}$",
    re.IGNORECASE,
)

#: A-34: a multiple of the dose before a name ("took double his dose of oxycodone", "took
#: 3 times his oxycodone dose"), read only where "dose" or "amount" stands between it
#: and the name or in the name's tail: "I took 2x paracetamol" counts tablets. Not
#: after "had", "used" or "given" ("had 2 times the flu vaccine", "was given 2x
#: morphine in A&E").
#: A-35: also "a double" after a verb of taking ("took a double dose of morphine"), with
#: "dose" as above; not "his double dose" (his prescribed one), nor after "got", "had" or
#: "given" ("I've got a double dose on Sundays", "was given a double dose by my GP").
_MULTIPLE_CUE = re.compile(
    r"\b(?:(?:took|taken|swallowed|injected|chewed|downed)\s+"
    r"(?:(?:way|far|about|maybe|possibly)\s+)?"
    r"(?:double|twice|(?:[2-9]|\d{2,})\s*(?:x|times))"
    r"|(?:took|taken|swallowed|injected)\s+an?\s+double)"
    rf"\s+{_OWNER}$",
    re.IGNORECASE,
)

#: A-35: a dose someone prescribed or advised is no overdose, whatever its size or
#: repeat: "as prescribed", "as my GP said", "a loading dose", "my doctor told me to".
_AS_PRESCRIBED = re.compile(
    r"\b(?:as\s+(?:prescribed|directed|advised|instructed)|loading\s+dose|"
    r"as\s+(?:my|the|his|her|their|our)\s+(?:gp|doctor|dr|consultant|nurse|pharmacist|"
    r"specialist)\s+(?:said|told|advised|prescribed|wanted)|"
    r"(?:gp|doctor|dr|consultant|nurse|pharmacist|specialist)\s+(?:told|advised|asked|"
    r"wanted)\s+(?:me|him|her|us|them)\s+to)\b",
    re.IGNORECASE,
)

#: A-35: a dose repeated by mistake ("injected his novorapid twice by mistake", "took my
#: pradaxa twice this morning by accident", "accidently did my lantus shot twice"): a
#: verb of taking in the past right before the name (not "never took"), "twice" right
#: after it and its form but no schedule ("twice a day", "twice weekly", "twice as
#: prescribed"), and a word of a mistake in the same sentence. "I take my metformin
#: twice", "should I take it twice" and "I didn't take my apixaban twice" say none.
_REPEATED_BEFORE = re.compile(
    r"(?<!never\s)(?<!not\s)(?<!n't\s)(?<!n\u2019t\s)"
    rf"\b(?:took|taken|injected|swallowed|did|used|gave|given|had)\s+{_OWNER}$",
    re.IGNORECASE,
)
_TWICE_AFTER = re.compile(
    r"\s*twice\b(?!\s+(?:(?:a|an|per|each|every)\s+(?:day|week|month|year|night|morning|"
    r"evening|fortnight)|daily|weekly|monthly|nightly|as)\b)",
    re.IGNORECASE,
)
_BY_MISTAKE = re.compile(
    r"\b(?:by\s+(?:mistake|accident)|accident(?:al)?l?y|mistakenly|in\s+error)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[!?;]|(?<!\.)\.(?!\.)")  # an ellipsis ends none
_DOSE_WORD = re.compile(r"\b(?:doses?|amount)\b", re.IGNORECASE)

#: A-45: a weekly dose taken every day ("took her methotrexate every day instead of once
#: a week"), right after the name and its tail, a verb of taking in the past before it:
#: not "can I take alendronic acid daily instead of once a week?".
_DAILY_NOT_WEEKLY = re.compile(
    r"\s*(?:every\s+day|daily)\s+inst\w*\s+of\s+(?:once\s+)?(?:a|per|each|every)\s+week\b",
    re.IGNORECASE,
)

#: A-45: "doubled my warfarin", with a mistake said in its sentence ("by accident"): not
#: "my doctor doubled my sertraline".
_DOUBLED = re.compile(rf"\bdoubled\s+{_OWNER}$", re.IGNORECASE)

#: A question about a missed or forgotten dose: "doubled up on my metformin after missing
#: a dose" is the leaflet's missed-dose advice, not an overdose.
_MISSED = re.compile(
    r"\b(?:miss(?:ed|ing)?|forg[eo]t(?:ten|ting)?|skipp(?:ed|ing))\b", re.IGNORECASE
)

#: Words after a name that already say its overdose (nothing to gloss): "paracetamol
#: overdose", "methanol poisoning".
_SAID = re.compile(r"\s*(?:overdos(?:e|age)|poisoning|intoxication|toxicity)\b", re.IGNORECASE)

#: What stays with the name before the gloss: a strength, a suffix of the product's name
#: and a dosage form ("too many Nurofen Plus 200mg tablets (Nurofen overdose)").
_NAME_TAIL = re.compile(
    r"(?:\s+(?:\d+(?:\.\d+)?\s*(?i:mg|mcg|micrograms?|g|ml|units?)\b|"
    r"(?!(?i:twice|INR)\b)[A-Z][A-Za-z0-9-]+\b|"
    r"(?i:tablets?|pills?|capsules?|caps|patch(?:es)?|injections?|doses?|jabs?|shots?|"
    r"sachets?|drops?|pens?)\b))*"
)

#: How far back (characters) from a name its cue may start.
_CUE_REACH = 60

#: What may stand between a reversal cue and what it reverses (A-34): "antidote for
#: morphine", "reverse the effects of fentanyl", "reversal agent for", "reverses his".
_CUE_OBJECT = re.compile(
    r"(?:\s+(?:agents?|drugs?|medicines?|medications?|meds?|injections?|sprays?))?"
    r"(?:\s+(?:for|to|of|on))?(?:\s+(?:the|his|her|my|their|your|a|an))?"
    r"(?:\s+effects?\s+of(?:\s+(?:the|his|her|my|their|your))?)?\s*",
    re.IGNORECASE,
)

#: A-34: a reversal cue with "it" or "them" for its object, or a noun cue with none,
#: reverses what was named: "what reverses it", "what's the antidote?", "reversal
#: agent?". Not "this rash", "if anything", "can kidney damage be reversed?".
_NO_OBJECT = re.compile(r"(?:it|them)\b|[?.!;:)]|$", re.IGNORECASE)
_NOUNS = ("antidote", "reversal")

#: A word joined to a name by a hyphen, slash or apostrophe: the gloss goes after it
#: ("tramadol-paracetamol (...)", "oxycodone/acetaminophen (...)", "5mg/325mg"); a dot
#: only inside a word ("0.5/1"), so no gloss crosses a sentence's end.
_JOINED = re.compile(rf"(?:[-/{_APOSTROPHES}]\w+(?:\.\w+)*)*")


def _names_a_condition(phrase: str, vocabulary: Vocabulary) -> bool:
    """Whether the vocabulary reads all of ``phrase`` as one condition ("heroin
    overdose", the lay name of "opioid overdose")."""
    found = vocabulary.find(phrase, correct_typos=False)
    return len(found) == 1 and not found[0].entity.is_drug and found[0].end == len(phrase)


def overdose_glosses(
    text: str, vocabulary: Vocabulary, class_overdoses: bool = True
) -> list[tuple[int, str]]:
    """Where ``text`` says an overdose of a drug or class without the word, and what to
    insert there: ``(offset, words)`` per name, in text order. Most get
    ``" (<name> overdose)"`` after the name, its strength, the rest of its product name
    and its dosage form ("too many Nurofen Plus tablets (Nurofen overdose)"): the drug
    stays an entity of the question. Where the vocabulary names that overdose as a
    condition ("heroin overdose", A-25's lay name of "opioid overdose"), the name gets
    ``" overdose"`` right after it and reads as the condition, as "naloxone heroin
    overdose" already did: the antidote's label names the condition, not every drug that
    causes it. A-30 glosses no name that no cue of :data:`OVERDOSE_CUE` directly precedes
    (only "his", "her", "the" ... between), no multiple of the dose precedes and no
    repeat by mistake follows (A-34, A-35: "took 3 times his oxycodone dose", "injected
    his novorapid twice by mistake"), or that its overdose already follows ("too
    much paracetamol overdose") and nothing in a question about a missed or forgotten
    dose; a gloss goes after a word a hyphen, slash or apostrophe joins to the name
    ("too much tramadol-paracetamol (tramadol overdose)").

    With ``class_overdoses`` (A-34), in a question that asks what reverses or treats an
    overdose as the later stages read it (``pipeline.reversal.asks_for_reversal`` over the
    text with A-30's glosses), a drug whose overdose the labels name by its class
    (``pipeline.overdose_classes``) also gets that class's overdose, the drug kept (one
    gloss at a place): "took too many of her oxycodone tablets (oxycodone overdose,
    opioid overdose)", "reverses hydromorphone toxicity (opioid overdose)". Where some
    names are cued or followed by their overdose, only those get it ("benzodiazepine
    overdose in a patient on methadone"); else the names :func:`_reversed_names` picks
    ("what reverses it", "antidote for morphine"; not "how to reverse constipation caused
    by oxycodone")."""
    if _MISSED.search(text):
        return []
    found = vocabulary.find(text, keep_context=True)
    prescribed = bool(_AS_PRESCRIBED.search(text))  # once per question, not per name
    names = [name for match in found if (name := _read_name(text, match, vocabulary, prescribed))]
    glosses = [(name.end, name.gloss) for name in names if name.gloss]
    if not class_overdoses:
        return glosses
    if not asks_for_reversal(_with_glosses(text, glosses)):
        return glosses
    overdosed = [name for name in names if name.cued or name.said]
    glossed: set[int] = set()  # one gloss at an offset: "Morphine OxyContin overdose"
    for name in overdosed or _reversed_names(text, names, found):
        condition = class_overdose_of(name.match.entity.canonical)
        if condition is None or name.end in glossed or name.gloss == " overdose":
            continue  # " overdose": "heroin overdose" already reads as the condition
        glossed.add(name.end)
        glosses = _with_class_overdose(glosses, name, condition)
    return sorted(glosses, key=lambda gloss: gloss[0])


@dataclass(frozen=True)
class _Name:
    """A drug or class name of the question as A-30 reads it: ``cued`` (an overdose cue
    precedes it), ``said`` (its overdose follows it), A-30's ``gloss`` ("" for none) and
    ``end``, where a gloss of it goes: after its strength, product name, form and joined
    words, after its overdose where that is said, right after the name for a gloss that
    makes a condition of it ("heroin overdose")."""

    match: EntityMatch
    cued: bool
    said: bool
    end: int
    gloss: str


def _read_name(
    text: str, match: EntityMatch, vocabulary: Vocabulary, prescribed: bool
) -> _Name | None:
    """A-30's reading of one match; None for no drug or class, and (A-46) for a row of
    another type whose overdose a class overdose names ("insulin", a hormone row) unless
    its overdose is cued or said. ``prescribed``: the question says its dose was
    prescribed or advised (``_AS_PRESCRIBED``, A-35), so no multiple or repeat of it is
    an overdose."""
    named = match.entity.is_drug or match.entity.semantic_type == "class"
    if not (named or class_overdose_of(match.entity.canonical)):
        return None
    before = text[max(0, match.start - _CUE_REACH) : match.start]
    end = _JOINED.match(text, _NAME_TAIL.match(text, match.end).end()).end()
    end = _NAME_TAIL.match(text, end).end()  # "oxycodone/acetaminophen 5mg tablets"
    cued = _taken_beyond_its_dose(text, before, match.start, end, prescribed)
    cued = cued or overdose_told_by_result(match.entity.canonical, text)  # "INR 9"
    said = _SAID.match(text, end)
    if not named and not (cued or said):
        return None  # "how do I reverse insulin resistance"
    phrase = f"{match.surface} overdose"
    if not cued or said:
        gloss, at = "", said.end() if said else end
    elif _names_a_condition(phrase, vocabulary):
        gloss, at = " overdose", match.end
    else:
        gloss, at = f" ({phrase})", end
    return _Name(match, cued, bool(said), at, gloss)


def _taken_beyond_its_dose(text: str, before: str, start: int, end: int, prescribed: bool) -> bool:
    """Whether ``text`` says more of the name at ``[start, end)`` (``end`` after its
    tail; ``before``, the text a cue may stand in) was taken than its dose: A-30's cues
    (``OVERDOSE_CUE``), "took a week's worth of ... in one go" (A-45), and unless the dose
    was ``prescribed`` a multiple of the dose (A-34), a dose repeated by mistake (A-35),
    a dose doubled by mistake or a weekly dose taken every day (A-45)."""
    if OVERDOSE_CUE.search(before):
        return True
    if _TOOK_A_PERIOD.search(before) and _AT_ONCE.match(text, end):
        return True
    if prescribed:
        return False
    multiple = _MULTIPLE_CUE.search(before)
    if multiple and _DOSE_WORD.search(before[multiple.start() :] + text[start:end]):
        return True
    if _repeated_by_mistake(text, before, start, end):
        return True
    if _REPEATED_BEFORE.search(before) and _DAILY_NOT_WEEKLY.match(text, end):
        return True
    return bool(_DOUBLED.search(before)) and bool(_BY_MISTAKE.search(_sentence(text, start, end)))


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` that holds ``[start, end)``."""
    starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, start)]
    stop = _SENTENCE_END.search(text, end)
    return text[starts[-1] if starts else 0 : stop.start() if stop else len(text)]


def _repeated_by_mistake(text: str, before: str, start: int, end: int) -> bool:
    """A-35: whether ``text`` says the dose of the name at ``[start, end)`` (``end`` after
    its tail; ``before``, the text a cue may stand in) was taken twice by mistake
    (``_REPEATED_BEFORE``, ``_TWICE_AFTER``, ``_BY_MISTAKE``)."""
    if not (_REPEATED_BEFORE.search(before) and _TWICE_AFTER.match(text, end)):
        return False
    return bool(_BY_MISTAKE.search(_sentence(text, start, end)))


def _reversed_names(text: str, names: list[_Name], found: list[EntityMatch]) -> list[_Name]:
    """A-34, where no name is cued or followed by its overdose: the names whose class
    overdose to gloss, ``found`` being every match of ``text`` the vocabulary reads (of
    any type, so that an overdose nearest insulin picks no opioid). Where the question
    says an overdose in words
    (``pipeline.overdose_questions``), the name nearest each such word when that is one
    of ``names`` ("child chewed a fentanyl patch, what treatment for the overdose"; not
    "overdosed on insulin, also on morphine, antidote"); else every name where a
    reversal cue takes "it", "them" or the class for its object, or a noun cue none
    ("what reverses it", "what reverses the opioid", "what's the antidote?"); and the
    names a reversal cue takes as its object ("antidote for morphine"). None for "does
    morphine reverse breathlessness" or "how to reverse constipation caused by
    oxycodone"."""
    spans = overdose_spans(text)
    picked: set[int] = set()
    for start, stop in spans:
        nearest = min(
            found,
            key=lambda match: min(abs(match.start - stop), abs(start - match.end)),
            default=None,
        )
        picked.update(id(name) for name in names if name.match == nearest)
    for cue in (*REVERSAL_CUE.finditer(text), *WEAK_REVERSAL_CUE.finditer(text)):
        start = _CUE_OBJECT.match(text, cue.end()).end()
        bare = _NO_OBJECT.match(text, start)
        # "what's the antidote?" reverses what was named; "can it be reversed?" need not
        pronoun = bare is not None and (
            bare.group().lower() in ("it", "them") or cue.group().lower().startswith(_NOUNS)
        )
        if not spans and (pronoun or names_a_class_at(text, start)):
            return names
        picked.update(id(name) for name in names if name.match.start == start)
    return [name for name in names if id(name) in picked]


def _with_class_overdose(
    glosses: list[tuple[int, str]], name: _Name, condition: str
) -> list[tuple[int, str]]:
    """``glosses`` with ``condition`` added to A-30's gloss of ``name`` ("(oxycodone
    overdose, opioid overdose)") or, where A-30 has none, after the name."""
    if name.gloss.startswith(" ("):
        widened = f"{name.gloss[:-1]}, {condition.lower()})"
        mine = (name.end, name.gloss)
        return [(at, widened) if (at, words) == mine else (at, words) for at, words in glosses]
    return [*glosses, (name.end, f" ({condition.lower()})")]


def _with_glosses(text: str, glosses: list[tuple[int, str]]) -> str:
    for offset, words in sorted(glosses, reverse=True):
        text = f"{text[:offset]}{words}{text[offset:]}"
    return text


def glossed_overdoses(text: str, vocabulary: Vocabulary, class_overdoses: bool = True) -> str:
    """``text`` with each overdose said in other words glossed (:func:`overdose_glosses`):
    ``"too many paracetamol tablets, antidote?"`` -> ``"too many paracetamol tablets
    (paracetamol overdose), antidote?"``, ``"overdosed on heroin"`` -> ``"overdosed on
    heroin overdose"``; unchanged when there is none."""
    return _with_glosses(text, overdose_glosses(text, vocabulary, class_overdoses))
