"""Word tokens and terms (A-6 normalisation, from ``pipeline.text_normalise``): Unicode
word tokens, query terms, letter-bounded term search, highlighting, and the path / name
blob of a node (R-ENT-1, R-T1-2, R-T2-6, R-T2-7). Re-exported by ``pipeline.text``.

Tokens are Unicode words (``café``, ``naïve``), not ASCII runs.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pipeline.text_normalise import _DASHES, _GREEK_BY_NAME, GREEK_NAMES, fold

__all__ = [
    "PATH_BLOB_KEYS",
    "STOP_WORDS",
    "contains_term",
    "highlight",
    "path_blob",
    "query_terms",
    "term_pattern",
    "tokens",
]

#: English function words left out of query terms: they say nothing about relevance and
#: would cap every sparse score (R-HYB-3 counts hits over all terms).
STOP_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "did",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "may",
        "me",
        "might",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "about",
        "after",
        "before",
        "any",
        "all",
        "also",
        "am",
        "being",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "too",
        "very",
        "s",
        "t",
        "just",
        "don",
        "now",
    ]
)


_TOKEN_RE = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")


def tokens(text: str) -> list[str]:
    """Unicode word tokens of ``fold(text)`` (letters and digits of any script, inner
    hyphens and apostrophes kept): ``tokens("Café naïve")`` -> ``['café', 'naïve']``,
    ``tokens("TNF-α")`` -> ``['tnf-alpha']``."""
    return _TOKEN_RE.findall(fold(text))


def query_terms(query: str, extra_terms: tuple[str, ...] | list[str] = ()) -> list[str]:
    """Terms of R-HYB-3: query tokens without stop words, then the extra terms (folded),
    de-duplicated in order."""
    terms = [token for token in tokens(query) if token not in STOP_WORDS]
    terms.extend(fold(term).strip() for term in extra_terms if term.strip())
    return list(dict.fromkeys(terms))


_SEPARATOR = rf"[\s{re.escape(_DASHES)}]?"
_PART_SPLIT_RE = re.compile(r"[\s\-]+|(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")


def _term_source(term: str) -> str:
    parts = [part for part in _PART_SPLIT_RE.split(fold(term).strip()) if part]
    pieces = []
    for part in parts:
        letter = _GREEK_BY_NAME.get(part)
        pieces.append(f"(?:{re.escape(part)}|{letter})" if letter else re.escape(part))
    return _SEPARATOR.join(pieces)


@lru_cache(maxsize=4096)
def term_pattern(term: str) -> re.Pattern[str]:
    """A case-insensitive pattern for ``term`` in raw text, letter-bounded (R-VOC-1), that
    accepts the A-6 variants: any dash or space (or none) between its parts and Greek
    letters for their names (``tnf-alpha`` finds ``TNF-α``, ``TNFα``, ``TNF alpha``)."""
    return re.compile(rf"(?<![^\W\d_]){_term_source(term)}(?![^\W\d_])", re.I)


_SIMPLE_TERM_RE = re.compile(r"[a-z0-9]+")


def contains_term(haystack_lower: str, term: str) -> bool:
    """True when ``term`` occurs in ``haystack_lower`` (already lower-cased) with no letter
    directly before or after it: the letter-boundary rule of R-VOC-1 applied to scoring,
    with the A-6 variants of ``term_pattern``."""
    folded = fold(term).strip()
    if not folded:
        return False
    simple = _SIMPLE_TERM_RE.fullmatch(folded) and folded not in GREEK_NAMES
    if simple and folded not in haystack_lower:
        return False
    return term_pattern(folded).search(haystack_lower) is not None


def highlight(text: str, query: str, tags: tuple[str, str] = ("<em>", "</em>")) -> str:
    """``text`` as HTML with every query term (``query_terms``) wrapped in ``tags``, found
    through the same normalisation (case, Greek letters, dash variants): a query
    ``TNF-alpha`` marks ``TNF-α`` in the text. The text is escaped (``&``, ``<``, ``>``),
    so the tags are the only markup: a document's own ``<img onerror=...>`` or ``<em>``
    is shown as text, never run or taken for a match. A mark starts and ends at a word
    edge (no letter or digit beside it)."""
    terms = sorted(query_terms(query), key=len, reverse=True)
    if not terms:
        return html.escape(text, quote=False)
    # A term is a whole word or number: "1" in "alert(1)" marks no "1" of "10", "s1",
    # "1,000" or "0.5%, 1.25%".
    pattern = re.compile(
        r"(?<![^\W_])(?<!\d[.,])(?:" + "|".join(_term_source(t) for t in terms)
        + r")(?![^\W_])(?![.,]\d)",
        re.I,
    )
    pieces: list[str] = []
    end = 0
    for match in pattern.finditer(text):
        pieces.append(html.escape(text[end : match.start()], quote=False))
        pieces.append(f"{tags[0]}{html.escape(match.group(0), quote=False)}{tags[1]}")
        end = match.end()
    pieces.append(html.escape(text[end:], quote=False))
    return "".join(pieces)


#: Path / name metadata keys whose joined text is "the path blob" (R-ENT-1).
PATH_BLOB_KEYS: tuple[str, ...] = ("path", "file_name", "document_name", "source_uri")


def path_blob(metadata: Mapping[str, Any]) -> str:
    """Lower-cased ``path / file_name / document_name / source_uri`` of a node (R-ENT-1)."""
    return " ".join(str(metadata.get(key) or "") for key in PATH_BLOB_KEYS).lower()
