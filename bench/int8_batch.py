"""Does an int8 query vector depend on the texts batched with it? (bench/README.md, "int8
quality"). Each dev query is encoded alone, then first in one forward pass with 15 other
dev queries or 15 leaflet sections (no length sort, token caps lifted); prints the
cosine of the two vectors.

    python -m bench.int8_batch --data ../shared/data
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

import numpy as np

from deployments.config import load_config
from models.loader import load_encoder


def main() -> None:
    """Print, per company (queries / sections), the smallest and mean cosine."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--role", default="general-text")
    args = parser.parse_args()
    queries = [
        json.loads(line)["query"]
        for name in ("drug_kb_dev.jsonl", "drug_kb_dev_more.jsonl")
        for line in (args.data / name).open()
    ]
    with (args.data / "drug_labels/ema_leaflet_sections.jsonl").open() as handle:
        sections = [json.loads(line)["text"] for line, _ in zip(handle, range(200), strict=False)]
    with tempfile.TemporaryDirectory() as root:
        config = load_config("default", data_dir=Path(root))
        profile = config.models.model_copy(update={
            "runtime": "onnx-int8", "cpu_threads": 1, "sort_by_length": False,
            "cpu_max_tokens_per_forward": 65536, "max_tokens_per_forward": 65536})
        encoder = load_encoder(profile.spec(args.role), profile)
        for company_name, pool in (("queries", queries), ("sections", sections)):
            rng = random.Random(7)
            cosines = []
            for query in queries:
                company = rng.sample([text for text in pool if text != query], 15)
                alone = encoder.encode([query])[0]
                batched = encoder.encode([query, *company])[0]
                cosines.append(float(alone @ batched)
                               / float(np.linalg.norm(alone) * np.linalg.norm(batched)))
            values = np.asarray(cosines)
            print(f"{len(values)} queries with 15 {company_name}: cosine min "
                  f"{values.min():.8f}, mean {values.mean():.8f}")


if __name__ == "__main__":
    main()
