import sys,json
from pipeline.vocabulary import default_vocabulary
from pipeline.overdose import glossed_overdoses
from pipeline.reversal import asks_for_reversal, reversal_query
from pipeline.intent import detect_retrieval_intent
v=default_vocabulary()
qs=[json.loads(l) for l in open(sys.argv[1])]
want=set(sys.argv[2:])
for r in qs:
    if want and r['id'] not in want: continue
    q=r['query']; g=glossed_overdoses(q,v)
    it=detect_retrieval_intent(g,v)
    print(r['id'], r['expected_doc_name_substrings'][:3]); print('  ',g)
    print('   rev',asks_for_reversal(g),'| wf',it.workflow,'| ents',[m.entity.canonical for m in v.find(g)],'| req',it.require_entity_match, '| short', reversal_query(g,v))
