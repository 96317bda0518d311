"""Entity matching speed on the full shipped vocabulary (issue 2 target: a 30-word query
well under 1 ms median).

Usage: ``python bench/vocabulary.py [--repeat 2000]``
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    start = time.perf_counter()
    vocabulary = Vocabulary.load()
    load_s = time.perf_counter() - start
    for _ in range(50):
        vocabulary.match_entities(QUERY)
    timings = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        vocabulary.match_entities(QUERY)
        timings.append((time.perf_counter() - start) * 1e3)
    timings.sort()
    print(f"vocabulary: {len(vocabulary)} entities, load {load_s:.2f} s")
    print(f"query: {len(QUERY.split())} words, {len(vocabulary.match_entities(QUERY))} entities")
    print(
        f"match_entities: median {statistics.median(timings):.4f} ms, "
        f"p99 {timings[int(len(timings) * 0.99) - 1]:.4f} ms over {args.repeat} runs"
    )


if __name__ == "__main__":
    main()
