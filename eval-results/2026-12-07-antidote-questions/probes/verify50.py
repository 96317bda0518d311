#!/usr/bin/env python3
"""Verify probe50.jsonl (beside this file) against the corpus under /work/shared/data (stdlib only)."""
import collections, csv, json, os, re, sys

D = os.environ.get('DATA', '/work/shared/data') + '/'
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'probe50.jsonl')

# ---------------- corpus ----------------
ema_s1 = collections.defaultdict(list)
ema_names = set()
for line in open(D + 'drug_labels/ema_leaflet_sections.jsonl'):
    r = json.loads(line)
    ema_names.add(r['drug'])
    if re.match(r'\s*1\b', r['section']):
        ema_s1[r['drug']].append(r['text'])
fda = [json.loads(l) for l in open(D + 'drug_labels/fda_indications.jsonl')]
chembl = sorted({r['pref_name'] for r in csv.DictReader(open(D + 'compounds/chembl_approved_drugs.csv')) if r['pref_name']})

docs = {}  # key -> (lower-cased name, indications text or None)
for d in ema_names:
    docs['EMA:' + d] = (d.lower(), ' '.join(ema_s1.get(d, [])))
for r in fda:
    n = ' | '.join(r['product_names'])
    docs['FDA:' + n] = (n.lower(), r['indications'])
for c in chembl:
    docs['CHEMBL:' + c] = (c.lower(), None)

def fda_key(terms):
    hits = [k for k, (n, _) in docs.items() if k.startswith('FDA:') and all(t.lower() in n for t in terms)]
    if len(hits) != 1:
        raise SystemExit(f'FDA terms {terms} identify {len(hits)} records: {hits}')
    return hits[0]

