#!/usr/bin/env python3
"""Re-check probe53.jsonl against the corpus under /work/shared/data (stdlib only).

Adapted from verify51.py (probe51). Document names (what
expected_doc_name_substrings are matched against, lower-cased):
  EMA leaflet  -> the `drug` field                      (one document per product)
  FDA label    -> all `product_names` joined with " | "  (one document per record)
  ChEMBL       -> `pref_name`
Leaflet sections map to the dev-set ids by their number:
  1 -> indications_and_usage, 2 -> warnings, 3 -> dosage_and_administration,
  4 -> adverse_reactions, 5 -> storage, 6 -> description.
FDA records only carry indications_and_usage, so they are required answers only for
questions with that section (or with no section).
The avoid list is read from avoid53.txt next to this file; every name a row uses (the
spec's `names`, i.e. the products/substances the query is about, plus every expected
substring) is compared with every avoid entry by substring match in both directions,
and no avoid entry may occur as a whole word/phrase in the query.
Prints OK, or one line per problem.
"""
import csv, json, os, re, sys

DATA = os.environ.get('DATA', '/work/shared/data')
HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, 'probe53.jsonl')
AVOID_FILE = os.path.join(HERE, 'avoid53.txt')
PFX = 'p53'
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
#  fda_excl : FDA records (line index) that look related but do not answer, with reason; they
#             must exist and must NOT be matched by the row's substrings
#  formula  : ('structure' rows asking for a formula) molecular formula, re-derived here from
#             the ChEMBL SMILES of `chem` by a small stdlib SMILES atom counter
S = {
 # entity_condition
 'p53-01': dict(names=['pentostatin', 'nipent'], fda=['pentostatin'], fda_ev=['hairy cell leukemia']),
 'p53-02': dict(names=['pegcetacoplan', 'syfovre'], fda=['pegcetacoplan'], fda_ev=['geographic atrophy']),
 'p53-03': dict(names=['elosulfase alfa', 'vimizim'], fda=['elosulfase'], fda_ev=['morquio a']),
 'p53-04': dict(names=['alitretinoin', 'panretin'], fda=['alitretinoin'], fda_ev=['cutaneous lesions in adults with aids related kaposi']),
 'p53-05': dict(names=['acitretin'], fda=['acitretin'], fda_ev=['severe psoriasis']),
 'p53-06': dict(names=['paromomycin', 'humatin'], fda=['paromomycin'], fda_ev=['intestinal amebiasis']),
 'p53-07': dict(names=['rifabutin'], fda=['rifabutin'], fda_ev=['mycobacterium avium complex']),
 'p53-08': dict(names=['becaplermin', 'regranex'], fda=['becaplermin'], fda_ev=['diabetic neuropathic ulcers']),
 'p53-09': dict(names=['dihydroergotamine'], fda=['dihydroergotamine'], fda_ev=['acute treatment of migraine']),
 'p53-10': dict(names=['colchicine'], fda=['colchicine'], fda_ev=['prophylaxis of gout flares']),
 'p53-11': dict(names=['eladocagene exuparvovec', 'upstaza'], subst=['eladocagene exuparvovec'],
                ev=['aromatic l-amino acid decarboxylase']),
 'p53-12': dict(names=['obizur'], subst=['susoctocog alfa'], ev=['acquired haemophilia']),
 # class
 'p53-13': dict(names=['rocuronium', 'vecuronium', 'cisatracurium'], fda_any=['rocuronium', 'vecuronium', 'cisatracurium'],
                fda_ev=['skeletal muscle relaxation'],
                fda_excl={851: 'succinylcholine is a depolarizing blocker and its record states no use'}),
 'p53-14': dict(names=['proparacaine', 'tetracaine'], fda_any=['proparacaine', 'tetracaine'],
                fda_ev=['topical ophthalmic anesthetic', 'topical anesthesia']),
 'p53-15': dict(names=['phenylephrine', 'tropicamide'], fda_any=['phenylephrine', 'tropicamide'],
                fda_ev=['dilate the pupil', 'mydriasis']),
 'p53-16': dict(names=['clobetasol propionate', 'halobetasol propionate'], fda_any=['clobetasol', 'halobetasol'],
                fda_ev=['super-high potency'],
                fda_excl={256: 'diflorasone diacetate is labelled high potency, not super-high potency',
                          86: 'betamethasone dipropionate record is not labelled super-high potency (and is on the avoid list)'}),
 'p53-17': dict(names=['adynovi', 'esperoct', 'jivi', 'rurioctocog alfa pegol', 'turoctocog alfa pegol', 'damoctocog alfa pegol'],
                subst_any=['rurioctocog alfa pegol', 'turoctocog alfa pegol', 'damoctocog alfa pegol'],
                ev=['haemophilia a'],
                excl={'elocta': 'Fc-fusion factor VIII, not PEGylated',
                      'advate': 'standard (non-PEGylated) octocog alfa',
                      'kovaltry': 'standard (non-PEGylated) octocog alfa',
                      'novoeight': 'non-PEGylated turoctocog alfa',
                      'obizur': 'porcine factor VIII for acquired haemophilia, not PEGylated',
                      'roctavian': 'gene therapy, not a factor VIII concentrate'}),
 'p53-18': dict(names=['acarbose', 'miglitol'], fda_any=['acarbose'], fda_ev=['type 2 diabetes']),
 'p53-19': dict(names=['baclofen', 'tizanidine'], fda_any=['baclofen', 'tizanidine'], fda_ev=['spasticity'],
                fda_excl={211: 'cyclobenzaprine: "have not been found effective in the treatment of spasticity" (and is on the avoid list)'}),
 'p53-20': dict(names=['lumason', 'sulfur hexafluoride'], fda_any=['lumason'], fda_ev=['echocardiograms']),
 'p53-21': dict(names=['curosurf', 'poractant alfa'], fda_any=['poractant'], fda_ev=['respiratory distress syndrome']),
 'p53-22': dict(names=['milrinone'], fda_any=['milrinone'], fda_ev=['acute decompensated heart failure']),
 # structure
 'p53-23': dict(names=['thiotepa', 'tepadina'], subst=['thiotepa'], fda=['thiotepa'], chem='THIOTEPA',
                smiles='S=P(N1CC1)(N1CC1)N1CC1'),
 'p53-24': dict(names=['clofarabine', 'evoltra'], subst=['clofarabine'], chem='CLOFARABINE'),
 'p53-25': dict(names=['flucytosine'], fda=['flucytosine'], chem='FLUCYTOSINE', formula='C4H4FN3O'),
 'p53-26': dict(names=['zonisamide'], fda=['zonisamide'], chem='ZONISAMIDE', smiles='NS(=O)(=O)Cc1noc2ccccc12'),
 'p53-27': dict(names=['plerixafor', 'mozobil'], subst=['plerixafor'], fda=['plerixafor'], chem='PLERIXAFOR'),
 'p53-28': dict(names=['nilutamide'], fda=['nilutamide'], chem='NILUTAMIDE',
                smiles='CC1(C)NC(=O)N(c2ccc([N+](=O)[O-])c(C(F)(F)F)c2)C1=O'),
 'p53-29': dict(names=['ramelteon'], fda=['ramelteon'], chem='RAMELTEON', smiles='CCC(=O)NCC[C@@H]1CCc2ccc3c(c21)CCO3'),
 'p53-30': dict(names=['tiagabine hydrochloride'], fda=['tiagabine'], chem='TIAGABINE HYDROCHLORIDE',
                smiles='Cc1ccsc1C(=CCCN1CCC[C@@H](C(=O)O)C1)c1sccc1C.Cl'),
 # combination
 'p53-31': dict(names=['darunavir', 'cobicistat', 'rezolsta', 'prezcobix'], subst=['darunavir', 'cobicistat'],
                fda=['prezcobix'], ev=['hiv'], fda_ev=['hiv-1'],
                excl={'genvoya': 'contains cobicistat but no darunavir (elvitegravir-based four-drug tablet)',
                      'stribild': 'contains cobicistat but no darunavir (elvitegravir-based four-drug tablet)',
                      'darunavir': 'darunavir alone (taken with ritonavir), no cobicistat in the tablet'}),
 'p53-32': dict(names=['salmeterol', 'fluticasone propionate', 'bropair', 'seffalair', 'fluticasone propionate and salmeterol'],
                subst=['salmeterol', 'fluticasone propionate'], fda=['fluticasone propionate and salmeterol'],
                ev=['asthma'], fda_ev=['asthma']),
 'p53-33': dict(names=['etonogestrel', 'ethinyl estradiol', 'nuvaring'], fda=['nuvaring'], fda_ev=['prevent pregnancy']),
 # FDA #19 is a merged combined-hormonal-contraceptive record whose product_names list NuvaRing: required by name
 'p53-34': dict(names=['erythromycin', 'benzoyl peroxide'], fda=['erythromycin and benzoyl peroxide'],
                fda_ev=['erythromycin and benzoyl peroxide topical gel usp is indicated for the topical treatment of acne vulgaris']),
 'p53-35': dict(names=['hetastarch', 'sodium chloride'], fda=['hetastarch'], fda_ev=['hypovolemia']),
 'p53-36': dict(names=['mixtard', 'isophane human insulin'],
                subst=['soluble human insulin', 'isophane human insulin'], ev=['fast-acting and a long-acting'],
                excl={'protaphane': 'isophane human insulin only, not a premix',
                      'insulatard': 'isophane human insulin only, not a premix'}),
 # reversal_antidote (evidence in the overdose paragraph of leaflet section 3)
 'p53-37': dict(names=['liprolog'], brand=['liprolog'], evsec=3, ev=['eat glucose tablets'], ev2=['glucagon injection']),
 'p53-38': dict(names=['trepulmix', 'treprostinil'], brand=['trepulmix'], evsec=3, ev=['reduce or discontinue the infusion']),
 'p53-39': dict(names=['endolucinbeta', 'lutetium'], brand=['endolucinbeta'], evsec=3,
                ev=['remove the radionuclide from the body']),
 'p53-40': dict(names=['roctavian'], brand=['roctavian'], evsec=3, ev=['higher factor viii levels'], ev2=['blood clots']),
 # named
 'p53-41': dict(names=['abraxane'], brand=['abraxane'], ev=['breast-feeding'], ev2=['low white blood cell count']),
 'p53-42': dict(names=['avastin'], brand=['avastin'], ev=['high blood pressure']),
 'p53-43': dict(names=['advate'], brand=['advate'], ev=['20 to 40 iu per kg'], ev2=['every 2 to 3 days']),
 'p53-44': dict(names=['cervarix'], brand=['cervarix'], ev=['cervical cancer']),
 'p53-45': dict(names=['prehevbri'], brand=['prehevbri'], ev=['aluminium hydroxide']),
 'p53-46': dict(names=['kirsty'], brand=['kirsty'], ev=['maximum of 28 days'], ev2=['store below 30']),
 'p53-47': dict(names=['zarzio'], brand=['zarzio'], ev=['daily injection into the tissue just under the skin'],
                ev2=['taught how to give subcutaneous injections']),
 'p53-48': dict(names=['eklira'], brand=['eklira'], ev=['twice a day'], ev2=['before or after food']),
 'p53-49': dict(names=['kovaltry'], brand=['kovaltry'], ev=['inhibitors']),
 'p53-50': dict(names=['flucelvax'], brand=['flucelvax'], ev=['madin darby canine kidney']),
 'p53-51': dict(names=['trecondi'], brand=['trecondi'], ev=['febrile neutropenia']),
 'p53-52': dict(names=['novothirteen'], brand=['novothirteen'], ev=['store in a refrigerator']),
 # typo_salt_noise
 'p53-53': dict(names=['moexipril'], fda=['moexipril'], fda_ev=['hypertension']),
 'p53-54': dict(names=['fenoprofen calcium'], fda=['fenoprofen'], fda_ev=['rheumatoid arthritis']),
 'p53-55': dict(names=['glatiramer acetate'], fda=['glatiramer'], fda_ev=['relapsing forms of multiple sclerosis']),
 'p53-56': dict(names=['nabumetone'], fda=['nabumetone'], fda_ev=['osteoarthritis']),
 'p53-57': dict(names=['flavoxate'], fda=['flavoxate'], fda_ev=['urgency']),
 'p53-58': dict(names=['mirtazapine', 'remeron'], fda=['mirtazapine'], fda_ev=['major depressive disorder']),
 'p53-59': dict(names=['escitalopram oxalate'], fda=['escitalopram'], fda_ev=['generalized anxiety disorder'],
                fda_excl={180: 'citalopram (racemate) record: a different product; not matched by "escitalopram"'}),
 'p53-60': dict(names=['disopyramide phosphate', 'norpace'], fda=['disopyramide'], fda_ev=['ventricular arrhythmias']),
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


VALENCE = {'B': 3, 'C': 4, 'N': 3, 'O': 2, 'P': 3, 'S': 2, 'F': 1, 'Cl': 1, 'Br': 1, 'I': 1}


def smiles_formula(smi):
    """Hill formula of a SMILES in the organic subset (enough for small drug molecules).
    Implicit H = default valence - bond orders (aromatic bonds count 1, plus 1 for the
    aromatic pi bond), clamped at 0; bracket atoms carry their own H count."""
    atoms = []          # [element, explicit_h or None, aromatic, bond_sum]
    counts = {}
    i, prev, stack, rings, bond = 0, None, [], {}, 1
    while i < len(smi):
        ch = smi[i]
        if ch == '(':
            stack.append(prev); i += 1; continue
        if ch == ')':
            prev = stack.pop(); i += 1; continue
        if ch in '=#':
            bond = 2 if ch == '=' else 3; i += 1; continue
        if ch in '-/\\':
            i += 1; continue
        if ch == '.':
            prev = None; i += 1; continue
        if ch.isdigit() or ch == '%':
            if ch == '%':
                key = smi[i + 1:i + 3]; i += 3
            else:
                key = ch; i += 1
            if key in rings:
                j, b = rings.pop(key)
                b = max(b, bond)
                atoms[j][3] += b; atoms[prev][3] += b
            else:
                rings[key] = (prev, bond)
            bond = 1
            continue
        if ch == '[':
            k = smi.index(']', i)
            body = smi[i + 1:k]
            m = re.match(r'(\d*)([A-Z][a-z]?|[a-z])(@*)(H\d*)?([+-]\d*|[+-]+)?', body)
            el = m.group(2)
            arom = el.islower()
            el = el.capitalize()
            h = 0
            if m.group(4):
                h = int(m.group(4)[1:] or 1)
            atoms.append([el, h, arom, 0])
            i = k + 1
        else:
            two = smi[i:i + 2]
            if two in ('Cl', 'Br'):
                el, arom = two, False; i += 2
            else:
                el, arom = ch.upper(), ch.islower(); i += 1
            atoms.append([el, None, arom, 0])
        cur = len(atoms) - 1
        if prev is not None:
            atoms[cur][3] += bond; atoms[prev][3] += bond
        prev, bond = cur, 1
    for el, h, arom, bsum in atoms:
        counts[el] = counts.get(el, 0) + 1
        if h is None:
            h = max(0, VALENCE.get(el, 0) - bsum - (1 if arom else 0))
        counts['H'] = counts.get('H', 0) + h
    out = ''
    for el in ['C', 'H'] + sorted(e for e in counts if e not in ('C', 'H')):
        n = counts.get(el, 0)
        if n:
            out += el + (str(n) if n > 1 else '')
    return out


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
            if spec.get('formula'):
                got = smiles_formula(dict(chemrows).get(cn, ''))
                if got != spec['formula']:
                    p('%s: formula %s != %s derived from the ChEMBL SMILES' % (rid, spec['formula'], got))
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
        for i, why in spec.get('fda_excl', {}).items():
            if not why or not (0 <= i < len(fda)):
                p('%s: FDA exclusion %r needs an existing record and a reason' % (rid, i))
            elif hit(fda[i][0]):
                p('%s: excluded FDA record %d is matched by a substring' % (rid, i))
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
