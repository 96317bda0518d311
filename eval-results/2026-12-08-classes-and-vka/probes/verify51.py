#!/usr/bin/env python3
"""Re-check probe51.jsonl against the corpus under /work/shared/data (stdlib only).

Adapted from verify_template.py (probe49). Document names (what
expected_doc_name_substrings are matched against, lower-cased):
  EMA leaflet  -> the `drug` field                      (one document per product)
  FDA label    -> all `product_names` joined with " | "  (one document per record)
  ChEMBL       -> `pref_name`
Leaflet sections map to the dev-set ids by their number:
  1 -> indications_and_usage, 2 -> warnings, 3 -> dosage_and_administration,
  4 -> adverse_reactions, 5 -> storage, 6 -> description.
FDA records only carry indications_and_usage, so they are required answers only for
questions with that section (or with no section).
The avoid list is read from avoid51.txt next to this file; every name a row uses (the
spec's `names`, i.e. the products/substances the query is about, plus every expected
substring) is compared with every avoid entry by substring match in both directions,
and no avoid entry may occur as a whole word/phrase in the query.
Prints OK, or one line per problem.
"""
import csv, json, os, re, sys

DATA = os.environ.get('DATA', '/work/shared/data')
HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, 'probe51.jsonl')
AVOID_FILE = os.path.join(HERE, 'avoid51.txt')
PFX = 'p51'
SECNUM = {'indications_and_usage': 1, 'warnings': 2, 'dosage_and_administration': 3,
          'adverse_reactions': 4, 'storage': 5, 'description': 6}
KINDS = {'entity_condition': 12, 'class': 10, 'structure': 8, 'combination': 6,
         'reversal_antidote': 4, 'named': 12, 'typo_salt_noise': 8}
KIND_ORDER = ['entity_condition'] * 12 + ['class'] * 10 + ['structure'] * 8 + ['combination'] * 6 + \
             ['reversal_antidote'] * 4 + ['named'] * 12 + ['typo_salt_noise'] * 8
CLASS_WORD_OK = set()