# ---------------- antidote families ----------------
# req: ('EMA', drug, [evidence]) | ('FDA', [name terms], [evidence]) | ('CHEMBL', pref_name)
# substances: antidote substance names; every ChEMBL pref_name equal to one (or that name + a salt word)
# must be matched unless listed in unmatched_ok with a reason.
F = {
 'acetylcysteine': dict(req=[('FDA', ['acetadote'], ['antidote', 'acetaminophen', 'hepatic injury']),
                             ('CHEMBL', 'ACETYLCYSTEINE')], substances=['ACETYLCYSTEINE']),
 'idarucizumab': dict(req=[('EMA', 'praxbind', ['reversal agent', 'dabigatran', 'emergency surgery', 'bleeding'])],
                      substances=['IDARUCIZUMAB']),
 'andexanet': dict(req=[('EMA', 'ondexxya', ['reverses', 'apixaban', 'rivaroxaban', 'bleeding'])],
                   substances=['ANDEXANET ALFA']),
 'sugammadex': dict(req=[('EMA', 'bridion', ['sugammadex', 'rocuronium', 'vecuronium', 'recovery of your muscles', 'breathe']),
                         ('EMA', 'sugammadex', ['sugammadex', 'rocuronium', 'vecuronium', 'recovery of your muscles', 'breathe'])],
                    substances=['SUGAMMADEX']),
 'opioid antagonists': dict(req=[('FDA', ['narcan'], ['reversal of opioid depression', 'respiratory depression', 'opioid overdosage', 'synthetic opioids']),
                                 ('FDA', ['zurnai'], ['reversal of opioid drug effects', 'respiratory depression', 'opioid overdose', 'synthetic opioids']),
                                 ('CHEMBL', 'NALMEFENE'), ('CHEMBL', 'NALMEFENE HYDROCHLORIDE')],
                            substances=['NALOXONE', 'NALMEFENE'],
                            unmatched_ok={'CHEMBL:NALOXONE': "substring 'naloxone' would also match buprenorphine/naloxone (opioid dependence) and pentazocine/naloxone (pain) FDA records that do not treat overdose",
                                          'CHEMBL:NALOXONE HYDROCHLORIDE': "same: 'naloxone hydrochloride' occurs in the buprenorphine/naloxone and pentazocine/naloxone FDA records"}),
 'phytonadione': dict(req=[('FDA', ['phytonadione'], ['coagulation disorders', 'factors ii, vii, ix and x', 'interference with vitamin k activity'])],
                      substances=['PHYTONADIONE', 'PHYTOMENADIONE']),
 'leucovorin': dict(req=[('FDA', ['leucovorin calcium'], ['rescue', 'high dose methotrexate'])] + [('CHEMBL', 'LEUCOVORIN CALCIUM')],
                    substances=['LEUCOVORIN'],
                    allow={'CHEMBL:LEVOLEUCOVORIN CALCIUM': 'levoleucovorin is the active l-isomer of leucovorin, itself a high-dose methotrexate rescue agent (ChEMBL record, no indication text)'},
                    unmatched_ok={'CHEMBL:LEUCOVORIN': "substring 'leucovorin' would also match FDA 'PaxLyte | leucovorin' (B12 deficiency) and 'Biopar delta-FORTE | levoleucovorin' (pernicious anaemia)"}),
 'glucagon': dict(req=[('EMA', 'ogluo', ['glucagon', 'severe hypoglycaemia', 'diabetes']),
                       ('FDA', ['baqsimi'], ['severe hypoglycemia', 'diabetes']),
                       ('FDA', ['zegalogue'], ['severe hypoglycemia', 'diabetes'])],
                  substances=['GLUCAGON', 'DASIGLUCAGON']),
 'trihexyphenidyl': dict(req=[('FDA', ['trihexyphenidyl'], ['extrapyramidal disorders caused by central nervous system drugs', 'phenothiazines', 'butyrophenones']),
                              ('CHEMBL', 'TRIHEXYPHENIDYL'), ('CHEMBL', 'TRIHEXYPHENIDYL HYDROCHLORIDE')],
                         substances=['TRIHEXYPHENIDYL']),
 'dexrazoxane': dict(req=[('FDA', ['dexrazoxane'], ['cardiomyopathy associated with doxorubicin', 'metastatic breast cancer']),
                          ('CHEMBL', 'DEXRAZOXANE'), ('CHEMBL', 'DEXRAZOXANE HYDROCHLORIDE')],
                     substances=['DEXRAZOXANE']),
 'sodium thiosulfate': dict(req=[('EMA', 'pedmarqsi', ['sodium thiosulfate', 'hearing loss', 'cisplatin', 'solid tumours']),
                                 ('CHEMBL', 'SODIUM THIOSULFATE')],
                            substances=['SODIUM THIOSULFATE']),
 'methylene blue': dict(req=[('FDA', ['methylene blue'], ['methylene blue injection', 'acquired methemoglobinemia']),
                             ('CHEMBL', 'METHYLENE BLUE')],
                        substances=['METHYLENE BLUE']),
 'fomepizole': dict(req=[('FDA', ['fomepizole'], ['antidote', 'ethylene glycol', 'antifreeze', 'methanol poisoning']),
                         ('CHEMBL', 'FOMEPIZOLE')],
                    substances=['FOMEPIZOLE']),
 'atropine': dict(req=[('FDA', ['atropine sulfate', 'phenohytro'], ['atropine sulfate injection', 'antidote for organophosphorus or muscarinic mushroom poisoning']),
                       ('CHEMBL', 'ATROPINE SULFATE')],
                  substances=['ATROPINE'],
                  allow={'FDA:Diphenoxylate Hydrochloride and Atropine Sulfate | diphenoxylate hydrochloride':
                         "name contains 'atropine sulfate' (antidiarrhoeal combination tablet); unavoidable with the substring that reaches the Atropine Sulfate Injection record and ChEMBL ATROPINE SULFATE; not an answer"},
                  unmatched_ok={'CHEMBL:ATROPINE': "substring 'atropine' would also match HOMATROPINE METHYLBROMIDE, METHYLHOMATROPINE and the diphenoxylate/atropine record"}),
 'hydroxocobalamin': dict(req=[('EMA', 'cyanokit', ['hydroxocobalamin', 'antidote', 'cyanide poisoning', 'smoke'])],
                          substances=['HYDROXOCOBALAMIN']),
 'botulism immune globulin': dict(req=[('FDA', ['babybig'], ['botulism immune globulin', 'infant botulism', 'toxin type a or b', 'below one year'])],
                                  substances=[]),
 'protein c': dict(req=[('EMA', 'ceprotin', ['protein c', 'coumarin', 'necrosis', 'severe congenital protein c deficiency'])],
                   substances=[]),
}

