"""Intent and route accuracy against the EagleRAG query sets' ``route_hint`` fields.

``route_hint`` (``../shared/data/eaglerag_eval/eval_queries*.jsonl``) holds, per query,
``umls``: the entities the source system expected to match, and sometimes
``collections``: the source system's collections the query must search. The measures:

- *entity recall*: share of the ``umls`` terms that our vocabulary matches in the query
  (a term counts when it equals, case-insensitively, the canonical name or an alias of a
  matched entity); the intent stage is built on these matches (R-INT-3/4).
- *route accuracy*: queries with ``collections`` whose mapped collections
  (``EAGLE_COLLECTIONS``) are all among the collections our route searched.
- *workflow agreement*: the query's ``workflow`` (a user task) mapped to the retrieval
  intent we expect for it (``EAGLE_WORKFLOWS``; a choice written down here, not in the
  source), against the detected intent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.evaluation.querysets import EvalQuery
from pipeline.evaluation.runner import QueryRow
from pipeline.vocabulary import Vocabulary

__all__ = ["EAGLE_COLLECTIONS", "EAGLE_WORKFLOWS", "EagleQueryCheck", "route_accuracy"]

#: The source system's collection names -> our logical collections (SPEC.md section 0).
EAGLE_COLLECTIONS: Mapping[str, str] = {
    "eagle_text_biomed": "biomed_text",
    "eagle_text_medcpt": "medcpt_text",
    "eagle_text_general": "general_text",
    "eagle_chemical": "chemical",
    "eagle_radiology": "radiology",
    "eagle_pathology": "pathology",
    "eagle_visual": "visual",
}

#: User workflow of an EagleRAG query -> the retrieval intent (SPEC.md section 2) that
#: serves it: compound cards need the chemical workflow, label questions the regulatory
#: one, drug A + drug B the combination one; the other tasks name drugs (drug_entity).
EAGLE_WORKFLOWS: Mapping[str, str] = {
    "compound_match": "chemical",
    "regulatory": "regulatory",
    "combination_therapy": "combination",
    "competitive_intelligence": "drug_entity",
    "literature_review": "drug_entity",
    "clinical_trial": "drug_entity",
    "pipeline": "drug_entity",
}


@dataclass(frozen=True)
class EagleQueryCheck:
    """Per-query agreement with the hints (None = the hint does not say)."""

    query_id: str
    entity_terms: tuple[str, ...]
    entities_matched: tuple[str, ...]
    entity_recall: float | None
    expected_collections: tuple[str, ...]
    routed_collections: tuple[str, ...]
    route_ok: bool | None
    label_workflow: str | None
    expected_workflow: str | None
    workflow: str
    workflow_ok: bool | None


def _matched_names(query: str, vocabulary: Vocabulary) -> set[str]:
    names: set[str] = set()
    for entity in vocabulary.match_entities(query):
        names.add(entity.canonical.lower())
        names.update(alias.lower() for alias in entity.aliases)
    return names


def check_query(query: EvalQuery, row: QueryRow, vocabulary: Vocabulary) -> EagleQueryCheck:
    """Compare one query's detected intent and route (from its full-pipeline row)."""
    terms = tuple(query.route_hint.get("umls", ()))
    names = _matched_names(query.text, vocabulary)
    matched = tuple(term for term in terms if term.lower() in names)
    expected = tuple(
        EAGLE_COLLECTIONS.get(name, name) for name in query.route_hint.get("collections", ())
    )
    routed = tuple(row.route)
    expected_workflow = EAGLE_WORKFLOWS.get(query.label_workflow or "")
    return EagleQueryCheck(
        query_id=query.query_id,
        entity_terms=terms,
        entities_matched=matched,
        entity_recall=len(matched) / len(terms) if terms else None,
        expected_collections=expected,
        routed_collections=routed,
        route_ok=set(expected) <= set(routed) if expected else None,
        label_workflow=query.label_workflow,
        expected_workflow=expected_workflow,
        workflow=row.workflow,
        workflow_ok=(row.workflow == expected_workflow) if expected_workflow else None,
    )


def _mean(values: Sequence[float | bool | None]) -> float | None:
    known = [float(value) for value in values if value is not None]
    return sum(known) / len(known) if known else None


def route_accuracy(
    queries: Sequence[EvalQuery], rows: Sequence[QueryRow], vocabulary: Vocabulary
) -> dict[str, Any]:
    """Entity recall, route accuracy and workflow agreement over ``queries``.

    Args:
        queries: the EagleRAG queries.
        rows: one row per query from the same run (any ablation: intent and route do
            not depend on the stage switches); rows with errors are skipped.
        vocabulary: the pipeline's vocabulary.

    Returns:
        ``{"entity_recall", "route_accuracy", "workflow_agreement", "counts",
        "per_query"}``; misses listed per query.
    """
    by_id = {row.query_id: row for row in rows if row.error is None}
    checks = [check_query(q, by_id[q.query_id], vocabulary) for q in queries
              if q.query_id in by_id]
    return {
        "entity_recall": _mean([c.entity_recall for c in checks]),
        "route_accuracy": _mean([c.route_ok for c in checks]),
        "workflow_agreement": _mean([c.workflow_ok for c in checks]),
        "counts": {
            "queries": len(checks),
            "with_entity_hint": sum(1 for c in checks if c.entity_recall is not None),
            "with_collection_hint": sum(1 for c in checks if c.route_ok is not None),
            "with_workflow_mapping": sum(1 for c in checks if c.workflow_ok is not None),
        },
        "per_query": [c.__dict__ for c in checks],
    }
