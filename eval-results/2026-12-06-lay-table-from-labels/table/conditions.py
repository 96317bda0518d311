"""conditions.py DATA OUT.tsv: the disease rows of the vocabulary that the labels' indications name
(EMA section 1, FDA indications), with how many labels name each. Run from the repository root:
`python eval-results/2026-12-06-lay-table-from-labels/table/conditions.py ../shared/data conditions.tsv`.
The helpers were given this list (halves A and B) with the vocabulary as it was before bf45179."""
import json, sys, collections
sys.path.insert(0, '.')
from pipeline.vocabulary import default_vocabulary
v = default_vocabulary()
c = collections.Counter(); drugs = collections.defaultdict(set); lay = {}
def texts():
    for l in open(sys.argv[1] + '/drug_labels/ema_leaflet_sections.jsonl'):
        d = json.loads(l)
        if d['section'].startswith('1.'): yield d['drug'], d['text']
    for l in open(sys.argv[1] + '/drug_labels/fda_indications.jsonl'):
        d = json.loads(l); yield (d['product_names'] or ['?'])[0].lower(), d['indications']
for drug, t in texts():
    for m in v.find(t):
        e = m.entity
        if e.semantic_type == 'disease':
            c[e.canonical] += 1; drugs[e.canonical].add(drug)
            if e.lay_names: lay[e.canonical] = e.lay_names
print(len(c), 'conditions;', sum(1 for k in c if k in lay), 'with lay names')
with open(sys.argv[2], 'w') as f:
    f.write('condition\tlabels\texample_medicines\tlay_names_already\n')
    for k in sorted(c, key=str.lower):
        f.write(f"{k}\t{len(drugs[k])}\t{', '.join(sorted(drugs[k])[:3])}\t{' | '.join(lay.get(k, ()))}\n")