# Per-row specification.
#  names    : the products/substances the query is about (correctly spelt); checked with
#             the expected substrings against the avoid list (substring, both directions)
#  brand    : EMA documents that are required answers
#  subst    : terms that must ALL be contained (section 6, or "contain(s/ing) ... term" in
#             section 1) in an EMA leaflet for the product to be a required answer
#  subst_any: a product is required if it contains ANY of the terms (class rows)
#  fda      : terms that must ALL occur in an FDA record's joined names (required answer)
#  fda_any  : an FDA record is required if its joined names hold ANY of these terms
#  ev / ev2 : at least one term of each must occur in the expected section (section 1
#             when the row has no expected_section) of every required EMA leaflet
#  fda_ev   : the same for the required FDA records' indications text
#  excl     : EMA documents that contain the substance(s) but do not answer, with reason
#  chem     : ('structure' rows) ChEMBL pref_name that answers
#  smiles   : ('structure' rows) the SMILES in the query (must be that record's csv SMILES)
#  evsec    : (reversal rows) leaflet section that holds the evidence, when not section 1
S = {
 # entity_condition
 'p51-01': dict(names=['sotatercept'], fda=['sotatercept'], fda_ev=['pulmonary arterial hypertension']),
 'p51-02': dict(names=['wayrilz', 'rilzabrutinib'], fda=['rilzabrutinib'], fda_ev=['immune thrombocytopenia']),
 'p51-03': dict(names=['pacritinib'], fda=['pacritinib'], fda_ev=['myelofibrosis'], chem_ok=['pacritinib']),
 'p51-04': dict(names=['elamipretide'], fda=['elamipretide'], fda_ev=['barth syndrome']),
 'p51-05': dict(names=['dordaviprone'], fda=['dordaviprone'], fda_ev=['h3 k27m']),
 'p51-06': dict(names=['imlifidase'], subst=['imlifidase'], ev=['kidney transplant']),
 'p51-07': dict(names=['panobinostat'], subst=['panobinostat'], ev=['multiple myeloma']),
 'p51-08': dict(names=['hemin', 'panhematin'], fda=['hemin'], fda_ev=['acute intermittent porphyria']),
 'p51-09': dict(names=['suzetrigine'], fda=['suzetrigine'], fda_ev=['acute pain']),
 'p51-10': dict(names=['ensifentrine'], fda=['ensifentrine'], fda_ev=['chronic obstructive pulmonary disease']),
 'p51-11': dict(names=['axatilimab'], fda=['axatilimab'], fda_ev=['graft-versus-host']),
 'p51-12': dict(names=['mepsevii', 'vestronidase'], subst=['vestronidase'], fda=['vestronidase'],
                ev=['sly syndrome'], fda_ev=['sly syndrome']),
 # class
 'p51-13': dict(names=['repaglinide', 'nateglinide'], subst_any=['repaglinide', 'nateglinide'],
                fda_any=['repaglinide', 'nateglinide'], ev=['blood sugar'], fda_ev=['type 2 diabetes']),
 'p51-14': dict(names=['asparaginase', 'pegaspargase', 'crisantaspase'],
                subst_any=['asparaginase', 'pegaspargase', 'crisantaspase'], ev=['acute lymphoblastic leukaemia']),
 'p51-15': dict(names=['medronate', 'oxidronate', 'pyrophosphate'], fda_any=['medronate', 'oxidronate', 'technescan pyp'],
                fda_ev=['osteogenesis']),
 'p51-16': dict(names=['trypan blue', 'brilliant blue g'], fda_any=['trypan blue', 'brilliant blue g'],
                fda_ev=['epiretinal membranes', 'internal limiting membrane']),
 'p51-17': dict(names=['nafcillin', 'oxacillin'], fda_any=['nafcillin', 'oxacillin'], fda_ev=['penicillinase']),
 'p51-18': dict(names=['temazepam', 'triazolam'], fda_any=['temazepam', 'triazolam'], fda_ev=['insomnia']),
 'p51-19': dict(names=['zolpidem', 'eszopiclone'], fda_any=['zolpidem', 'eszopiclone'], fda_ev=['insomnia']),
 'p51-20': dict(names=['isoflurane', 'sevoflurane'], fda_any=['isoflurane', 'sevoflurane'],
                fda_ev=['maintenance of general anesthesia']),
 'p51-21': dict(names=['phenytoin', 'fosphenytoin'], fda_any=['phenytoin'], fda_ev=['tonic-clonic']),
 'p51-22': dict(names=['cabazitaxel', 'docetaxel'], subst_any=['docetaxel', 'cabazitaxel'], fda_any=['cabazitaxel', 'docetaxel'],
                ev=['for the treatment of prostate cancer'], fda_ev=['prostate cancer']),
 # structure
 'p51-23': dict(names=['delafloxacin'], subst=['delafloxacin'], chem='DELAFLOXACIN',
                smiles='Nc1nc(-n2cc(C(=O)O)c(=O)c3cc(F)c(N4CC(O)C4)c(Cl)c32)c(F)cc1F'),
 'p51-24': dict(names=['tedizolid phosphate'], subst=['tedizolid'], chem='TEDIZOLID PHOSPHATE'),
 'p51-25': dict(names=['iloperidone'], fda=['iloperidone'], chem='ILOPERIDONE',
                smiles='COc1cc(C(C)=O)ccc1OCCCN1CCC(c2noc3cc(F)ccc23)CC1'),
 'p51-26': dict(names=['zileuton'], fda=['zileuton'], chem='ZILEUTON'),
 'p51-27': dict(names=['metyrapone'], fda=['metyrapone'], chem='METYRAPONE', smiles='CC(C)(C(=O)c1cccnc1)c1cccnc1'),
 'p51-28': dict(names=['viloxazine'], fda=['viloxazine'], chem='VILOXAZINE', smiles='CCOc1ccccc1OCC1CNCCO1'),
 'p51-29': dict(names=['eletriptan hydrobromide'], fda=['eletriptan'], chem='ELETRIPTAN HYDROBROMIDE',
                smiles='Br.CN1CCC[C@@H]1Cc1c[nH]c2ccc(CCS(=O)(=O)c3ccccc3)cc12'),
 'p51-30': dict(names=['briviact', 'brivaracetam'], fda=['brivaracetam'], chem='BRIVARACETAM'),
 # combination
 'p51-31': dict(names=['atenolol', 'chlorthalidone'], fda=['atenolol and chlorthalidone'], fda_ev=['atenolol and chlorthalidone tablets, usp are indicated']),
 'p51-32': dict(names=['perphenazine', 'amitriptyline'], fda=['perphenazine and amitriptyline'], fda_ev=['anxiety']),
 'p51-33': dict(names=['ampicillin', 'sulbactam'], fda=['ampicillin and sulbactam'], fda_ev=['ampicillin and sulbactam for injection']),
 'p51-34': dict(names=['follitropin alfa', 'lutropin alfa'], subst=['follitropin alfa', 'lutropin alfa'],
                ev=['severe deficiency'], fda=['follitropin', 'lutropin']),
 'p51-35': dict(names=['human normal immunoglobulin', 'hyaluronidase'], subst=['immunoglobulin', 'hyaluronidase'],
                ev=['under the skin']),
 'p51-36': dict(names=['indacaterol', 'mometasone furoate'], subst=['indacaterol', 'mometasone'], ev=['asthma'],
                excl={'enerzair': 'triple inhaler that also contains glycopyrronium (a LAMA), not a two-drug indacaterol/mometasone product',
                      'zimbus': 'triple inhaler that also contains glycopyrronium (a LAMA), not a two-drug indacaterol/mometasone product'}),
 # reversal_antidote (evidence in the overdose paragraph of leaflet section 3)
 'p51-37': dict(names=['ibandronic acid'], brand=['ibandronic'], evsec=3, ev=['glass of milk'], ev2=['do not make yourself sick'],
                excl_note='bondronat (ibandronic acid infusion) has no overdose advice and is not matched'),
 'p51-38': dict(names=['gadopiclenol', 'elucirem'], brand=['elucirem'], evsec=3, ev=['haemodialysis'],
                fda=['gadopiclenol']),  # the FDA label of the same product (indications only) is matched by name
 'p51-39': dict(names=['tasonermin', 'beromun'], brand=['beromun'], evsec=3, ev=['wash out your affected limb'], ev2=['systemic leakage']),
 'p51-40': dict(names=['edotreotide', 'somakit'], brand=['somakit'], evsec=3, ev=['emptying your bladder']),
 # named
 'p51-41': dict(names=['atriance'], brand=['atriance'], ev=['do not drive']),
 'p51-42': dict(names=['giapreza'], brand=['giapreza'], ev=['blood clot']),
 'p51-43': dict(names=['integrilin'], brand=['integrilin'], ev=['stroke within the past 30 days'], ev2=['must not be given integrilin']),
 'p51-44': dict(names=['nulojix'], brand=['nulojix'], ev=['8 weeks after the last dose']),
 'p51-45': dict(names=['orphacol'], brand=['orphacol'], ev=['do not chew'], ev2=['with a meal']),
 'p51-46': dict(names=['ovitrelle'], brand=['ovitrelle'], ev=['up to 30 days']),
 'p51-47': dict(names=['pepaxti'], brand=['pepaxti'], ev=['sucrose']),
 'p51-48': dict(names=['vedrop'], brand=['vedrop'], ev=['skip the missed dose']),
 'p51-49': dict(names=['ebvallo'], brand=['ebvallo'], ev=['dimethyl sulfoxide']),
 'p51-50': dict(names=['mylotarg'], brand=['mylotarg'], ev=['very common']),
 'p51-51': dict(names=['xenpozyme'], brand=['xenpozyme'], ev=['whether to stop breast-feeding']),
 'p51-52': dict(names=['zutectra'], brand=['zutectra'], ev=['you can inject zutectra yourself'], ev2=['subcutaneous']),
 # typo_salt_noise
 'p51-53': dict(names=['pozelimab'], fda=['pozelimab'], fda_ev=['chaple']),
 'p51-54': dict(names=['nelfinavir'], fda=['nelfinavir'], fda_ev=['hiv-1']),
 'p51-55': dict(names=['teduglutide'], fda=['teduglutide'], fda_ev=['short bowel syndrome']),
 'p51-56': dict(names=['triheptanoin'], fda=['triheptanoin'], fda_ev=['fatty acid oxidation']),
 'p51-57': dict(names=['marstacimab'], fda=['marstacimab'], fda_ev=['hemophilia a']),
 'p51-58': dict(names=['epirubicin'], fda=['epirubicin'], fda_ev=['breast cancer']),
 'p51-59': dict(names=['capivasertib'], fda=['capivasertib'], fda_ev=['pik3ca']),
 'p51-60': dict(names=['belimumab'], fda=['belimumab'], fda_ev=['lupus']),
}
SMILES_TOKEN = re.compile(r'(?=\S*\d)(?=\S*[=#()\[\]@])[A-Za-z0-9@+\-\[\]()=#\\/%.]+')


