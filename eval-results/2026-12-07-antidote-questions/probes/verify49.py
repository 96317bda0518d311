#!/usr/bin/env python3
"""Re-check probe49.jsonl against the corpus under /work/shared/data (stdlib only).

Adapted from template_verify48.py (probe48). Document names (what
expected_doc_name_substrings are matched against, lower-cased):
  EMA leaflet  -> the `drug` field                      (one document per product)
  FDA label    -> all `product_names` joined with " | "  (one document per record)
  ChEMBL       -> `pref_name`
Leaflet sections map to the dev-set ids by their number:
  1 -> indications_and_usage, 2 -> warnings, 3 -> dosage_and_administration,
  4 -> adverse_reactions, 5 -> storage, 6 -> description.
FDA records only carry indications_and_usage, so they are required answers only for
questions with that section (or with no section).
Prints OK, or one line per problem.
"""
import csv, json, os, re, sys

DATA = os.environ.get('DATA', '/work/shared/data')
HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, 'probe49.jsonl')
SECNUM = {'indications_and_usage': 1, 'warnings': 2, 'dosage_and_administration': 3,
          'adverse_reactions': 4, 'storage': 5, 'description': 6}
KINDS = {'entity_condition': 12, 'class': 10, 'structure': 8, 'combination': 6,
         'reversal_antidote': 4, 'named': 12, 'typo_salt_noise': 8}
KIND_ORDER = ['entity_condition'] * 12 + ['class'] * 10 + ['structure'] * 8 + ['combination'] * 6 + \
             ['reversal_antidote'] * 4 + ['named'] * 12 + ['typo_salt_noise'] * 8

