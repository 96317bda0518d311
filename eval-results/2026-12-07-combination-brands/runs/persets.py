import json,sys
from collections import defaultdict
def load(d):
    run=json.load(open(d+'/drug-kb-fp32.json')); return {r['query_id']:r for r in run['rows'] if r['ablation']=='full'}
a=load(sys.argv[1]); b=load(sys.argv[2])
sets=defaultdict(list)
for i in a:
    if i in b: sets[i.split(':')[0]].append(i)
def st(rows, ids, key):
    h=sum((rows[i][key] or 99)<=5 for i in ids)/len(ids)
    m=sum(1/rows[i][key] for i in ids if rows[i][key] and rows[i][key]<=10)/len(ids)
    return f"{h:.3f} / {m:.3f}"
for s,ids in sorted(sets.items()):
    rows=[]
    for key in ('first_name_rank','first_relevant_rank'):
        x,y=st(a,ids,key),st(b,ids,key)
        rows.append((x,y))
    if any(x!=y for x,y in rows):
        print(f"{s:14s} {len(ids):4d}  name {rows[0][0]} -> {rows[0][1]}   section {rows[1][0]} -> {rows[1][1]}")
