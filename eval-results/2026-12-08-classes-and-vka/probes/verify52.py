#!/usr/bin/env python3
"""Re-check probe52.jsonl (40 drug-class questions) against /work/shared/data. Stdlib only.

Adapted from verify_template.py. Document names (what expected_doc_name_substrings match):
  EMA leaflet -> `drug` lower-cased (one document per product)
  FDA label   -> `product_names` joined with " | ", lower-cased (one document per record)
  ChEMBL      -> `pref_name` lower-cased (never required; matches are only reported)

Per row, SPEC gives
  ema    : EMA documents that answer (leaflet section 1 must match every `use` regex and the
           leaflet (name, section 1 or section 6) must match `member`)
  fda    : UNIIs of FDA records that answer (indications must match every `use` regex, joined
           product names must match `member`)
  use    : regexes (case-insensitive) for the use, all required in the evidence text
  member : regex naming the class members (substances / products) - drives the completeness scan
  excl   : documents (EMA name or FDA UNII) that the scan finds (member + use regexes match) but
           that do not answer, with the reason
Checks: 40 rows, ids p52-01..p52-40 in order, fields, k=5, kind=class, no corpus product/substance
name (EMA drug, every FDA product name, ChEMBL pref_name; 5+ letters) as a whole word in a query,
every substring matches >=1 EMA/FDA document and only documents in ema+fda, every required
document is matched, evidence present, completeness scan clean.
Run with -v to print the documents each substring matches. Prints OK or the problems.
"""
import csv, json, os, re, sys

DATA = os.environ.get('DATA', '/work/shared/data')
HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, 'probe52.jsonl')
N = 40