def load():
    ema = {}
    for line in open(os.path.join(DATA, 'drug_labels/ema_leaflet_sections.jsonl')):
        r = json.loads(line)
        m = re.match(r'\s*(\d)\.', r['section'])
        ema.setdefault(r['drug'].lower(), {})
        if m:
            ema[r['drug'].lower()][int(m.group(1))] = r['text']
    fda = []
    for line in open(os.path.join(DATA, 'drug_labels/fda_indications.jsonl')):
        r = json.loads(line)
        fda.append((' | '.join(r['product_names']).lower(), r['indications']))
    chemrows = [(r['pref_name'], r['smiles']) for r in
                csv.DictReader(open(os.path.join(DATA, 'compounds/chembl_approved_drugs.csv')))]
    return ema, fda, chemrows


def words(s):
    return set(re.findall(r'[a-z][a-z0-9\-]+', s.lower()))


def contains(secs, term):
    t = term.lower()
    if t in secs.get(6, '').lower():
        return True
    return re.search(r'contain\w*[^.]{0,80}' + re.escape(t), secs.get(1, '').lower()) is not None


def main():
    ema, fda, chemrows = load()
    chem = [n.lower() for n, _ in chemrows]
    probs = []
    p = probs.append
    rows = [json.loads(l) for l in open(PROBE) if l.strip()]
    avoid = sorted({l.strip().lower() for l in open(AVOID_FILE) if l.strip()})
    # products named by the shared dev sets are avoided as well
    for fn in ('drug_kb_dev.jsonl', 'drug_kb_dev_more.jsonl'):
        for l in open(os.path.join(DATA, fn)):
            if l.strip():
                avoid += [s.lower() for s in json.loads(l)['expected_doc_name_substrings']]
    avoid = sorted(set(avoid))
    # --- format
    if len(rows) != 60:
        p('expected 60 rows, got %d' % len(rows))
    ids = [r.get('id') for r in rows]
    if ids != ['%s-%02d' % (PFX, i) for i in range(1, 61)]:
        p('ids are not %s-01..%s-60 in order' % (PFX, PFX))
    kinds = {}
    for r in rows:
        kinds[r.get('kind')] = kinds.get(r.get('kind'), 0) + 1
    if kinds != KINDS:
        p('kind counts %s != %s' % (kinds, KINDS))
    if [r.get('kind') for r in rows] != KIND_ORDER[:len(rows)]:
        p('kinds are not in the required order')
    allowed = {'id', 'query', 'expected_doc_name_substrings', 'k', 'expected_section', 'kind'}
    queries = set()
    for r in rows:
        rid = r.get('id')
        kind = r.get('kind')
        if set(r) - allowed:
            p('%s: unexpected fields %s' % (rid, set(r) - allowed))
        for f in ('id', 'query', 'expected_doc_name_substrings', 'k', 'kind'):
            if f not in r:
                p('%s: missing field %s' % (rid, f))
        if not isinstance(r.get('query'), str) or not r['query'].strip():
            p('%s: query must be a non-empty string' % rid)
            continue
        if r.get('k') != 5:
            p('%s: k must be 5' % rid)
        if r['query'].lower() in queries:
            p('%s: duplicate query' % rid)
        queries.add(r['query'].lower())
        subs = r.get('expected_doc_name_substrings')
        if not isinstance(subs, list) or not subs or any(not isinstance(s, str) or s != s.lower() or not s.strip() for s in subs):
            p('%s: substrings must be a non-empty list of lower-case strings' % rid)
            continue
        if len(set(subs)) != len(subs):
            p('%s: duplicate substrings' % rid)
        sec = r.get('expected_section')
        if sec is not None and sec not in SECNUM:
            p('%s: unknown section %r' % (rid, sec))
        if kind in ('entity_condition', 'class', 'structure', 'combination', 'reversal_antidote') and sec is not None:
            p('%s: %s rows take no section' % (rid, kind))
        if kind == 'named' and sec is None:
            p('%s: named rows need expected_section' % rid)
        spec = S.get(rid)
        if spec is None:
            p('%s: no spec' % rid)
            continue
        # --- avoid list: names used and substrings, substring match both ways
        ql = r['query'].lower()
        used = set(spec.get('names', [])) | set(subs)
        if not spec.get('names'):
            p('%s: spec lists no names' % rid)
        bad = set()
        for n in used:
            for a in avoid:
                if a in n or n in a:
                    bad.add('%s~%s' % (n, a))
        for a in avoid:
            if re.search(r'(?<![a-z0-9])' + re.escape(a) + r'(?![a-z0-9])', ql):
                bad.add('query:' + a)
        if bad:
            p('%s: uses avoided product/substance %s' % (rid, sorted(bad)))
        for n in spec.get('names', []):
            if kind not in ('class', 'typo_salt_noise', 'structure') and n not in ql and not any(n in s for s in subs):
                p('%s: name %r neither in query nor substrings' % (rid, n))
        # --- class rows name no drug
        qw = words(r['query'])
        if kind == 'class':
            named = {w for w in qw if (w in ema or w in chem) and w not in CLASS_WORD_OK}
            named |= {n for n in spec.get('names', []) if n in ql}
            if named:
                p('%s: class query names a drug %s' % (rid, sorted(named)))
        # --- structure rows
        toks = [t for t in r['query'].split() if SMILES_TOKEN.fullmatch(t) and len(t) > 8]
        if kind == 'structure':
            cn = spec.get('chem')
            if not cn or cn not in [n for n, _ in chemrows]:
                p('%s: chem %r not a ChEMBL pref_name' % (rid, cn))
            elif cn.lower() not in subs:
                p('%s: pref_name %r not among substrings' % (rid, cn.lower()))
            sm = spec.get('smiles')
            if toks and not sm:
                p('%s: query holds SMILES-like text but spec has no smiles' % rid)
            if sm:
                if sm not in r['query'].split():
                    p('%s: SMILES not verbatim in query' % rid)
                if sm not in {s for _, s in chemrows}:
                    p('%s: SMILES not found verbatim in the ChEMBL csv' % rid)
                elif (cn, sm) not in set(chemrows):
                    p('%s: SMILES is in the csv but not under pref_name %r' % (rid, cn))
        elif toks:
            p('%s: SMILES-like token in a non-structure row %s' % (rid, toks))
        # --- every substring matches >= 1 document
        for s in subs:
            n = sum(s in d for d in ema) + sum(s in nm for nm, _ in fda) + sum(s in c for c in chem)
            if n == 0:
                p('%s: substring %r matches no document' % (rid, s))

        def hit(name):
            return any(s in name for s in subs)
        secn = SECNUM.get(sec, spec.get('evsec', 1))
        fda_counts = sec in (None, 'indications_and_usage')
        excl = spec.get('excl', {})
        for d, why in excl.items():
            if not why or d not in ema:
                p('%s: exclusion %r needs an existing document and a reason' % (rid, d))
            elif hit(d):
                p('%s: excluded document %r is matched by a substring' % (rid, d))
        # --- required EMA documents
        req = set(spec.get('brand', []))
        for d in req:
            if d not in ema:
                p('%s: brand %r is not an EMA document' % (rid, d))
        if 'subst' in spec:
            has = {d for d, secs in ema.items() if all(contains(secs, t) for t in spec['subst'])}
            if not has:
                p('%s: no EMA product contains %s' % (rid, spec['subst']))
            req |= has - set(excl)
        if 'subst_any' in spec:
            for t in spec['subst_any']:
                req |= {d for d, secs in ema.items() if contains(secs, t)} - set(excl)
        for d in sorted(req):
            if d not in ema:
                continue
            if not hit(d):
                p('%s: answering leaflet %r not matched by %s' % (rid, d, subs))
            txt = ema[d].get(secn)
            if not txt:
                p('%s: %r has no section %s' % (rid, d, secn))
                continue
            for key in ('ev', 'ev2'):
                if spec.get(key) and not any(e in txt.lower() for e in spec[key]):
                    p('%s: %r section %s lacks evidence %s' % (rid, d, secn, spec[key]))
        for d in ema:
            if hit(d) and d not in req:
                p('%s: substring matches EMA document %r that the spec does not require' % (rid, d))
        # --- required FDA records
        freq = []
        if fda_counts:
            for i, (nm, ind) in enumerate(fda):
                by_name = spec.get('fda') and all(t in nm for t in spec['fda'])
                by_any = spec.get('fda_any') and any(t in nm for t in spec['fda_any'])
                if by_name or by_any:
                    freq.append(i)
                    if not hit(nm):
                        p('%s: answering FDA record %d (%s) not matched' % (rid, i, nm[:80]))
                    if spec.get('fda_ev') and not any(e in ind.lower() for e in spec['fda_ev']):
                        p('%s: FDA record %d lacks evidence %s' % (rid, i, spec['fda_ev']))
            for i, (nm, ind) in enumerate(fda):
                if hit(nm) and i not in freq:
                    p('%s: substring matches FDA record %d (%s) that the spec does not require' % (rid, i, nm[:80]))
        if spec.get('fda_ev') and not freq:
            p('%s: expected FDA answers but found none' % rid)
        if not req and not freq and not spec.get('chem'):
            p('%s: no answering document found' % rid)
        # --- ChEMBL matches must be the substance itself (structure rows: the record's own name)
        for c in chem:
            if hit(c) and kind != 'structure':
                if not any(c.startswith(n.split()[0]) or n.split()[0] in c for n in spec.get('names', []) + spec.get('chem_ok', [])):
                    p('%s: substring matches unrelated ChEMBL record %r' % (rid, c))
        # --- the expected section exists for the product(s)
        if sec is not None:
            ok = any(hit(d) and secn in secs for d, secs in ema.items())
            ok = ok or (sec == 'indications_and_usage' and any(hit(nm) for nm, _ in fda))
            if not ok:
                p('%s: no matched document has section %s' % (rid, sec))
    if probs:
        print('\n'.join(probs))
        print('%d problem(s)' % len(probs))
        return 1
    print('OK')
    return 0


if __name__ == '__main__':
    sys.exit(main())
