"""split.py BEFORE_DIR AFTER_DIR OLD_CODE NEW_CODE: the questions whose rank changed between two
eval runs, split by whether the question itself reads differently (its gloss or the
entities found) under the two checkouts' vocabularies, or reads the same (then only the
re-ingested documents changed). Uses the python of ./.venv."""
import json, glob, sys, subprocess
def load(d):
    r = {}
    for f in glob.glob(d + '/*/*.json'):
        for row in json.load(open(f))['rows']:
            if row['ablation'] == 'full':
                qid = row['query_id'] if ':' in row['query_id'] else 'eagle:' + row['query_id']
                r[qid] = (row['first_name_rank'], row['query'])
    return r
a, b = load(sys.argv[1]), load(sys.argv[2])
qs = sorted(q for q in a if q in b)
def seen(code):
    src = f"""
import json,sys
sys.path.insert(0,'{code}')
from pipeline.vocabulary import default_vocabulary
from pipeline.lay_names import glossed_lay_names
v=default_vocabulary()
for l in sys.stdin:
    q=json.loads(l); print(json.dumps([glossed_lay_names(q,v), sorted(m.entity.canonical for m in v.find(q))]))
"""
    p = subprocess.run(['.venv/bin/python', '-c', src], input='\n'.join(json.dumps(a[q][1]) for q in qs), capture_output=True, text=True, env={'HF_HUB_OFFLINE': '1', 'PYTHONPATH': code})
    return [json.loads(l) for l in p.stdout.splitlines()]
old, new = seen(sys.argv[3]), seen(sys.argv[4])
def f(r): return r if r and r <= 10 else 99
stats = {}
for q, o, n in zip(qs, old, new):
    kind = 'query changed' if o != n else 'same query'
    ra, rb = f(a[q][0]), f(b[q][0])
    s = stats.setdefault(kind, [0, 0, 0])
    s[0] += 1; s[1] += rb < ra; s[2] += rb > ra
    if kind == 'query changed': print(f"  {q}: {ra if ra<99 else '-'} -> {rb if rb<99 else '-'}  {n[0][:100]}")
for k, (n, up, down) in stats.items(): print(k, n, 'up', up, 'down', down)
