"""``biomed-search query``'s result lines (``deployments.query_cli.render_results``): on a
narrow terminal a long document name is cut, so the section after it still shows; the
response's warnings are printed."""

from __future__ import annotations

import io
import re

import pytest
from rich.cells import cell_len
from rich.console import Console

from deployments.query_cli import render_results

pytestmark = pytest.mark.unit

NAMES = [
    "Tagrisso (osimertinib) — EMA package leaflet, film-coated tablets, 40 mg and 80 mg",
    "药品说明书" * 12,  # two cells a character
    "💊" * 50,
]


@pytest.mark.parametrize("name", NAMES)
def test_a_long_name_is_cut_and_the_section_shows_at_80_columns(name):
    out = io.StringIO()
    body = {
        "intent": {},
        "chunks": [{"similarity": 0.5, "document_name": name, "content": "text",
                    "biomed_section": "adverse_reactions", "score_parts": {}}],
        "trace": [],
    }
    render_results(body, Console(file=out, width=80, force_terminal=False))
    header = next(line for line in out.getvalue().splitlines() if "0.500" in line)
    assert cell_len(header) <= 80, header
    assert re.search(r"… / adverse_\w*…?$", header), header  # the name cut, the section shown


def test_the_responses_warnings_follow_no_results():
    out = io.StringIO()
    warning = "kb_ids: no documents in 'gamma' (a misspelt knowledge base, or one not ingested yet)"
    render_results({"intent": {}, "chunks": [], "trace": [], "warnings": [warning]},
                   Console(file=out, width=200, force_terminal=False))
    lines = out.getvalue().splitlines()
    assert lines[1:] == ["no results", f"warning: {warning}", ""], lines  # no column header
