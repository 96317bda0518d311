"""Finding vocabulary names in a text: the Aho-Corasick automata and the rules a hit must
pass (SPEC.md 2a, R-VOC-1, R-VOC-2, A-6).

Names are matched on their match key (``pipeline.text.keyed``) with two automata
(pyahocorasick): one over case-folded keys and one over keys matched exactly as written.
A hit counts only where the characters on both sides are not letters (R-VOC-1; a name
ending in a digit is not followed by a digit either, so ``IL-1`` is not found in
``IL-17``). Guarded names (gene symbols that are common English or clinical words:
``SET``, ``WAS``) match only as written inside a mixed-case sentence. A drug match absorbs
the salt / form words right after it (A-6), and words the vocabulary lacks but that carry
a drug suffix are matched as drugs (R-VOC-2). A drug name that only qualifies the words
after it ("somatostatin analogue", "aldosterone antagonist") is no drug match (A-17).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import ahocorasick

from pipeline.text import KeyedText, match_key
from pipeline.text_normalise import _DASHES
from pipeline.vocabulary_entities import Entity, EntityMatch
from pipeline.vocabulary_rules import SALT_TAIL_RE, has_drug_suffix

__all__ = [
    "MATCH_RULES_VERSION",
    "AutomatonHit",
    "Names",
    "automaton_hits",
    "build_automaton",
    "collect_names",
    "suffix_matches",
    "with_salt_words",
    "without_modifier_drugs",
]

#: Case-exact surface forms never matched: ``eGFR`` is the filtration rate, not EGFR.
_SURFACE_STOPS = frozenset({"eGFR"})

#: Lowest word length for an out-of-vocabulary suffix match (R-VOC-2, "beyond the source").
_MIN_SUFFIX_WORD = 7

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")

_SENTENCE_END_RE = re.compile(r"[.!?;\n]")

#: Version of the rules that turn automaton hits into matches; part of the vocabulary's
#: fingerprint, so documents matched under other rules are ingested again (2: a curated
#: drug no longer beats a longer drug name at its start, "trastuzumab deruxtecan"; 3: a
#: name ending in a letter is not matched before a hyphen and a number, "anti-IL-5"; 4: a
#: drug name before a modifier head word is no drug match, "somatostatin analogue"; 5: any
#: dash or space between them; 6: "-induced" is no such word, "adalimumab-induced lupus";
#: 7: no name starts after a word's apostrophe, "grandma's warfarin" is no "s-warfarin";
#: 8: no class that "non-" negates, A-52).
MATCH_RULES_VERSION = 8

#: Words after a drug name that make the name a modifier of another thing (A-17): a
#: class named after what it mimics or blocks ("somatostatin analogue", "aldosterone
#: antagonist", "vitamin D analogue") or a target ("<drug> receptor"). The medicine asked
#: for is another one. Not "-induced": "adalimumab-induced lupus" asks about adalimumab's
#: own harm as often as "heparin-induced thrombocytopenia" asks for another medicine (with
#: it, a user's "adalimumab-induced lupus" ranked infliximab leaflets first). Not
#: "overdose" or "poisoning": there the named drug is what a reversal question's answer
#: must name (A-11).
_MODIFIER_TAIL_RE = re.compile(
    # spaces (a no-break space too) and any dash or a soft hyphen, as ``keyed`` reads them
    rf"[^\S\n]*[{re.escape(_DASHES)}\u00ad]?[^\S\n]*"
    r"(?:analogues?|analogs?|agonists?|antagonists?|"
    r"inhibitors?|blockers?|modulators?|receptors?)\b",
    re.IGNORECASE,
)

#: One automaton hit: source span, entity indexes (best first), curated, key length.
AutomatonHit = tuple[int, int, tuple[int, ...], bool, int]


@dataclass
class Names:
    """Match keys and the entity indexes they name, per automaton: ``insensitive``
    (case-folded keys), ``sensitive`` (keys as written) and, of these, the ``guarded``."""

    insensitive: dict[str, list[int]] = field(default_factory=dict)
    sensitive: dict[str, list[int]] = field(default_factory=dict)
    guarded: set[str] = field(default_factory=set)


def collect_names(
    entities: Sequence[Entity],
    case_sensitive_names: dict[str, Sequence[str]] | None,
    guarded_names: dict[str, Sequence[str]] | None,
    stop: set[str],
) -> Names:
    """The match keys of every name of ``entities`` (canonical and aliases), per automaton:
    names listed in ``case_sensitive_names`` or ``guarded_names`` (per canonical name) as
    written, all others case-folded unless their key is in ``stop``. A key is guarded only
    when no entity lists it as a plain case-sensitive name."""
    sensitive_map = {key.lower(): set(v) for key, v in (case_sensitive_names or {}).items()}
    guarded_map = {key.lower(): set(v) for key, v in (guarded_names or {}).items()}
    names = Names()
    unguarded: set[str] = set()
    for index, entity in enumerate(entities):
        exact = sensitive_map.get(entity.canonical.lower(), set())
        guarded = guarded_map.get(entity.canonical.lower(), set())
        for name in (entity.canonical, *entity.aliases):
            name = name.strip()
            if not name:
                continue
            if name in exact or name in guarded:
                key = match_key(name, casefold=False)
                names.sensitive.setdefault(key, []).append(index)
                (names.guarded if name in guarded else unguarded).add(key)
            else:
                key = match_key(name)
                if key and key not in stop:
                    names.insensitive.setdefault(key, []).append(index)
    names.guarded -= unguarded
    return names


def build_automaton(
    names: dict[str, list[int]],
    guarded: set[str],
    ranked: Callable[[Sequence[int]], list[int]],
    priority: Callable[[int], tuple[int, int, int]],
) -> ahocorasick.Automaton | None:
    """An automaton over ``names``; each key carries ``(length, entity indexes in rank
    order, whether the best is curated, whether the key is guarded)``. None when empty.
    ``ranked`` and ``priority`` are the vocabulary's entity order."""
    if not names:
        return None
    automaton = ahocorasick.Automaton()
    for name, indexes in names.items():
        order = ranked(indexes)
        curated = priority(order[0])[0] == 0
        automaton.add_word(name, (len(name), tuple(order), curated, name in guarded))
    automaton.make_automaton()
    return automaton


