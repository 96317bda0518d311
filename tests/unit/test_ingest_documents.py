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


def test_a_document_that_comes_again_later_is_reported_and_left_out():
    # no reader splits a document: a later run of its id is that document again (one id
    # in two JSONL rows or two files), whose sections would join the first one's
    failures: list[RecordFailure] = []
    records = [section("a", 0), section("b", 0), section("a", 0, "Again."), section("a", 1)]
    grouped = list(stream_documents(records, failures))
    assert [(doc_id, len(recs)) for doc_id, recs in grouped] == [("a", 1), ("b", 1)]
    assert [failure.record_id for failure in failures] == ["a#0", "a#1"]
    assert all("repeats document a" in failure.reason for failure in failures)


def test_a_jsonl_row_left_out_is_named_by_its_file_and_line(tmp_path, capsys):
    # "#0: missing document id" named neither the file nor the line
    from biomed_search import cli
    from pipeline.ingest.read_documents import read_jsonl_documents

    path = tmp_path / "mine.jsonl"
    path.write_text('{"id": "a", "text": "Take one."}\n{"title": "no id", "text": "x"}\n'
                    '{"id": "b", "text": " "}\n', encoding="utf-8")  # fmt: skip
    failures: list[RecordFailure] = []
    grouped = list(stream_documents(read_jsonl_documents(path), failures))
    assert [doc_id for doc_id, _ in grouped] == ["a"]
    assert [failure.reason for failure in failures] == [
        "missing document id (mine.jsonl:2)",
        "empty text (mine.jsonl#b)",
    ]
    # a path that is not there is named with the reason, before any model loads
    missing = tmp_path / "nope.jsonl"
    code = cli.main(["ingest", str(missing), "--kb", "k", "--data-dir", str(tmp_path / "d")])
    assert code == 2
    assert f"no such file or folder: {missing}" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_a_document_repeated_right_after_itself_is_reported_whole():
    # two rows with one id, one after the other: the index starts over; the second
    # row's every section is left out, not only those whose index the first one had
    failures: list[RecordFailure] = []
    records = [section("a", 0, "First."), section("a", 0, "Second."), section("a", 1)]
    grouped = list(stream_documents(records, failures))
    assert [[r.text for r in recs] for _, recs in grouped] == [["First."]]
    assert [failure.record_id for failure in failures] == ["a#0", "a#1"]


@pytest.mark.parametrize("kb", ["", "tab\there", "x" * 257])
def test_ingest_and_delete_refuse_a_kb_name_the_search_api_refuses(tmp_path, kb):
    # The API's kb_ids refuse these (422), so what ingest stored under them could not be
    # searched by kb; delete --kb "" removed documents and then failed on its filter.
    import asyncio

    from deployments.config import load_config
    from deployments.ingest import delete_sources, ingest_sources

    config = load_config(data_dir=tmp_path / "data")
    source = tmp_path / "one.jsonl"
    source.write_text('{"id": "x-1", "text": "Aspirin."}\n')
    with pytest.raises(ValueError, match=r"--kb .*a kb name must"):
        asyncio.run(ingest_sources(config, [source], kb, progress=False))
    with pytest.raises(ValueError, match=r"--kb .*a kb name must"):
        asyncio.run(delete_sources(config, [], kb))
    assert not (tmp_path / "data").exists()  # refused before any store started
