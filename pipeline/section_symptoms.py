"""A question that names a medicine and a symptom asks about its side effects (A-21):
"tickly dry cough after starting Entresto", "vivid dreams on Valdoxan", "Tagrisso rash".

A-18's lay cues read the question's form ("does X cause", "since starting"); most
patients just name the symptom and the medicine. ``SIDE_EFFECT_WORDS`` are the symptom
words of the EMA leaflets' section 4 ("Possible side effects"): each is the lemma of a
word that at least 20 stored leaflets use in section 4, in at least 60 % of all the
leaflet sections that use it (``python scripts/section_cue_counts.py --side-effect-words``
prints the counts), less the template's own words ("uncommon", "people", "reporting"),
laboratory terms, body parts and the diseases medicines are given for ("eczema", "acne",
"pneumonia"). Symptoms that some medicines also treat ("insomnia", "itch", "hair loss")
stay: the named drug's own indications decide (below).

The cue holds only when no other section is cued, the question names a drug or brand,
and it names a symptom that:
- the named drug's own indications do not use, nor any other symptom of the question
  (its leaflets' section 1 and its labels' indications,
  ``configs/vocabulary/indication_symptoms.json``): "Veoza hot flushes", "Aerius hives"
  ask what the medicine is for;
- the question does not ask a medicine for ("Veoza for hot flushes", "to treat the
  itching", "something to help with sleep");
and the question does not ask what to do ("should I carry on", "what if I get a rash",
"can I buy a mouthwash"): that advice is in sections 2 and 3. A symptom word in another
sense ("left in a hot car", "dry powder", "the best spot to inject", "sick day rules")
is no symptom.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

import simplemma

__all__ = ["SIDE_EFFECT_WORDS", "names_a_side_effect", "symptom_lemmas"]

#: Lemmas (simplemma, English) of the leaflets' section-4 symptom words.
SIDE_EFFECT_WORDS: frozenset[str] = frozenset(
    {
        "flatulence", "wind", "hiccup", "belch", "bloat", "heartburn", "indigestion",
        "dyspepsia", "constipation", "diarrhoea", "nausea", "sick", "vomit", "upset", "tummy",
        "cough", "itch", "itchy", "itchiness", "pruritus", "rash", "hive", "urticaria",
        "redness", "redden", "flush", "hot", "sweat", "peel", "flake", "scaly", "spot",
        "bruise", "nosebleed", "epistaxis", "dry", "dryness", "swell", "sore", "soreness",
        "hair", "alopecia", "nail", "dream", "nightmare", "insomnia", "sleeplessness", "sleep",
        "asleep", "somnolence", "dizziness", "vertigo", "spin", "lightheadedness", "faint",
        "tiredness", "fatigue", "asthenia", "lethargy", "weakness", "malaise", "unwell",
        "headache", "ache", "cramp", "tingle", "prickle", "numbness", "numb", "twitch",
        "tremor", "tremble", "shiver", "chill", "tinnitus", "hoarseness", "taste", "appetite",
        "gain", "thirst", "thirsty", "hunger", "hungry", "mood", "irritability", "irritable",
        "aggression", "anxious", "nervousness", "restless", "restlessness", "confusion",
        "hallucination", "palpitation", "runny", "stuffy", "sneeze",
    }
)
_WORD_RE = re.compile(r"[^\W\d_]+")
#: Words that make the symptom after them what a medicine is for, skipping up to three
#: words between ("for my hot flushes", "to help with the itching").
_ASKED_FOR = frozenset(
    {"for", "treat", "treats", "treating", "treatment", "against", "prevent", "prevents",
     "preventing", "relieve", "relieves", "relief", "help", "helps", "ease", "eases",
     "stop", "stops", "cure", "cures", "control", "manage"}
)  # fmt: skip


#: A question that asks what to do about a symptom, not whether it is a side effect.
_ASKS_WHAT_TO_DO = re.compile(
    r"\b(?:should (?:i|we|he|she|they|the patient)|what should|what if|can i|do i|"
    r"when does|when do|how (?:long|often|much|many)|is it safe)\b",
    re.IGNORECASE,
)


#: A symptom word in another sense: storage ("left in a hot car", "keep it dry"), the
#: device ("dry powder", "the best spot to inject", "peel off the foil"), disposal ("flush
#: it down the toilet"), "sick day rules". Removed before the symptoms are read.
_OTHER_SENSE = re.compile(
    r"\b(?:hot (?:car|cars|weather|climate|country|countries|day|days|summer|room|place|"
    r"water|bath|drinks?)|dry (?:powder|place|ice|cupboard)|"
    r"(?:keep|kept|store|stored|stay|stays) (?:[\w-]+ ){0,3}?dry|"
    r"sick (?:days?|leave|note|pay)|(?:injection|inject(?:ing)?) spots?|"
    r"spots? (?:to|for) (?:inject|the injection)|(?:which|what|best|same|right) spot|"
    r"peel(?:ed|ing)? (?:off|back|away)|flush(?:ed|ing)? (?:[\w-]+ ){0,3}?(?:down|toilet|sink))\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=1 << 14)
def _symptom(word: str) -> str | None:
    """The ``SIDE_EFFECT_WORDS`` lemma of ``word`` (lower case), or None. A lemma counts
    only where it keeps the word's first three letters: simplemma reads "span" as
    "spin"."""
    if word in SIDE_EFFECT_WORDS:
        return word
    lemma = simplemma.lemmatize(word, lang="en")
    return lemma if lemma in SIDE_EFFECT_WORDS and lemma[:3] == word[:3] else None


def symptom_lemmas(text: str) -> frozenset[str]:
    """The ``SIDE_EFFECT_WORDS`` lemmas ``text`` uses, in any inflection."""
    found = (_symptom(word.lower()) for word in _WORD_RE.findall(text))
    return frozenset(lemma for lemma in found if lemma is not None)


def names_a_side_effect(query: str, treated: Collection[str] = frozenset()) -> bool:
    """True when ``query`` names a symptom of ``SIDE_EFFECT_WORDS`` (as any inflection)
    that is not what it asks a medicine for, and does not ask what to do (A-21); the
    caller checks that it names a drug.

    Args:
        query: the question.
        treated: symptom lemmas that the named drugs' own indications use
            (``pipeline.vocabulary_loader.shipped_indication_symptoms``); a question that
            names one of them asks what the drug is for: "Veoza hot flushes".
    """
    if _ASKS_WHAT_TO_DO.search(query):
        return False
    words = [word.lower() for word in _WORD_RE.findall(_OTHER_SENSE.sub(" ", query))]
    symptoms = [(position, _symptom(word)) for position, word in enumerate(words)]
    if any(lemma in treated for _, lemma in symptoms if lemma is not None):
        return False  # "Veoza hot flushes": a symptom the drug is for is named
    return any(
        lemma is not None and not _ASKED_FOR.intersection(words[max(0, at - 4) : at])
        for at, lemma in symptoms
    )