ROW = {  # id -> (kind, family, query must mention (any of))
 'p50-01': ('named_drug', 'acetylcysteine', ['acetaminophen', 'paracetamol']),
 'p50-02': ('named_drug', 'idarucizumab', ['pradaxa', 'dabigatran']),
 'p50-03': ('named_drug', 'andexanet', ['eliquis', 'apixaban']),
 'p50-04': ('named_drug', 'sugammadex', ['rocuronium']),
 'p50-05': ('named_drug', 'opioid antagonists', ['fentanyl']),
 'p50-06': ('named_drug', 'phytonadione', ['warfarin']),
 'p50-07': ('named_drug', 'leucovorin', ['methotrexate']),
 'p50-08': ('named_drug', 'glucagon', ['insulin']),
 'p50-09': ('named_drug', 'trihexyphenidyl', ['haloperidol']),
 'p50-10': ('named_drug', 'dexrazoxane', ['doxorubicin']),
 'p50-11': ('named_drug', 'sodium thiosulfate', ['cisplatin']),
 'p50-12': ('named_drug', 'methylene blue', ['benzocaine']),
 'p50-13': ('lay_story', 'acetylcysteine', ['tylenol']),
 'p50-14': ('lay_story', 'opioid antagonists', ['oxys']),
 'p50-15': ('lay_story', 'glucagon', ['insulin']),
 'p50-16': ('lay_story', 'andexanet', ['xarelto']),
 'p50-17': ('lay_story', 'idarucizumab', ['dabigatran']),
 'p50-18': ('lay_story', 'fomepizole', ['antifreeze']),
 'p50-19': ('lay_story', 'atropine', ['organophosphate']),
 'p50-20': ('lay_story', 'hydroxocobalamin', ['cyanide']),
 'p50-21': ('lay_story', 'atropine', ['mushroom']),
 'p50-22': ('lay_story', 'phytonadione', ['warfarin']),
 'p50-23': ('clinical', 'acetylcysteine', ['apap']),
 'p50-24': ('clinical', 'protein c', ['coumarin']),
 'p50-25': ('clinical', 'sugammadex', ['vecuronium']),
 'p50-26': ('clinical', 'leucovorin', ['mtx']),
 'p50-27': ('clinical', 'fomepizole', ['methanol']),
 'p50-28': ('no_drug', 'botulism immune globulin', ['botulism']),
 'p50-29': ('no_drug', 'hydroxocobalamin', ['cyanide']),
 'p50-30': ('no_drug', 'methylene blue', ['methaemoglobinaemia']),
}
KIND_ORDER = ['named_drug'] * 12 + ['lay_story'] * 10 + ['clinical'] * 5 + ['no_drug'] * 3
# the overdosed/reversed drug's own products must never be matched (checked on top of the stray check)
CULPRIT_TERMS = ['pradaxa', 'dabigatran', 'eliquis', 'apixaban', 'xarelto', 'rivaroxaban', 'rocuronium', 'vecuronium',
                 'fentanyl', 'oxycodone', 'warfarin', 'methotrexate', 'insulin', 'haloperidol', 'doxorubicin',
                 'cisplatin', 'benzocaine', 'chlorpromazine']

errors, notes = [], []

def err(m): errors.append(m)

