import json,sys
d=json.load(open(sys.argv[1]))
rows=[r for r in d['rows'] if r['ablation']=='full']
def mrr(rk): return 1/rk if rk and rk<=10 else 0
print('n',len(rows),'err',sum(1 for r in rows if r.get('error')))
print('name mrr %.3f  sec mrr %.3f' % (sum(mrr(r['first_name_rank']) for r in rows)/len(rows), sum(mrr(r['first_relevant_rank']) for r in rows)/len(rows)))
for r in rows:
  if r['first_relevant_rank']!=1 or r['first_name_rank']!=1:
    print(r['query_id'], 'sec',r['first_relevant_rank'],'name',r['first_name_rank'], r['query'][:80])
