"""Grouping a record stream into documents for the streaming (Ray Data) ingest engine."""

from __future__ import annotations

import pytest

from pipeline.ingest.documents import RecordFailure, stream_documents
from pipeline.ingest.records import SourceRecord

pytestmark = pytest.mark.unit


def section(document_id: str, index: int, text: str = "Take one tablet daily.") -> SourceRecord:
    return SourceRecord(document_id=document_id, document_name=document_id, text=text,
                        section_index=index)  # fmt: skip


def test_sections_that_come_together_form_one_document_each():
    records = [section("a", 0), section("a", 1), section("b", 0)]
    grouped = list(stream_documents(records, []))
    assert [(doc_id, [r.section_index for r in recs]) for doc_id, recs in grouped] == [
        ("a", [0, 1]),
        ("b", [0]),
    ]


def test_invalid_records_are_reported_and_left_out():
    failures: list[RecordFailure] = []
    grouped = list(stream_documents([section("a", 0), section("a", 1, text="  ")], failures))
    assert [len(recs) for _, recs in grouped] == [1]
    assert failures == [RecordFailure("a#1", "empty text")]


def test_a_document_split_by_another_is_an_error_naming_it():
    records = [section("a", 0), section("b", 0), section("a", 1)]
    with pytest.raises(ValueError, match=r"document 'a'.*not together"):
        list(stream_documents(records, []))
