"""Entity matching speed on the full shipped vocabulary (issue 2 target: a 30-word query
well under 1 ms median; issue 13: a query with a misspelt drug, typo look-up included,
under 1 ms typical). The match cache is cleared before every timed call.

Usage: ``python -m bench.vocabulary [--repeat 2000]``
"""

from __future__ import annotations

import argparse
import statistics
import time

from pipeline.vocabulary import Vocabulary

QUERY = (
    "Does osimertinib or Tagrisso improve progression-free survival compared with gefitinib "
    "in EGFR T790M positive metastatic non-small cell lung cancer patients with brain "
    "metastases and what are the warnings for dosage"
)


TYPO_QUERY = "osimertinb rash and rivaroxiban bleeding in patients with atrial fibrillation"


def _time(vocabulary: Vocabulary, query: str, repeat: int) -> list[float]:
    for _ in range(50):
        vocabulary.clear_cache()
        vocabulary.match_entities(query)
    timings = []
    for _ in range(repeat):
        vocabulary.clear_cache()
        start = time.perf_counter()
        vocabulary.match_entities(query)
        timings.append((time.perf_counter() - start) * 1e3)
    timings.sort()
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    start = time.perf_counter()
    vocabulary = Vocabulary.load()
    load_s = time.perf_counter() - start
    print(f"vocabulary: {len(vocabulary)} entities, load {load_s:.2f} s")
    for name, query in (("query", QUERY), ("typo query", TYPO_QUERY)):
        timings = _time(vocabulary, query, args.repeat)
        print(
            f"{name}: {len(query.split())} words, {len(vocabulary.match_entities(query))} "
            f"entities, corrections {vocabulary.corrections(query)}"
        )
        print(
            f"  match_entities: median {statistics.median(timings):.4f} ms, "
            f"p99 {timings[int(len(timings) * 0.99) - 1]:.4f} ms over {args.repeat} runs"
        )


if __name__ == "__main__":
    main()
