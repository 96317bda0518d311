"""Safe Milvus filter expressions (pipeline/stores/expressions.py), no server needed.

A small reference reader of Milvus double-quoted literals (``\\\\`` -> ``\\``, ``\\"`` ->
``"``) checks that every quoted value denotes exactly itself and never ends early; the
integration tests check the same values against the real Lite server.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.schema import ScopeFilter
from pipeline.stores.expressions import (
    MAX_FILTER_VALUE_CHARS,
    array_contains_any,
    chunked,
    in_list,
    quote_value,
    scope_expressions,
)

pytestmark = pytest.mark.unit

HOSTILE = [
    '" or 1==1 or "',
    'a"b',
    "a'b",
    "[x]",
    "a]b[",
    "back\\slash",
    "trailing\\",
    '\\"',
    "ünï©ødé 中文 😀",
    "x') or true --",
    'kb_name in ["a"]',
    "array_contains_any(tags, [])",
]


def read_literal(expression: str, start: int = 0) -> tuple[str, int]:
    """Decode the double-quoted literal at ``expression[start]``; return it and the index
    after its closing quote (a Milvus-style reader: backslash escapes the next char)."""
    assert expression[start] == '"'
    value: list[str] = []
    index = start + 1
    while True:
        character = expression[index]
        if character == "\\":
            value.append(expression[index + 1])
            index += 2
        elif character == '"':
            return "".join(value), index + 1
        else:
            value.append(character)
            index += 1


def read_list(expression: str, prefix: str) -> list[str]:
    """The values of ``prefix ["v1", "v2"]`` (the whole expression must be that list)."""
    assert expression.startswith(prefix + "[")
    values: list[str] = []
    index = len(prefix) + 1
    while expression[index] != "]":
        value, index = read_literal(expression, index)
        values.append(value)
        if expression[index] == ",":
            index += 2
    assert index == len(expression) - 1 or expression[index + 1 :] == ")"
    return values


@pytest.mark.parametrize("value", HOSTILE)
def test_quote_value_denotes_exactly_the_value(value: str) -> None:
    literal = quote_value(value)
    decoded, end = read_literal(literal)
    assert decoded == value
    assert end == len(literal)  # the literal does not end early


def test_quote_value_escapes_backslash_and_double_quote() -> None:
    assert quote_value('a"b') == '"a\\"b"'
    assert quote_value("a\\b") == '"a\\\\b"'
    assert quote_value("a'b") == '"a\'b"'
    assert quote_value("plain-id_1") == '"plain-id_1"'


@pytest.mark.parametrize("value", ["", "a\nb", "a\x00b", "tab\there", "\u200bzero-width", "\x7f"])
def test_quote_value_rejects_empty_and_control_characters(value: str) -> None:
    with pytest.raises(ValueError):
        quote_value(value)


def test_quote_value_rejects_over_long_and_non_strings() -> None:
    longest = "x" * MAX_FILTER_VALUE_CHARS
    assert read_literal(quote_value(longest)) == (longest, MAX_FILTER_VALUE_CHARS + 2)
    with pytest.raises(ValueError, match="characters long"):
        quote_value("x" * (MAX_FILTER_VALUE_CHARS + 1))
    with pytest.raises(ValueError, match="string"):
        quote_value(123)  # type: ignore[arg-type]


PRINTABLE_TEXT = st.text(alphabet=st.characters(exclude_categories=("C",)), min_size=1, max_size=80)


@given(PRINTABLE_TEXT)
def test_quote_value_round_trips_any_printable_text(value: str) -> None:
    literal = quote_value(value)
    decoded, end = read_literal(literal)
    assert (decoded, end) == (value, len(literal))


@given(st.lists(st.sampled_from(HOSTILE) | PRINTABLE_TEXT, min_size=1, max_size=8))
def test_in_list_holds_exactly_the_values(values: list[str]) -> None:
    expression = in_list("document_id", values)
    assert read_list(expression, "document_id in ") == list(dict.fromkeys(values))


def test_array_contains_any_and_field_names() -> None:
    expression = array_contains_any("tags", ['" or 1==1 or "', "ema"])
    assert read_list(expression, "array_contains_any(tags, ") == ['" or 1==1 or "', "ema"]
    with pytest.raises(ValueError, match="field"):
        in_list("document_id or 1==1", ["a"])
    with pytest.raises(ValueError, match="empty"):
        in_list("document_id", [])


def test_scope_expressions_empty_scope_has_no_filter() -> None:
    assert scope_expressions(None) == [None]
    assert scope_expressions(ScopeFilter()) == [None]


def test_r_sup_3_scope_expression_joins_parts_with_and() -> None:
    scope = ScopeFilter(kb_names=("kb",), document_ids=("d1", "d2"), tags=("t",))
    assert scope_expressions(scope) == [
        'kb_name in ["kb"] and document_id in ["d1", "d2"] and array_contains_any(tags, ["t"])'
    ]
    assert scope_expressions(ScopeFilter(tags=("t",))) == ['array_contains_any(tags, ["t"])']


def test_long_document_id_lists_are_chunked() -> None:
    ids = (*(f"d{i}" for i in range(2500)), "d0")  # a duplicate is dropped
    expressions = scope_expressions(
        ScopeFilter(kb_names=("kb",), document_ids=ids), max_ids_per_expression=1000
    )
    assert len(expressions) == 3
    seen: list[str] = []
    for expression in expressions:
        assert expression is not None and expression.startswith('kb_name in ["kb"] and ')
        seen += read_list(expression.removeprefix('kb_name in ["kb"] and '), "document_id in ")
    assert seen == [f"d{i}" for i in range(2500)]
    assert chunked(["a", "b", "a", "c"], 2) == [["a", "b"], ["c"]]
    with pytest.raises(ValueError):
        chunked(["a"], 0)


def test_hostile_scope_values_stay_inside_their_literals() -> None:
    scope = ScopeFilter(kb_names=tuple(HOSTILE), document_ids=tuple(HOSTILE), tags=tuple(HOSTILE))
    (expression,) = scope_expressions(scope)
    assert expression is not None
    kb_part, rest = expression.split(" and document_id in ", 1)
    assert read_list(kb_part, "kb_name in ") == HOSTILE
    ids_part, tags_part = rest.split(" and array_contains_any(tags, ", 1)
    assert read_list("document_id in " + ids_part, "document_id in ") == HOSTILE
    assert read_list("array_contains_any(tags, " + tags_part, "array_contains_any(tags, ") == (
        HOSTILE
    )


def test_a28_sections_join_every_expression() -> None:
    indications = 'biomed_section in ["indications_and_usage"]'
    assert scope_expressions(None, sections=("indications_and_usage",)) == [indications]
    assert scope_expressions(ScopeFilter(), sections=("indications_and_usage",)) == [indications]
    scoped = scope_expressions(
        ScopeFilter(kb_names=("kb",), document_ids=("d1", "d2", "d3"), tags=("t",)),
        max_ids_per_expression=2,
        sections=("indications_and_usage",),
    )
    assert scoped == [
        f'kb_name in ["kb"] and document_id in ["d1", "d2"] and '
        f'array_contains_any(tags, ["t"]) and {indications}',
        f'kb_name in ["kb"] and document_id in ["d3"] and '
        f'array_contains_any(tags, ["t"]) and {indications}',
    ]
    (hostile,) = scope_expressions(None, sections=tuple(HOSTILE))
    assert hostile is not None
    assert read_list(hostile, "biomed_section in ") == HOSTILE
