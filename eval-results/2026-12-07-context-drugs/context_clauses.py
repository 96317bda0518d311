"""context_clauses.py QUERIES.jsonl ...: the questions in which A-29 reads a medicine or
class as what failed (pipeline.context_drugs). DROP: the name is no entity of the
question; SOLE: the question names nothing else and keeps it. Run from the repository
root with its .venv: .venv/bin/python eval-results/2026-12-07-context-drugs/context_clauses.py Q.jsonl"""
import json
import sys

sys.path.insert(0, ".")
from pipeline.context_drugs import CONTEXT_TYPES, _in_failure_clause  # noqa: E402
from pipeline.vocabulary import default_vocabulary  # noqa: E402

vocabulary = default_vocabulary()
for path in sys.argv[1:]:
    for line in open(path):
        question = json.loads(line)
        text = question.get("query") or question.get("text") or ""
        as_written = vocabulary.find(text, correct_typos=False)
        context = [
            m for m in as_written
            if m.entity.semantic_type in CONTEXT_TYPES and _in_failure_clause(text, m)
        ]
        if context:
            kind = "SOLE" if len(context) == len(as_written) else "DROP"
            print(kind, question.get("id", "?"), [m.surface for m in context], "|", text[:120])
