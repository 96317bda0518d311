import json,sys
def load(d):
    run=json.load(open(d+'/drug-kb-fp32.json'))
    assert not any(r.get('error') for r in run['rows'])
    return {r['query_id']:r for r in run['rows'] if r['ablation']=='full'}
a=load(sys.argv[1]); b=load(sys.argv[2])
key=sys.argv[3] if len(sys.argv)>3 else 'first_name_rank'
up=dn=0
for i in a:
    if i not in b: continue
    x,y=a[i][key],b[i][key]
    if x!=y:
        better=(y or 99)<(x or 99); up+=better; dn+=not better
        print(('UP ' if better else 'DN ')+f"{i:28s} {x} -> {y}  {a[i]['query'][:90]}")
print('up',up,'down',dn)
