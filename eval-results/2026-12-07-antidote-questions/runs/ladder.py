import json,sys
d=json.load(open(sys.argv[1]))
abl=[]; 
for r in d['rows']:
    if r['ablation'] not in abl: abl.append(r['ablation'])
def st(rows,key):
    n=len(rows); h=sum((r[key] or 99)<=5 for r in rows)/n; m=sum(1/r[key] for r in rows if r[key] and r[key]<=10)/n
    return f"{h:.3f} / {m:.3f}"
print('errors', sum(1 for r in d['rows'] if r.get('error')))
for a in abl:
    out=[]
    for s in ('dev','dev_more'):
        rows=[r for r in d['rows'] if r['ablation']==a and r['query_id'].split(':')[0]==s]
        out.append(f"{st(rows,'first_relevant_rank')} ({st(rows,'first_name_rank')})")
    print(f"| {a} | {out[0]} | {out[1]} |")