def automaton_hits(
    automaton: ahocorasick.Automaton, keyed_text: KeyedText
) -> Iterator[AutomatonHit]:
    """The hits of ``automaton`` in ``keyed_text`` that pass the letter-boundary rule
    (R-VOC-1), the surface stops and the guard, as spans of the text as written."""
    key = keyed_text.key
    size = len(key)
    text = keyed_text.text
    for end_index, (length, indexes, curated, guarded) in automaton.iter(key):
        start = end_index - length + 1
        end = end_index + 1
        if start > 0 and (
            key[start - 1].isalpha() or (key[start].isdigit() and key[start - 1].isdigit())
        ):
            continue
        if end < size and (key[end].isalpha() or (key[end - 1].isdigit() and key[end].isdigit())):
            continue
        source_start, source_end = keyed_text.span(start, end)
        # R-VOC-1 on the text as written: a name ending in a digit is not followed by a
        # letter (``CD1`` is not in ``CD1a``), one starting with a digit not preceded
        # by one; a Greek letter is a separator (``IL-1`` in ``IL-1β``).
        if key[end - 1].isdigit() and _is_latin_letter(text, source_end):
            continue
        if key[start].isdigit() and _is_latin_letter(text, source_start - 1):
            continue
        # a letter after a word's apostrophe is in that word: "the patient's warfarin"
        # names warfarin, not "S-warfarin" ("the patient's ketamine" is no esketamine)
        if key[start].isalpha() and _after_apostrophe(key, start):
            continue
        # a hyphen and a number continue a name that ends in a letter: ``anti-IL`` (a
        # class) is not in ``anti-IL-5``, nor ``PD`` in ``PD-1``
        if key[end - 1].isalpha() and _hyphen_number(text, source_end):
            continue
        surface = text[source_start:source_end]
        if surface in _SURFACE_STOPS:
            continue
        if guarded and not _mixed_case_sentence(text, source_start, source_end):
            continue
        yield source_start, source_end, indexes, curated, length