SPEC = {
 # ---------------- stem / chemical family (14)
 'p52-01': dict(group='stem', cls='-triptan stem (5-HT1B/1D agonists, ATC N02CC); SYMBRAVO = meloxicam + rizatriptan',
    ema=[], fda=['M41W832TA3', 'D28J6W18HY', '9TN87S3A3C', 'WR978S7QHH', '8R78F6L9VO', 'J8BDZ68989', '2FS66TH3YW', 'VG2QF83CGL'],
    use=[r'migraine'], member=r'triptan|symbravo', excl={}),
 'p52-02': dict(group='stem', cls='cephalosporins (ATC J01D; "-cef-" stem); each leaflet names the group "cephalosporin"',
    ema=['zavicefta', 'zerbaxa', 'zinforo'], fda=[],
    use=[r'pneumonia\b'], member=r'\bcef|cephalosporin', excl={}),
 'p52-03': dict(group='stem', cls='carbapenems ("-penem" stem, ATC J01DH): ertapenem; meropenem in Vaborem (leaflet: "carbapenems")',
    ema=['ertapenem', 'invanz', 'vaborem'], fda=[],
    use=[r'abdom'], member=r'penem|carbapenem', excl={}),
 'p52-04': dict(group='stem', cls='glycylcycline (tigecycline; leaflet: "antibiotic of the glycylcycline group"; ATC J01AA12)',
    ema=['tygacil', 'tigecycline'], fda=[],
    use=[r'skin'], member=r'glycylcycline|tigecycline', excl={}),
 'p52-05': dict(group='stem', cls='fluoroquinolones ("-floxacin" stem; both leaflets: "group ... called fluoroquinolones")',
    ema=['quinsair', 'quofenix'], fda=[],
    use=[r'lung'], member=r'floxacin|fluoroquinolone', excl={}),
 'p52-06': dict(group='stem', cls='loop diuretics (ATC C03C: furosemide, bumetanide, etacrynic acid)',
    ema=[], fda=['0Y2S3XUQ5H', 'M5DP350VZV', '7LXU5N7ZO5'],
    use=[r'nephrotic'], member=r'furosemide|bumetanide|bumex|ethacryn|torsemide|torasemide', excl={}),
 'p52-07': dict(group='stem', cls='tricyclic antidepressants (ATC N06AA: amitriptyline, nortriptyline, desipramine, imipramine, doxepin)',
    ema=[], fda=['26LUD4JO9K', '1Y58DO4MY1', '3U9A0FE9N5', 'BKE5Q1J60U', '00FN6IH15D', 'FTA7XXY4EZ'],
    use=[r'depress'], member=r'triptyline|desipramine|imipramine|doxepin|clomipramine|protriptyline|trimipramine|amoxapine', excl={}),
 'p52-08': dict(group='stem', cls='sulfonylureas (ATC A10BB: glimepiride, glipizide, glibenclamide/glyburide); Tandemact = pioglitazone + glimepiride',
    ema=['tandemact'], fda=['6KY687524K', 'X7WDT95N5C', 'SX6K58TVWC', '786Z46389E', 'JQT35NPK6C'],
    use=[r'type 2'], member=r'glimepiride|glipizide|glyburide|glibenclamide|gliclazide|tolbutamide|chlorpropamide',
    excl={d: 'not a sulfonylurea product; sulfonylureas only named as possible co-medication' for d in ('invokana', 'trajenta', 'vipidia', 'vokanamet')}),
 'p52-09': dict(group='stem', cls='triazole antifungals ("-conazole" stem, ATC J02AC: posaconazole, voriconazole)',
    ema=['noxafil', 'posaconazole', 'vfend', 'voriconazole'], fda=[],
    use=[r'prevent'], member=r'conazole', excl={}),
 'p52-10': dict(group='stem', cls='anthracyclines ("-rubicin" stem, ATC L01DB: doxorubicin, epirubicin)',
    ema=['caelyx', 'celdoxome', 'zolsketil', 'myocet'], fda=['22966TX7J5'],
    use=[r'breast'], member=r'rubicin|anthracycline',
    excl={d: 'not an anthracycline product; doxorubicin/anthracyclines only named as prior or combined therapy' for d in ('abevmy', 'abraxane', 'alymsys', 'avastin', 'mvasi', 'naveruclif', 'onbevzi', 'oyavas', 'pazenir', 'taxotere', 'vegzelma', 'zirabev')}),
 'p52-11': dict(group='stem', cls='benzodiazepines ("-azepam"/"-azolam" family, ATC N05BA/N03AE: clobazam, clonazepam, clorazepate, diazepam)',
    ema=[], fda=['2MRO291B4U', '5PE9FDE8GB', '63FN7G03XY', 'Q3JTX2Q7TU'],
    use=[r'seizure'], member=r'azepam|alprazolam|triazolam|midazolam|remimazolam|clobazam|clorazepate|chlordiazepoxide|benzodiazepine',
    excl={'epidyolex': 'cannabidiol (not a benzodiazepine); clobazam is only named as the co-medication'}),
 'p52-12': dict(group='stem', cls='"-gliflozin" stem (SGLT2 inhibitors; leaflets: "sodium glucose co-transporter-2 (SGLT2) inhibitors")',
    ema=['dapagliflozin', 'edistride', 'forxiga', 'jardiance', 'invokana'], fda=[],
    use=[r'chronic kidney disease|kidney function'], member=r'gliflozin', excl={}),
 'p52-13': dict(group='stem', cls='"-azosin" stem alpha-1 blockers (ATC C02CA prazosin; G04CA03/C02CA terazosin)',
    ema=[], fda=['X0Z7454B90', 'D32S14F082'],
    use=[r'hypertension'], member=r'azosin', excl={}),
 'p52-14': dict(group='stem', cls='bisphosphonates ("-dronate"/"-dronic acid" stem; leaflets: "group of ... called bisphosphonates")',
    ema=['zoledronic', 'bondronat', 'ibandronic'], fda=[],
    use=[r'bone metastases|spread to (your )?bones?'], member=r'dron(ic|ate)|bisphosphonate', excl={}),
 # ---------------- mechanism / receptor (12)
 'p52-15': dict(group='mechanism', cls='5-HT3 receptor antagonists ("-setron" stem, ATC A04AA: ondansetron)',
    ema=[], fda=['4AF302ESOS', 'NMH84OZK2B'],
    use=[r'postoperative nausea'], member=r'setron', excl={}),
 'p52-16': dict(group='mechanism', cls='selective serotonin reuptake inhibitors (ATC N06AB: paroxetine, sertraline)',
    ema=[], fda=['X2ELS050D8', 'UTI8907Y6X'],
    use=[r'premenstrual'], member=r'paroxetine|paxil|sertraline|fluoxetine|citalopram|fluvoxamine', excl={}),
 'p52-17': dict(group='mechanism', cls='cholinesterase inhibitors (ATC N06DA: rivastigmine - leaflets "cholinesterase inhibitors"; donepezil; galantamine)',
    ema=['exelon', 'nimvastid', 'prometax', 'rivastigmine'], fda=['3O2T2PJ89D', 'MJ4PTD2VVW'],
    use=[r'alzheimer'], member=r'rivastigmine|donepezil|galantamine|cholinesterase inhibitor', excl={}),
 'p52-18': dict(group='mechanism', cls='mTOR inhibitors (everolimus, temsirolimus; Torisel leaflet: "selective inhibitor of the enzyme mTOR"; ATC L01EG)',
    ema=['afinitor', 'torisel'], fda=[],
    use=[r'kidney cancer|renal cancer|renal cell'], member=r'everolimus|sirolimus|temsirolimus|mtor', excl={}),
 'p52-19': dict(group='mechanism', cls='carbonic anhydrase inhibitors (ATC S01EC/ S01EC: brinzolamide, dorzolamide, acetazolamide, methazolamide; Azopt/Simbrinza leaflets name the group)',
    ema=['azarga', 'azopt', 'simbrinza'], fda=['429ZT169UH', '9451Z89515', 'P8Y54F701R', 'QZO5366EW7', 'W733B0S9SD'],
    use=[r'glaucoma|intraocular|pressure in the eye'], member=r'zolamide|carbonic anhydrase|azopt|azarga',
    excl={}),
 'p52-20': dict(group='mechanism', cls='antimuscarinic urinary antispasmodics (ATC G04BD: darifenacin, oxybutynin, solifenacin, tolterodine, trospium)',
    ema=['emselex', 'kentera'], fda=['CR02EYQ8GV', 'L9F3D9RENQ', 'KKA5DLD701', '5T619TQR3R', '1E6682427E'],
    use=[r'bladder|urge|incontinence'], member=r'darifenacin|oxybutynin|solifenacin|tolterodine|trospium|fesoterodine|propiverine', excl={}),
 'p52-21': dict(group='mechanism', cls='phosphodiesterase type 5 inhibitors (leaflets: "phosphodiesterase type 5 (PDE5) inhibitors"; sildenafil, tadalafil)',
    ema=['adcirca', 'granpidam', 'mysildecard', 'revatio', 'talmanco'], fda=['BW9B0ZE037'],
    use=[r'pulmonary arterial|blood vessels in the lungs'], member=r'sildenafil|tadalafil|vardenafil|avanafil', excl={}),
 'p52-22': dict(group='mechanism', cls='catechol-O-methyltransferase inhibitors (ATC N04BX: entacapone, tolcapone; N04BA03 levodopa/carbidopa/entacapone)',
    ema=['comtan', 'comtess', 'corbilta', 'levodopacarbidopaentacapone', 'stalevo', 'tasmar'],
    fda=['MNX7R8C5VO', '46627O600J', '4975G9NM6T'],
    use=[r'parkinson'], member=r'entacapone|tolcapone|opicapone|\bcomt\b|catechol', excl={}),
 'p52-23': dict(group='mechanism', cls='monoamine oxidase B inhibitors (ATC N04BD: rasagiline, selegiline, safinamide)',
    ema=['rasagiline'], fda=['LH8C2JI290', '6W731X367Q', 'YS90V3DTX0'],
    use=[r'parkinson'], member=r'rasagiline|selegiline|safinamide|xadago|azilect', excl={}),
 'p52-24': dict(group='mechanism', cls='P2Y12 (ADP receptor) antagonists (ATC B01AC: clopidogrel, prasugrel, ticagrelor, cangrelor)',
    ema=['brilique', 'efient', 'prasugrel', 'plavix', 'grepid', 'zyllt'], fda=[],
    use=[r'heart attack|myocardial infarction'], member=r'clopidogrel|prasugrel|ticagrelor|cangrelor|p2y12',
    excl={'kengrexal': 'cangrelor is given only during a PCI procedure to stop clots forming then; not secondary prevention after a heart attack',
          '6AQ1Y404U7': 'cangrelor (FDA) - adjunct to PCI to reduce periprocedural MI; not secondary prevention after a heart attack',
          'xarelto': 'rivaroxaban (factor Xa inhibitor); clopidogrel only named as co-medication',
          'rivaroxaban': 'rivaroxaban (factor Xa inhibitor); clopidogrel only named as co-medication'}),
 'p52-25': dict(group='mechanism', cls='calcineurin inhibitors (ATC L04AD: tacrolimus, ciclosporin)',
    ema=['advagraf', 'envarsus', 'modigraf', 'tacforius'], fda=['83HN0GTJ6D'],
    use=[r'transplant', r'kidney'], member=r'tacrolimus|ciclosporin|cyclosporine|voclosporin|calcineurin',
    excl={'cellcept': 'mycophenolate (not a calcineurin inhibitor); ciclosporin only named as co-medication',
          'mycophenolate': 'mycophenolate (not a calcineurin inhibitor); ciclosporin only named as co-medication',
          'myfenax': 'mycophenolate (not a calcineurin inhibitor); ciclosporin only named as co-medication',
          'rapamune': 'sirolimus (mTOR inhibitor); ciclosporin only named as co-medication',
          'simulect': 'basiliximab (IL-2 receptor antibody); not a calcineurin inhibitor'}),
 'p52-26': dict(group='mechanism', cls='bile acid sequestrants (ATC C10AC: colestyramine, colestipol, colesevelam; Cholestagel leaflet: "binding bile acids")',
    ema=['cholestagel'], fda=['4B33BGI082', 'X7D10K905G'],
    use=[r'cholesterol'], member=r'colesevelam|cholestyramine|colestipol', excl={}),
 # ---------------- lay class names (8)
 'p52-27': dict(group='lay', cls='anorectic sympathomimetics / centrally acting anti-obesity products (ATC A08AA: phentermine, diethylpropion=amfepramone, phendimetrazine)',
    ema=[], fda=['19V2PL39NG', '6985IP0T80', '0K2I505OTV'],
    use=[r'a few weeks'], member=r'phentermine|phendimetrazine|diethylpropion|benzphetamine', excl={}),
 'p52-28': dict(group='lay', cls='nasal corticosteroids (ATC R01AD: fluticasone propionate in DYMISTA / fluticasone nasal spray, flunisolide)',
    ema=[], fda=['0L591QR10I', 'QK4DYS664X', 'O2GMZ0LF5W'],
    use=[r'rhinitis'], member=r'fluticasone|flunisolide|mometasone|budesonide|beclomethasone|beclometasone|triamcinolone|ciclesonide|dymista',
    excl={}),
 'p52-29': dict(group='lay', cls='oral contraceptives (ATC G03A: combined and progestin-only pills); Drovelis/Lydisilka leaflets: "a contraceptive pill"',
    ema=['drovelis', 'lydisilka'],
    fda=['423D2T571U', '5W7SIA7YZW', 'T18F433X4S', 'N295J34A25', '62H10A1236', '9S44LIC7OJ', '3J8Q1747Z2', '81K9V7M3A3'],
    use=[r'prevent(ion of)? (of )?pregnancy|contracepti'],
    member=r'ethinyl|levonorgestrel|norethindrone|drospirenone|desogestrel|norgestrel|ethynodiol|estetrol|norgestimate|contraceptive pill',
    excl={'304GTH6RNH': 'NuvaRing: a vaginal ring, not a pill',
          'ellaone': 'emergency (morning-after) contraceptive, not a regular birth control pill; mentions the pill only as a missed-pill scenario'}),
 'p52-30': dict(group='lay', cls='parenteral anticoagulants (heparin group, ATC B01AB: enoxaparin in Inhixa - leaflet "low molecular weight heparin"; heparin sodium)',
    ema=['inhixa'], fda=['ZZ45AB24CA'],
    use=[r'dialysis'], member=r'heparin|enoxaparin|dalteparin|tinzaparin|fondaparinux|argatroban|bivalirudin', excl={}),
 'p52-31': dict(group='lay', cls='hormone replacement therapy (oestrogens, ATC G03C/G03E; Duavive leaflet: conjugated oestrogens "belongs to ... hormone replacement therapy (HRT)")',
    ema=['duavive'], fda=['3ASP8Q3768', 'V9EFU16ZIF'],
    use=[r'vasomotor|hot flush'], member=r'estrogen|oestrogen|estradiol|estriol',
    excl={'veoza': 'fezolinetant, a non-hormonal NK3 receptor antagonist - explicitly not HRT'}),
 'p52-32': dict(group='lay', cls='erythropoiesis-stimulating agents ("EPO"; ATC B03XA: epoetin alfa/beta/theta/zeta, darbepoetin alfa)',
    ema=['abseamed', 'aranesp', 'binocrit', 'epoetin', 'eporatio', 'neorecormon', 'retacrit', 'silapo'], fda=[],
    use=[r'chemotherapy'], member=r'epoetin|darbepoetin', excl={}),
 'p52-33': dict(group='lay', cls='transdermal opioid analgesics (ATC N02AB03 fentanyl, N02AE01 buprenorphine) - the "strong painkiller patch"',
    ema=[], fda=['40D3SCR4GZ', 'UF599785JZ'],
    use=[r'severe and persistent pain'], member=r'buprenorphine transdermal|fentanyl system|transdermal system',
    excl={}),
 'p52-34': dict(group='lay', cls='topical local anaesthetics (ATC N01BB20 lidocaine+prilocaine cream; text: "topical anesthetic")',
    ema=[], fda=['98PI200987', '046O35D44R'],
    use=[r'topical anesthetic'], member=r'lidocaine and prilocaine|prilocaine', excl={}),
 # ---------------- qualifier that excludes members (6)
 'p52-35': dict(group='qualifier', cls='beta-1 selective (cardioselective) beta blockers (ATC C07AB: acebutolol, atenolol, bisoprolol, metoprolol); excluded: non-selective pindolol, propranolol, labetalol, timolol',
    ema=[], fda=['B025Y34C54', '50VV3VW0TI', 'UR59KN573L', 'Q0MQD1073Q', '0J48LPH2TH', 'TH25PD4CCB', 'W5S57Y3A5L'],
    use=[r'hypertension'], member=r'acebutolol|atenolol|bisoprolol|metoprolol|betaxolol|nebivolol|esmolol', excl={}),
 'p52-36': dict(group='qualifier', cls='non-dihydropyridine calcium channel blockers (ATC C08D: verapamil, diltiazem); excluded: dihydropyridines (C08CA: amlodipine, felodipine, nifedipine, nisoldipine, nicardipine)',
    ema=[], fda=['OLH94387TE', 'V3888OEY5R'],
    use=[r'hypertension|high blood pressure'], member=r'diltiazem|verapamil|cardizem', excl={}),
 'p52-37': dict(group='qualifier', cls='first-generation (sedating) H1 antihistamines: carbinoxamine, clemastine, cyproheptadine, hydroxyzine; excluded: second-generation cetirizine, desloratadine',
    ema=[], fda=['02O55696WH', '19259EGQ3D', 'NJ82J0F8QC', '76755771U3', 'M20215MUFR'],
    use=[r'urticaria|dermatographism'],
    member=r'carbinoxamine|clemastine|cyproheptadine|hydroxyzine|diphenhydramine|promethazine|brompheniramine|chlorpheniramine|dexchlorpheniramine|doxylamine|meclizine',
    excl={}),
 'p52-38': dict(group='qualifier', cls='typical (first-generation) antipsychotics: phenothiazines (chlorpromazine, fluphenazine, perphenazine, prochlorperazine), haloperidol, loxapine (ATC N05AA/AB/AD/AH01); excluded: atypicals (aripiprazole, asenapine, lurasidone, paliperidone, lumateperone, ...)',
    ema=[], fda=['9WP59609J6', 'ZOU145W1XL', '6387S86PK3', 'J6292F8L3D', 'AC20PJ4101', 'X59SG0MRYU', 'FTA7XXY4EZ', 'I1T8O1JTL6'],
    use=[r'schizophren|psychotic disorders'],
    member=r'chlorpromazine|fluphenazine|haloperidol|loxapine|perphenazine|prochlorperazine|thioridazine|trifluoperazine|thiothixene|molindone|pimozide',
    excl={'adasuve': 'inhaled loxapine only for rapid control of acute agitation in schizophrenia/bipolar disorder, not treatment of the illness'}),
 'p52-39': dict(group='qualifier', cls='non-nucleoside reverse transcriptase inhibitors (ATC J05AG: nevirapine, efavirenz, etravirine, rilpivirine, doravirine) and products containing them; excluded: NRTI-only and integrase-only products',
    ema=['delstrigo', 'edurant', 'efavirenz', 'efavirenzemtricitabinetenofovir', 'eviplera', 'intelence', 'juluca', 'odefsey',
         'pifeltro', 'rekambys', 'stocrin', 'viramune'],
    fda=['FI96A8X663', 'JE6H2O27P8', 'OTT9J7900I', '0C50HW4FO1', '99DK7FVK1H', '212WAX8KDD', 'G70B4ETF4S', '913P6LK81M',
         '1Q1V9V5WYQ', 'FWF6Q91TZO', 'HMH0132Z1Q'],
    use=[r'\bhiv'], member=r'nevirapine|efavirenz|rilpivirine|doravirine|etravirine|odefsey|juluca|cabenuva|pifeltro',
    excl={'vocabria': 'cabotegravir (integrase inhibitor) only; rilpivirine is named as the co-medication'}),
 'p52-40': dict(group='qualifier', cls='NSAIDs (ATC M01A: diclofenac, naproxen); excluded: corticosteroids (prednisone, methylprednisolone) and biologics/JAK inhibitors that are also labelled for ankylosing spondylitis',
    ema=[], fda=['QTG126297Q', '9TN87S3A3C'],
    use=[r'ankylosing'],
    member=r'diclofenac|naproxen|naprelan|ibuprofen|meloxicam|celecoxib|etodolac|ketoprofen|flurbiprofen|oxaprozin|nabumetone|sulindac|indomethacin|piroxicam|fenoprofen|diflunisal|tolmetin',
    excl={}),
}
GROUPS = {'stem': 14, 'mechanism': 12, 'lay': 8, 'qualifier': 6}


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
        fda.append(dict(unii=r['unii'], name=' | '.join(r['product_names']).lower(),
                        names=[n.strip().lower() for n in r['product_names']], text=r['indications']))
    chem = [r['pref_name'].lower() for r in csv.DictReader(open(os.path.join(DATA, 'compounds/chembl_approved_drugs.csv')))]
    return ema, fda, chem


