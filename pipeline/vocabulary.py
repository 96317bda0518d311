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
- a word of four or more letters that matches nothing is looked up by edit distance among
  drug names and brands (``osimertinb`` -> ``osimertinib``); the match carries the
  correction (``EntityMatch.correction``), and ``corrected`` writes the text as read;
- words the vocabulary lacks but that carry a drug suffix are matched as drugs (R-VOC-2).

The shipped vocabulary (``configs/vocabulary/biomed_vocabulary.jsonl.gz``) is built by
``scripts/build_vocabulary.py``, which writes down the filters applied to the sources;
``Vocabulary.from_mrconso`` reads a licensed UMLS ``MRCONSO.RRF`` instead (R-VOC-4).

The rules live in helper modules, re-exported here: ``pipeline.vocabulary_rules`` (stop
lists, name filters, salt stripping, drug suffixes), ``pipeline.vocabulary_entities``
(``Entity``, ``EntityMatch``, merging), ``pipeline.vocabulary_loader`` (the shipped file,
MRCONSO / MRSTY, known words), ``pipeline.vocabulary_matching`` (automata and hit rules)
and ``pipeline.vocabulary_typos`` (the edit-distance look-up).
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from pipeline.context_drugs import without_context_drugs
from pipeline.text import fold, keyed, match_key
from pipeline.vocabulary_entities import Entity, EntityMatch, content_fingerprint, merge_entities
from pipeline.vocabulary_loader import (
    KNOWN_WORDS,
    SHIPPED_VOCABULARY,
    read_mrconso,
    read_vocabulary_file,
    shipped_known_words,
)
from pipeline.vocabulary_matching import (
    MATCH_RULES_VERSION,
    AutomatonHit,
    automaton_hits,
    build_automaton,
    collect_names,
    suffix_matches,
    with_salt_words,
    without_modifier_drugs,
    without_negated_classes,
)
from pipeline.vocabulary_rules import (
    CAPITALISED_WORDS,
    CLINICAL_ABBREVIATIONS,
    DRUG_SUFFIXES,
    SALT_FORMS,
    has_drug_suffix,
    name_filter_reason,
    strip_salt,
)
from pipeline.vocabulary_typos import (
    SHORT_TYPO_WORD,
    TYPO_MAX_CHARS,
    TypoIndex,
    corrected_text,
    is_abbreviation_like,
    rare_keys,
    typo_index,
    typo_matches,
    typo_targets,
)

__all__ = [
    "CAPITALISED_WORDS",
    "CLINICAL_ABBREVIATIONS",
    "DRUG_SUFFIXES",
    "KNOWN_WORDS",
    "SALT_FORMS",
    "SHIPPED_VOCABULARY",
    "TYPO_MAX_CHARS",
    "Entity",
    "EntityMatch",
    "Vocabulary",
    "default_vocabulary",
    "has_drug_suffix",
    "name_filter_reason",
    "strip_salt",
]

