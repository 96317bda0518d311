"""trace2.py CFG DATA -f file ids: top 5 and every expected doc in the first 100, with parts."""
import asyncio, sys, json
from deployments.config import load_config
from deployments.inprocess import in_process_service
from pipeline.schema import SearchRequest
cfg, data, _, f, *ids = sys.argv[1:]
rows = [json.loads(l) for l in open(f)]
qs = [(r['query'], r.get('expected_doc_name_substrings', [])) for r in rows if not ids or r['id'] in ids]
async def main():
    config = load_config('default', cfg, data)
    async with in_process_service(config) as running:
        r = running.service.retriever
        for q, exp in qs:
            resp = await r.search(SearchRequest(query=q, kb_ids=['drug-kb'], page_size=100, similarity_threshold=0.0))
            print('\n###', q, exp, 'n', len(resp.chunks))
            for t in resp.trace:
                if t.name.startswith(('intent','tier2','plan')): print('   ', t.name, t.decisions[:8])
            for i, c in enumerate(resp.chunks, 1):
                mark = any(e in c.document_name.lower() for e in exp)
                if i <= 5 or mark:
                    p = c.score_parts
                    print(f"  {'*' if mark else ' '}{i:3d} {c.similarity:.3f} ce={p.ce and round(p.ce,3)} ent={p.entity} sec={p.section} first={p.first and round(p.first,3)} {c.document_name[:40]} [{c.biomed_section}] {c.content[:60]!r}")
asyncio.run(main())
