"""List the questions A-30 glosses: `.venv/bin/python eval-results/2026-12-07-overdose-analytes/overdose_glosses.py Q.jsonl ...`
(run from the repository root; prints `id | question as searched`)."""

import json
import sys

sys.path.insert(0, ".")
from pipeline.overdose import glossed_overdoses  # noqa: E402
from pipeline.vocabulary import default_vocabulary  # noqa: E402

vocabulary = default_vocabulary()
for path in sys.argv[1:]:
    for line in open(path, encoding="utf-8"):
        question = json.loads(line)
        glossed = glossed_overdoses(question["query"], vocabulary)
        if glossed != question["query"]:
            print(question["id"], "|", glossed)
