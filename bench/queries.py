"""Query mixes for the load benchmarks: real query sets (the drug KB dev set, NFCorpus
test queries), drawn with a fixed seed, optionally made unique per request.

The service caches query embeddings per (role, text) in the ingress, so a benchmark
that repeats a query measures the cache, not the model. :class:`QueryMix` can append a
request-unique suffix made only of stop words (``pipeline.text.STOP_WORDS``): the
dense text differs per request (a cache miss, a real forward pass), while the query's
terms (intent, routing, sparse scores, minimum-should-match) stay the same.

The default paths point at the shared data folder beside the repository; they are
benchmark defaults only (every path is an argument) and the product never reads them.
"""

from __future__ import annotations

import csv
import gzip
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import REPOSITORY
from pipeline.text import STOP_WORDS

__all__ = [
    "DEFAULT_PASSAGES",
    "DEFAULT_QUERY_SETS",
    "DEFAULT_SMILES",
    "SUFFIX_WORDS",
    "QueryMix",
    "QuerySet",
    "load_passages",
    "load_query_set",
    "load_smiles",
    "unique_suffix",
]

SHARED_DATA = REPOSITORY.parent / "shared" / "data"
DEFAULT_QUERY_SETS: tuple[Path, ...] = (
    SHARED_DATA / "drug_kb_dev.jsonl",
    SHARED_DATA / "nfcorpus" / "queries.test.jsonl",
)
DEFAULT_PASSAGES = SHARED_DATA / "drug_labels" / "ema_leaflet_sections.jsonl"
DEFAULT_SMILES = SHARED_DATA / "compounds" / "chembl_approved_drugs.csv"

#: Stop words that spell a request number in base ``len(SUFFIX_WORDS)``.
SUFFIX_WORDS: tuple[str, ...] = ("the", "a", "of", "and", "to", "in", "for", "with")
if not set(SUFFIX_WORDS) <= STOP_WORDS:  # pragma: no cover - guards a vocabulary change
    raise RuntimeError("SUFFIX_WORDS must be stop words, or suffixes would change query terms")

#: JSONL fields that hold the query text, in order of preference.
QUERY_FIELDS = ("query", "text", "question")


@dataclass(frozen=True)
class QuerySet:
    """The queries of one file."""

    name: str
    queries: tuple[str, ...]


def load_query_set(path: Path, limit: int | None = None) -> QuerySet:
    """Queries of a JSONL file (field ``query``, else ``text``, else ``question``).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file holds no query.
    """
    queries: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            text = next((str(record[f]) for f in QUERY_FIELDS if record.get(f)), "").strip()
            if text:
                queries.append(text)
            if limit is not None and len(queries) >= limit:
                break
    if not queries:
        raise ValueError(f"{path}: no query in fields {', '.join(QUERY_FIELDS)}")
    return QuerySet(name=path.stem, queries=tuple(queries))


def unique_suffix(number: int) -> str:
    """Request number ``number`` spelled in stop words (``0`` -> ``"the"``)."""
    base = len(SUFFIX_WORDS)
    words = [SUFFIX_WORDS[number % base]]
    number //= base
    while number:
        words.append(SUFFIX_WORDS[number % base])
        number //= base
    return " ".join(words)


class QueryMix:
    """Queries drawn with a fixed seed, each set with equal weight (so a small set, such
    as the 26 drug KB queries, is not drowned by a large one).

    Args:
        sets: the query sets.
        seed: random seed of the draw.
        unique: append a request-unique stop-word suffix (see the module docstring).
        offset: first request number of the suffixes (runs that must not share cache
            entries with an earlier run against the same service use distinct offsets).
    """

    def __init__(
        self, sets: Sequence[QuerySet], seed: int = 0, unique: bool = True, offset: int = 0
    ) -> None:
        if not sets or not all(s.queries for s in sets):
            raise ValueError("QueryMix needs at least one non-empty query set")
        self.sets = list(sets)
        self.unique = unique
        self.random = random.Random(seed)
        self.count = offset

    @classmethod
    def from_paths(
        cls, paths: Sequence[Path], seed: int = 0, unique: bool = True, offset: int = 0
    ) -> QueryMix:
        """A mix of the query sets in ``paths``."""
        return cls([load_query_set(path) for path in paths], seed, unique, offset)

    def next(self) -> str:
        """The next query of the mix."""
        chosen = self.random.choice(self.sets)
        query = self.random.choice(chosen.queries)
        number = self.count
        self.count += 1
        return f"{query} {unique_suffix(number)}" if self.unique else query

    def take(self, count: int) -> list[str]:
        """The next ``count`` queries."""
        return [self.next() for _ in range(count)]

    def describe(self) -> dict[str, object]:
        """What the mix holds, for the report."""
        return {
            "sets": {s.name: len(s.queries) for s in self.sets},
            "weighting": "each set equally",
            "unique_suffix": (
                "request-unique stop-word suffix (defeats the ingress's (role, text) "
                "embedding cache; query terms unchanged)"
                if self.unique
                else "none (repeated queries may be served from the embedding cache)"
            ),
        }


def load_passages(path: Path, count: int, seed: int = 0) -> list[str]:
    """``count`` distinct non-empty ``text`` fields of a JSONL file (``.gz`` allowed),
    sampled with a fixed seed (all of them when the file holds fewer).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file holds no text.
    """
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        texts = list(dict.fromkeys(
            t for line in handle if line.strip() and (t := json.loads(line).get("text", ""))))
    if not texts:
        raise ValueError(f"{path}: no 'text' field")
    return random.Random(seed).sample(texts, min(count, len(texts)))


def load_smiles(path: Path, count: int, seed: int = 0) -> list[str]:
    """``count`` SMILES strings (column ``smiles``) of a CSV file (``.gz`` allowed).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file holds no SMILES.
    """
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        values = [row["smiles"] for row in csv.DictReader(handle) if row.get("smiles")]
    if not values:
        raise ValueError(f"{path}: no 'smiles' column values")
    return random.Random(seed).sample(values, min(count, len(values)))
