"""leg_ranks.py DATADIR OUT.json QUERIES.jsonl CONFIG.yaml: per question that names no drug and cues only the
indications, the expected document's chunk rank in each leg's top 100, over every section and
within indications_and_usage (A-28's motivating measurement; run from the repository root)."""
import asyncio, json, sys
sys.path.insert(0, '.')
from deployments.config import load_config
from deployments.inprocess import in_process_service
from pipeline.expansion import expand
from pipeline.intent import detect_retrieval_intent
from pipeline.lexical import lexical_query_text

def rank(hits, subs):
    for i, h in enumerate(hits, 1):
        name = (h.get('entity', {}).get('metadata') or {}).get('document_name', '') or ''
        if any(s.lower() in name.lower() for s in subs):
            return i
    return None

async def main():
    config = load_config('default', sys.argv[4], data_dir=sys.argv[1])
    qs = [json.loads(l) for l in open(sys.argv[3])]
    out = []
    async with in_process_service(config) as running:
        await running.service.start()
        r = running.service.retriever
        store = r.plans.store; voc = r.vocabulary
        client = store._sync(); name = store.physical_name('biomed_text')
        for q in qs:
            i = detect_retrieval_intent(q['query'], voc)
            if i.workflow != 'general' or voc.match_drug_entities(q['query']):
                continue
            if 'indications_and_usage' not in i.section_cues:
                continue
            ex = expand(q['query'], 'pubmedbert', voc, i)
            vec = await r.embeddings.query_vector('pubmedbert', r.plans.dense_text('pubmedbert', ex))
            text = lexical_query_text(q['query'], voc, r.settings.lexical)
            row = {'id': q['id'], 'query': q['query']}
            for leg, data, field in (('dense', [vec.tolist()], 'dense'), ('bm25', [text], 'sparse')):
                for tag, flt in (('all', ''), ('ind', 'biomed_section == "indications_and_usage"')):
                    hits = client.search(name, data=data, anns_field=field, limit=100, filter=flt,
                                         output_fields=['metadata'])[0]
                    row[f'{leg}_{tag}'] = rank(hits, q['expected_doc_name_substrings'])
            out.append(row)
    json.dump(out, open(sys.argv[2], 'w'), indent=0)
asyncio.run(main())
