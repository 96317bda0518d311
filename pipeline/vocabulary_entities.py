"""The entity records of the vocabulary (SPEC.md 2a): ``Entity``, one hit of one in a text
(``EntityMatch``), and the rules that merge two rows of one entity and guess the type of a
name no source types (the drug-suffix rule, R-VOC-2).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, replace
from typing import Literal

from pipeline.vocabulary_rules import has_drug_suffix

__all__ = [
    "Entity",
    "EntityMatch",
    "EntityType",
    "content_fingerprint",
    "infer_type",
    "merge_entities",
]


#: The values of ``Entity.semantic_type``.
EntityType = Literal["drug", "gene", "disease", "pathway", "class", "other"]


@dataclass(frozen=True)
class Entity:
    """A vocabulary entity (SPEC.md 2a).

    ``semantic_type`` is one of ``drug``, ``gene``, ``disease``, ``pathway``, ``class``
    (a drug class: ``SGLT2 inhibitors``, whose ``related_drugs`` are its members),
    ``other``; ``related_drugs`` and ``pathways`` keep their curated order. ``smiles`` is
    set for drugs whose structure is known (R-ING-5 back-fill). ``lay_names`` are the
    aliases that are everyday names of a condition ("piles" of haemorrhoids), which a
    question is glossed with the canonical name beside (A-25, ``pipeline.lay_names``).
    """

    canonical: str
    semantic_type: str = "other"
    aliases: tuple[str, ...] = ()
    related_drugs: tuple[str, ...] = ()
    pathways: tuple[str, ...] = ()
    cui: str = ""
    smiles: str = ""
    lay_names: tuple[str, ...] = ()

    @property
    def is_drug(self) -> bool:
        """True when ``semantic_type`` is ``drug`` (not a drug ``class``)."""
        return self.semantic_type == "drug"


@dataclass(frozen=True)
class EntityMatch:
    """One hit of an entity in a text: character span ``[start, end)`` and the surface
    form found. ``correction`` is the vocabulary name a misspelt surface was read as
    (``osimertinb`` -> ``osimertinib``), empty for exact hits."""

    entity: Entity
    start: int
    end: int
    surface: str
    correction: str = ""


def infer_type(name: str) -> str:
    """The type of a name no source types: ``drug`` when its last word has a drug suffix
    (R-VOC-2), else ``other``."""
    return "drug" if has_drug_suffix(name.split()[-1] if name.split() else name) else "other"


def merge_entities(first: Entity, second: Entity) -> Entity:
    """Two rows of one entity as one: the first's canonical name, the first type that is
    not ``other``, names and relations united in order, the first CUI and SMILES given."""

    def union(a: Sequence[str], b: Sequence[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*a, *b]))

    semantic_type = first.semantic_type if first.semantic_type != "other" else second.semantic_type
    return Entity(
        canonical=first.canonical,
        semantic_type=semantic_type,
        aliases=tuple(a for a in union(first.aliases, second.aliases) if a != first.canonical),
        related_drugs=union(first.related_drugs, second.related_drugs),
        pathways=union(first.pathways, second.pathways),
        cui=first.cui or second.cui,
        smiles=first.smiles or second.smiles,
        lay_names=union(first.lay_names, second.lay_names),
    )


def content_fingerprint(entities: Iterable[Entity], *tables: object) -> str:
    """sha256 (16 hex characters) of ``entities`` (every field but ``lay_names``, in the
    given order) and of the name ``tables`` (JSON: dicts, lists, tuples, strings; sets
    are sorted), the same in every process. The same fingerprint means the same findings
    in any text (for the same matching code); a different one may still find the same.
    Ingest stores what a vocabulary found (primary drugs R-ING-3, lexical texts R-REQ-6,
    profiles R-ING-4), so it counts a document written under another fingerprint as
    changed."""
    digest = hashlib.sha256(b"biomed-vocabulary-v1")
    for entity in entities:  # lay names gloss questions only: no document changes
        digest.update(json.dumps(astuple(replace(entity, lay_names=()))).encode())
    digest.update(json.dumps(tables, sort_keys=True, default=sorted).encode())
    return digest.hexdigest()[:16]