# contents of the avoid list (the dev sets, probe47, probe48), one entry a line (some entries are several words)
AVOID = ['abilify', 'abiraterone', 'acetadote', 'acetylcysteine', 'aclasta', 'actelsar', 'adrovance', 'advagraf', 'aerius', 'afatinib', 'afinitor', 'aflibercept', 'ahzantive', 'aimovig', 'ajovy', 'akeega', 'akynzeo', 'aldara', 'alyftrek', 'ambrisentan', 'anagrelide', 'arava', 'aubagio', 'axura', 'azomyr', 'baraclude', 'bekemv', 'betmiga', 'bimzelx', 'bortezomib', 'brilique', 'briumvi', 'buprenorphine and naloxone', 'cabozantinib', 'camzyos', 'cannabidiol', 'capecitabine', 'champix', 'cholib', 'cinacalcet', 'cinqaero', 'cinqair', 'cobimetinib', 'constella', 'corbilta', 'cosentyx', 'cresemba', 'cyanokit', 'cymbalta', 'darunavir', 'dasselta', 'daxas', 'desloratadine', 'duloxetine', 'dupixent', 'durvalumab', 'ebixa', 'ecansya', 'efficib', 'efient', 'ellaone', 'emgality', 'empagliflozin', 'entecavir', 'entresto', 'envarsus', 'epidiolex', 'epidyolex', 'epysqli', 'eribulin', 'esbriet', 'evenity', 'evrysdi', 'eylea', 'fampyra', 'fasenra', 'fingolimod', 'forsteo', 'fosavance', 'fycompa', 'gardasil', 'gilenya', 'glyxambi', 'halaven', 'imiquimod', 'inhixa', 'inlyta', 'invokana', 'iressa', 'jakavi', 'janumet', 'januvia', 'jentadueto', 'jinarc', 'kaftrio', 'kalydeco', 'kentera', 'keppra', 'kerendia', 'kesimpta', 'kinzalkomb', 'kyntheum', 'kyprolis', 'lenvatinib', 'leqvio', 'letairis', 'levemir', 'levodopa and entacapone', 'levodopacarbidopaentacapone', 'linagliptin', 'lokelma', 'lumigan', 'lynparza', 'marixino', 'maviret', 'memantine', 'mevlyq', 'micardisplus', 'mimpara', 'mirapexin', 'mirvaso', 'modigraf', 'neoclarityn', 'neparvis', 'ninlaro', 'nivolumab', 'noxafil', 'nucala', 'ocrevus', 'olanzapine', 'olumiant', 'oprymea', 'opsumit', 'orkambi', 'osimertinib', 'otezla', 'oxybutynin', 'ozurdex', 'palbociclib', 'paxlovid', 'pertuzumab', 'piasky', 'plavix', 'pramipexole', 'prasugrel', 'prezista', 'pritorplus', 'prolia', 'quviviq', 'relatlimab', 'relvar', 'renvela', 'repatha', 'revlimid', 'revolade', 'rezolsta', 'rilutek', 'riluzole', 'rinvoq', 'ristaben', 'ristfor', 'rocuronium', 'ruxolitinib', 'semaglutide', 'sevelamer', 'shingrix', 'sifrol', 'skyrizi', 'slenyto', 'soliris', 'spravato', 'sprycel', 'stalevo', 'stayveer', 'steglujan', 'stelara', 'tacforius', 'tagrisso', 'taltz', 'tecentriq', 'tecfidera', 'telmisartan and hydrochlorothiazide', 'teriflunomide', 'tesavel', 'tiglutik', 'tivicay', 'tolucombi', 'tracleer', 'trajenta', 'trastuzumab', 'tremelimumab', 'tremfya', 'trintellix', 'truvada', 'tyruko', 'tysabri', 'ultibro', 'ultomiris', 'ulunar', 'uzpruvo', 'vabysmo', 'valdoxan', 'vaniqa', 'vantavo', 'vargatef', 'veklury', 'velcade', 'velmetia', 'vemlidy', 'vemurafenib', 'vfend', 'viagra', 'volibris', 'vortioxetine', 'votrient', 'vyepti', 'wakix', 'xagrid', 'xelevia', 'xeljanz', 'xeloda', 'xenical', 'xofluza', 'xoterna', 'xtandi', 'xultophy', 'yentreve', 'yesafili', 'zavicefta', 'zepatier', 'zubsolv', 'zypadhera', 'zyprexa', 'zytiga']
# products/substances named in the dev-set queries but not in their expected substrings
DEV_QUERY_EXTRA = """tecentriq rocuronium pertuzumab trastuzumab vemurafenib cobimetinib relatlimab nivolumab
durvalumab tremelimumab lenvatinib afatinib palbociclib cabozantinib semaglutide empagliflozin""".split()
GENERIC_WORDS = set("""active substance substances hydrochloride acetate fumarate sodium dihydrate
monohydrate maleate mesilate mesylate bromide acid human insulin recombinant called micrograms
adjustment carbonate chloride concentrate contains copovidone corresponding equivalent film-coated highly
hydrochloric hydroxide ingredients injections magnesium malate mannitol medicine non-infectious phosphate
polysorbate pregelatinised protein purified reconstitution solution starch stearate sucrose tablet furoate""".split())
# words allowed in 'class' queries although they are also ChEMBL names (none needed so far)
CLASS_WORD_OK = set()

