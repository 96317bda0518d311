#!/usr/bin/env python3
"""Re-check probe48.jsonl against the corpus under /work/shared/data (stdlib only).

Document names (what expected_doc_name_substrings are matched against, lower-cased):
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
PROBE = os.path.join(HERE, 'probe48.jsonl')
SECNUM = {'indications_and_usage': 1, 'warnings': 2, 'dosage_and_administration': 3,
          'adverse_reactions': 4, 'storage': 5, 'description': 6}
KINDS = {'named': 20, 'typo': 8, 'salt': 6, 'noise': 8, 'lay': 8, 'combination': 6,
         'antidote_or_interaction': 4}

AVOID = """abilify abiraterone aclasta aflibercept aimovig ajovy akynzeo ambrisentan baraclude bimzelx
bortezomib briumvi champix cinqair cosentyx cresemba dupixent ebixa ellaone emgality entecavir entresto
evrysdi eylea fasenra gardasil glyxambi janumet januvia jentadueto jinarc kaftrio kalydeco keppra kesimpta
kyprolis letairis levemir linagliptin lumigan lynparza maviret memantine ninlaro nucala ocrevus opsumit
orkambi otezla ozurdex paxlovid plavix pramipexole prolia relvar renvela revolade riluzole shingrix sifrol
soliris stelara taltz tecfidera tracleer trajenta trintellix truvada tysabri ultibro ultomiris vabysmo
valdoxan veklury velcade vemlidy vfend viagra vortioxetine vyepti wakix xeljanz xenical xtandi xultophy
zytiga tagrisso iressa osimertinib""".split()
# products/substances named in the dev-set queries but not in their expected substrings
DEV_QUERY_EXTRA = """tecentriq rocuronium pertuzumab trastuzumab vemurafenib cobimetinib relatlimab nivolumab
durvalumab tremelimumab lenvatinib afatinib palbociclib cabozantinib semaglutide empagliflozin""".split()
GENERIC_WORDS = set("""active substance substances hydrochloride acetate fumarate sodium dihydrate
monohydrate maleate mesilate mesylate bromide acid human insulin recombinant called micrograms
adjustment carbonate chloride concentrate contains copovidone corresponding equivalent film-coated highly
hydrochloric hydroxide ingredients injections magnesium malate mannitol medicine non-infectious phosphate
polysorbate pregelatinised protein purified reconstitution solution starch stearate sucrose tablet furoate""".split())

# Per-row specification.
#  brand : EMA documents the question names (required answers)
#  subst : lower-case terms that must ALL occur in an EMA leaflet's section 6 (contents)
#          for that product to contain the substance(s); every such product is required
#          unless listed in excl with a reason
#  fda   : terms that must ALL occur in an FDA record's joined product names for it to be
#          a required answer (only when section is indications_and_usage or absent)
#  topic : terms that must ALL occur in the answering section; every EMA leaflet / FDA
#          record whose section contains them is required unless excluded
#  ev    : evidence: at least one must occur in the expected section of every required
#          EMA leaflet (section 1 when the row has no expected_section)
#  fda_ev: the same for the required FDA records' indications text
S = {
 'p48-01': dict(brand=['rinvoq'], ev=['rheumatoid arthritis']),
 'p48-02': dict(brand=['kerendia'], fda=['kerendia'], ev=['chronic kidney disease']),
 'p48-03': dict(brand=['quviviq'], ev=['insomnia']),
 'p48-04': dict(brand=['xofluza'], ev=['influenza']),
 'p48-05': dict(brand=['tivicay'], ev=['pregnant']),
 'p48-06': dict(brand=['esbriet'], ev=['sunlight']),
 'p48-07': dict(brand=['arava'], ev=['breast-feeding']),
 'p48-08': dict(brand=['fycompa'], ev=['driving']),
 'p48-09': dict(brand=['camzyos'], ev=['contraception']),
 'p48-10': dict(brand=['betmiga'], ev=['kidney or liver problems']),
 'p48-11': dict(brand=['spravato'], ev=['nasal spray']),
 'p48-12': dict(brand=['leqvio'], ev=['every 6 months']),
 'p48-13': dict(brand=['votrient'], ev=['with food']),
 'p48-14': dict(brand=['olumiant'], ev=['very common']),
 'p48-15': dict(brand=['sprycel'], ev=['very common side effects']),
 'p48-16': dict(brand=['repatha'], ev=['injection site']),
 'p48-17': dict(brand=['skyrizi'], ev=['out of the refrigerator']),
 'p48-18': dict(brand=['forsteo'], ev=['28 days']),
 'p48-19': dict(brand=['tremfya'], ev=['polysorbate 80']),
 'p48-20': dict(brand=['vargatef'], ev=['soya']),
 # typo
 'p48-21': dict(subst=['fingolimod'], ev=['heart rate']),
 'p48-22': dict(subst=['teriflunomide'], ev=['hair thinning']),
 'p48-23': dict(brand=['revlimid'], ev=['pregnan']),
 'p48-24': dict(subst=['duloxetine'], fda=['duloxetine'], ev=['40 mg twice']),
 'p48-25': dict(subst=['olanzapine'], fda=['olanzapine'], ev=['weight gain']),
 'p48-26': dict(subst=['capecitabine'], ev=['hand-and-foot', 'hand-foot']),
 'p48-27': dict(brand=['epidyolex'], fda=['cannabidiol'], ev=['seizures'], fda_ev=['seizures']),
 'p48-28': dict(subst=['ruxolitinib'], fda=['ruxolitinib'], ev=['myelofibrosis'],
                excl={'opzelura': 'ruxolitinib cream for non-segmental vitiligo only; its leaflet does not answer a myelofibrosis question'}),
 # salt
 'p48-29': dict(subst=['cinacalcet'], fda=['cinacalcet'], ev=['parathyroid']),
 'p48-30': dict(subst=['prasugrel'], ev=['75 years']),
 'p48-31': dict(subst=['oxybutynin'], ev=['twice weekly']),
 'p48-32': dict(subst=['anagrelide'], fda=['anagrelide'], ev=['thrombocythaemia'], fda_ev=['thrombocyth']),
 'p48-33': dict(subst=['eribulin'], fda=['eribulin'], ev=['breast cancer']),
 'p48-34': dict(subst=['alendronic acid', 'colecalciferol'], ev=['once a week']),
 # noise
 'p48-35': dict(brand=['brilique'], ev=['if you stop taking']),
 'p48-36': dict(brand=['fampyra'], ev=['if you forget']),
 'p48-37': dict(brand=['invokana'], ev=['type 2 diabetes']),
 'p48-38': dict(brand=['daxas'], ev=['weight decrease']),
 'p48-39': dict(brand=['afinitor'], ev=['mouth ulcers']),
 'p48-40': dict(brand=['noxafil'], ev=['food']),
 'p48-41': dict(brand=['evenity'], ev=['210 mg']),
 'p48-42': dict(brand=['inlyta'], ev=['blood pressure']),
 # lay
 'p48-43': dict(brand=['constella'], ev=['constipation']),
 'p48-44': dict(brand=['mirvaso'], ev=['redness']),
 'p48-45': dict(brand=['vaniqa'], ev=['hair']),
 'p48-46': dict(brand=['slenyto'], ev=['autism']),
 'p48-47': dict(subst=['imiquimod'], fda=['imiquimod'], ev=['warts'],
                excl={'zyclara': 'imiquimod 3.75% cream licensed only for actinic keratosis; its leaflet does not answer a genital-wart question'}),
 'p48-48': dict(brand=['lokelma'], ev=['potassium']),
 'p48-49': dict(subst=['desloratadine'], fda=['desloratadine'], ev=['hay fever']),
 'p48-50': dict(brand=['inhixa'], ev=['blood clots']),
 # combination
 'p48-51': dict(subst=['fenofibrate', 'simvastatin'], fda=['fenofibrate', 'simvastatin'], ev=['cholesterol']),
 'p48-52': dict(subst=['levodopa', 'carbidopa', 'entacapone'], fda=['levodopa and entacapone'],
                ev=['parkinson'], fda_ev=['parkinson']),
 'p48-53': dict(brand=['zepatier'], ev=['hepatitis c']),
 'p48-54': dict(subst=['telmisartan', 'hydrochlorothiazide'], fda=['telmisartan and hydrochlorothiazide'],
                ev=['high blood pressure']),
 'p48-55': dict(subst=['ceftazidime', 'avibactam'], ev=['every 8 hours']),
 'p48-56': dict(subst=['buprenorphine', 'naloxone'], fda=['buprenorphine and naloxone'],
                ev=['opioid'], fda_ev=['opioid']),
 # antidote_or_interaction
 'p48-57': dict(subst=['hydroxocobalamin'], topic=['cyanide poisoning'], ev=['antidote']),
 'p48-58': dict(brand=[], fda=['acetylcysteine'], topic=['acetaminophen', 'hepat'], fda_ev=['antidote']),
 'p48-59': dict(subst=['darunavir'], ev=['st john']),
 'p48-60': dict(subst=['tacrolimus'], ev=['grapefruit'],
                excl={'protopic': 'tacrolimus ointment for eczema; not a transplant medicine and its leaflet has no grapefruit warning'}),
}


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
    chem = [r['pref_name'].lower() for r in csv.DictReader(open(os.path.join(DATA, 'compounds/chembl_approved_drugs.csv')))]
    return ema, fda, chem


def words(s):
    return set(re.findall(r'[a-z][a-z0-9\-]+', s.lower()))


def main():
    ema, fda, chem = load()
    probs = []
    p = probs.append
    rows = [json.loads(l) for l in open(PROBE) if l.strip()]
    # dev-set products and avoid list
    dev = []
    for fn in ('drug_kb_dev.jsonl', 'drug_kb_dev_more.jsonl'):
        dev += [json.loads(l) for l in open(os.path.join(DATA, fn)) if l.strip()]
    dev_keys = set(dev[0].keys())
    avoid = set(AVOID) | set(DEV_QUERY_EXTRA)
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
    if ids != ['p48-%02d' % i for i in range(1, 61)]:
        p('ids are not p48-01..p48-60 in order')
    kinds = {}
    for r in rows:
        kinds[r.get('kind')] = kinds.get(r.get('kind'), 0) + 1
    if kinds != KINDS:
        p('kind counts %s != %s' % (kinds, KINDS))
    allowed = {'id', 'query', 'expected_doc_name_substrings', 'k', 'expected_section', 'kind'}
    queries = set()
    for r in rows:
        rid = r.get('id')
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
        spec = S.get(rid)
        if spec is None:
            p('%s: no spec' % rid)
            continue
        # --- avoid list
        qw = words(r['query'])
        bad = (qw & avoid) | (qw & avoid_subst) | {s for s in subs if s in avoid or s in avoid_subst}
        if bad:
            p('%s: uses avoided product/substance %s' % (rid, sorted(bad)))
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
        if 'topic' in spec:
            req |= {d for d, secs in ema.items()
                    if all(t in secs.get(secn, '').lower() for t in spec['topic'])} - set(excl)
        if not req and not spec.get('fda'):
            p('%s: nothing required' % rid)
        for d in sorted(req):
            if d not in ema:
                continue
            if not hit(d):
                p('%s: answering leaflet %r not matched by %s' % (rid, d, subs))
            txt = ema[d].get(secn)
            if not txt:
                p('%s: %r has no section %s' % (rid, d, sec))
            elif spec.get('ev') and not any(e in txt.lower() for e in spec['ev']):
                p('%s: %r section %s lacks evidence %s' % (rid, d, sec, spec['ev']))
        # --- required FDA records
        freq = []
        if fda_counts:
            for i, (nm, ind) in enumerate(fda):
                by_name = spec.get('fda') and all(t in nm for t in spec['fda'])
                by_topic = spec.get('topic') and all(t in ind.lower() for t in spec['topic'])
                if by_name or by_topic:
                    freq.append(i)
                    if not hit(nm):
                        p('%s: answering FDA record %d (%s) not matched' % (rid, i, nm[:80]))
                    if spec.get('fda_ev') and not any(e in ind.lower() for e in spec['fda_ev']):
                        p('%s: FDA record %d lacks evidence %s' % (rid, i, spec['fda_ev']))
        if spec.get('fda_ev') and not freq:
            p('%s: expected FDA answers but found none' % rid)
        if not req and not freq:
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
