"""Biomedical vocabulary and entity matching: the UMLS stand-in (SPEC.md section 2a).

Names are matched with two Aho-Corasick automata (pyahocorasick): one over lower-cased
names (drugs, diseases, curated entities) and one over names matched exactly as written
(HGNC gene symbols, whose lower-case forms are English words: ``MET``, ``CAT``). A hit
counts only where the characters on both sides are not letters (R-VOC-1); overlapping
hits resolve leftmost-longest. Words the vocabulary lacks but that carry a drug suffix
are matched as drugs (R-VOC-2).

The shipped vocabulary (``configs/vocabulary/biomed_vocabulary.jsonl.gz``) is built by
``scripts/build_vocabulary.py``; ``Vocabulary.from_mrconso`` reads a licensed UMLS
``MRCONSO.RRF`` instead (R-VOC-4).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import ahocorasick

__all__ = [
    "DRUG_SUFFIXES",
    "SHIPPED_VOCABULARY",
    "Entity",
    "EntityMatch",
    "Vocabulary",
    "default_vocabulary",
    "has_drug_suffix",
]

SHIPPED_VOCABULARY = (
    Path(__file__).resolve().parent.parent / "configs" / "vocabulary" / "biomed_vocabulary.jsonl.gz"
)

#: R-VOC-2 suffixes; ``formin`` also matches as a whole word.
DRUG_SUFFIXES: tuple[str, ...] = ("mab", "nib", "tinib", "rafenib", "parib", "stat", "formin")

#: Words that end in a drug suffix but are not drugs (R-VOC-2 stop list).
_SUFFIX_STOP_WORDS = frozenset(
    {
        "thermostat",
        "rheostat",
        "cryostat",
        "hemostat",
        "haemostat",
        "photostat",
        "aerostat",
        "heliostat",
        "gyrostat",
        "hydrostat",
        "humidistat",
        "barostat",
        "chemostat",
        "coelostat",
        "siderostat",
        "pyrostat",
        "klinostat",
        "clinostat",
        "turbidostat",
        "nutristat",
        "pHstat".lower(),
        "autostat",
        "electrostat",
    }
)

#: Lowest word length for an out-of-vocabulary suffix match (R-VOC-2, "beyond the source").
_MIN_SUFFIX_WORD = 7

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")

_TYPE_PRIORITY = {"drug": 0, "gene": 1, "disease": 2, "pathway": 3}


def has_drug_suffix(name: str) -> bool:
    """True when ``name`` ends in one of the R-VOC-2 drug suffixes (case-insensitive) and is
    not on the stop list."""
    lowered = name.lower()
    if lowered in _SUFFIX_STOP_WORDS:
        return False
    return lowered == "formin" or lowered.endswith(DRUG_SUFFIXES)


@dataclass(frozen=True)
class Entity:
    """A vocabulary entity (SPEC.md 2a).

    ``semantic_type`` is one of ``drug``, ``gene``, ``disease``, ``pathway``, ``other``;
    ``related_drugs`` and ``pathways`` keep their curated order. ``smiles`` is set for
    drugs whose structure is known (R-ING-5 back-fill).
    """

    canonical: str
    semantic_type: str = "other"
    aliases: tuple[str, ...] = ()
    related_drugs: tuple[str, ...] = ()
    pathways: tuple[str, ...] = ()
    cui: str = ""
    smiles: str = ""

    @property
    def is_drug(self) -> bool:
        return self.semantic_type == "drug"


@dataclass(frozen=True)
class EntityMatch:
    """One hit of an entity in a text: character span ``[start, end)`` and the surface
    form found."""

    entity: Entity
    start: int
    end: int
    surface: str


@dataclass
class _Names:
    insensitive: dict[str, list[int]] = field(default_factory=dict)
    sensitive: dict[str, list[int]] = field(default_factory=dict)


def _is_letter(char: str) -> bool:
    return char.isalpha()


def _lower_same_length(text: str) -> str:
    # str.lower() changes the length of a few characters (e.g. U+0130); keep positions
    # aligned with the original text so spans stay valid.
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)


class Vocabulary:
    """Entities plus the automata that find them in text.

    Build with ``Vocabulary(entities, case_sensitive_names=...)``, ``Vocabulary.load()``
    (the shipped file) or ``Vocabulary.from_mrconso(path)``.
    """

    def __init__(
        self,
        entities: Iterable[Entity],
        case_sensitive_names: dict[str, Sequence[str]] | None = None,
        stop_names: Iterable[str] = (),
        sources: Sequence[str] = (),
    ) -> None:
        """
        Args:
            entities: the entities; later duplicates of a canonical name are merged.
            case_sensitive_names: per canonical name, names matched only as written
                (gene symbols). All other names match case-insensitively.
            stop_names: lower-case names never matched (common words, excipients).
            sources: where the data came from, for ``describe()``.
        """
        self.sources = tuple(sources)
        self._entities: list[Entity] = []
        self._by_canonical: dict[str, int] = {}
        for entity in entities:
            self._add_entity(entity)
        stop = {name.lower() for name in stop_names}
        sensitive_map = {key.lower(): list(v) for key, v in (case_sensitive_names or {}).items()}
        names = _Names()
        for index, entity in enumerate(self._entities):
            exact = set(sensitive_map.get(entity.canonical.lower(), ()))
            for name in (entity.canonical, *entity.aliases):
                name = name.strip()
                if not name:
                    continue
                if name in exact:
                    names.sensitive.setdefault(name, []).append(index)
                elif name.lower() not in stop:
                    names.insensitive.setdefault(name.lower(), []).append(index)
        self._insensitive = self._build_automaton(names.insensitive)
        self._sensitive = self._build_automaton(names.sensitive)
        self._name_index = {name: ids[0] for name, ids in names.insensitive.items()}
        for name, ids in names.sensitive.items():
            self._name_index.setdefault(name.lower(), ids[0])

    # -- construction -------------------------------------------------------------------

    def _add_entity(self, entity: Entity) -> None:
        # Same canonical name and compatible type: one entity (curated EGFR + HGNC EGFR).
        # A clash of types (gene "CAT" / drug "cat") keeps both, the later one keyed apart.
        key = entity.canonical.lower()
        index = self._by_canonical.get(key)
        if index is not None:
            existing = self._entities[index]
            if "other" in (existing.semantic_type, entity.semantic_type) or (
                existing.semantic_type == entity.semantic_type
            ):
                self._entities[index] = _merge_entities(existing, entity)
                return
            key = f"{key}|{entity.semantic_type}"
            if key in self._by_canonical:
                index = self._by_canonical[key]
                self._entities[index] = _merge_entities(self._entities[index], entity)
                return
        self._by_canonical[key] = len(self._entities)
        self._entities.append(entity)

    def _build_automaton(self, names: dict[str, list[int]]) -> ahocorasick.Automaton | None:
        if not names:
            return None
        automaton = ahocorasick.Automaton()
        for name, indexes in names.items():
            ranked = sorted(set(indexes), key=lambda i: self._priority(i))
            curated = self._priority(ranked[0])[0] == 0
            automaton.add_word(name, (len(name), tuple(ranked), curated))
        automaton.make_automaton()
        return automaton

    def _priority(self, index: int) -> tuple[int, int]:
        entity = self._entities[index]
        curated = 0 if (entity.related_drugs or entity.pathways) else 1
        return (curated, _TYPE_PRIORITY.get(entity.semantic_type, 9))

    @classmethod
    def load(cls, path: str | Path | None = None) -> Vocabulary:
        """Load a vocabulary file (JSON lines, optionally gzipped); the shipped one when
        ``path`` is None (R-VOC-4).

        File format: a header object ``{"format": "biomed-vocabulary", "version": 1,
        "sources": [...], "stop_names": [...]}`` then one object per entity with keys
        ``c`` (canonical), ``t`` (type), ``a`` (aliases), ``cs`` (names matched exactly as
        written), ``r`` (related drugs), ``p`` (pathways), ``cui``, ``s`` (SMILES).

        Raises:
            FileNotFoundError: the file does not exist.
            ValueError: the header is missing or of another format.
        """
        file_path = Path(path) if path is not None else SHIPPED_VOCABULARY
        opener = gzip.open if file_path.suffix == ".gz" else open
        entities: list[Entity] = []
        sensitive: dict[str, list[str]] = {}
        with opener(file_path, "rt", encoding="utf-8") as handle:
            header = json.loads(handle.readline() or "{}")
            if header.get("format") != "biomed-vocabulary":
                raise ValueError(f"{file_path}: not a biomed-vocabulary file")
            for line in handle:
                if not line.strip():
                    continue
                row = json.loads(line)
                entity = Entity(
                    canonical=row["c"],
                    semantic_type=row.get("t") or _infer_type(row["c"]),
                    aliases=tuple(row.get("a", ())),
                    related_drugs=tuple(row.get("r", ())),
                    pathways=tuple(row.get("p", ())),
                    cui=row.get("cui", ""),
                    smiles=row.get("s", ""),
                )
                entities.append(entity)
                if row.get("cs"):
                    sensitive.setdefault(entity.canonical.lower(), []).extend(row["cs"])
        return cls(
            entities,
            case_sensitive_names=sensitive,
            stop_names=header.get("stop_names", ()),
            sources=header.get("sources", ()),
        )

    @classmethod
    def from_mrconso(
        cls,
        path: str | Path,
        mrsty_path: str | Path | None = None,
        base: Vocabulary | None = None,
    ) -> Vocabulary:
        """Build from a UMLS ``MRCONSO.RRF`` (pipe-separated, R-VOC-4): English rows
        (``LAT == "ENG"``), not suppressed, grouped by CUI. The preferred string
        (``TS == "P"``, ``STT == "PF"``, ``ISPREF == "Y"``) is the canonical name; the
        other strings are aliases. Semantic types come from ``MRSTY.RRF`` when given
        (default: beside MRCONSO, if present), else from the drug-suffix rule (R-VOC-2).
        ``base`` (e.g. the shipped vocabulary) is merged in, keeping its relations.

        Raises:
            FileNotFoundError: ``path`` does not exist.
            ValueError: a row has fewer than 15 fields.
        """
        mrconso = Path(path)
        sty_file = Path(mrsty_path) if mrsty_path else mrconso.with_name("MRSTY.RRF")
        types = _read_mrsty(sty_file) if sty_file.exists() else {}
        preferred: dict[str, str] = {}
        names: dict[str, list[str]] = {}
        with open(mrconso, encoding="utf-8") as handle:
            for line_number, line in enumerate(handle, start=1):
                fields = line.rstrip("\n").split("|")
                if len(fields) < 15:
                    raise ValueError(f"{mrconso}:{line_number}: expected >= 15 fields")
                cui, language, term_status, string_type, is_preferred = (
                    fields[0],
                    fields[1],
                    fields[2],
                    fields[4],
                    fields[6],
                )
                suppress = fields[16] if len(fields) > 16 else "N"
                text = fields[14].strip()
                if language != "ENG" or suppress not in ("", "N") or not text:
                    continue
                names.setdefault(cui, [])
                if text not in names[cui]:
                    names[cui].append(text)
                if term_status == "P" and string_type == "PF" and is_preferred == "Y":
                    preferred.setdefault(cui, text)
        entities = []
        for cui, strings in names.items():
            canonical = preferred.get(cui, strings[0])
            semantic_type = types.get(cui) or _infer_type(canonical)
            aliases = tuple(s for s in strings if s != canonical)
            entities.append(
                Entity(canonical=canonical, semantic_type=semantic_type, aliases=aliases, cui=cui)
            )
        if base is not None:
            entities = [*base.entities, *entities]
        sources = (*(base.sources if base else ()), f"UMLS MRCONSO ({mrconso.name})")
        return cls(entities, sources=sources)

    # -- queries ------------------------------------------------------------------------

    @property
    def entities(self) -> tuple[Entity, ...]:
        return tuple(self._entities)

    def __len__(self) -> int:
        return len(self._entities)

    def get(self, name: str) -> Entity | None:
        """The entity whose canonical name or alias is ``name`` (case-insensitive)."""
        index = self._by_canonical.get(name.lower())
        if index is None:
            index = self._name_index.get(name.lower())
        return None if index is None else self._entities[index]

    def find(self, text: str) -> list[EntityMatch]:
        """All entity hits in ``text``, non-overlapping (leftmost-longest), in text order.

        Letter-boundary rule (R-VOC-1): a name matches only where the characters on both
        sides are not letters, so ``EGFR`` is not found in ``VEGFR`` and ``VEGFR`` is
        found in ``VEGFR1-3``. Out-of-vocabulary words with a drug suffix of at least
        seven letters match as drugs (R-VOC-2).
        """
        if not text:
            return []
        candidates: list[tuple[int, int, tuple[int, ...], bool]] = []
        lowered = _lower_same_length(text)
        for automaton, haystack in ((self._insensitive, lowered), (self._sensitive, text)):
            if automaton is None:
                continue
            for end_index, (length, indexes, curated) in automaton.iter(haystack):
                start = end_index - length + 1
                end = end_index + 1
                if start > 0 and _is_letter(text[start - 1]):
                    continue
                if end < len(text) and _is_letter(text[end]):
                    continue
                candidates.append((start, end, indexes, curated))
        # Leftmost first; at one start a curated entity (with relations) beats a longer
        # plain name (VEGFR, not the HGNC alias VEGFR1, in "VEGFR1-3"), else longest.
        candidates.sort(key=lambda item: (item[0], not item[3], -(item[1] - item[0])))
        matches: list[EntityMatch] = []
        covered_until = -1
        for start, end, indexes, _curated in candidates:
            if start < covered_until:
                continue
            matches.append(EntityMatch(self._entities[indexes[0]], start, end, text[start:end]))
            covered_until = end
        matches.extend(self._suffix_matches(text, matches))
        matches.sort(key=lambda match: match.start)
        return matches

    def _suffix_matches(self, text: str, known: list[EntityMatch]) -> Iterator[EntityMatch]:
        spans = [(match.start, match.end) for match in known]
        for word in _WORD_RE.finditer(text):
            token = word.group(0)
            if len(token) < _MIN_SUFFIX_WORD or not token.isalpha() or not has_drug_suffix(token):
                continue
            if any(start < word.end() and word.start() < end for start, end in spans):
                continue
            if self.get(token) is not None:
                continue
            yield EntityMatch(
                Entity(canonical=token.lower(), semantic_type="drug"),
                word.start(),
                word.end(),
                token,
            )

    def match_entities(self, text: str) -> list[Entity]:
        """Entities in order of first appearance, each once (R-VOC-3)."""
        seen: set[str] = set()
        result: list[Entity] = []
        for match in self.find(text):
            key = match.entity.canonical.lower()
            if key not in seen:
                seen.add(key)
                result.append(match.entity)
        return result

    def match_drug_entities(self, text: str) -> list[str]:
        """Canonical drug names in order of appearance, de-duplicated (R-VOC-3). A brand
        name yields its active substance (``Tagrisso`` -> ``osimertinib``)."""
        return [
            entity.canonical
            for entity in self.match_entities(text)
            if entity.is_drug
            or (entity.semantic_type == "other" and has_drug_suffix(entity.canonical))
        ]

    def describe(self) -> dict[str, Any]:
        """Counts per semantic type and the data sources."""
        counts: dict[str, int] = {}
        for entity in self._entities:
            counts[entity.semantic_type] = counts.get(entity.semantic_type, 0) + 1
        return {"entities": len(self._entities), "by_type": counts, "sources": list(self.sources)}


def _infer_type(name: str) -> str:
    return "drug" if has_drug_suffix(name.split()[-1] if name.split() else name) else "other"


def _merge_entities(first: Entity, second: Entity) -> Entity:
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
    )


# UMLS semantic types (TUI) -> our types.
_TUI_TYPES = {
    "T109": "drug",
    "T121": "drug",
    "T195": "drug",
    "T200": "drug",
    "T114": "drug",
    "T127": "drug",
    "T129": "drug",
    "T131": "drug",
    "T197": "drug",
    "T116": "gene",
    "T028": "gene",
    "T087": "gene",
    "T086": "gene",
    "T126": "gene",
    "T047": "disease",
    "T191": "disease",
    "T046": "disease",
    "T048": "disease",
    "T019": "disease",
    "T037": "disease",
    "T184": "disease",
    "T044": "pathway",
    "T043": "pathway",
    "T045": "pathway",
}


def _read_mrsty(path: Path) -> dict[str, str]:
    types: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split("|")
            if len(fields) >= 2 and fields[1] in _TUI_TYPES:
                types.setdefault(fields[0], _TUI_TYPES[fields[1]])
    return types


@lru_cache(maxsize=4)
def default_vocabulary(path: str | None = None) -> Vocabulary:
    """The shipped vocabulary (or ``path``), loaded once per process."""
    return Vocabulary.load(path)
