"""What an overdose question says (A-34): that more than a dose was taken, and that it
asks what treats it. "Took a handful of her oxycodone, what do paramedics give" asks
for the antidote as "antidote for oxycodone" does (A-11); "signs of a morphine
overdose" or "took too much of my oxycodone, what should I do" ask no treatment, and the
drug's own leaflet answers them.

Each cue has a strong and a weak form: a weak overdose word ("toxicity": a side effect
as often as an overdose) counts only beside a strong treatment cue ("what do paramedics
give", "emergency injection"), and a weak treatment cue ("treatment", "counteract")
only beside a strong overdose word ("overdosed", "poisoning", "took too many").
"""

from __future__ import annotations

import re

__all__ = ["asks_to_treat_an_overdose", "says_an_overdose"]

#: Apostrophes, for a character class.
_APOSTROPHES = "'\u2019"

#: A verb in the past that took something, and up to three words after it: "took a whole
#: handful of", "swallowed his", "had way". "After taking" is a past too.
_TAKEN = (
    r"(?:took|taken|swallowed|had|given|gave|injected|drank|drunk|used|chewed|downed|"
    rf"after\s+taking)\s+(?:[\w{_APOSTROPHES}-]+\s+){{0,3}}?"
)

#: The same for a multiple of a dose ("took double his dose", "injected his novorapid
#: twice", "took 3 times his dose"); not "had" or "used" ("I had surgery twice").
_DOSED = (
    r"(?:took|taken|swallowed|given|gave|injected|chewed|downed|after\s+taking)\s+"
    rf"(?:[\w{_APOSTROPHES}-]+\s+){{0,3}}?"
)

#: After a multiple: a schedule or a strength is no overdose ("given twice daily",
#: "twice a year", "extra strength").
_NOT_A_SCHEDULE = (
    r"(?!\s*(?:a|an|per|each|every)\s+(?:day|week|month|year|night|morning)\b|"
    r"\s*(?:daily|weekly|monthly|yearly|nightly)\b|[\s-]*strength\b)"
)

_STRONG_OVERDOSE = re.compile(
    r"\b(?:overdos\w*|an?\s+(?-i:OD)\b|(?-i:OD)\s+on\b|"
    rf"od(?:[{_APOSTROPHES}]d|ed|ing)\b|poison(?:ing|ed)|intoxicat\w*|"
    rf"{_TAKEN}(?:too\s+(?:many|much)|(?:a\s+(?:whole\s+)?)?handful)|"
    rf"{_DOSED}(?:double|twice|extra|(?:[2-9]|\d{{2,}})\s*(?:x|times)){_NOT_A_SCHEDULE})",
    re.IGNORECASE,
)

_WEAK_OVERDOSE = re.compile(r"\btoxicity\b", re.IGNORECASE)

#: Poisonings that are no overdose: sepsis ("blood poisoning") and food poisoning.
_NOT_AN_OVERDOSE = re.compile(r"\b(?:blood|food)[\s-]*poison\w*", re.IGNORECASE)

_STRONG_TREATMENT = re.compile(
    r"\b(?:rescue|emergency\s+(?:[\w-]+\s+){0,2}?(?:med\w*|injections?|jabs?|sprays?|"
    r"treatments?|drugs?|pens?|kits?)|"
    r"what\s+(?:do|does|did|can|could|should|would|will)\s+"
    rf"(?:[\w&{_APOSTROPHES}-]+\s+){{0,3}}?(?:give|use|carry|keep|administer)|"
    r"(?:bring|wake)\s+(?:[\w-]+\s+){0,2}?(?:round|around|up))\b",
    re.IGNORECASE,
)

#: "Treating" is left out: "how much paracetamol is an overdose when treating a fever".
_WEAK_TREATMENT = re.compile(r"\b(?:treat(?:s|ed|ments?)?|counteract\w*)\b", re.IGNORECASE)


def says_an_overdose(text: str, strong_only: bool = False) -> bool:
    """Whether ``text`` says more than a dose was taken: a strong word ("overdosed", "an
    OD", "poisoning", "took too many", "took a handful", "took double his dose", "took 3
    times his dose") or, unless ``strong_only``, "toxicity"."""
    text = _NOT_AN_OVERDOSE.sub(" ", text)
    if _STRONG_OVERDOSE.search(text):
        return True
    return not strong_only and bool(_WEAK_OVERDOSE.search(text))


def asks_to_treat_an_overdose(text: str) -> bool:
    """Whether ``text`` says an overdose and asks what treats it (module docstring):
    "dihydrocodeine overdose treatment", "found unresponsive after taking extra tramadol,
    what is the emergency medicine", "fentanyl patch toxicity, what do paramedics give";
    not "treatment of renal toxicity from NSAIDs", "do antioxidants counteract
    chemotherapy toxicity", "how is blood poisoning treated"."""
    strong_treatment = bool(_STRONG_TREATMENT.search(text))
    if not (strong_treatment or _WEAK_TREATMENT.search(text)):
        return False
    return says_an_overdose(text, strong_only=not strong_treatment)
