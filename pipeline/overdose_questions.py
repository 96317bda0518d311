"""What an overdose question says (A-34): that an overdose happened, and that it asks
what treats it. "Dihydrocodeine overdose treatment" or "took too many of her oxycodone
tablets (oxycodone overdose), what do paramedics give" ask for the antidote as
"antidote for oxycodone" does (A-11); "signs of a morphine overdose" or "took too much
of my oxycodone (oxycodone overdose), what should I do" ask no treatment, and the drug's
own leaflet answers them.

The overdose must be said in words ("overdose", "an OD", "poisoning", "intoxication"):
an amount taken ("took too many", "took double his dose") says one only before a drug's
name, which A-30 (``pipeline.overdose``) reads with the vocabulary and glosses as
"(<drug> overdose)" before this cue reads the question; "took a handful of almonds",
"had too much coffee" or "took it 3x/day" say none. "Toxicity" (a side effect as often
as an overdose) counts only where the question also asks in a strong form ("what do
paramedics give", "emergency injection", since A-45 "what drip do they put you on");
"treatment", "counteract" and since A-45 "fix", "rescue" and "a shot I can give" are
weak forms.
"""

from __future__ import annotations

import re

__all__ = ["asks_to_treat_an_overdose", "overdose_spans", "says_an_overdose"]

#: Apostrophes, for a character class.
_APOSTROPHES = "'\u2019"

_STRONG_OVERDOSE = re.compile(
    r"\b(?:overdos\w*|an?\s+(?-i:OD)\b|(?-i:OD)\s+on\b|"
    rf"od(?:[{_APOSTROPHES}]d|ed|ing)\b|poison(?:ing|ed)\b|intoxication)",
    re.IGNORECASE,
)

_WEAK_OVERDOSE = re.compile(r"\btoxicity\b", re.IGNORECASE)

#: Poisonings that are no overdose: sepsis ("blood poisoning"), food and sun poisoning.
_NOT_AN_OVERDOSE = re.compile(r"\b(?:blood|food|sun)[\s-]*poison\w*", re.IGNORECASE)

_STRONG_TREATMENT = re.compile(
    r"\b(?:rescue\s+(?:med\w*|drugs?|treatments?|injections?|therapy)|"
    r"emergency\s+(?:[\w-]+\s+){0,2}?(?:med\w*|injections?|jabs?|sprays?|treatments?|"
    r"drugs?|pens?|kits?)|"
    r"what\s+(?:do|does|did|can|could|should|would|will)\s+"
    rf"(?:[\w&{_APOSTROPHES}-]+\s+){{0,3}}?(?:give|given|use|carry|keep|administer)|"
    r"bring\s+(?:[\w-]+\s+){0,2}?round|"
    # "what drip do they put you on"
    r"what\s+(?:[\w-]+\s+){0,2}?(?:do|does|did|would|will)\s+(?:they|you|doctors|paramedics)"
    r"\s+put\s+(?:you|him|her|them|people|someone)\s+on)\b",
    re.IGNORECASE,
)

#: "Treating" is left out: "how much paracetamol is an overdose when treating a fever".
#: A-45: "fix", "rescue" (not a rescue inhaler: "overdosed on my salbutamol rescue
#: inhaler") and "a shot I can give" ("what pain medicines I can use" is weak too: with
#: "toxicity" it says no overdose).
_WEAK_TREATMENT = re.compile(
    r"\b(?:treat(?:s|ed|ments?)?|counteract\w*|fix(?:es)?|"
    r"rescue(?!\s+(?:inhalers?|puffers?|packs?|breaths?|remed\w*))|"
    r"(?:shots?|jabs?|injections?|sprays?|pens?|medicines?|drugs?)\s+"
    r"(?:i|we|you|they|family|someone)\s+(?:can|could|should)\s+(?:give|use))\b",
    re.IGNORECASE,
)


def says_an_overdose(text: str, strong_only: bool = False) -> bool:
    """Whether ``text`` says an overdose in words: "overdose", "overdosed", "an OD", "OD
    on", "ODed", "poisoning", "intoxication" (not blood, food or sun poisoning) or,
    unless ``strong_only``, "toxicity"."""
    if overdose_spans(text):
        return True
    return not strong_only and bool(_WEAK_OVERDOSE.search(text))


def overdose_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` in characters of each strong overdose word of ``text`` (those
    :func:`says_an_overdose` reads with ``strong_only``), in order."""
    text = _NOT_AN_OVERDOSE.sub(lambda match: " " * len(match.group()), text)
    return [match.span() for match in _STRONG_OVERDOSE.finditer(text)]


def asks_to_treat_an_overdose(text: str) -> bool:
    """Whether ``text`` says an overdose and asks what treats it (module docstring):
    "dihydrocodeine overdose treatment", "what medicine counteracts codeine poisoning",
    "fentanyl patch toxicity, what do paramedics give"; not "treatment of renal toxicity
    from NSAIDs", "do antioxidants counteract chemotherapy toxicity", "how is blood
    poisoning treated"."""
    strong_treatment = bool(_STRONG_TREATMENT.search(text))
    if not (strong_treatment or _WEAK_TREATMENT.search(text)):
        return False
    return says_an_overdose(text, strong_only=not strong_treatment)
