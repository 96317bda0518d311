"""Typo tolerance of the vocabulary (A-6): a word of four or more letters that matches
nothing is looked up by edit distance among drug names and brands (``osimertinb`` ->
``osimertinib``, ``Eyea`` -> ``Eylea``); the match carries the correction
(``EntityMatch.correction``).

The edit distance allowed depends on word length (1 for 4-9 letters, 2 for 10 or more).
A name two edits away is no reading when a stop name, a name of another entity, or a
known word that is no misspelling of that name is one edit away: "cholestrol" is
cholesterol (a stop name, never a typo's reading), not cholesteryl.
Never read as typos: words of the known-words list (``KNOWN_WORDS``), prescription
shorthand (``nocte``), and short words (4-5 letters) written in capitals (an abbreviation:
``AICR`` is not a misspelt ``AICAR``) or that begin a longer name or word (``tamox``).
Never read as: the vocabulary's rare names (synonyms nobody writes: ``mpox`` is not
``mapox``), nor known words.
Texts longer than ``TYPO_MAX_CHARS`` are documents, not queries: ``Vocabulary.find``
looks up no typos in them unless asked.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

from pipeline.vocabulary_entities import Entity, EntityMatch

__all__ = [
    "KNOWN_WORD",
    "MIN_TYPO_TARGET",
    "MIN_TYPO_WORD",
    "PRESCRIPTION_SHORTHAND",
    "SHORT_TYPO_WORD",
    "SOUND_ALIKE_FIRSTS",
    "STOP_WORD",
    "TWO_EDIT_WORD",
    "TYPO_MAX_CHARS",
    "TypoIndex",
    "corrected_text",
    "is_abbreviation_like",
    "rare_keys",
    "typo_index",
    "typo_matches",
    "typo_targets",
]

#: Typo tolerance (A-6): the shortest word looked up (``SHORT_TYPO_WORD``), the shortest
#: word read without the short-word guards (``MIN_TYPO_WORD``: capitals, prefixes), the
#: shortest name a typo is read as (``MIN_TYPO_TARGET``), and the edit distance allowed by
#: word length (1 for 4-9 letters, 2 for ``TWO_EDIT_WORD`` or more).
SHORT_TYPO_WORD = 4
TWO_EDIT_WORD = 10
MIN_TYPO_WORD = 6
MIN_TYPO_TARGET = 5
_TYPO_WORD_RE = re.compile(r"(?<![^\W_])[^\W\d_]{4,}(?![^\W_])")
#: First letters a name is also looked up under, because they sound alike: ``zevudy`` is a
#: misspelt Xevudy, ``canuma`` Kanuma, ``kutenza`` Qutenza (the first letter is part of
#: the edit distance).
SOUND_ALIKE_FIRSTS: dict[str, tuple[str, ...]] = {
    "c": ("k", "q"),
    "k": ("c", "q"),
    "q": ("k", "c"),
    "x": ("z",),
    "z": ("x",),
}
#: Prescription shorthand (Latin) that is not a typo of a drug name: ``nocte`` is "at
#: night", not Noctec (chloral).
PRESCRIPTION_SHORTHAND = frozenset({"nocte", "mane", "vesp", "mitte", "stat"})
#: Texts longer than this are documents, not queries: no typo look-up unless asked.
TYPO_MAX_CHARS = 300
#: ``TypoIndex`` ``nearer`` marks of a word that is no vocabulary name.
KNOWN_WORD = -1
STOP_WORD = -2


class TypoIndex:
    """Drug names and brands by (first letter, length), for the edit-distance look-up
    (A-6). A look-up compares a word only with names of its first letter (or one that
    sounds alike, ``SOUND_ALIKE_FIRSTS``) whose length is within the allowed distance: a
    few hundred rapidfuzz comparisons. ``words`` (every vocabulary name, known word and
    stop name, folded) tell a short word that begins a longer one (``tamox``, ``gonad``,
    ``preop``: shorthand, not a typo) from a misspelt name. ``nearer`` (folded word ->
    entity index of the name it is, ``KNOWN_WORD`` for a known word, ``STOP_WORD`` for a
    stop name) tell a misspelt word from a misspelt name two edits away: "cholestrol" is
    a misspelt cholesterol (a stop name), not cholesteryl; a stop name one edit away
    makes a name one edit away doubtful too."""

    def __init__(
        self,
        names: dict[str, int],
        words: Iterable[str] = (),
        nearer: Mapping[str, int] | None = None,
    ) -> None:
        self._buckets = _buckets(names.items())
        self._words = sorted(set(words))
        self._nearer = nearer or {}
        self._nearer_buckets: dict[tuple[str, int], tuple[list[str], list[int]]] | None = None

    def begins_longer_word(self, word: str) -> bool:
        """True when ``word`` (folded) is the start of a name or known word at least two
        letters longer whose next character is a letter: ``tamox`` of ``tamoxifen``, not
        ``flad`` of ``flad 1``."""
        position = bisect.bisect_left(self._words, word)
        while position < len(self._words) and self._words[position].startswith(word):
            longer = self._words[position]
            if len(longer) >= len(word) + 2 and longer[len(word)].isalpha():
                return True
            position += 1
        return False

    def lookup(
        self,
        word: str,
        prefer: Callable[[int], float] | None = None,
        max_distance: int | None = None,
    ) -> tuple[str, int] | None:
        """``(name, entity index)`` of the one closest name within the distance allowed
        for ``word`` (case-folded), or None (none, two entities equally close, or a short
        word that begins a longer one). ``prefer`` (index -> weight) settles a tie for
        the one that weighs most (A-19: the word more products use); still None when the
        heaviest two weigh the same. ``max_distance`` caps the distance allowed. A name
        two edits away is None when a word of ``words`` is one edit away, and a name one
        edit away when a stop name is."""
        if word in PRESCRIPTION_SHORTHAND or (
            len(word) < MIN_TYPO_WORD and self.begins_longer_word(word)
        ):
            return None
        limit = 1 if len(word) < TWO_EDIT_WORD else 2
        if max_distance is not None:
            limit = min(limit, max_distance)
        best = sorted(_within(word, limit, self._buckets))
        if not best:
            return None
        top = [item for item in best if item[0] == best[0][0]]
        if len({index for _, _, index in top}) > 1:
            if prefer is None:
                return None
            top.sort(key=lambda item: prefer(item[2]), reverse=True)
            runner_up = next(item for item in top if item[2] != top[0][2])
            if prefer(runner_up[2]) == prefer(top[0][2]):
                return None
        distance, name, index = top[0]
        if distance > 1 and self._nearer_than(word, name, index):
            return None
        if distance == 1 and self._near_stop_name(word):
            return None
        return name, index

    def _near_stop_name(self, word: str) -> bool:
        """True when a stop name is one edit from ``word``: as near as the name found, so
        the word may be that stop name misspelt ("creatnine" is creatinine, a stop name,
        as much as creatine)."""
        return any(owner == STOP_WORD for _, _, owner in self._one_edit_nearer(word))

    def _one_edit_nearer(self, word: str) -> Iterable[tuple[int, str, int]]:
        """``(distance, word, owner)`` of the ``nearer`` words one edit from ``word``."""
        if self._nearer_buckets is None:
            self._nearer_buckets = _buckets(self._nearer.items())
        return _within(word, 1, self._nearer_buckets)

    def _nearer_than(self, word: str, name: str, index: int) -> bool:
        """True when a word of ``nearer`` one edit from ``word`` makes ``name`` (two edits
        away, of entity ``index``) a doubtful reading: a stop name, a name of another
        entity, or a known word that is not itself a misspelling of ``name`` (leaflets
        print "doxycyline", which must not stop "doxicyline" being read as doxycycline)."""
        from rapidfuzz.distance import OSA

        for _, near, owner in self._one_edit_nearer(word):
            if owner == index:
                continue  # another name of the same drug ("voriconazol")
            if owner == KNOWN_WORD and OSA.distance(near, name) <= 1:
                continue
            return True
        return False


def _buckets(
    items: Iterable[tuple[str, int]],
) -> dict[tuple[str, int], tuple[list[str], list[int]]]:
    """Names and their indexes by (first letter, length)."""
    buckets: dict[tuple[str, int], tuple[list[str], list[int]]] = {}
    for name, index in items:
        bucket = buckets.setdefault((name[0], len(name)), ([], []))
        bucket[0].append(name)
        bucket[1].append(index)
    return buckets


def _within(
    word: str, limit: int, buckets: Mapping[tuple[str, int], tuple[list[str], list[int]]]
) -> Iterator[tuple[int, str, int]]:
    """``(distance, name, index)`` of each name within OSA distance ``limit`` of ``word``,
    under its first letter or one that sounds alike."""
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    for first in (word[0], *SOUND_ALIKE_FIRSTS.get(word[0], ())):
        for length in range(len(word) - limit, len(word) + limit + 1):
            bucket = buckets.get((first, length))
            if bucket is None:
                continue
            for name, distance, position in process.extract(
                word, bucket[0], scorer=OSA.distance, score_cutoff=limit, limit=None
            ):
                yield int(distance), name, bucket[1][position]


def is_abbreviation_like(word: str) -> bool:
    """True for a short word (fewer than ``MIN_TYPO_WORD`` letters) written in capitals,
    or in capitals with a plural ``s``: ``AICR``, ``DAPS``, ``URTIs`` are abbreviations,
    not misspelt drug names."""
    stem = word[:-1] if word.endswith("s") and len(word) > 2 else word
    return len(word) < MIN_TYPO_WORD and stem.isupper()


def typo_targets(
    name_index: Mapping[str, int],
    entities: Sequence[Entity],
    known: frozenset[str],
    rare: Collection[str] = frozenset(),
) -> dict[str, int]:
    """The names a typo can be read as: drug names and brands (match keys, letters only,
    ``MIN_TYPO_TARGET`` or more) that are neither known words nor ``rare`` (match keys of
    names nobody is likely to be misspelling: ``mapox``), each with its entity index."""
    targets: dict[str, int] = {}
    for key, index in name_index.items():
        entity = entities[index]
        if (
            entity.is_drug
            and key.isalpha()
            and len(key) >= MIN_TYPO_TARGET
            and key not in known
            and key not in rare
        ):
            targets.setdefault(key, index)
    return targets


def typo_index(
    targets: Mapping[str, int],
    name_index: Mapping[str, int],
    known: Collection[str],
    stop_keys: Collection[str],
) -> TypoIndex:
    """The look-up of ``targets`` (``typo_targets``) with every name (``name_index``:
    match key -> entity index), known word and stop name as the words it checks against."""
    nearer = {
        **dict.fromkeys(known, KNOWN_WORD),
        **dict.fromkeys(stop_keys, STOP_WORD),
        **name_index,
    }
    return TypoIndex(dict(targets), nearer, nearer)


def rare_keys(
    rare_names: Mapping[str, Sequence[str]],
    name_index: Mapping[str, int],
    entities: Sequence[Entity],
    key: Callable[[str], str],
) -> frozenset[str]:
    """Match keys (``key``) of the rare names that read as the entity they are listed
    under (``rare_names``: per lower-case canonical name): a name listed rare under one
    entity stays a typo target where it names another."""
    keys = set()
    for canonical, names in rare_names.items():
        for name in names:
            index = name_index.get(key(name))
            if index is not None and entities[index].canonical.lower() == canonical:
                keys.add(key(name))
    return frozenset(keys)


def typo_matches(
    text: str,
    known: list[EntityMatch],
    correct: Callable[[str], tuple[str, Entity] | None],
) -> Iterator[EntityMatch]:
    """Matches of the misspelt drug names in ``text``: each word of four or more letters
    outside the ``known`` matches that ``correct`` reads as a drug name."""
    spans = [(match.start, match.end) for match in known]
    for word in _TYPO_WORD_RE.finditer(text):
        if any(start < word.end() and word.start() < end for start, end in spans):
            continue
        found = correct(word.group(0))
        if found is None:
            continue
        name, entity = found
        yield EntityMatch(entity, word.start(), word.end(), word.group(0), correction=name)


def corrected_text(text: str, matches: Sequence[EntityMatch]) -> str:
    """``text`` with the surface of each corrected match (``matches`` of ``text``) written
    as its correction (A-12); ``text`` itself when none is corrected."""
    fixes = sorted((m for m in matches if m.correction), key=lambda m: m.start, reverse=True)
    for match in fixes:  # right to left, so earlier spans keep their offsets
        text = text[: match.start] + match.correction + text[match.end :]
    return text
