"""Query sets: BEIR folders (``queries.jsonl`` + ``qrels/<split>.tsv``) and name-judged
JSONL sets (``drug_kb_dev.jsonl``, EagleRAG ``eval_queries*.jsonl``).

Two ways a result is relevant, fixed per set by ``QuerySet.judgement``:

- ``qrels`` (BEIR): graded judgements by document id; results are de-duplicated by
  document (a document returned as several chunks counts once, at its best rank), so
  the unit of ranking is the *document*.
- ``name`` (JSONL): a result is relevant when its document name contains one of the
  query's ``expected_doc_name_substrings`` (case-insensitive) and, when the query gives
  ``expected_section``, its ``biomed_section`` equals it. The unit of ranking is the
  *chunk* as the service returns it (the section condition is a property of a chunk,
  not of a document), with grade 1.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pipeline.ingest.records import read_jsonl

__all__ = [
    "EvalQuery",
    "QuerySet",
    "read_beir",
    "read_jsonl_queries",
    "read_qrels",
]

Judgement = Literal["qrels", "name"]


@dataclass(frozen=True)
class EvalQuery:
    """One evaluation query.

    Attributes:
        query_id: the set's id (BEIR ``_id``, JSONL ``id``).
        text: the query text sent to the service.
        k: the cut-off of Hit@k / Recall@k for this query (JSONL ``k``; default 10).
        judgements: BEIR qrels, document id -> grade (0 = judged not relevant).
        expected_names: JSONL ``expected_doc_name_substrings``, lower-cased.
        expected_section: JSONL ``expected_section`` (canonical ``biomed_section``).
        must_include_terms: JSONL ``must_include_terms`` (term coverage).
        route_hint: EagleRAG ``route_hint`` (``umls``: entity names, ``collections``:
            collection names of the source system).
        label_workflow: EagleRAG ``workflow`` (the user's task, not our intent).
    """

    query_id: str
    text: str
    k: int = 10
    judgements: Mapping[str, int] = field(default_factory=dict)
    expected_names: tuple[str, ...] = ()
    expected_section: str | None = None
    must_include_terms: tuple[str, ...] = ()
    route_hint: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    label_workflow: str | None = None

    @property
    def relevant_ids(self) -> tuple[str, ...]:
        """Document ids judged relevant (grade > 0), best grade first."""
        ranked = sorted(self.judgements.items(), key=lambda pair: (-pair[1], pair[0]))
        return tuple(doc_id for doc_id, grade in ranked if grade > 0)


@dataclass(frozen=True)
class QuerySet:
    """A named list of queries and how their results are judged."""

    name: str
    judgement: Judgement
    queries: tuple[EvalQuery, ...]
    source: str = ""

    def limited(self, limit: int | None) -> QuerySet:
        """The first ``limit`` queries (all when None)."""
        if limit is None:
            return self
        return QuerySet(self.name, self.judgement, self.queries[: max(0, limit)], self.source)

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[EvalQuery]:
        return iter(self.queries)


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV (``query-id``, ``corpus-id``, ``score``, header optional) ->
    query id -> document id -> grade.

    Raises:
        FileNotFoundError: no such file.
        ValueError: a row with fewer than 3 columns or a non-integer score.
    """
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or (number == 1 and row[0].strip().lower() in {"query-id", "query_id"}):
                continue
            if len(row) < 3:
                raise ValueError(f"{path}:{number}: expected 3 tab-separated columns")
            try:
                grade = int(float(row[2]))
            except ValueError:
                raise ValueError(f"{path}:{number}: score {row[2]!r} is not a number") from None
            qrels.setdefault(row[0].strip(), {})[row[1].strip()] = grade
    return qrels


def _queries_file(folder: Path, split: str) -> Path:
    for name in (f"queries.{split}.jsonl", "queries.jsonl"):
        if (folder / name).exists():
            return folder / name
    raise FileNotFoundError(f"{folder}: no queries.{split}.jsonl or queries.jsonl")


def read_beir(
    folder: str | Path,
    split: str = "test",
    queries_path: str | Path | None = None,
    name: str | None = None,
    k: int = 10,
) -> QuerySet:
    """A BEIR folder: queries (``queries.<split>.jsonl`` or ``queries.jsonl``, or
    ``queries_path``) with ``qrels/<split>.tsv``. Queries without judgements are dropped
    (BEIR does the same), so NFCorpus test gives 323 of its 325 queries.

    Raises:
        FileNotFoundError: the queries or qrels file is missing.
        ValueError: a malformed line.
    """
    root = Path(folder)
    qrels = read_qrels(root / "qrels" / f"{split}.tsv")
    source = Path(queries_path) if queries_path is not None else _queries_file(root, split)
    queries = []
    for number, row in read_jsonl(source):
        query_id = str(row.get("_id", row.get("id", ""))).strip()
        text = str(row.get("text", row.get("query", ""))).strip()
        if not query_id or not text:
            raise ValueError(f"{source}:{number}: needs _id and text")
        if query_id in qrels:
            queries.append(EvalQuery(query_id=query_id, text=text, k=k,
                                     judgements=dict(qrels[query_id])))
    return QuerySet(name=name or root.name, judgement="qrels", queries=tuple(queries),
                    source=str(source))


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    return tuple(str(item) for item in value if str(item).strip())


def read_jsonl_queries(path: str | Path, name: str | None = None) -> QuerySet:
    """A name-judged JSONL set: ``id``, ``query``, ``expected_doc_name_substrings``,
    optional ``expected_section``, ``k`` (default 5), ``must_include_terms``,
    ``route_hint``, ``workflow``.

    Raises:
        FileNotFoundError: no such file.
        ValueError: a line is not a JSON object or lacks ``query``.
    """
    source = Path(path)
    queries = []
    for number, row in read_jsonl(source):
        text = str(row.get("query", "")).strip()
        if not text:
            raise ValueError(f"{source}:{number}: needs a query")
        hint = row.get("route_hint") or {}
        queries.append(
            EvalQuery(
                query_id=str(row.get("id") or f"{source.stem}-{number}"),
                text=text,
                k=int(row.get("k") or 5),
                expected_names=tuple(s.lower() for s in _strings(
                    row.get("expected_doc_name_substrings"))),
                expected_section=(str(row["expected_section"]).strip() or None)
                if row.get("expected_section") else None,
                must_include_terms=_strings(row.get("must_include_terms")),
                route_hint={str(key): _strings(value) for key, value in hint.items()}
                if isinstance(hint, dict) else {},
                label_workflow=str(row["workflow"]) if row.get("workflow") else None,
            )
        )
    return QuerySet(name=name or source.stem, judgement="name", queries=tuple(queries),
                    source=str(source))
