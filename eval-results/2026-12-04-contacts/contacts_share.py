"""How many top-5 chunks of the drug-KB dev questions are lists of local representatives
(A-9): ``PYTHONPATH=. DD=<data dir> python eval-results/2026-12-04-contacts/contacts_share.py``
(kb ``drug-kb``, in process, threshold 0). A chunk counts when it is a ``contacts`` chunk
or holds two or more phone labels ("Tel:", "Tlf") or the QRD sentence that opens the list.
"""

import json
import os
import re
from pathlib import Path

from deployments.config import load_config
from deployments.query_cli import search_in_process

PHONE_LIST = re.compile(
    r"\bT[eé]l\.?:|\bTlf|please contact the local representative", re.IGNORECASE
)


def main() -> None:
    config = load_config("default", os.environ.get("CFG") or None, data_dir=os.environ["DD"])
    questions = [
        json.loads(line)["query"]
        for name in ("drug_kb_dev", "drug_kb_dev_more")
        for line in Path(f"../shared/data/{name}.jsonl").read_text().splitlines()
        if line.strip()
    ]
    chunks = lists = questions_with = 0
    for question in questions:
        request = {
            "query": question,
            "page_size": 5,
            "similarity_threshold": 0.0,
            "kb_ids": ["drug-kb"],
        }
        top = search_in_process(config, request)["chunks"][:5]
        found = sum(
            1
            for chunk in top
            if chunk.get("biomed_section") == "contacts"
            or len(PHONE_LIST.findall(chunk["content"])) >= 2
        )
        chunks += len(top)
        lists += found
        questions_with += found > 0
    print(
        f"{os.environ['DD']}: {lists} of {chunks} top-5 chunks are contact lists; "
        f"{questions_with} of {len(questions)} questions have one"
    )


if __name__ == "__main__":
    main()
