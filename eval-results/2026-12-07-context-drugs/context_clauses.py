"""context_clauses.py QUERIES.jsonl ...: the questions in which A-29 reads a medicine or
class as what failed (pipeline.context_drugs): names matched when the question is read as
written and not when it is read as a question. Run from the repository root with its
.venv: .venv/bin/python eval-results/2026-12-07-context-drugs/context_clauses.py Q.jsonl"""
import json
import sys

sys.path.insert(0, ".")
from pipeline.context_drugs import CONTEXT_TYPES  # noqa: E402
from pipeline.vocabulary import default_vocabulary  # noqa: E402

vocabulary = default_vocabulary()
for path in sys.argv[1:]:
    for line in open(path):
        question = json.loads(line)
        text = question.get("query") or question.get("text") or ""
        read = {(m.start, m.end) for m in vocabulary.find(text)}
        dropped = [
            m.surface
            for m in vocabulary.find(text, correct_typos=False)
            if m.entity.semantic_type in CONTEXT_TYPES and (m.start, m.end) not in read
        ]
        if dropped:
            print("DROP", question.get("id", "?"), dropped, "|", text[:120])
