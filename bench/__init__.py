"""Benchmarks of biomed-search (run from the repository root, e.g.
``python -m bench.load --url http://127.0.0.1:8000``; see bench/README.md)."""

from pathlib import Path

#: The repository checkout the benchmarks run from (results, profiles, ../shared/data).
REPOSITORY = Path(__file__).resolve().parents[1]