def allmatch(regs, text):
    return all(re.search(r, text or '', re.I) for r in regs)


def main(verbose=False):
    ema, fda, chem = load()
    by_unii = {f['unii']: f for f in fda}
    probs = []
    p = probs.append
    rows = [json.loads(l) for l in open(PROBE) if l.strip()]
    # ---- format
    if len(rows) != N:
        p('expected %d rows, got %d' % (N, len(rows)))
    if [r.get('id') for r in rows] != ['p52-%02d' % i for i in range(1, N + 1)]:
        p('ids are not p52-01..p52-%02d in order' % N)
    if set(SPEC) != {'p52-%02d' % i for i in range(1, N + 1)}:
        p('SPEC ids do not cover p52-01..p52-%02d' % N)
    g = {}
    for rid, s in SPEC.items():
        g[s['group']] = g.get(s['group'], 0) + 1
    if g != GROUPS:
        p('group counts %s != %s' % (g, GROUPS))
    # ---- names that must not occur in queries
    names = set(ema)
    for f in fda:
        names.update(f['names'])
    names.update(chem)
    names = {n for n in names if len(re.findall(r'[a-z]', n)) >= 5}
    pats = [(n, re.compile(r'(?<![a-z0-9])' + re.escape(n) + r'(?![a-z0-9])')) for n in names]
    seenq = set()
    for r in rows:
        rid = r.get('id')
        if set(r) != {'id', 'query', 'expected_doc_name_substrings', 'k', 'kind'}:
            p('%s: fields %s' % (rid, sorted(r)))
        if r.get('k') != 5:
            p('%s: k must be 5' % rid)
        if r.get('kind') != 'class':
            p('%s: kind must be "class"' % rid)
        q = r.get('query')
        if not isinstance(q, str) or not q.strip():
            p('%s: empty query' % rid)
            continue
        ql = q.lower()
        if ql in seenq:
            p('%s: duplicate query' % rid)
        seenq.add(ql)
        hits = sorted(n for n, rx in pats if rx.search(ql))
        if hits:
            p('%s: query names a corpus product/substance %s' % (rid, hits))
        subs = r.get('expected_doc_name_substrings')
        if not isinstance(subs, list) or not subs or any(not isinstance(s, str) or s != s.lower() or not s.strip() for s in subs):
            p('%s: substrings must be a non-empty list of lower-case strings' % rid)
            continue
        if len(set(subs)) != len(subs):
            p('%s: duplicate substrings' % rid)
        spec = SPEC.get(rid)
        if not spec:
            continue
        req_e = set(spec['ema'])
        req_f = set(spec['fda'])
        for d in req_e:
            if d not in ema:
                p('%s: %r is not an EMA document' % (rid, d))
        for u in req_f:
            if u not in by_unii:
                p('%s: UNII %s is not an FDA record' % (rid, u))
        # ---- substrings: match >=1 doc, only required docs
        if verbose:
            print('%s  %s' % (rid, q))
        for s in subs:
            me = [d for d in ema if s in d]
            mf = [f for f in fda if s in f['name']]
            mc = [c for c in chem if s in c]
            if not me and not mf:
                p('%s: substring %r matches no EMA/FDA document' % (rid, s))
            for d in me:
                if d not in req_e:
                    p('%s: substring %r matches EMA %r that does not answer' % (rid, s, d))
            for f in mf:
                if f['unii'] not in req_f:
                    p('%s: substring %r matches FDA %s (%s) that does not answer' % (rid, s, f['unii'], f['name'][:70]))
            if verbose:
                print('   %-26r EMA %s | FDA %s | ChEMBL %s' % (s, me, ['%s:%s' % (f['unii'], f['name'][:50]) for f in mf], mc[:4]))
        # ---- every required doc matched, has evidence and membership
        for d in sorted(req_e):
            if d not in ema:
                continue
            if not any(s in d for s in subs):
                p('%s: required EMA %r not matched by any substring' % (rid, d))
            s1 = ema[d].get(1, '')
            if not allmatch(spec['use'], s1):
                p('%s: EMA %r section 1 lacks use evidence %s' % (rid, d, spec['use']))
            if not re.search(spec['member'], d + ' ' + s1 + ' ' + ema[d].get(6, ''), re.I):
                p('%s: EMA %r shows no class member %r' % (rid, d, spec['member']))
        for u in sorted(req_f):
            f = by_unii.get(u)
            if not f:
                continue
            if not any(s in f['name'] for s in subs):
                p('%s: required FDA %s (%s) not matched by any substring' % (rid, u, f['name'][:60]))
            if not allmatch(spec['use'], f['text']):
                p('%s: FDA %s lacks use evidence %s' % (rid, u, spec['use']))
            if not re.search(spec['member'], f['name'], re.I):
                p('%s: FDA %s names no class member %r' % (rid, u, spec['member']))
        # ---- completeness scan: class member + use stated => required or excluded with reason
        for d, secs in ema.items():
            s1 = secs.get(1, '')
            if re.search(spec['member'], d + ' ' + s1 + ' ' + secs.get(6, ''), re.I) and allmatch(spec['use'], s1):
                if d not in req_e and not spec['excl'].get(d):
                    p('%s: scan finds EMA %r (member + use) neither required nor excluded' % (rid, d))
        for f in fda:
            if re.search(spec['member'], f['name'], re.I) and allmatch(spec['use'], f['text']):
                if f['unii'] not in req_f and not spec['excl'].get(f['unii']):
                    p('%s: scan finds FDA %s (%s) neither required nor excluded' % (rid, f['unii'], f['name'][:70]))
        for k in spec['excl']:
            if k not in ema and k not in by_unii:
                p('%s: exclusion %r is not a document' % (rid, k))
            if k in req_e or k in req_f:
                p('%s: %r both required and excluded' % (rid, k))
            if k in ema and any(s in k for s in subs):
                p('%s: excluded EMA %r matched by a substring' % (rid, k))
            if k in by_unii and any(s in by_unii[k]['name'] for s in subs):
                p('%s: excluded FDA %s matched by a substring' % (rid, k))
    if probs:
        print('\n'.join(probs))
        print('%d problem(s)' % len(probs))
        return 1
    print('OK')
    return 0


if __name__ == '__main__':
    sys.exit(main('-v' in sys.argv))