_TYPE_PRIORITY = {"drug": 0, "gene": 1, "disease": 2, "pathway": 3, "class": 4}


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
        rare_names: dict[str, Sequence[str]] | None = None,
    ) -> None:
        """Args:
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
            rare_names: per canonical name, names matched as any other but never read as
                a misspelt word (A-6): synonyms no stored label sells under and no
                English text uses (``mapox``, an aciclovir brand, is not ``mpox``).
        """
        self.sources = tuple(sources)
        self._case_sensitive_names = dict(case_sensitive_names or {})
        self._guarded_names = dict(guarded_names or {})
        self._rare_names = dict(rare_names or {})
        self._stop_names = tuple(stop_names)
        self._name_tables: dict[str, Any] = {  # for a vocabulary built on this one
            "case_sensitive_names": self._case_sensitive_names, "stop_names": self._stop_names,
            "guarded_names": self._guarded_names, "rare_names": self._rare_names,
        }
        self._entities: list[Entity] = []
        self._by_canonical: dict[str, int] = {}
        for entity in entities:
            self._add_entity(entity)
        stop = {match_key(name) for name in self._stop_names}
        stop |= {match_key(form) for form in SALT_FORMS}
        self._stop_keys = frozenset(stop)
        names = collect_names(self._entities, case_sensitive_names, guarded_names, stop)
        self._insensitive = build_automaton(names.insensitive, set(), self._ranked, self._priority)
        self._sensitive = build_automaton(
            names.sensitive, names.guarded, self._ranked, self._priority
        )
        self._name_index: dict[str, int] = {}
        for key, ids in names.insensitive.items():
            self._name_index[key] = self._ranked(ids)[0]
        for key, ids in names.sensitive.items():
            self._name_index.setdefault(key.casefold(), self._ranked(ids)[0])
        self._known_words = None if known_words is None else frozenset(map(fold, known_words))
        self._typo_index: TypoIndex | None = None
        self._cache: OrderedDict[tuple[str, bool, bool], tuple[EntityMatch, ...]] = OrderedDict()

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
                self._entities[index] = merge_entities(existing, entity)
                return
            key = f"{key}|{entity.semantic_type}"
            if key in self._by_canonical:
                index = self._by_canonical[key]
                self._entities[index] = merge_entities(self._entities[index], entity)
                return
        self._by_canonical[key] = len(self._entities)
        self._entities.append(entity)

    def _ranked(self, indexes: Sequence[int]) -> list[int]:
        if len(indexes) == 1:
            return [indexes[0]]
        return sorted(set(indexes), key=self._priority)

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
        ``c`` (canonical), ``t`` (type), ``a`` (aliases), ``cs`` (names matched as written),
        ``g`` (guarded: as written, in a mixed-case sentence only), ``nt`` (``rare_names``),
        ``r`` (related drugs), ``p`` (pathways), ``cui``, ``s`` (SMILES), ``l`` (lay names).

        Raises:
            FileNotFoundError: the file does not exist.
            ValueError: the header is missing or of another format.
        """
        data = read_vocabulary_file(path)
        return cls(data.entities, sources=data.sources, **data.name_tables())

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
        entities = [*(base.entities if base else ()), *read_mrconso(mrconso, mrsty_path)]
        sources = (*(base.sources if base else ()), f"UMLS MRCONSO ({mrconso.name})")
        return cls(entities, sources=sources, **(base._name_tables if base else {}))

    # -- queries ------------------------------------------------------------------------

    @property
    def entities(self) -> tuple[Entity, ...]:
        """Every entity, in the order first added (rows of one entity already merged)."""
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

    def find(
        self, text: str, correct_typos: bool | None = None, keep_context: bool = False
    ) -> list[EntityMatch]:
        """All entity hits in ``text``, non-overlapping (leftmost-longest), in text order.

        Letter-boundary rule (R-VOC-1) on the A-6 match key, so ``EGFR`` is not found in
        ``VEGFR``, ``VEGFR`` is found in ``VEGFR1-3`` and ``TNF-alpha`` in ``TNFα``. A
        drug's salt words belong to its match (A-6). Then, for words no name covers: a
        drug name within edit distance (``correct_typos``; by default only in texts of
        at most ``TYPO_MAX_CHARS`` characters, i.e. queries, not documents), and
        out-of-vocabulary words with a drug suffix of at least seven letters (R-VOC-2).
        Dropped: a drug name that qualifies the next word ("somatostatin analogue", A-17);
        in a question (``correct_typos`` not False; a stored text is read as written) a
        medicine named as what failed ("Zyrtec isn't working", A-29) unless ``keep_context``."""
        if not text:
            return []
        question = correct_typos is not False and not keep_context
        correct_typos = len(text) <= TYPO_MAX_CHARS if correct_typos is None else correct_typos
        cache_key = (text, correct_typos, question)
        cached = self._cache.get(cache_key) if len(text) <= 4 * TYPO_MAX_CHARS else None
        if cached is not None:
            return list(cached)
        sensitive_key, insensitive_key = keyed(text)
        candidates: list[AutomatonHit] = []
        for automaton, keyed_text in ((self._insensitive, insensitive_key),
                                      (self._sensitive, sensitive_key)):
            if automaton is not None:
                candidates.extend(automaton_hits(automaton, keyed_text))
        # Leftmost first; at one start a curated target beats a longer plain name (VEGFR,
        # not the HGNC alias VEGFR1, in "VEGFR1-3"; a curated drug does not: "trastuzumab
        # deruxtecan"), else longest; at one span the type order (drug, gene, disease,
        # pathway, class, other): the gene TNF, not the MeSH protein row, for "TNF-alpha".
        candidates.sort(key=lambda item: (
            item[0], not (item[3] and not self._entities[item[2][0]].is_drug), -item[4],
            self._priority(item[2][0])[1:]))
        matches: list[EntityMatch] = []
        covered_until = -1
        for start, end, indexes, _curated, _length in candidates:
            if start < covered_until:
                continue
            matches.append(EntityMatch(self._entities[indexes[0]], start, end, text[start:end]))
            covered_until = end
        matches = with_salt_words(text, matches)
        if correct_typos:
            matches.extend(typo_matches(text, matches, self.correct))
        matches.extend(suffix_matches(text, matches, self.get))
        matches = without_negated_classes(text, without_modifier_drugs(text, matches))
        matches = sorted(matches, key=lambda m: m.start)
        matches = without_context_drugs(text, matches) if question else matches
        if len(text) <= 4 * TYPO_MAX_CHARS:
            self._cache[cache_key] = tuple(matches)
            if len(self._cache) > 4096:
                self._cache.popitem(last=False)
        return matches

    def correct(self, word: str) -> tuple[str, Entity] | None:
        """The drug ``word`` is a misspelling of (A-6): ``(name, entity)`` for the one drug
        name or brand within edit distance 1 (4-9 letters) or 2 (10+) of the same first
        letter or a sound-alike; None for shorter words, shorthand, known words,
        vocabulary or stop names (``magnesium`` is not a misspelt ``magnésium``), or two
        drugs equally close (``pipeline.vocabulary_typos``)."""
        folded = fold(word)
        if len(folded) < SHORT_TYPO_WORD or not folded.isalpha() or is_abbreviation_like(word):
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
            self._known_words = shipped_known_words()
        return self._known_words

    def _typos(self) -> TypoIndex:
        if self._typo_index is None:
            rare = rare_keys(self._rare_names, self._name_index, self._entities, match_key)
            targets = typo_targets(self._name_index, self._entities, self._known(), rare)
            self._typo_index = typo_index(targets, self._name_index, self._known(), self._stop_keys)
        return self._typo_index

    def match_entities(self, text: str, correct_typos: bool | None = None) -> list[Entity]:
        """Entities in order of first appearance, each once (R-VOC-3); ``correct_typos``
        as in ``find``."""
        first: dict[str, Entity] = {}
        for match in self.find(text, correct_typos):
            first.setdefault(match.entity.canonical.lower(), match.entity)
        return list(first.values())

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
        found = (f"{m.surface}\u2192{m.correction}" for m in self.find(text) if m.correction)
        return list(dict.fromkeys(found))

    def corrected(self, text: str) -> str:
        """``text`` with each misspelt drug name written as the name it was read as (A-6,
        A-12): ``"how should Stcrin be stored"`` -> ``"how should Stocrin be stored"``."""
        return corrected_text(text, self.find(text))

    def clear_cache(self) -> None:
        """Forget the cached matches of recent texts (``find`` keeps the last 4096 short
        texts: one request matches its query in several stages)."""
        self._cache.clear()

    @cached_property
    def fingerprint(self) -> str:
        """What this vocabulary finds and its matching rules' version, hashed (not the rare
        names nor known words: they change only a question's typo readings)."""
        tables = (self._case_sensitive_names, self._guarded_names, sorted(set(self._stop_names)))
        return content_fingerprint(self._entities, *tables, MATCH_RULES_VERSION)

    def describe(self) -> dict[str, Any]:
        """Counts per semantic type and the data sources."""
        counts = dict(Counter(entity.semantic_type for entity in self._entities))
        return {"entities": len(self._entities), "by_type": counts, "sources": list(self.sources)}


@lru_cache(maxsize=4)
def default_vocabulary(path: str | None = None) -> Vocabulary:
    """The shipped vocabulary (or ``path``), loaded once per process."""
    return Vocabulary.load(path)
