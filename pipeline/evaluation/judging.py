"""Turn the results of one search into a judged ranking (grades per rank) for the
metrics, under the query set's judgement (``querysets`` module docstring)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.evaluation.querysets import EvalQuery, Judgement
from pipeline.schema import Chunk

__all__ = [
    "JudgedRanking",
    "ResultItem",
    "grade",
    "judge",
    "name_matches",
]


@dataclass(frozen=True)
class ResultItem:
    """The parts of one returned (or recalled) chunk that judging and reports need."""

    chunk_id: str
    document_id: str
    document_name: str
    section: str
    collection: str
    text: str = ""
    score: float = 0.0

    @classmethod
    def from_chunk(cls, chunk: Chunk) -> ResultItem:
        """The item of a returned ``Chunk``: its ``biomed_section`` as ``section``, its
        ``content`` as ``text`` and its ``similarity`` ([0, 1], A-2) as ``score``."""
        return cls(
            chunk_id=chunk.chunk_id,
            document_id=chunk.document_id,
            document_name=chunk.document_name,
            section=chunk.biomed_section,
            collection=chunk.collection,
            text=chunk.content,
            score=chunk.similarity,
        )


def name_matches(query: EvalQuery, document_name: str) -> bool:
    """True when ``document_name`` contains one of the query's expected name substrings
    (case-insensitive)."""
    name = document_name.lower()
    return any(substring in name for substring in query.expected_names)


def grade(query: EvalQuery, item: ResultItem, judgement: Judgement,
          require_section: bool = True) -> int:
    """Relevance grade of ``item`` for ``query``.

    ``qrels``: the judged grade of its document id (0 when unjudged). ``name``: 1 when its
    document name matches and (when ``require_section`` and the query gives one) its
    section equals ``expected_section``; else 0.
    """
    if judgement == "qrels":
        return max(0, int(query.judgements.get(item.document_id, 0)))
    if not name_matches(query, item.document_name):
        return 0
    if require_section and query.expected_section and item.section != query.expected_section:
        return 0
    return 1


@dataclass(frozen=True)
class JudgedRanking:
    """The judged ranking of one query.

    Attributes:
        items: the ranked units: distinct documents (``qrels``, each at its first chunk)
            or chunks as returned (``name``).
        gains: grade per rank under the full judgement (name + section).
        name_gains: grade per rank by document name alone (``name`` sets; equals
            ``gains`` for ``qrels`` sets).
    """

    items: tuple[ResultItem, ...]
    gains: tuple[int, ...]
    name_gains: tuple[int, ...]

    def relevant_documents(self, k: int) -> set[str]:
        """Distinct document ids of relevant units within the first ``k`` ranks."""
        return {item.document_id for item, gain in zip(self.items[:k], self.gains[:k],
                                                       strict=True) if gain > 0}


def judge(query: EvalQuery, results: Sequence[ResultItem], judgement: Judgement) -> JudgedRanking:
    """Judge ``results`` (in service order). ``qrels`` sets de-duplicate by document id,
    keeping each document's best (first) rank; chunks without a document id are kept
    under their chunk id."""
    if judgement == "qrels":
        seen: set[str] = set()
        units = []
        for item in results:
            key = item.document_id or item.chunk_id
            if key not in seen:
                seen.add(key)
                units.append(item)
    else:
        units = list(results)
    gains = tuple(grade(query, item, judgement) for item in units)
    name_gains = (
        gains
        if judgement == "qrels"
        else tuple(grade(query, item, judgement, require_section=False) for item in units)
    )
    return JudgedRanking(items=tuple(units), gains=gains, name_gains=name_gains)