# Per-row specification.
#  brand    : EMA documents the question names (required answers)
#  subst    : lower-case terms that must ALL occur in an EMA leaflet's section 6 (contents)
#             for that product to contain the substance(s); every such product is required
#             unless listed in excl with a reason
#  subst_any: like subst, but a product is required if its section 6 holds ANY of the terms
#             (used for 'class' rows: one term per member substance)
#  fda      : terms that must ALL occur in an FDA record's joined product names for it to be
#             a required answer (only when section is indications_and_usage or absent)
#  fda_any  : an FDA record is required if its joined names hold ANY of these terms
#  topic    : terms that must ALL occur in the answering section; every EMA leaflet / FDA
#             record whose section contains them is required unless excluded
#  ev       : evidence: at least one must occur in the expected section of every required
#             EMA leaflet (section 1 when the row has no expected_section)
#  fda_ev   : the same for the required FDA records' indications text
#  chem     : ('structure' rows) ChEMBL pref_name that answers; must be in the csv and its
#             lower-cased form must be one of the substrings
#  smiles   : ('structure' rows) the SMILES in the query; must occur verbatim in the query and
#             be the csv SMILES of the row whose pref_name is chem
S = {
 # entity_condition
 'p49-01': dict(subst=['lorlatinib'], fda=['lorlatinib'], ev=['alk-positive']),
 'p49-02': dict(subst=['capmatinib'], fda=['capmatinib'], ev=['called met']),
 'p49-03': dict(subst=['larotrectinib'], fda=['larotrectinib'], ev=['ntrk']),
 'p49-04': dict(subst=['ivosidenib'], fda=['ivosidenib'], ev=['idh1'], ev2=['cholangiocarcinoma']),
 'p49-05': dict(subst=['tafamidis'], fda=['tafamidis'], ev=['polyneuropathy'], ev2=['transthyretin']),
 'p49-06': dict(subst=['burosumab'], fda=['burosumab'], ev=['x-linked hypophosphataemia']),
 'p49-07': dict(subst=['migalastat'], fda=['migalastat'], ev=['fabry'], fda_ev=['amenable']),
 'p49-08': dict(subst=['emicizumab'], fda=['emicizumab'], ev=['factor viii inhibitors']),
 'p49-09': dict(subst=['mitapivat'], fda=['mitapivat'], ev=['pyruvate kinase deficiency']),
 'p49-10': dict(subst=['selumetinib'], fda=['selumetinib'], ev=['plexiform neurofibromas'], fda_ev=['plexiform neurofibromas']),
 'p49-11': dict(subst=['avacopan'], fda=['avacopan'], ev=['granulomatosis with polyangiitis'], ev2=['microscopic polyangiitis']),
 'p49-12': dict(brand=['fintepla'], fda=['fintepla'], ev=['dravet']),
 # class (members listed by substance; exhaustiveness over EMA section 6 and FDA names)
 'p49-13': dict(subst_any=['caspofungin', 'anidulafungin', 'micafungin', 'rezafungin'],
                fda_any=['caspofungin', 'anidulafungin', 'micafungin', 'rezafungin', 'cancidas', 'eraxis', 'mycamine', 'rezzayo'],
                ev=['invasive candidiasis'], fda_ev=['candid']),
 'p49-14': dict(subst_any=['efgartigimod', 'rozanolixizumab', 'nipocalimab'],
                fda_any=['efgartigimod', 'vyvgart', 'rozanolixizumab', 'rystiggo', 'nipocalimab', 'imaavy'],
                ev=['myasthenia gravis'], fda_ev=['myasthenia gravis'], ev2=['fcrn']),
 'p49-15': dict(subst_any=['roxadustat', 'vadadustat', 'daprodustat'],
                fda_any=['roxadustat', 'vadadustat', 'daprodustat', 'jesduvroq', 'vafseo'],
                ev=['chronic kidney disease'], ev2=['hif']),
 'p49-16': dict(subst_any=['ozanimod', 'etrasimod'], fda_any=['ozanimod', 'zeposia', 'etrasimod', 'velsipity'],
                ev=['ulcerative colitis'], fda_ev=['ulcerative colitis'],
                excl={'mayzent': 'siponimod (S1P modulator) licensed for multiple sclerosis only, not ulcerative colitis',
                      'ponvory': 'ponesimod (S1P modulator) licensed for multiple sclerosis only, not ulcerative colitis'}),
 'p49-17': dict(subst_any=['rimegepant', 'atogepant', 'zavegepant', 'ubrogepant'],
                fda_any=['rimegepant', 'nurtec', 'atogepant', 'qulipta', 'zavegepant', 'zavzpret', 'ubrogepant', 'ubrelvy'],
                ev=['migraine'], fda_ev=['migraine']),
 'p49-18': dict(subst_any=['vismodegib', 'sonidegib'], fda_any=['vismodegib', 'sonidegib', 'erivedge', 'odomzo'],
                ev=['basal cell carcinoma'],
                excl={'daurismo': 'glasdegib (hedgehog inhibitor) licensed for acute myeloid leukaemia, not basal cell carcinoma'}),
 'p49-19': dict(subst_any=['pemigatinib', 'futibatinib', 'infigratinib'],
                fda_any=['pemigatinib', 'pemazyre', 'futibatinib', 'lytgobi', 'infigratinib', 'truseltiq'],
                ev=['cholangiocarcinoma'], fda_ev=['cholangiocarcinoma']),
 'p49-20': dict(subst_any=['midostaurin', 'quizartinib', 'gilteritinib'],
                fda_any=['midostaurin', 'rydapt', 'quizartinib', 'vanflyta', 'gilteritinib', 'xospata'],
                ev=['flt3']),
 'p49-21': dict(subst_any=['deferasirox', 'deferiprone'], fda_any=['deferasirox', 'deferiprone', 'exjade', 'jadenu', 'ferriprox'],
                ev=['iron overload', 'excess iron'], ev2=['transfusion']),
 'p49-22': dict(subst_any=['dalbavancin', 'oritavancin', 'telavancin'],
                fda_any=['dalbavancin', 'dalvance', 'oritavancin', 'orbactiv', 'kimyrsa', 'telavancin', 'vibativ'],
                ev=['skin']),
 # structure
 'p49-23': dict(subst=['prucalopride'], fda=['prucalopride'], chem='PRUCALOPRIDE',
                smiles='COCCCN1CCC(NC(=O)c2cc(Cl)c(N)c3c2OCC3)CC1'),
 'p49-24': dict(subst=['riociguat'], fda=['riociguat'], chem='RIOCIGUAT'),
 'p49-25': dict(subst=['tolcapone'], fda=['tolcapone'], chem='TOLCAPONE'),
 'p49-26': dict(subst=['selexipag'], fda=['selexipag'], chem='SELEXIPAG',
                smiles='CC(C)N(CCCCOCC(=O)NS(C)(=O)=O)c1cnc(-c2ccccc2)c(-c2ccccc2)n1'),
 'p49-27': dict(subst=['silodosin'], fda=['silodosin'], chem='SILODOSIN',
                smiles='C[C@H](Cc1cc2c(c(C(N)=O)c1)N(CCCO)CC2)NCCOc1ccccc1OCC(F)(F)F'),
 'p49-28': dict(subst=['bedaquiline'], fda=['bedaquiline'], chem='BEDAQUILINE FUMARATE',
                smiles='COc1nc2ccc(Br)cc2cc1[C@@H](c1ccccc1)[C@@](O)(CCN(C)C)c1cccc2ccccc12.O=C(O)/C=C/C(=O)O'),
 'p49-29': dict(subst=['aliskiren'], fda=['aliskiren'], chem='ALISKIREN'),
 'p49-30': dict(subst=['letermovir'], fda=['letermovir'], chem='LETERMOVIR'),
 # combination
 'p49-31': dict(subst=['bempedoic acid', 'ezetimibe'], fda=['nexlizet'], ev=['cholesterol'], fda_ev=['nexlizet']),
 'p49-32': dict(subst=['estetrol', 'drospirenone'], fda=['estetrol'], ev=['contracepti']),
 'p49-33': dict(subst=['brinzolamide', 'timolol'], fda=['brinzolamide', 'timolol'], ev=['glaucoma']),
 'p49-34': dict(subst=['meropenem', 'vaborbactam'], fda=['vaborbactam'], ev=['urinary tract']),
 'p49-35': dict(subst=['decitabine', 'cedazuridine'], fda=['cedazuridine'], ev=['acute myeloid leukaemia']),
 'p49-36': dict(subst=['aclidinium', 'formoterol'], fda=['aclidinium', 'formoterol'], ev=['copd']),
 # reversal_antidote
 'p49-37': dict(fda=['leucovorin calcium'], topic=['high dose methotrexate'], fda_ev=['rescue']),
 'p49-38': dict(fda=['fomepizole'], topic=['ethylene glycol', 'antidote'], fda_ev=['antidote']),
 'p49-39': dict(brand=['ogluo'], fda_any=['glucagon'], topic=['severe hypoglyc'], ev=['severe hypoglycaemia'],
                fda_ev=['severe hypoglycemia']),
 'p49-40': dict(fda=['methylene blue'], topic=['methemoglobinemia', 'treatment of'], fda_ev=['acquired methemoglobinemia']),
 # named
 'p49-41': dict(brand=['rayvow'], ev=['driving']),
 'p49-42': dict(subst=['fezolinetant'], ev=['liver enzymes']),
 'p49-43': dict(brand=['ryeqo'], ev=['if you forget']),
 'p49-44': dict(brand=['vazkepa'], ev=['soya']),
 'p49-45': dict(brand=['sunosi'], ev=['do not take sunosi']),
 'p49-46': dict(brand=['isturisa'], ev=['breast-feeding']),
 'p49-47': dict(brand=['spinraza'], ev=['refrigerator']),
 'p49-48': dict(brand=['lyfnua'], ev=['taste']),
 'p49-49': dict(brand=['rukobia'], ev=['very common']),
 'p49-50': dict(brand=['kapruvia'], ev=['end of your dialysis']),
 'p49-51': dict(brand=['sycrest'], ev=['under the tongue']),
 'p49-52': dict(brand=['xermelo'], ev=['telotristat']),
 # typo_salt_noise
 'p49-53': dict(subst=['deucravacitinib'], fda=['deucravacitinib'], ev=['plaque psoriasis']),
 'p49-54': dict(subst=['vericiguat'], fda=['vericiguat'], ev=['heart failure']),
 'p49-55': dict(subst=['ivabradine'], fda=['ivabradine'], ev=['angina']),
 'p49-56': dict(subst=['sapropterin'], fda=['sapropterin'], ev=['phenylketonuria'], fda_ev=['phenylketonuria']),
 'p49-57': dict(brand=['bylvay'], fda=['bylvay'], ev=['progressive familial intrahepatic cholestasis'], ev2=['itching']),
 'p49-58': dict(subst=['cenobamate'], ev=['feeling dizzy'], ev2=['more than 1 in 10']),
 'p49-59': dict(subst=['amifampridine'], fda=['amifampridine'], ev=['lambert-eaton']),
 'p49-60': dict(subst=['lomitapide'], fda=['lomitapide'], ev=['homozygous familial hypercholesterolaemia']),
}
SMILES_TOKEN = re.compile(r'(?=\S*\d)(?=\S*[=#()\[\]@])[A-Za-z0-9@+\-\[\]()=#\\/%.]+')


