"""trace.py CFG DATA [-f QFILE id ...] | [query ...]: top 10 + stage decisions, in process."""
import asyncio, json, sys
from pathlib import Path
from deployments.config import load_config
from deployments.inprocess import in_process_service
from pipeline.schema import SearchRequest
from pipeline.retriever import Retriever
from biomed_search.evaluate import EVAL_BUDGETS

cfg, data, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
if rest and rest[0] == '-f':
    rows = {json.loads(l)['id']: json.loads(l) for l in open(rest[1])}
    qs = [(i, rows[i]['query'], rows[i].get('expected_doc_name_substrings')) for i in rest[2:]]
else:
    qs = [('q', q, None) for q in rest]

async def main():
    config = load_config('default', Path(cfg), data_dir=Path(data))
    async with in_process_service(config) as running:
        svc = running.service
        await svc.start()
        b = svc.retriever
        r = Retriever(config.pipeline.model_copy(update={'budgets': EVAL_BUDGETS}), b.ports, vocabulary=b.vocabulary)
        for i, q, exp in qs:
            resp = await r.search(SearchRequest(query=q, kb_ids=['drug-kb'], page_size=10))
            print('=' * 100); print(i, q, '| expect', exp)
            print('intent', resp.intent.model_dump(exclude_defaults=True))
            for t in resp.trace:
                if t.decisions: print('  ', t.name, t.items_in, '->', t.items_out, '|', '; '.join(t.decisions)[:600])
            for k, c in enumerate(resp.chunks, 1):
                print(f'  {k:2d} {c.similarity:.3f} {c.document_name[:40]:40s} {c.biomed_section[:22]:22s} {json.dumps({a: round(v, 3) for a, v in c.score_parts.model_dump().items() if isinstance(v, float) and v})[:150]}')
asyncio.run(main())
