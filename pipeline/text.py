"""Text helpers shared by the vocabulary, the query analyser and the scoring rules: one
normalisation path (A-6), Unicode word tokens, letter-bounded term search, highlighting,
and the path / name blob of a node (R-ENT-1, R-T1-2, R-T2-6, R-T2-7). Each lives once:
``pipeline.text_normalise`` holds the folding and the match keys, ``pipeline.text_terms``
the tokens, terms, term search, highlighting and path blob; this module re-exports them.

Normalisation (A-6), the same for vocabulary names, queries, BM25 terms and highlights:
- Unicode NFKC (full-width letters, ligatures, the micro sign) and case folding;
- Greek letters to their names (``α`` -> ``alpha``, ``β`` -> ``beta``, ...), and a Latin
  Greek name glued to a symbol split off (``TNFalpha`` -> ``TNF alpha``);
- every dash / hyphen variant is one separator, so ``TNF-α``, ``TNF α``, ``TNFα`` and
  ``TNF-alpha`` meet;
- tokens are Unicode words (``café``, ``naïve``), not ASCII runs.

``fold`` is the light form used for word tokens (hyphenated words stay one token);
``match_key`` / ``keyed`` is the form the vocabulary matches on, with offsets back to
the original text: separators become one space and letters and digits are split
(``IL1β``, ``IL-1β`` and ``IL-1 beta`` all read ``il 1 beta``).
"""

from __future__ import annotations

from pipeline.text_normalise import GREEK_LETTERS, GREEK_NAMES, KeyedText, fold, keyed, match_key
from pipeline.text_terms import PATH_BLOB_KEYS as PATH_BLOB_KEYS  # re-export, not in __all__
from pipeline.text_terms import (
    STOP_WORDS,
    contains_term,
    highlight,
    path_blob,
    query_terms,
    term_pattern,
    tokens,
)

__all__ = [
    "GREEK_LETTERS",
    "GREEK_NAMES",
    "STOP_WORDS",
    "KeyedText",
    "contains_term",
    "fold",
    "highlight",
    "keyed",
    "match_key",
    "path_blob",
    "query_terms",
    "term_pattern",
    "tokens",
]