def load():
    ema = {}
    for line in open(os.path.join(DATA, 'drug_labels/ema_leaflet_sections.jsonl')):
        r = json.loads(line)
        m = re.match(r'\s*(\d)\.', r['section'])
        if m:
            ema.setdefault(r['drug'].lower(), {})[int(m.group(1))] = r['text']
        else:
            ema.setdefault(r['drug'].lower(), {})
    fda = []
    for line in open(os.path.join(DATA, 'drug_labels/fda_indications.jsonl')):
        r = json.loads(line)
        fda.append((' | '.join(r['product_names']).lower(), r['indications']))
    chemrows = [(r['pref_name'], r['smiles']) for r in
                csv.DictReader(open(os.path.join(DATA, 'compounds/chembl_approved_drugs.csv')))]
    return ema, fda, chemrows


def words(s):
    return set(re.findall(r'[a-z][a-z0-9\-]+', s.lower()))


def main():
    ema, fda, chemrows = load()
    chem = [n.lower() for n, _ in chemrows]
    probs = []
    p = probs.append
    rows = [json.loads(l) for l in open(PROBE) if l.strip()]
    # dev-set products and avoid list
    dev = []
    for fn in ('drug_kb_dev.jsonl', 'drug_kb_dev_more.jsonl'):
        dev += [json.loads(l) for l in open(os.path.join(DATA, fn)) if l.strip()]
    dev_keys = set(dev[0].keys())
    avoid = {a.lower() for a in AVOID if ' ' not in a} | set(DEV_QUERY_EXTRA)
    avoid_phrases = {a.lower() for a in AVOID if ' ' in a}
    for r in dev:
        avoid |= {s.lower() for s in r['expected_doc_name_substrings']}
        avoid |= {w for w in words(r['query']) if w in ema}
    # active substances of avoided EMA products
    avoid_subst = set()
    for a in list(avoid):
        if a in ema and 6 in ema[a]:
            m = re.search(r'active substances? (?:is|are|in)[^.]{0,200}', ema[a][6], re.I)
            if m:
                avoid_subst |= {w for w in words(m.group(0)) if len(w) >= 6 and w not in GENERIC_WORDS}
    # --- format
    if len(rows) != 60:
        p('expected 60 rows, got %d' % len(rows))
    ids = [r.get('id') for r in rows]
    if ids != ['p49-%02d' % i for i in range(1, 61)]:
        p('ids are not p49-01..p49-60 in order')
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
        extra = set(r) - allowed
        if extra:
            p('%s: unexpected fields %s' % (rid, extra))
        if not (set(r) - {'kind'}) <= dev_keys | {'expected_section'}:
            p('%s: fields not in dev format' % rid)
        if r.get('k') != 5:
            p('%s: k must be 5' % rid)
        if r['query'] in queries:
            p('%s: duplicate query' % rid)
        queries.add(r['query'])
        subs = r['expected_doc_name_substrings']
        if not subs or any(s != s.lower() or not s.strip() for s in subs):
            p('%s: substrings must be non-empty lower-case' % rid)
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
        # --- avoid list
        ql = r['query'].lower()
        qw = words(r['query'])
        bad = (qw & avoid) | (qw & avoid_subst) | {s for s in subs if s in avoid or s in avoid_subst}
        bad |= {a for a in avoid_phrases if a in ql or any(a in s for s in subs)}
        if bad:
            p('%s: uses avoided product/substance %s' % (rid, sorted(bad)))
        # --- class rows name no drug
        if kind == 'class':
            named = {w for w in qw if (w in ema or w in chem) and w not in CLASS_WORD_OK}
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
                allsm = {s for _, s in chemrows}
                if sm not in allsm:
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
        secn = SECNUM.get(sec, 1)
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
            contains = {d for d, secs in ema.items() if all(t in secs.get(6, '').lower() for t in spec['subst'])}
            if not contains:
                p('%s: no EMA product contains %s' % (rid, spec['subst']))
            req |= contains - set(excl)
        if 'subst_any' in spec:
            for t in spec['subst_any']:
                req |= {d for d, secs in ema.items() if t in secs.get(6, '').lower()} - set(excl)
            if not req:
                p('%s: no EMA product contains any of %s' % (rid, spec['subst_any']))
        if 'topic' in spec:
            req |= {d for d, secs in ema.items()
                    if all(t in secs.get(secn, '').lower() for t in spec['topic'])} - set(excl)
        if not req and not spec.get('fda') and not spec.get('fda_any') and not spec.get('chem'):
            p('%s: nothing required' % rid)
        for d in sorted(req):
            if d not in ema:
                continue
            if not hit(d):
                p('%s: answering leaflet %r not matched by %s' % (rid, d, subs))
            txt = ema[d].get(secn)
            if not txt:
                p('%s: %r has no section %s' % (rid, d, sec))
                continue
            for key in ('ev', 'ev2'):
                if spec.get(key) and not any(e in txt.lower() for e in spec[key]):
                    p('%s: %r section %s lacks evidence %s' % (rid, d, sec, spec[key]))
        # every EMA document matched by a substring must be a required one (no stray matches)
        for d in ema:
            if hit(d) and d not in req:
                p('%s: substring matches EMA document %r that the spec does not require' % (rid, d))
        # --- required FDA records
        freq = []
        if fda_counts:
            for i, (nm, ind) in enumerate(fda):
                by_name = spec.get('fda') and all(t in nm for t in spec['fda'])
                by_any = spec.get('fda_any') and any(t in nm for t in spec['fda_any'])
                by_topic = spec.get('topic') and all(t in ind.lower() for t in spec['topic'])
                if by_name or by_any or by_topic:
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
        # --- at least one matched document has the section
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