def _after_apostrophe(key: str, index: int) -> bool:
    # the key reads every apostrophe as "'" (``pipeline.text_normalise``); one letter
    # before it is a word of its own ("a packet o'paracetamol")
    return index >= 3 and key[index - 1] == "'" and key[index - 3 : index - 1].isalpha()


def _hyphen_number(text: str, index: int) -> bool:
    return index + 1 < len(text) and text[index] in "-‐‑" and text[index + 1].isdigit()


def with_salt_words(text: str, matches: list[EntityMatch]) -> list[EntityMatch]:
    """A drug match absorbs the salt / form words right after it (A-6), and any match
    inside them is dropped: ``imatinib mesylate`` is one imatinib."""
    result: list[EntityMatch] = []
    covered_until = -1
    for match in matches:
        if match.start < covered_until:
            continue
        if match.entity.is_drug:
            tail = SALT_TAIL_RE.match(text, match.end)
            if tail:
                match = EntityMatch(
                    match.entity, match.start, tail.end(), text[match.start : tail.end()]
                )
        result.append(match)
        covered_until = match.end
    return result


def suffix_matches(
    text: str, known: list[EntityMatch], get: Callable[[str], Entity | None]
) -> Iterator[EntityMatch]:
    """Words of ``text`` outside the ``known`` matches, of seven or more letters, with a
    drug suffix and no entity (``get`` returns None), as drug matches (R-VOC-2)."""
    spans = [(match.start, match.end) for match in known]
    for word in _WORD_RE.finditer(text):
        token = word.group(0)
        if len(token) < _MIN_SUFFIX_WORD or not token.isalpha() or not has_drug_suffix(token):
            continue
        if any(start < word.end() and word.start() < end for start, end in spans):
            continue
        if get(token) is not None:
            continue
        yield EntityMatch(
            Entity(canonical=token.lower(), semantic_type="drug"),
            word.start(),
            word.end(),
            token,
        )


def _is_latin_letter(text: str, index: int) -> bool:
    """True when ``text[index]`` exists and is a letter that is not Greek."""
    if index < 0 or index >= len(text):
        return False
    char = text[index]
    return char.isalpha() and not ("\u0370" <= char <= "\u03ff" or "\u1f00" <= char <= "\u1fff")


def _mixed_case_sentence(text: str, start: int, end: int) -> bool:
    """True when the sentence around ``text[start:end]`` has a lower-case letter (a
    capitalised word in it is written so on purpose, not shouted)."""
    left = max((m.end() for m in _SENTENCE_END_RE.finditer(text, 0, start)), default=0)
    right_match = _SENTENCE_END_RE.search(text, end)
    right = right_match.start() if right_match else len(text)
    return any(ch.islower() for ch in text[left:right])


def without_modifier_drugs(text: str, matches: Sequence[EntityMatch]) -> list[EntityMatch]:
    """``matches`` less the drug matches that only qualify the words after them in
    ``text`` (A-17): in "somatostatin analogue for acromegaly" somatostatin is not the
    medicine asked for, in "aldosterone antagonist" aldosterone is what is blocked. Other
    matches, and drugs followed by other words, are kept in order."""
    return [
        match
        for match in matches
        if not (match.entity.is_drug and _MODIFIER_TAIL_RE.match(text, match.end))
    ]


#: A-52: "non-" right before a name: "non-dihydropyridine calcium channel blocker" asks
#: for the members that are not dihydropyridines.
_NEGATED_BEFORE_RE = re.compile(
    rf"(?<![^\W\d_])non[^\S\n]*[{re.escape(_DASHES)}\u00ad]?[^\S\n]*$", re.IGNORECASE
)


def without_negated_classes(text: str, matches: Sequence[EntityMatch]) -> list[EntityMatch]:
    """``matches`` less the drug classes ``text`` negates with "non-" right before them
    (A-52): in "non-dihydropyridine calcium channel blocker for hypertension" the
    dihydropyridines are what is not asked for, the calcium channel blockers stay. A
    class whose own name holds the "non-" ("non-benzodiazepine hypnotics") is matched
    whole and kept; other matches are kept in order."""
    return [
        match
        for match in matches
        if not (
            match.entity.semantic_type == "class"
            and _NEGATED_BEFORE_RE.search(text, max(0, match.start - 8), match.start)
        )
    ]
