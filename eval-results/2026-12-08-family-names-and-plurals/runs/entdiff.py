import json,sys
from pipeline.vocabulary import Vocabulary
from pipeline.intent import detect_retrieval_intent
a=Vocabulary.load(sys.argv[1]); b=Vocabulary.load(sys.argv[2])
n=0
for f in sys.argv[3:]:
    for l in open(f):
        r=json.loads(l); q=r['query']
        ea=[e.canonical for e in a.match_entities(q)]; eb=[e.canonical for e in b.match_entities(q)]
        ia=detect_retrieval_intent(q,a); ib=detect_retrieval_intent(q,b)
        if ea!=eb or ia!=ib:
            n+=1; print(r['id'], '|', q[:90]); print('    ', ea, '->', eb)
            if ia!=ib: print('     intent', ia.model_dump(exclude_defaults=True), '->', ib.model_dump(exclude_defaults=True))
print('changed', n)
