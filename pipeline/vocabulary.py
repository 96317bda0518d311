"""Biomedical vocabulary and entity matching: the UMLS stand-in (SPEC.md section 2a, A-6).

Names are matched on their match key (``pipeline.text.keyed``: NFKC, case folding, Greek
letters as names, dash / space variants as one separator) with two Aho-Corasick automata
(pyahocorasick): one over case-folded keys (drugs, diseases, curated entities) and one over
keys matched exactly as written (HGNC gene symbols, whose lower-case forms are English
words: ``MET``, ``CAT``). A hit counts only where the characters on both sides are not
letters (R-VOC-1; a name ending in a digit is not followed by a digit either, so ``IL-1``
is not found in ``IL-17``); overlapping hits resolve leftmost-longest. Guarded names (gene
symbols that are common English or clinical words: ``SET``, ``WAS``) match only as written
inside a mixed-case sentence.

Beyond the names themselves (A-6):
- a drug named with its salt or form (``imatinib mesylate``, ``sunitinib malate``) is one
  match of the parent drug, even where the vocabulary lacks that salt name;
- a word of six or more letters that matches nothing is looked up by edit distance among
  drug names and brands (``osimertinb`` -> ``osimertinib``); the match carries the
  correction (``EntityMatch.correction``);
- words the vocabulary lacks but that carry a drug suffix are matched as drugs (R-VOC-2).

The shipped vocabulary (``configs/vocabulary/biomed_vocabulary.jsonl.gz``) is built by
``scripts/build_vocabulary.py``, which writes down the filters applied to the sources;
``Vocabulary.from_mrconso`` reads a licensed UMLS ``MRCONSO.RRF`` instead (R-VOC-4).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import ahocorasick

from pipeline.text import KeyedText, fold, keyed, match_key

__all__ = [
    "CAPITALISED_WORDS",
    "CLINICAL_ABBREVIATIONS",
    "DRUG_SUFFIXES",
    "KNOWN_WORDS",
    "SALT_FORMS",
    "SHIPPED_VOCABULARY",
    "Entity",
    "EntityMatch",
    "Vocabulary",
    "default_vocabulary",
    "has_drug_suffix",
    "name_filter_reason",
    "strip_salt",
]

_VOCABULARY_DIR = Path(__file__).resolve().parent.parent / "configs" / "vocabulary"
SHIPPED_VOCABULARY = _VOCABULARY_DIR / "biomed_vocabulary.jsonl.gz"
#: Words that are not typos of drug names (common English words and the words of the
#: stored leaflets, six letters or more), written by ``scripts/build_vocabulary.py``.
KNOWN_WORDS = _VOCABULARY_DIR / "known_words.txt.gz"

#: R-VOC-2 suffixes; ``formin`` also matches as a whole word.
DRUG_SUFFIXES: tuple[str, ...] = ("mab", "nib", "tinib", "rafenib", "parib", "stat", "formin")

#: Counter-ion, ester, hydrate and form words that follow a drug's active moiety (A-6):
#: ``imatinib mesylate`` is imatinib. Multi-word forms are listed as one string.
SALT_FORMS: frozenset[str] = frozenset(
    {
        # sulfonates
        "mesylate", "mesilate", "dimesylate", "methanesulfonate", "besylate", "besilate",
        "tosylate", "tosilate", "ditosylate", "camsylate", "esylate", "edisylate",
        "napsylate", "isethionate",
        # halides and mineral acids
        "hydrochloride", "dihydrochloride", "trihydrochloride", "hcl", "hydrobromide",
        "hydroiodide", "bromide", "chloride", "iodide", "nitrate", "sulfate", "sulphate",
        "bisulfate", "hemisulfate", "hydrogen sulfate", "phosphate", "diphosphate",
        "dihydrogen phosphate", "carbonate", "bicarbonate",
        # carboxylates
        "maleate", "malate", "fumarate", "hemifumarate", "succinate", "tartrate",
        "bitartrate", "hydrogen tartrate", "citrate", "acetate", "diacetate", "lactate",
        "gluconate", "oxalate", "pamoate", "embonate", "stearate", "palmitate",
        "decanoate", "enanthate", "cypionate", "valerate", "propionate", "dipropionate",
        "butyrate", "benzoate", "xinafoate", "furoate", "undecanoate", "hexanoate",
        "acetonide", "hyclate",
        # cations and bases
        "sodium", "disodium", "trisodium", "potassium", "dipotassium", "calcium",
        "magnesium", "meglumine", "trometamol", "tromethamine",
        # hydrates and solvates
        "hydrate", "monohydrate", "dihydrate", "trihydrate", "sesquihydrate",
        "hemihydrate", "anhydrous", "solvate", "ethanolate",
        # prodrug esters
        "etexilate", "mofetil", "medoxomil", "axetil", "pivoxil", "proxetil", "cilexetil",
        "disoproxil", "alafenamide", "marboxil",
    }
)  # fmt: skip

#: Parents that stay whole with their "salt" word: ``sodium chloride``, ``ferrous sulfate``.
_INORGANIC_PARENTS = frozenset(
    {
        "sodium", "potassium", "calcium", "magnesium", "lithium", "zinc", "iron", "ferrous",
        "ferric", "aluminium", "aluminum", "ammonium", "silver", "copper", "cupric",
        "barium", "strontium", "hydrogen", "stannous", "bismuth", "selenium", "chromium",
        "manganese", "cobalt", "gold", "sodium hydrogen", "acid", "water",
    }
)  # fmt: skip

#: The stop list of A-6, in capitals. Clinical abbreviations (``ANA`` antinuclear
#: antibodies, ``OS`` overall survival, ``HR`` hazard ratio) are never a name of an
#: entity, even where HGNC uses one as a gene symbol (HR, EFS, CAD). English words in
#: capitals (``WAS``, ``SET``, ``CAN``, ``AND``) are never an alias; a gene whose official
#: symbol one is keeps it as a guarded name (matched as written inside a mixed-case
#: sentence only).
CLINICAL_ABBREVIATIONS: frozenset[str] = frozenset(
    {
        # outcomes, statistics and trial words
        "ANA", "OS", "PFS", "ORR", "DFS", "EFS", "RFS", "TTP", "DOR", "DCR", "CR", "PR",
        "SD", "PD", "NE", "NR", "AE", "SAE", "TEAE", "ADR", "ITT", "CI", "HR", "RR", "NNT",
        "QOL", "ECOG", "KPS", "RCT", "PK", "MTD", "DLT", "BICR", "IRC",
        # routes, frequencies and forms
        "IV", "SC", "IM", "PO", "SL", "QD", "OD", "BID", "TID", "QID", "QW", "PRN", "TAB",
        "INJ", "SOL", "SUSP", "ER", "SR", "XR", "XL", "IR", "DR", "MG", "ML", "KG", "IU",
        # tests and measurements
        "BMI", "BP", "ECG", "EKG", "LVEF", "QTC", "ALT", "AST", "ALP", "GGT", "LDH", "INR",
        "APTT", "PTT", "PT", "BUN", "CBC", "WBC", "RBC", "ANC", "PLT", "HB", "HGB", "GFR",
        "CRCL", "TSH", "PSA", "ESR", "CT", "MRI", "PET",
        # care settings and conditions written as abbreviations
        "ICU", "ED", "OPD", "GP", "CKD", "AKI", "DVT", "PE", "MI", "CHF", "HF", "AF", "CAD",
        "TIA", "UTI", "URTI", "GI", "CNS", "ILD", "SOB", "NSAID", "NSAIDS", "OTC", "HRT",
        "IVF",
    }
)  # fmt: skip
CAPITALISED_WORDS: frozenset[str] = frozenset(
    {
        "WAS", "ALL", "CAN", "MAY", "SET", "AND", "OR", "NOT", "FOR", "THE", "ARE", "HAS",
        "HAD", "HIS", "HER", "OUT", "GET", "YES", "END", "CALL", "STOP", "BEST", "FIND",
        "MEN", "AT", "IN", "ON", "IS", "IT", "TO", "BE", "AS", "AN", "BY", "OF", "DO", "IF",
        "UP", "US", "WE", "ME", "MY", "HE", "NO", "SO", "CAP", "ECHO",
    }
)  # fmt: skip

#: Case-exact surface forms never matched: ``eGFR`` is the filtration rate, not EGFR.
_SURFACE_STOPS = frozenset({"eGFR"})

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

_TYPE_PRIORITY = {"drug": 0, "gene": 1, "disease": 2, "pathway": 3, "class": 4}

#: Typo tolerance (A-6): the shortest word looked up, and the edit distance allowed by
#: word length (1 for 6-9 letters, 2 for 10 or more).
_MIN_TYPO_WORD = 6
_TYPO_WORD_RE = re.compile(r"(?<![^\W_])[^\W\d_]{6,}(?![^\W_])")
#: Texts longer than this are documents, not queries: no typo look-up unless asked.
TYPO_MAX_CHARS = 300

_SALT_ALTERNATION = "|".join(
    sorted((re.escape(form).replace(r"\ ", r"\s+") for form in SALT_FORMS), key=len, reverse=True)
)
#: One or more salt / form words right after a drug name (``imatinib mesylate``).
_SALT_TAIL_RE = re.compile(rf"(?:[\s\-]+(?:{_SALT_ALTERNATION}))+(?![^\W\d_])", re.I)
_SALT_AS_RE = re.compile(rf"\s*\(\s*as\s+(?:{_SALT_ALTERNATION})(?:\s+\w+)?\s*\)", re.I)
_SENTENCE_END_RE = re.compile(r"[.!?;\n]")

_NUMBER_RE = re.compile(r"[\s\d.,:;/+\-\u2013%()\[\]]*")
_PERCENT_RE = re.compile(r"\d\s*%")
_UNITS = (
    r"mg|mcg|µg|μg|ug|kg|ng|pg|ml|dl|iu|units?|mmol|µmol|mol|meq|mg/ml|mg/kg|mg/g|"
    r"micrograms?|milligrams?|grams?|litres?|liters?|millilitres?|milliliters?|%|"
    r"tablets?|capsules?|puffs?|drops?|doses?"
)
#: A number (not glued to a letter: ``kir2dl5`` is a gene) with a unit; one-letter units
#: (g, l) only after a space (``1 g``), so ``4g`` and ``L1`` stay names.
_DOSE_RE = re.compile(rf"(?<![^\W_])\d+(?:[.,]\d+)?(?:\s*(?:{_UNITS})|\s+[gl])(?![^\W_])", re.I)
_UNIT_RE = re.compile(rf"(?:{_UNITS}|g|l)", re.I)


def strip_salt(name: str) -> str:
    """The active moiety of a drug name (A-6): trailing salt, ester, hydrate and form
    words stripped (``imatinib mesylate`` -> ``imatinib``, ``dabigatran etexilate
    mesilate`` -> ``dabigatran``, ``lapatinib ditosylate monohydrate`` -> ``lapatinib``),
    and a ``(as ...)`` note dropped. Inorganic salts stay whole (``sodium chloride``,
    ``ferrous sulfate``); a name that is only salt words is returned unchanged. Case is
    kept."""
    text = _SALT_AS_RE.sub("", name).strip()
    words = text.split()
    changed = True
    while changed and len(words) > 1:
        changed = False
        for size in (2, 1):
            if len(words) > size and " ".join(words[-size:]).lower() in SALT_FORMS:
                parent = " ".join(words[:-size])
                lowered = parent.lower()
                if lowered in _INORGANIC_PARENTS or lowered in SALT_FORMS or len(parent) < 4:
                    return text
                words = words[:-size]
                changed = True
                break
    return " ".join(words)


def name_filter_reason(name: str) -> str | None:
    """Why ``name`` cannot be a vocabulary name (A-6), or None: ``number`` (digits and
    punctuation only), ``percentage`` (checked first), ``dose`` (a number with a unit: ``500 mg``),
    ``unit`` (a unit or form word alone), ``single letter``, ``salt`` (a salt or form
    word alone), ``clinical abbreviation`` (``CLINICAL_ABBREVIATIONS``). The
    word-frequency filter of the build script comes on top of these."""
    stripped = name.strip()
    if _PERCENT_RE.search(stripped):
        return "percentage"
    if _NUMBER_RE.fullmatch(stripped):
        return "number"
    if _DOSE_RE.search(stripped):
        return "dose"
    if _UNIT_RE.fullmatch(stripped):
        return "unit"
    if sum(1 for ch in stripped if ch.isalnum()) <= 1:
        return "single letter"
    if stripped.lower() in SALT_FORMS or stripped.lower().rstrip("s") in SALT_FORMS:
        return "salt"
    if stripped.upper() in CLINICAL_ABBREVIATIONS and (stripped.isupper() or stripped.islower()):
        return "clinical abbreviation"
    return None


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

    ``semantic_type`` is one of ``drug``, ``gene``, ``disease``, ``pathway``, ``class``
    (a drug class: ``SGLT2 inhibitors``, whose ``related_drugs`` are its members),
    ``other``; ``related_drugs`` and ``pathways`` keep their curated order. ``smiles`` is
    set for drugs whose structure is known (R-ING-5 back-fill).
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
    form found. ``correction`` is the vocabulary name a misspelt surface was read as
    (``osimertinb`` -> ``osimertinib``), empty for exact hits."""

    entity: Entity
    start: int
    end: int
    surface: str
    correction: str = ""


