"""Safe Milvus filter expressions for a request scope (R-SUP-3, R-RT-12) and the sections
a recall searches (A-28).

Filter values (knowledge-base names, document ids, tags) come from requests and from the
registry; they are never pasted raw into an expression. Every value goes through
:func:`quote_value`, which validates it and returns a double-quoted Milvus string literal
with backslashes and double quotes escaped. Field names are constants of this package and
are checked against an identifier pattern.

Milvus Lite 3.2.2 does not support expression templates (``filter_params``): a filter
``document_id in {ids}`` is rejected with "unexpected character '{'" (measured), so
quoting is the one portable way. The escaping was checked against the Lite server and
matches Milvus' parser (``\\\\`` -> ``\\``, ``\\"`` -> ``"``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from pipeline.schema import ScopeFilter

__all__ = [
    "DEFAULT_MAX_IDS_PER_EXPRESSION",
    "MAX_FILTER_VALUE_CHARS",
    "array_contains_any",
    "chunked",
    "in_list",
    "quote_value",
    "scope_expressions",
]

#: Longest accepted filter value, in characters (ids and names are far shorter).
MAX_FILTER_VALUE_CHARS = 512

#: Document ids per expression; longer id lists are split into several searches.
DEFAULT_MAX_IDS_PER_EXPRESSION = 1000

_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def quote_value(value: str, *, max_chars: int = MAX_FILTER_VALUE_CHARS) -> str:
    """Validate ``value`` and return it as a double-quoted Milvus string literal.

    Backslashes become ``\\\\`` and double quotes ``\\"``; everything else is kept as is
    (unicode included), so the literal always denotes exactly ``value`` and can never end
    the string early (``" or 1==1 or "`` stays one harmless string).

    Args:
        value: the raw value (a kb name, document id or tag).
        max_chars: longest accepted value in characters.

    Returns:
        The literal, e.g. ``"a\\"b"`` for ``a"b``.

    Raises:
        ValueError: ``value`` is not a ``str``, is empty, is longer than ``max_chars``, or
            contains a control, format, surrogate or unassigned character (Unicode
            categories ``C*``), which no id or name needs and which some parsers mishandle.
    """
    if not isinstance(value, str):
        raise ValueError(f"filter value must be a string, got {type(value).__name__}")
    if not value:
        raise ValueError("filter value must not be empty")
    if len(value) > max_chars:
        raise ValueError(f"filter value is {len(value)} characters long (limit {max_chars})")
    for character in value:
        if unicodedata.category(character).startswith("C"):
            raise ValueError(f"filter value contains a control character U+{ord(character):04X}")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _check_field(field: str) -> str:
    if not _FIELD_NAME.match(field):
        raise ValueError(f"invalid field name {field!r}")
    return field


def _unique(values: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        seen.setdefault(value, None)
    return list(seen)


def in_list(field: str, values: Sequence[str]) -> str:
    """``field in ["v1", "v2"]`` with every value quoted by :func:`quote_value`.

    Raises:
        ValueError: an invalid field name, an empty ``values``, or an invalid value.
    """
    if not values:
        raise ValueError(f"empty value list for {field}")
    literals = ", ".join(quote_value(value) for value in _unique(values))
    return f"{_check_field(field)} in [{literals}]"


def array_contains_any(field: str, values: Sequence[str]) -> str:
    """``array_contains_any(field, ["v1", ...])`` with every value quoted.

    Raises:
        ValueError: an invalid field name, an empty ``values``, or an invalid value.
    """
    if not values:
        raise ValueError(f"empty value list for {field}")
    literals = ", ".join(quote_value(value) for value in _unique(values))
    return f"array_contains_any({_check_field(field)}, [{literals}])"


def chunked(values: Sequence[str], size: int) -> list[list[str]]:
    """Split ``values`` (order kept, duplicates dropped) into lists of at most ``size``.

    Raises:
        ValueError: ``size`` < 1.
    """
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")
    unique = _unique(values)
    return [unique[start : start + size] for start in range(0, len(unique), size)]


def scope_expressions(
    scope: ScopeFilter | None,
    *,
    max_ids_per_expression: int = DEFAULT_MAX_IDS_PER_EXPRESSION,
    kb_field: str = "kb_name",
    document_field: str = "document_id",
    tags_field: str = "tags",
    sections: Sequence[str] = (),
    section_field: str = "biomed_section",
) -> list[str | None]:
    """Milvus filter expressions for ``scope`` and ``sections``; a search runs once per
    expression and the results are merged (R-SUP-3 ``document_id in [...]``, R-RT-12 kb /
    tags scope, A-28 sections).

    ``kb_names`` -> ``kb_name in [...]``; ``document_ids`` -> ``document_id in [...]``,
    split into chunks of ``max_ids_per_expression`` ids (one expression per chunk);
    ``tags`` -> ``array_contains_any(tags, [...])``; ``sections`` -> ``biomed_section in
    [...]`` (canonical section names, A-28); present parts are joined with ``and``. Empty
    parts do not restrict.

    Returns:
        ``[None]`` when the scope is ``None`` or empty and no sections are given (search
        without a filter), else one expression per document-id chunk (at least one).

    Raises:
        ValueError: a value fails :func:`quote_value`, or ``max_ids_per_expression`` < 1.
    """
    section_part = [in_list(section_field, sections)] if sections else []
    if (scope is None or scope.is_empty) and not section_part:
        return [None]
    scope = scope or ScopeFilter()
    kb_part = [in_list(kb_field, scope.kb_names)] if scope.kb_names else []
    tags_part = [array_contains_any(tags_field, scope.tags)] if scope.tags else []
    rest = [*tags_part, *section_part]
    if not scope.document_ids:
        return [" and ".join([*kb_part, *rest])]
    return [
        " and ".join([*kb_part, in_list(document_field, chunk), *rest])
        for chunk in chunked(scope.document_ids, max_ids_per_expression)
    ]
