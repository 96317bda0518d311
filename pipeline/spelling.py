"""Misspelt words of a question that are not names (A-19): "psoraisis injection every 3
months", "migrane prevention", "Ozempic diarhea".

A-12 reads a misspelt drug name as the drug. The question's other words stayed as typed,
so BM25 met no chunk with them, and the stand-in encoder's sub-word pieces only partly
make up for it: "psoraisis injection every 3 months" found HIV and eye injections, not
psoriasis biologics.

A word is read as another word only when all of these hold:
- it has ``MIN_SPELLING_WORD`` letters or more, letters only, and is no part of a
  hyphenated word ("thrombo-embolism");
- it is not a known word (English text and the stored leaflets use it; the typo
  look-up's list) and not inside a vocabulary match;
- it is not written in capitals inside a question that is not ("RECIST");
- exactly one of the spelling words is closest to it, one edit away (a transposition
  counts as one), under the same first letter or one that sounds alike, as A-12 reads
  drug names (``pipeline.vocabulary_typos.TypoIndex``; A-12 allows two edits from ten
  letters, which read "Waldenstrom" as a leaflet's broken "Waldenstr");
- the word it is read as is not the word itself with or without a plural ending
  ("biosimilars" is no misspelt "biosimilar").

The spelling words are the words that two or more stored products (leaflets and labels)
use, with how many use them (``configs/vocabulary/spelling_words.tsv.gz``, written by
``scripts/build_vocabulary.py``; a count of 0 marks a word that is never a misspelling
but no target either: the English words of wordfreq zipf 1.3 or more and the ICD-10-CM
words one edit from a target, "inulin", "varices", "ureteral").
Between equally close words, the one more products use wins; a tie there reads nothing.
A corrected word can only be one the stored texts hold, so the correction adds a term
BM25 can meet.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache

from pipeline.text import fold
from pipeline.vocabulary import Vocabulary
from pipeline.vocabulary_loader import shipped_known_words, shipped_spelling_words
from pipeline.vocabulary_typos import TYPO_MAX_CHARS, TypoIndex

__all__ = [
    "MAX_SPELLING_EDITS",
    "MIN_SPELLING_WORD",
    "WordCorrection",
    "WordSpeller",
    "default_speller",
]

#: The shortest word read as a misspelling (letters). Shorter words are too often
#: abbreviations or names outside the vocabulary.
MIN_SPELLING_WORD = 6
#: Edits between a misspelt word and the word it is read as (OSA distance).
MAX_SPELLING_EDITS = 1
_PLURAL_ENDINGS = ("s", "es")
_WORD_RE = re.compile(rf"(?<![^\W_]|-)[^\W\d_]{{{MIN_SPELLING_WORD},}}(?![^\W_]|-)")


@dataclass(frozen=True)
class WordCorrection:
    """One misspelt word of a text: its span (character offsets), as written, as read."""

    start: int
    end: int
    surface: str
    correction: str

    def __str__(self) -> str:
        return f"{self.surface}\u2192{self.correction}"


class WordSpeller:
    """Reads a misspelt word as the spelling word closest to it (A-19).

    Args:
        words: folded spelling word -> number of stored products that use it (ties between
            equally close words go to the larger count; 0: never a misspelling, no
            target).
        known: folded words that are never misspellings (the typo look-up's known words);
            the spelling words are known too.
    """

    def __init__(self, words: Mapping[str, int], known: Collection[str]) -> None:
        self._words = [word for word, count in words.items() if count > 0]
        self._counts = [words[word] for word in self._words]
        self._known = frozenset(known) | frozenset(words)
        # no short-word guard to feed: every word looked up has MIN_SPELLING_WORD letters
        self._index = TypoIndex({word: i for i, word in enumerate(self._words)}, ())

    def correction(self, word: str) -> str | None:
        """The spelling word ``word`` is read as, or None (a known or short word, no single
        closest word, or the word's own plural or singular)."""
        folded = fold(word)
        if len(folded) < MIN_SPELLING_WORD or not folded.isalpha() or folded in self._known:
            return None
        found = self._index.lookup(
            folded, prefer=self._counts.__getitem__, max_distance=MAX_SPELLING_EDITS
        )
        if found is None or _inflection_of(folded, found[0]):
            return None
        return found[0]

    def corrections(self, text: str, vocabulary: Vocabulary) -> list[WordCorrection]:
        """The misspelt words of ``text`` outside ``vocabulary``'s matches, in order; none
        in a text longer than ``TYPO_MAX_CHARS`` characters (a document, not a question).
        A word in capitals is an abbreviation unless the whole text is in capitals."""
        if len(text) > TYPO_MAX_CHARS:
            return []
        # a name A-29 reads as the question's context is still a name, not a misspelt word
        spans = [(match.start, match.end) for match in vocabulary.find(text, keep_context=True)]
        shouted = text.isupper()
        found = []
        for word in _WORD_RE.finditer(text):
            if any(start < word.end() and word.start() < end for start, end in spans):
                continue
            if word.group(0).isupper() and not shouted:
                continue
            fixed = self.correction(word.group(0))
            if fixed is not None:
                found.append(WordCorrection(word.start(), word.end(), word.group(0), fixed))
        return found

    def corrected(self, text: str, vocabulary: Vocabulary) -> tuple[str, list[WordCorrection]]:
        """``text`` with each misspelt word written as the word it is read as, and the
        corrections made (``"psoraisis injection"`` -> ``("psoriasis injection",
        [psoraisis→psoriasis])``)."""
        fixes = self.corrections(text, vocabulary)
        for fix in reversed(fixes):  # right to left, so earlier spans keep their offsets
            text = text[: fix.start] + fix.correction + text[fix.end :]
        return text, fixes


def _inflection_of(word: str, other: str) -> bool:
    """True when one of the two is the other with a plural ending."""
    return any(word == other + end or other == word + end for end in _PLURAL_ENDINGS)


@lru_cache(maxsize=1)
def default_speller() -> WordSpeller:
    """The speller of the shipped spelling and known words, built once per process."""
    return WordSpeller(shipped_spelling_words(), shipped_known_words())
