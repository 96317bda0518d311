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

from pipeline.overdose_classes import class_overdose_of
from pipeline.reversal import asks_for_reversal
from pipeline.text_normalise import APOSTROPHES
from pipeline.vocabulary import Vocabulary

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

#: Something was taken: a verb in the past before the amount ("took too many", "has had
#: too much", "injected way too much"). "Can I take a few extra" asks, "makes too much
#: cortisol" is the body's own and "I'm on too much prednisolone" a dose to taper.
_TAKEN = (
    r"(?:took|taken|swallowed|ate|eaten|had|given|gave|injected|drank|drunk|used|"
    r"chewed|downed)\s+(?:(?:way|far|much|about|all|maybe|possibly)\s+)?"
)

#: More than a dose: "too many", "several extra", "a whole packet of".
_AMOUNT = (
    r"(?:too\s+(?:many|much)|(?:several|a\s+few|too\s+many)\s+extra|"
    r"(?:a|an|the|his|her|my|their)\s+(?:whole|entire|full)\s+"
    r"(?:packet|pack|box|bottle|strip|blister|sheet|tub|jar)s?\s+of)"
)

#: Words before a drug's name that say more of it was taken than prescribed.
OVERDOSE_CUE = re.compile(
    rf"\b(?:{_TAKEN}{_AMOUNT}|overdos(?:ed|ing)\s+(?:on|with)|overdose\s+of|"
    rf"o\.?d\.?(?:[{_APOSTROPHES}]d|ed|ing)\s+on|doubled\s+up\s+on)\s+{_OWNER}$",
    re.IGNORECASE,
)

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
    r"(?:\s+(?:\d+(?:\.\d+)?\s*(?i:mg|mcg|micrograms?|g|ml|units?)\b|[A-Z][A-Za-z0-9-]+\b|"
    r"(?i:tablets?|pills?|capsules?|caps|patch(?:es)?|injections?|doses?|jabs?|sachets?|"
    r"drops?|pens?)\b))*"
)

#: How far back (characters) from a name its cue may start.
_CUE_REACH = 60


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
    causes it. Nothing for a name that no cue of :data:`OVERDOSE_CUE` directly precedes
    (only "his", "her", "the" ... between) or that its overdose already follows ("too
    much paracetamol overdose"), and nothing in a question about a missed or forgotten
    dose.

    With ``class_overdoses`` (A-34), in a question that asks what reverses or treats an
    overdose (``pipeline.reversal.asks_for_reversal``), a drug whose overdose the labels
    name by its class (``pipeline.overdose_classes``) also gets that class's overdose, the
    drug kept:
    "took a handful of her oxycodone tablets (oxycodone overdose, opioid overdose) ...
    is there an antidote", "reverses hydromorphone toxicity (opioid overdose)"."""
    if _MISSED.search(text):
        return []
    treats = class_overdoses and asks_for_reversal(text)
    glosses: list[tuple[int, str]] = []
    for match in vocabulary.find(text, keep_context=True):
        if not (match.entity.is_drug or match.entity.semantic_type == "class"):
            continue
        condition = class_overdose_of(match.entity.canonical) if treats else None
        cued = OVERDOSE_CUE.search(text[max(0, match.start - _CUE_REACH) : match.start])
        end = _NAME_TAIL.match(text, match.end).end()
        said = _SAID.match(text, end)
        phrase = f"{match.surface} overdose"
        if cued and not said and _names_a_condition(phrase, vocabulary):
            glosses.append((match.end, " overdose"))
        elif cued and not said:
            also = f", {condition}" if condition else ""
            glosses.append((end, f" ({phrase}{also})"))
        elif condition:  # "hydromorphone toxicity", "what reverses morphine"
            glosses.append((said.end() if said else end, f" ({condition})"))
    return glosses


def glossed_overdoses(text: str, vocabulary: Vocabulary, class_overdoses: bool = True) -> str:
    """``text`` with each overdose said in other words glossed (:func:`overdose_glosses`):
    ``"too many paracetamol tablets, antidote?"`` -> ``"too many paracetamol tablets
    (paracetamol overdose), antidote?"``, ``"overdosed on heroin"`` -> ``"overdosed on
    heroin overdose"``; unchanged when there is none."""
    for offset, words in reversed(overdose_glosses(text, vocabulary, class_overdoses)):
        text = f"{text[:offset]}{words}{text[offset:]}"
    return text
