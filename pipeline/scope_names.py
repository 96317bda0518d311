"""What a kb name, document id filter, tag or collection name may be: the names reach
Milvus expressions and SQL parameters, so plain printable text of bounded length. One
rule for ``SearchRequest`` and for ingest, so that what ingest stores a search can name."""

from __future__ import annotations

__all__ = ["MAX_NAME_CHARS", "name_problem"]

#: Longest kb name, document id, tag or collection name a request may carry (characters).
MAX_NAME_CHARS = 256


def name_problem(value: str) -> str | None:
    """Why ``value`` cannot be such a name ("must have 1..256 characters", "must not
    contain control or format characters"), or None when it can."""
    if not value or len(value) > MAX_NAME_CHARS:
        return f"must have 1..{MAX_NAME_CHARS} characters"
    if not value.isprintable():
        return "must not contain control or format characters"
    return None
