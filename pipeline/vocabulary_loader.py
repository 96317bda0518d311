"""Reading the vocabulary sources (R-VOC-4): the shipped vocabulary file, a licensed UMLS
``MRCONSO.RRF`` (with its ``MRSTY.RRF`` semantic types), the known-words list of the
typo look-up and the spelling words (A-19).

The shipped vocabulary (``configs/vocabulary/biomed_vocabulary.jsonl.gz``), the known
words (``configs/vocabulary/known_words.txt.gz``) and the spelling words
(``configs/vocabulary/spelling_words.tsv.gz``) are written by
``scripts/build_vocabulary.py``. These functions only parse; ``Vocabulary.load`` and
``Vocabulary.from_mrconso`` build the vocabulary from what they return.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pipeline.vocabulary_entities import Entity, infer_type
from pipeline.vocabulary_rules import name_filter_reason

__all__ = [
    "INDICATION_SYMPTOMS",
    "KNOWN_WORDS",
    "SHIPPED_VOCABULARY",
    "SPELLING_WORDS",
    "VocabularyFile",
    "read_mrconso",
    "read_vocabulary_file",
    "shipped_indication_symptoms",
    "shipped_known_words",
    "shipped_spelling_words",
]

_VOCABULARY_DIR = Path(__file__).resolve().parent.parent / "configs" / "vocabulary"
SHIPPED_VOCABULARY = _VOCABULARY_DIR / "biomed_vocabulary.jsonl.gz"
#: Words that are not typos of drug names (common English words and the words of the
#: stored leaflets, four letters or more), written by ``scripts/build_vocabulary.py``.
KNOWN_WORDS = _VOCABULARY_DIR / "known_words.txt.gz"
#: The words of the stored leaflets and labels that a misspelt word of a question is read
#: as (A-19), each with the number of products whose text uses it ("word<TAB>count").
SPELLING_WORDS = _VOCABULARY_DIR / "spelling_words.tsv.gz"
#: Per canonical drug name, the A-21 symptom lemmas its own indications use (EMA leaflet
#: section 1, FDA indications): "fezolinetant" -> ["flush", "hot", ...].
INDICATION_SYMPTOMS = _VOCABULARY_DIR / "indication_symptoms.json"


@dataclass(frozen=True)
class VocabularyFile:
    """What a vocabulary file holds, as the arguments of ``Vocabulary``."""

    entities: list[Entity]
    case_sensitive_names: dict[str, list[str]]
    guarded_names: dict[str, list[str]]
    stop_names: Sequence[str]
    sources: Sequence[str]
    #: Per canonical name, names matched but never read as a typo's target (A-6).
    rare_names: dict[str, list[str]] = field(default_factory=dict)

    def name_tables(self) -> dict[str, object]:
        """The keyword arguments of ``Vocabulary`` besides the entities and sources."""
        return {
            "case_sensitive_names": self.case_sensitive_names,
            "stop_names": self.stop_names,
            "guarded_names": self.guarded_names,
            "rare_names": self.rare_names,
        }


def read_vocabulary_file(path: str | Path | None = None) -> VocabularyFile:
    """Read a vocabulary file (JSON lines, optionally gzipped); the shipped one when
    ``path`` is None. The format is described at ``Vocabulary.load``.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the header is missing or of another format.
    """
    file_path = Path(path) if path is not None else SHIPPED_VOCABULARY
    opener = gzip.open if file_path.suffix == ".gz" else open
    entities: list[Entity] = []
    sensitive: dict[str, list[str]] = {}
    guarded: dict[str, list[str]] = {}
    rare: dict[str, list[str]] = {}
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
                semantic_type=row.get("t") or infer_type(row["c"]),
                aliases=tuple(row.get("a", ())),
                related_drugs=tuple(row.get("r", ())),
                pathways=tuple(row.get("p", ())),
                cui=row.get("cui", ""),
                smiles=row.get("s", ""),
                lay_names=tuple(row.get("l", ())),
            )
            entities.append(entity)
            if row.get("cs"):
                sensitive.setdefault(entity.canonical.lower(), []).extend(row["cs"])
            if row.get("g"):
                guarded.setdefault(entity.canonical.lower(), []).extend(row["g"])
            if row.get("nt"):
                rare.setdefault(entity.canonical.lower(), []).extend(row["nt"])
    return VocabularyFile(
        entities=entities,
        case_sensitive_names=sensitive,
        guarded_names=guarded,
        stop_names=header.get("stop_names", ()),
        sources=header.get("sources", ()),
        rare_names=rare,
    )


def read_mrconso(mrconso: Path, mrsty_path: str | Path | None = None) -> list[Entity]:
    """The entities of a UMLS ``MRCONSO.RRF``, one per CUI; the rules are described at
    ``Vocabulary.from_mrconso``.

    Raises:
        FileNotFoundError: ``mrconso`` does not exist.
        ValueError: a row has fewer than 15 fields.
    """
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
            if name_filter_reason(text) is not None:  # numbers, units, ...
                continue
            names.setdefault(cui, [])
            if text not in names[cui]:
                names[cui].append(text)
            if term_status == "P" and string_type == "PF" and is_preferred == "Y":
                preferred.setdefault(cui, text)
    entities = []
    for cui, strings in names.items():
        canonical = preferred.get(cui, strings[0])
        semantic_type = types.get(cui) or infer_type(canonical)
        aliases = tuple(s for s in strings if s != canonical)
        entities.append(
            Entity(canonical=canonical, semantic_type=semantic_type, aliases=aliases, cui=cui)
        )
    return entities


@lru_cache(maxsize=1)
def shipped_known_words() -> frozenset[str]:
    """The shipped known words (``KNOWN_WORDS``), read once; empty when the file is absent."""
    if not KNOWN_WORDS.exists():
        return frozenset()
    with gzip.open(KNOWN_WORDS, "rt", encoding="utf-8") as handle:
        return frozenset(line.strip() for line in handle if line.strip())


@lru_cache(maxsize=1)
def shipped_spelling_words() -> dict[str, int]:
    """The shipped spelling words (``SPELLING_WORDS``): folded word -> number of products
    (leaflets and labels) whose text uses it, read once; empty when the file is absent."""
    if not SPELLING_WORDS.exists():
        return {}
    words: dict[str, int] = {}
    with gzip.open(SPELLING_WORDS, "rt", encoding="utf-8") as handle:
        for line in handle:
            word, _, count = line.rstrip("\n").partition("\t")
            if word and count.isdigit():
                words[word] = int(count)
    return words


@lru_cache(maxsize=1)
def shipped_indication_symptoms() -> dict[str, frozenset[str]]:
    """The shipped ``INDICATION_SYMPTOMS``: lower-case canonical drug name -> symptom
    lemmas (A-21), read once; empty when the file is absent."""
    if not INDICATION_SYMPTOMS.exists():
        return {}
    table = json.loads(INDICATION_SYMPTOMS.read_text(encoding="utf-8"))
    return {drug: frozenset(words) for drug, words in table.items()}


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