@dataclass
class _Names:
    insensitive: dict[str, list[int]] = field(default_factory=dict)
    sensitive: dict[str, list[int]] = field(default_factory=dict)
    guarded: set[str] = field(default_factory=set)


def _is_latin_letter(text: str, index: int) -> bool:
    """True when ``text[index]`` exists and is a letter that is not Greek."""
    if index < 0 or index >= len(text):
        return False
    char = text[index]
    return char.isalpha() and not ("\u0370" <= char <= "\u03ff" or "\u1f00" <= char <= "\u1fff")


def _mixed_case_sentence(text: str, start: int, end: int) -> bool:
    """True when the sentence around ``text[start:end]`` has a lower-case letter (a
    capitalised word in it is written so on purpose, not shouted)."""
    left = max((m.end() for m in _SENTENCE_END_RE.finditer(text, 0, start)), default=0)
    right_match = _SENTENCE_END_RE.search(text, end)
    right = right_match.start() if right_match else len(text)
    return any(ch.islower() for ch in text[left:right])


class _TypoIndex:
    """Drug names and brands by (first letter, length), for the edit-distance look-up
    (A-6). A look-up compares a word only with names of its first letter whose length is
    within the allowed distance: a few hundred rapidfuzz comparisons."""

    def __init__(self, names: dict[str, int]) -> None:
        self._buckets: dict[tuple[str, int], tuple[list[str], list[int]]] = {}
        for name, index in names.items():
            bucket = self._buckets.setdefault((name[0], len(name)), ([], []))
            bucket[0].append(name)
            bucket[1].append(index)

    def lookup(self, word: str) -> tuple[str, int] | None:
        """``(name, entity index)`` of the one closest name within the distance allowed
        for ``word`` (case-folded), or None (none, or two entities equally close)."""
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        limit = 1 if len(word) < 10 else 2
        best: list[tuple[int, str, int]] = []
        for length in range(len(word) - limit, len(word) + limit + 1):
            bucket = self._buckets.get((word[0], length))
            if bucket is None:
                continue
            for name, distance, position in process.extract(
                word, bucket[0], scorer=OSA.distance, score_cutoff=limit, limit=None
            ):
                best.append((int(distance), name, bucket[1][position]))
        if not best:
            return None
        best.sort()
        top = [item for item in best if item[0] == best[0][0]]
        if len({index for _, _, index in top}) > 1:
            return None
        return top[0][1], top[0][2]


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
        guarded_names: dict[str, Sequence[str]] | None = None,
        known_words: Iterable[str] | None = None,
    ) -> None:
        """
        Args:
            entities: the entities; later duplicates of a canonical name are merged.
            case_sensitive_names: per canonical name, names matched only as written
                (gene symbols). All other names match case-insensitively.
            stop_names: names never matched (common words, excipients); salt and form
                words (``SALT_FORMS``) never match on their own either.
            sources: where the data came from, for ``describe()``.
            guarded_names: per canonical name, names matched only as written and only
                inside a mixed-case sentence (gene symbols that are English words).
            known_words: words that are not typos of drug names; the shipped list
                (``KNOWN_WORDS``) when None.
        """
        self.sources = tuple(sources)
        self._case_sensitive_names = dict(case_sensitive_names or {})
        self._guarded_names = dict(guarded_names or {})
        self._stop_names = tuple(stop_names)
        self._entities: list[Entity] = []
        self._by_canonical: dict[str, int] = {}
        for entity in entities:
            self._add_entity(entity)
        stop = {match_key(name) for name in self._stop_names}
        stop |= {match_key(form) for form in SALT_FORMS}
        self._stop_keys = frozenset(stop)
        sensitive_map = {key.lower(): set(v) for key, v in (case_sensitive_names or {}).items()}
        guarded_map = {key.lower(): set(v) for key, v in (guarded_names or {}).items()}
        names = _Names()
        unguarded: set[str] = set()
        for index, entity in enumerate(self._entities):
            exact = sensitive_map.get(entity.canonical.lower(), set())
            guarded = guarded_map.get(entity.canonical.lower(), set())
            for name in (entity.canonical, *entity.aliases):
                name = name.strip()
                if not name:
                    continue
                if name in exact or name in guarded:
                    key = match_key(name, casefold=False)
                    names.sensitive.setdefault(key, []).append(index)
                    (names.guarded if name in guarded else unguarded).add(key)
                else:
                    key = match_key(name)
                    if key and key not in stop:
                        names.insensitive.setdefault(key, []).append(index)
        names.guarded -= unguarded
        self._insensitive = self._build_automaton(names.insensitive, set())
        self._sensitive = self._build_automaton(names.sensitive, names.guarded)
        self._name_index: dict[str, int] = {}
        for key, ids in names.insensitive.items():
            self._name_index[key] = self._ranked(ids)[0]
        for key, ids in names.sensitive.items():
            self._name_index.setdefault(key.casefold(), self._ranked(ids)[0])
        self._known_words = None if known_words is None else frozenset(map(fold, known_words))
        self._typo_index: _TypoIndex | None = None
        self._cache: OrderedDict[tuple[str, bool], tuple[EntityMatch, ...]] = OrderedDict()

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

    def _ranked(self, indexes: Sequence[int]) -> list[int]:
        if len(indexes) == 1:
            return [indexes[0]]
        return sorted(set(indexes), key=self._priority)

    def _build_automaton(
        self, names: dict[str, list[int]], guarded: set[str]
    ) -> ahocorasick.Automaton | None:
        if not names:
            return None
        automaton = ahocorasick.Automaton()
        for name, indexes in names.items():
            ranked = self._ranked(indexes)
            curated = self._priority(ranked[0])[0] == 0
            automaton.add_word(name, (len(name), tuple(ranked), curated, name in guarded))
        automaton.make_automaton()
        return automaton

    def _priority(self, index: int) -> tuple[int, int, int]:
        entity = self._entities[index]
        curated = 0 if (entity.related_drugs or entity.pathways) else 1
        return (curated, _TYPE_PRIORITY.get(entity.semantic_type, 9), index)

    @classmethod
    def load(cls, path: str | Path | None = None) -> Vocabulary:
        """Load a vocabulary file (JSON lines, optionally gzipped); the shipped one when
        ``path`` is None (R-VOC-4).

        File format: a header object ``{"format": "biomed-vocabulary", "version": 1,
        "sources": [...], "stop_names": [...]}`` then one object per entity with keys
        ``c`` (canonical), ``t`` (type), ``a`` (aliases), ``cs`` (names matched exactly as
        written), ``g`` (guarded names: as written, inside a mixed-case sentence only),
        ``r`` (related drugs), ``p`` (pathways), ``cui``, ``s`` (SMILES).

        Raises:
            FileNotFoundError: the file does not exist.
            ValueError: the header is missing or of another format.
        """
        file_path = Path(path) if path is not None else SHIPPED_VOCABULARY
        opener = gzip.open if file_path.suffix == ".gz" else open
        entities: list[Entity] = []
        sensitive: dict[str, list[str]] = {}
        guarded: dict[str, list[str]] = {}
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
                if row.get("g"):
                    guarded.setdefault(entity.canonical.lower(), []).extend(row["g"])
        return cls(
            entities,
            case_sensitive_names=sensitive,
            stop_names=header.get("stop_names", ()),
            sources=header.get("sources", ()),
            guarded_names=guarded,
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
            semantic_type = types.get(cui) or _infer_type(canonical)
            aliases = tuple(s for s in strings if s != canonical)
            entities.append(
                Entity(canonical=canonical, semantic_type=semantic_type, aliases=aliases, cui=cui)
            )
        if base is not None:
            entities = [*base.entities, *entities]
        sources = (*(base.sources if base else ()), f"UMLS MRCONSO ({mrconso.name})")
        return cls(
            entities,
            case_sensitive_names=base._case_sensitive_names if base else None,
            stop_names=base._stop_names if base else (),
            sources=sources,
            guarded_names=base._guarded_names if base else None,
        )

    # -- queries ------------------------------------------------------------------------

    @property
    def entities(self) -> tuple[Entity, ...]:
        return tuple(self._entities)

    def __len__(self) -> int:
        return len(self._entities)

    def get(self, name: str) -> Entity | None:
        """The entity whose canonical name or alias is ``name`` (case-insensitive, A-6
        normalised); a salt name not listed resolves to its parent (``sunitinib
        malate`` -> sunitinib)."""
        index = self._by_canonical.get(name.lower())
        if index is None:
            index = self._name_index.get(match_key(name))
        if index is None:
            parent = strip_salt(name)
            if parent != name.strip():
                return self.get(parent)
        return None if index is None else self._entities[index]

    def find(self, text: str, correct_typos: bool | None = None) -> list[EntityMatch]:
        """All entity hits in ``text``, non-overlapping (leftmost-longest), in text order.

        Letter-boundary rule (R-VOC-1) on the A-6 match key, so ``EGFR`` is not found in
        ``VEGFR``, ``VEGFR`` is found in ``VEGFR1-3`` and ``TNF-alpha`` in ``TNFα``. A
        drug's salt words belong to its match (A-6). Then, for words no name covers: a
        drug name within edit distance (``correct_typos``; by default only in texts of
        at most ``TYPO_MAX_CHARS`` characters, i.e. queries, not documents), and
        out-of-vocabulary words with a drug suffix of at least seven letters (R-VOC-2).
        """
        if not text:
            return []
        if correct_typos is None:
            correct_typos = len(text) <= TYPO_MAX_CHARS
        cache_key = (text, correct_typos)
        cached = self._cache.get(cache_key) if len(text) <= 4 * TYPO_MAX_CHARS else None
        if cached is not None:
            return list(cached)
        sensitive_key, insensitive_key = keyed(text)
        candidates: list[tuple[int, int, tuple[int, ...], bool, int]] = []
        for automaton, keyed_text in (
            (self._insensitive, insensitive_key),
            (self._sensitive, sensitive_key),
        ):
            if automaton is not None:
                candidates.extend(self._automaton_hits(automaton, keyed_text))
        # Leftmost first; at one start a curated entity (with relations) beats a longer
        # plain name (VEGFR, not the HGNC alias VEGFR1, in "VEGFR1-3"), else longest, and
        # at one span the type order (drug, gene, disease, pathway, class, other): the
        # gene TNF, not the MeSH protein row, for "TNF-alpha".
        candidates.sort(
            key=lambda item: (item[0], not item[3], -item[4], self._priority(item[2][0])[1:])
        )
        matches: list[EntityMatch] = []
        covered_until = -1
        for start, end, indexes, _curated, _length in candidates:
            if start < covered_until:
                continue
            matches.append(EntityMatch(self._entities[indexes[0]], start, end, text[start:end]))
            covered_until = end
        matches = self._with_salt_words(text, matches)
        if correct_typos:
            matches.extend(self._typo_matches(text, matches))
        matches.extend(self._suffix_matches(text, matches))
        matches.sort(key=lambda match: match.start)
        if len(text) <= 4 * TYPO_MAX_CHARS:
            self._cache[cache_key] = tuple(matches)
            if len(self._cache) > 4096:
                self._cache.popitem(last=False)
        return matches

    def _automaton_hits(
        self, automaton: ahocorasick.Automaton, keyed_text: KeyedText
    ) -> Iterator[tuple[int, int, tuple[int, ...], bool, int]]:
        key = keyed_text.key
        size = len(key)
        text = keyed_text.text
        for end_index, (length, indexes, curated, guarded) in automaton.iter(key):
            start = end_index - length + 1
            end = end_index + 1
            if start > 0 and (
                key[start - 1].isalpha() or (key[start].isdigit() and key[start - 1].isdigit())
            ):
                continue
            if end < size and (
                key[end].isalpha() or (key[end - 1].isdigit() and key[end].isdigit())
            ):
                continue
            source_start, source_end = keyed_text.span(start, end)
            # R-VOC-1 on the text as written: a name ending in a digit is not followed by a
            # letter (``CD1`` is not in ``CD1a``), one starting with a digit not preceded
            # by one; a Greek letter is a separator (``IL-1`` in ``IL-1β``).
            if key[end - 1].isdigit() and _is_latin_letter(text, source_end):
                continue
            if key[start].isdigit() and _is_latin_letter(text, source_start - 1):
                continue
            surface = text[source_start:source_end]
            if surface in _SURFACE_STOPS:
                continue
            if guarded and not _mixed_case_sentence(text, source_start, source_end):
                continue
            yield source_start, source_end, indexes, curated, length

    @staticmethod
    def _with_salt_words(text: str, matches: list[EntityMatch]) -> list[EntityMatch]:
        """A drug match absorbs the salt / form words right after it (A-6), and any match
        inside them is dropped: ``imatinib mesylate`` is one imatinib."""
        result: list[EntityMatch] = []
        covered_until = -1
        for match in matches:
            if match.start < covered_until:
                continue
            if match.entity.is_drug:
                tail = _SALT_TAIL_RE.match(text, match.end)
                if tail:
                    match = EntityMatch(
                        match.entity, match.start, tail.end(), text[match.start : tail.end()]
                    )
            result.append(match)
            covered_until = match.end
        return result

    def _typo_matches(self, text: str, known: list[EntityMatch]) -> Iterator[EntityMatch]:
        spans = [(match.start, match.end) for match in known]
        for word in _TYPO_WORD_RE.finditer(text):
            if any(start < word.end() and word.start() < end for start, end in spans):
                continue
            found = self.correct(word.group(0))
            if found is None:
                continue
            name, entity = found
            yield EntityMatch(entity, word.start(), word.end(), word.group(0), correction=name)

    def correct(self, word: str) -> tuple[str, Entity] | None:
        """The drug ``word`` is a misspelling of (A-6): ``(name, entity)`` for the one drug
        name or brand within edit distance 1 (6-9 letters) or 2 (10+ letters), compared
        with names of the same first letter; None for short words, known words
        (``KNOWN_WORDS``), vocabulary names, stop names (``magnesium`` is not a misspelt
        ``magnésium``), or two drugs equally close."""
        folded = fold(word)
        if len(folded) < _MIN_TYPO_WORD or not folded.isalpha():
            return None
        key = match_key(folded)
        if folded in self._known() or key in self._name_index or key in self._stop_keys:
            return None
        found = self._typos().lookup(folded)
        if found is None:
            return None
        name, index = found
        entity = self._entities[index]
        spelled = next(
            (n for n in (entity.canonical, *entity.aliases) if match_key(n) == name), name
        )
        return spelled, entity

    def _known(self) -> frozenset[str]:
        if self._known_words is None:
            self._known_words = _shipped_known_words()
        return self._known_words

    def _typos(self) -> _TypoIndex:
        if self._typo_index is None:
            targets: dict[str, int] = {}
            for key, index in self._name_index.items():
                entity = self._entities[index]
                if (
                    entity.is_drug
                    and key.isalpha()
                    and len(key) >= _MIN_TYPO_WORD - 1
                    and key not in self._known()
                ):
                    targets.setdefault(key, index)
            self._typo_index = _TypoIndex(targets)
        return self._typo_index

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

    def match_entities(self, text: str, correct_typos: bool | None = None) -> list[Entity]:
        """Entities in order of first appearance, each once (R-VOC-3); ``correct_typos``
        as in ``find``."""
        seen: set[str] = set()
        result: list[Entity] = []
        for match in self.find(text, correct_typos):
            key = match.entity.canonical.lower()
            if key not in seen:
                seen.add(key)
                result.append(match.entity)
        return result

    def match_drug_entities(self, text: str, correct_typos: bool | None = None) -> list[str]:
        """Canonical drug names in order of appearance, de-duplicated (R-VOC-3). A brand
        name yields its active substance (``Tagrisso`` -> ``osimertinib``), a salt name
        its active moiety (``Glivec``, ``imatinib mesylate`` -> ``imatinib``), a misspelt
        drug the drug it was read as (A-6; ``correct_typos`` as in ``find``)."""
        return [
            entity.canonical
            for entity in self.match_entities(text, correct_typos)
            if entity.is_drug
            or (entity.semantic_type == "other" and has_drug_suffix(entity.canonical))
        ]

    def corrections(self, text: str) -> list[str]:
        """The typo corrections made in ``text`` (A-6), as ``"surface→name"``."""
        return list(
            dict.fromkeys(
                f"{match.surface}\u2192{match.correction}"
                for match in self.find(text)
                if match.correction
            )
        )

    def clear_cache(self) -> None:
        """Forget the cached matches of recent texts (``find`` keeps the last 4096 short
        texts: one request matches its query in several stages)."""
        self._cache.clear()

    def describe(self) -> dict[str, Any]:
        """Counts per semantic type and the data sources."""
        counts: dict[str, int] = {}
        for entity in self._entities:
            counts[entity.semantic_type] = counts.get(entity.semantic_type, 0) + 1
        return {"entities": len(self._entities), "by_type": counts, "sources": list(self.sources)}


@lru_cache(maxsize=1)
def _shipped_known_words() -> frozenset[str]:
    if not KNOWN_WORDS.exists():
        return frozenset()
    with gzip.open(KNOWN_WORDS, "rt", encoding="utf-8") as handle:
        return frozenset(line.strip() for line in handle if line.strip())


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
