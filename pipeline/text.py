"""Text helpers shared by the scoring rules: tokens, letter-bounded term search, and the
path / name blob of a node (R-ENT-1, R-T1-2, R-T2-6, R-T2-7). Each lives here once."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

__all__ = [
    "STOP_WORDS",
    "contains_term",
    "path_blob",
    "query_terms",
    "tokens",
]

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")

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

#: Path / name metadata keys whose joined text is "the path blob" (R-ENT-1).
PATH_BLOB_KEYS: tuple[str, ...] = ("path", "file_name", "document_name", "source_uri")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens (letters/digits, inner hyphens and apostrophes kept)."""
    return _TOKEN_RE.findall(text.lower())


def query_terms(query: str, extra_terms: tuple[str, ...] | list[str] = ()) -> list[str]:
    """Terms of R-HYB-3: query tokens without stop words, then the extra terms
    (lower-cased), de-duplicated in order."""
    terms = [token for token in tokens(query) if token not in STOP_WORDS]
    terms.extend(term.lower().strip() for term in extra_terms if term.strip())
    return list(dict.fromkeys(terms))


@lru_cache(maxsize=4096)
def _term_pattern(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![^\W\d_]){re.escape(term)}(?![^\W\d_])")


def contains_term(haystack_lower: str, term: str) -> bool:
    """True when ``term`` occurs in ``haystack_lower`` (already lower-cased) with no letter
    directly before or after it: the letter-boundary rule of R-VOC-1 applied to scoring."""
    term = term.lower()
    if not term or term not in haystack_lower:
        return False
    return _term_pattern(term).search(haystack_lower) is not None


def path_blob(metadata: Mapping[str, Any]) -> str:
    """Lower-cased ``path / file_name / document_name / source_uri`` of a node (R-ENT-1)."""
    return " ".join(str(metadata.get(key) or "") for key in PATH_BLOB_KEYS).lower()