# resolve required docs per family
fam_req = {}
for fam, s in F.items():
    keys = {}
    for q in s['req']:
        if q[0] == 'EMA':
            k = 'EMA:' + q[1]
            if k not in docs: err(f'{fam}: EMA {q[1]} missing'); continue
            keys[k] = q[2]
        elif q[0] == 'FDA':
            keys[fda_key(q[1])] = q[2]
        else:
            k = 'CHEMBL:' + q[1]
            if k not in docs: err(f'{fam}: ChEMBL {q[1]} missing'); continue
            keys[k] = []
    fam_req[fam] = keys
    # evidence
    for k, ev in keys.items():
        if k.startswith('CHEMBL:'): continue
        text = docs[k][1].lower()
        if not text.strip(): err(f'{fam}: {k} has no indications text')
        for w in ev:
            if w.lower() not in text: err(f'{fam}: evidence {w!r} not in indications of {k}')
    for k in list(s.get('allow', {})) + list(s.get('unmatched_ok', {})):
        if k not in docs: err(f'{fam}: listed doc {k} not in corpus')

# ---------------- rows ----------------
rows = [json.loads(l) for l in open(OUT) if l.strip()]
if len(rows) != 30: err(f'{len(rows)} rows, want 30')
ids = [f'p50-{i:02d}' for i in range(1, 31)]
if [r.get('id') for r in rows] != ids: err('ids are not p50-01..p50-30 in order')
if [r.get('kind') for r in rows] != KIND_ORDER: err('kinds/order wrong')
if len({r['query'].strip().lower() for r in rows}) != len(rows): err('duplicate queries')
fam_count = collections.Counter()
covered = set()
for r in rows:
    rid = r.get('id')
    if set(r) != {'id', 'query', 'expected_doc_name_substrings', 'k', 'kind'}: err(f'{rid}: fields {sorted(r)}')
    if r.get('k') != 5: err(f'{rid}: k != 5')
    subs = r.get('expected_doc_name_substrings')
    if not isinstance(subs, list) or not subs or any((not isinstance(s, str)) or s != s.lower() or not s.strip() for s in subs) or len(set(subs)) != len(subs):
        err(f'{rid}: bad substrings {subs}'); continue
    if rid not in ROW: err(f'{rid}: no spec'); continue
    kind, fam, mention = ROW[rid]
    if r['kind'] != kind: err(f'{rid}: kind {r["kind"]} != spec {kind}')
    q = r['query'].lower()
    if not any(m in q for m in mention): err(f'{rid}: query does not mention {mention}')
    for s in subs:
        if s in q: err(f'{rid}: query contains the expected substring {s!r}')
    fam_count[fam] += 1
    spec = F[fam]
    req = fam_req[fam]
    allow = spec.get('allow', {})
    matched = {}
    for s in subs:
        m = [k for k, (n, _) in docs.items() if s in n]
        if not m: err(f'{rid}: substring {s!r} matches no document')
        for k in m: matched.setdefault(k, []).append(s)
    for k in req:
        if k not in matched: err(f'{rid}: required doc {k} not matched by any substring')
    for k in matched:
        if k in req: continue
        if k in allow:
            notes.append(f'{rid}: listed stray {k} <- {matched[k]} ({allow[k]})'); continue
        err(f'{rid}: STRAY {k} matched by {matched[k]}')
    for k in matched:
        n = docs[k][0]
        for t in CULPRIT_TERMS:
            # an answering record's own name may list other products; flag only non-required, non-listed docs
            if t in n and k not in req and k not in allow:
                err(f'{rid}: culprit product {k} matched (term {t!r})')
    # ChEMBL substances of the antidote
    for sub in spec['substances']:
        for c in chembl:
            if c == sub or c.startswith(sub + ' '):
                k = 'CHEMBL:' + c
                if k not in matched and k not in spec.get('unmatched_ok', {}):
                    err(f'{rid}: ChEMBL {c} of antidote substance not matched and not excused')
    covered.update(k for k in req if not k.startswith('CHEMBL:'))

for fam, n in fam_count.items():
    if n > 3: err(f'family {fam} used {n} times (>3)')

kinds = collections.Counter(r.get('kind') for r in rows)
print('kinds:', dict(kinds))
print('antidote families:', len(fam_count), dict(fam_count))
print('distinct EMA/FDA antidote documents required:', len(covered))
for n in notes: print('note:', n)
if errors:
    for e in errors: print('ERROR:', e)
    sys.exit(1)
print('OK')
