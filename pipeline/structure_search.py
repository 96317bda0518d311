"""Structure recall for the chemical plan (SPEC A-3): exact parent first, then Morgan
fingerprint neighbours by Tanimoto.

The retriever fuses this list with the learned SMILES-embedding leg by RRF; this module
only recalls. A text cross-encoder never reorders these hits (SPEC A-3), which is the
retriever's concern.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pipeline.intent import smiles_tokens
from pipeline.ports import VectorStore
from pipeline.schema import NodeWithScore, ScopeFilter
from pipeline.structure import Structure, morgan_fingerprint, standardize
from pipeline.vocabulary import Vocabulary

__all__ = ["EXACT_FORMS_LIMIT", "STRUCTURE_SCORE_PART", "query_structures", "structure_recall"]

#: Key of the structure similarity in ``NodeWithScore.score_parts``.
STRUCTURE_SCORE_PART = "structure"
#: Exact matches read per parent before they are ordered (the forms of one parent: free
#: base, salts, hydrates, and their chunks), so the cut to ``depth`` keeps the best forms.
EXACT_FORMS_LIMIT = 100


def _identity_rank(query: Structure, hit: NodeWithScore) -> int:
    """Order of an exact (same parent) hit: 0 = the very input the user gave (same salt
    form and charges), 1 = the bare parent record, 2 = another form of the parent."""
    smiles = str(hit.node.metadata.get("smiles") or "")
    stored = standardize(smiles) if smiles else None
    if stored is None:
        return 2
    if stored.source_smiles == query.source_smiles:
        return 0
    return 1 if stored.is_source_parent else 2


def _with_structure_score(hit: NodeWithScore, similarity: float) -> NodeWithScore:
    return hit.model_copy(
        update={
            "score": similarity,
            "vector_similarity": similarity,
            "score_parts": {**hit.score_parts, STRUCTURE_SCORE_PART: similarity},
        }
    )


async def structure_recall(
    store: VectorStore,
    collection: str,
    query_smiles: Sequence[str],
    depth: int,
    scope: ScopeFilter | None = None,
    neighbours: bool = True,
) -> list[NodeWithScore]:
    """Structure hits for the query's structures, best first (SPEC A-3).

    Each query structure is standardised (``pipeline.structure.standardize``: parent
    after salt stripping, neutralised); unparsable ones are skipped. For every parent the
    store runs the exact InChIKey look-up (up to ``max(depth, EXACT_FORMS_LIMIT)`` forms)
    and the Tanimoto fingerprint search (``depth`` hits), concurrently. The result:

    1. exact parent matches (score 1.0), per query structure in query order; among them
       the record of the very form the user typed (same salt / charges) first, then the
       bare parent, then other salt forms, then by node id;
    2. fingerprint neighbours by their best Tanimoto over the query structures, ties by
       node id.

    De-duplicated by node id (an exact match is not repeated among the neighbours), cut to
    ``depth``. ``score`` = ``vector_similarity`` = ``score_parts["structure"]`` = 1.0
    for exact matches, the Tanimoto similarity in (0, 1] otherwise.

    Args:
        store: the vector store (``search_inchikey`` / ``search_fingerprint``).
        collection: the structure collection (``chemical``); one without structure
            fields gives ``[]``.
        query_smiles: the query's structure tokens (``pipeline.intent.smiles_tokens``).
        depth: hits wanted, >= 1.
        scope: kb names / document ids / tags; None = everything.
        neighbours: run the fingerprint search too; False = exact parents only (a
            structure looked up from a drug name: its neighbours answer no text question).

    Raises:
        ValueError: ``depth`` < 1.
        pipeline.errors.BackendUnavailable: the store does not answer.
    """
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    structures: dict[str, Structure] = {}
    for smiles in query_smiles:
        structure = standardize(smiles)
        if structure is not None:
            structures.setdefault(structure.inchikey or structure.canonical_smiles, structure)
    if not structures:
        return []
    queries = list(structures.values())

    async def exact(structure: Structure) -> list[NodeWithScore]:
        if not structure.inchikey:
            return []
        limit = max(depth, EXACT_FORMS_LIMIT)
        return await store.search_inchikey(collection, structure.inchikey, limit, scope)

    async def similar(structure: Structure) -> list[NodeWithScore]:
        if not neighbours:
            return []
        return await store.search_fingerprint(
            collection, morgan_fingerprint(structure), depth, scope
        )

    exact_lists, neighbour_lists = await asyncio.gather(
        asyncio.gather(*(exact(structure) for structure in queries)),
        asyncio.gather(*(similar(structure) for structure in queries)),
    )
    ranked: dict[str, NodeWithScore] = {}
    for structure, hits in zip(queries, exact_lists, strict=True):
        ordered = sorted(hits, key=lambda hit: (_identity_rank(structure, hit), hit.node_id))
        for hit in ordered:
            ranked.setdefault(hit.node_id, _with_structure_score(hit, 1.0))
    neighbours: dict[str, NodeWithScore] = {}
    for hits in neighbour_lists:
        for hit in hits:
            if hit.node_id in ranked:
                continue
            best = neighbours.get(hit.node_id)
            if best is None or hit.score > best.score:
                neighbours[hit.node_id] = hit
    for hit in sorted(neighbours.values(), key=lambda hit: (-hit.score, hit.node_id)):
        ranked[hit.node_id] = _with_structure_score(hit, float(hit.score))
    return list(ranked.values())[:depth]


def query_structures(query: str, vocabulary: Vocabulary) -> tuple[list[str], bool]:
    """SMILES to search a structure collection with, and whether the query wrote them.

    The query's own structure tokens (A-3: RDKit-validated) when it has any; else the
    SMILES the vocabulary knows for the drugs it names ("SMILES of lapatinib").
    """
    written = smiles_tokens(query)
    if written:
        return written, True
    structures = []
    for name in vocabulary.match_drug_entities(query):
        entity = vocabulary.get(name)
        if entity is not None and entity.smiles:
            structures.append(entity.smiles)
    return list(dict.fromkeys(structures)), False
