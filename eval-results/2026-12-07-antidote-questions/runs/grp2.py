import json,glob,sys
def load(d):
    out={}
    for f in glob.glob(d+'/drug-kb-*.json'):
        run=json.load(open(f))
        assert not any(r.get('error') for r in run['rows']), f
        out.update({r['query_id']:r for r in run['rows'] if r['ablation']=='full'})
    return out
a={};b={}
for d in sys.argv[1].split(','): a.update(load(d))
for d in sys.argv[2].split(','): b.update(load(d))
def st(rows, ids, key):
    h=sum((rows[i][key] or 99)<=5 for i in ids)/len(ids)
    m=sum(1/rows[i][key] for i in ids if rows[i][key] and rows[i][key]<=10)/len(ids)
    return f"{h:.3f} / {m:.3f}"
def setn(i): return i.split(':')[0]
def num(i): s=setn(i); return int(s[5:]) if s.startswith('probe') else 0
ids=[i for i in a if i in b]
s36=sorted(i for i in ids if num(i)<34 and setn(i) not in ('dev','dev_more'))
groups={'all':[i for i in ids if setn(i) not in ('dev','dev_more')],
 '36 sets':s36,'36 even':s36[0::2],'36 odd':s36[1::2],
 'probes34-42':[i for i in ids if 34<=num(i)<=42],
 'probe43':[i for i in ids if setn(i)=='probe43'],'probe44':[i for i in ids if setn(i)=='probe44'],'probe45':[i for i in ids if setn(i)=='probe45'],
 'dev':[i for i in ids if setn(i)=='dev'],'dev_more':[i for i in ids if setn(i)=='dev_more']}
for key in ('first_name_rank','first_relevant_rank'):
    print(key)
    for g,gi in groups.items():
        if not gi: continue
        up=sum(1 for i in gi if (b[i][key] or 99)<=5<(a[i][key] or 99)); dn=sum(1 for i in gi if (a[i][key] or 99)<=5<(b[i][key] or 99))
        print(f"  {g:12s} {len(gi):5d}  {st(a,gi,key)} -> {st(b,gi,key)}  (+{up} -{dn})")
