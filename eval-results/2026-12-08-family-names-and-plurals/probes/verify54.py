#!/usr/bin/env python3
"""Re-check probe54.jsonl against the corpus under /work/shared/data (stdlib only).

Adapted from verify53.py. Document names (what expected_doc_name_substrings are matched
against, lower-cased):
  EMA leaflet  -> the `drug` field                      (one document per product)
  FDA label    -> all `product_names` joined with " | "  (one document per record)
  ChEMBL       -> `pref_name`
Leaflet sections map to the dev-set ids by their number:
  1 -> indications_and_usage, 2 -> warnings, 3 -> dosage_and_administration,
  4 -> adverse_reactions, 5 -> storage, 6 -> description.
FDA records only carry indications_and_usage, so they are answers only for rows with that
section or no section.

Row kinds (in this order): 24 x plural_condition (01-12 name no medicine, 13-24 name a
product + a plural condition), 16 x family_name (a product family / generic protein name).

Checks, per row:
  * format, ids, kinds, k=5, known section;
  * every required document exists, is matched by a substring, and its expected section
    (section 1 / FDA indications when the row has none) holds the evidence words;
  * no substring matches a document that is not required (EMA, FDA when the row is an
    indication row, ChEMBL unless listed in chem_ok); explicit exceptions (fda_hit_ok)
    carry a reason;
  * exclusions exist, carry a reason and are NOT matched by the substrings;
  * no-medicine and family rows: the condition / family search (`syn`, over EMA section 1
    - plus section 6 for family rows - and every FDA indications text) finds no document
    that is neither required nor explicitly excluded; no-medicine rows have 1..8 answers;
  * named rows: every document holding the named product/substance (`subst`, by name, by
    section 6 or by "contains ..." in section 1, FDA by product_names) is required or
    excluded;
  * avoid list (avoid54.txt + the products of the shared dev sets): for named rows every
    name relied on and every substring is compared with every avoid entry (substring, both
    directions); for every row no avoid entry may occur as a whole word in the query;
  * no-medicine rows name no product/substance (EMA name, FDA product name or ChEMBL
    pref_name as a whole word); family rows name none apart from their family term;
  * the plural condition phrase (`cond`) is in the query; for no-medicine and family rows
    no earlier query (/tmp/q/all.jsonl) contains it, nor matches all of `dupq`; earlier
    queries that share a looser stem (`dup`) are printed to stderr for review;
  * probe54_notes.md has one line per row, cites every required document, and every
    quoted passage occurs verbatim in the cited document/section.
Prints OK on stdout, or one line per problem.
"""
import csv, json, os, re, sys

DATA = os.environ.get('DATA', '/work/shared/data')
HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, 'probe54.jsonl')
NOTES = os.path.join(HERE, 'probe54_notes.md')
AVOID_FILE = os.path.join(HERE, 'avoid54.txt')
PREV_FILE = os.environ.get('PREV', '/tmp/q/all.jsonl')
PFX = 'p54'
SECNUM = {'indications_and_usage': 1, 'warnings': 2, 'dosage_and_administration': 3,
          'adverse_reactions': 4, 'storage': 5, 'description': 6}
KINDS = {'plural_condition': 24, 'family_name': 16}
KIND_ORDER = ['plural_condition'] * 24 + ['family_name'] * 16
# ordinary words that happen to be a product name in the corpus (FDA 'thyroid' = desiccated thyroid)
NOT_NAMES = {'thyroid'}
NOMED = ['%s-%02d' % (PFX, i) for i in range(1, 13)]
NAMED = ['%s-%02d' % (PFX, i) for i in range(13, 25)]

# Per-row specification.
#  names    : named rows - the products/substances the query relies on (avoid-checked)
#  family   : family rows - the family / generic protein term(s) used in the query
#  cond     : the plural condition phrase(s) as written in the query
#  dup      : looser stems; earlier queries containing one are reported on stderr
#  dupq     : regexes; an earlier query matching all of them is a near-duplicate (error)
#  brand    : required EMA documents
#  fda      : required FDA records {line index: term that must be in its product_names}
#  ev/fda_ev: evidence terms (list, or dict doc -> list); one must occur in the expected section
#  ev6      : extra evidence terms that must occur in section 6 of every required EMA document
#  excl     : EMA documents found by syn/subst that do not answer, with the reason
#  fda_excl : FDA records found by syn/subst that do not answer, with the reason
#  fda_hit_ok: FDA records matched by a substring although not required (explained exception)
#  syn      : regex of the condition / family and its synonyms (no-medicine and family rows)
#  subst    : named rows - product/substance terms whose documents must all be accounted for
#  chem_ok  : ChEMBL pref_names the substrings may match (the substance itself)
S = {
 # ---------------- plural condition, no medicine named
 'p54-01': dict(cond=['nasal polyps'], dup=['polyp', 'rhinosinusitis', 'crswnp'], brand=['dupixent', 'nucala'],
                ev={'dupixent': ['maintenance treatment of crswnp'], 'nucala': ['soft jelly-like growths (called nasal polyps)']},
                syn=r'nasal polyp|rhinosinusitis|polyposis'),
 'p54-02': dict(cond=['liver lesions'], dup=['liver lesion', 'spots on my liver', 'contrast', 'liver scan'],
                fda={524: 'lumason', 525: 'lumason', 526: 'lumason'},
                fda_ev=['to characterize focal liver lesions'],
                syn=r'liver lesion|focal liver|ultrasound of the liver|hepatobiliary imaging|contrast agent|ultrasound contrast',
                excl={'elucirem': 'gadopiclenol, an MRI contrast agent - not for use with ultrasound'},
                fda_excl={170: 'Choletec (Tc-99m mebrofenin): hepatobiliary (bile flow) imaging agent, nuclear medicine, not ultrasound of liver lesions',
                          379: 'gadoterate meglumine: MRI contrast for brain, spine and associated tissues',
                          928: 'Ultravist (iopromide): iodinated X-ray/CT contrast agent, stored text truncated'},
                note='the three Lumason records are one product (sulfur hexafluoride lipid microspheres), split by ingredient'),
 'p54-03': dict(cond=['discoid lupus patches'], dup=['discoid', 'cutaneous lupus', 'lupus'],
                fda={417: 'hydroxychloroquine', 87: 'celestone', 88: 'celestone'},
                fda_ev={417: ['chronic discoid lupus erythematosus'], 87: ['discoid lupus erythematosus'], 88: ['discoid lupus erythematosus']},
                chem_ok=['hydroxychloroquine', 'hydroxychloroquine sulfate'],
                syn=r'discoid|cutaneous lupus'),
 'p54-04': dict(cond=['keloids'], dup=['keloid', 'raised scar', 'thick scar'],
                fda={87: 'celestone', 88: 'celestone'}, fda_ev=['keloids'], syn=r'keloid'),
 'p54-05': dict(cond=['essential tremors'], dup=['tremor'],
                fda={765: 'propranolol'}, fda_ev=['essential tremor'],
                chem_ok=['propranolol', 'propranolol hydrochloride'],
                syn=r'tremor',
                note0='the record lists its indications as headings ("Hypertension Myocardial Infarction Migraine ... Essential Tremor")',
                excl={'ogluo': 'glucagon; tremor listed as a symptom of hypoglycaemia'},
                fda_excl={639: 'hyoscyamine: "in the therapy of parkinsonism to reduce rigidity and tremors" - parkinsonian tremor, not essential tremor'},
                note='the propranolol record itself says "not indicated for the treatment of tremor associated with Parkinsonism"'),
 'p54-06': dict(cond=['vertigo attacks'], dup=['vertigo', 'dizz', 'spinning', 'vestibular', 'inner ear'],
                fda={536: 'meclizine'}, fda_ev=['vertigo associated with diseases affecting the vestibular system'],
                chem_ok=['meclizine', 'meclizine hydrochloride'],
                syn=r'vertigo|vestibular|m[e\u00e9]ni[e\u00e8]re|motion sickness',
                fda_excl={263: 'diphenhydramine: motion sickness, not vertigo from vestibular disease',
                          760: 'promethazine: motion sickness, not vertigo from vestibular disease'}),
 'p54-07': dict(cond=['genital herpes outbreaks'], dup=['genital herpes', 'herpes'],
                fda={942: 'valacyclovir'}, fda_ev=['chronic suppressive therapy of recurrent episodes of genital herpes'],
                chem_ok=['valacyclovir', 'valacyclovir hydrochloride'],
                syn=r'genital herpes|herpes genitalis|herpes simplex',
                excl={'ellaone': 'emergency contraceptive; genital herpes named in an STI warning'},
                fda_excl={9: 'acyclovir record: ointment "in the management of initial genital herpes" and tablets for chickenpox - nothing for recurrent outbreaks'}),
 'p54-08': dict(cond=['facial angiofibromas'], dup=['angiofibroma', 'tuberous'],
                brand=['hyftor'], fda={420: 'hyftor'}, ev=['angiofibroma'], fda_ev=['facial angiofibroma'],
                syn=r'angiofibroma|tuberous sclerosis',
                excl={'votubia': 'everolimus for TSC kidney angiomyolipomas and brain SEGA, not facial angiofibromas',
                      'epidyolex': 'cannabidiol for seizures of TSC, not skin lesions'},
                fda_excl={304: 'Epidiolex: seizures associated with TSC, not facial angiofibromas'}),
 'p54-09': dict(cond=['cluster headaches'], dup=['cluster'],
                fda={858: 'sumatriptan succinate'}, fda_ev=['the acute treatment of cluster headache'],
                chem_ok=['sumatriptan succinate'],
                syn=r'cluster headache',
                fda_excl={797: 'rizatriptan/SYMBRAVO record: "SYMBRAVO is not indicated for the treatment of cluster headache"',
                          863: 'meloxicam/SYMBRAVO: "not indicated for the treatment of cluster headache"',
                          996: 'zolmitriptan ODT: "Safety and effectiveness ... have not been established for cluster headache"'},
                note='FDA #857 (sumatriptan nasal spray, migraine only) and #606 (naproxen records incl. sumatriptan/naproxen) are not matched by "sumatriptan succinate"'),
 'p54-10': dict(cond=['thyroid nodules'], dup=['thyroid nodul', 'goit', 'nodul'],
                fda={59: 'armour thyroid'}, fda_ev=['euthyroid goiters, including thyroid nodules'],
                syn=r'thyroid nodul|goit|tsh suppress',
                fda_excl={552: 'methimazole: hyperthyroidism / toxic multinodular goiter (an overactive gland), not TSH suppression of nodules'},
                note='FDA #637 (NP Thyroid, also desiccated thyroid) is stored truncated ("NP Thyroid tablets ... are indicated: 2.") and states no use, so it is not an answer; it is not matched by "armour thyroid"'),
 'p54-11': dict(cond=['itchy lumps'], dup=['prurigo', 'itchy lump', 'itchy bump', 'nodul'],
                brand=['dupixent'], ev=['to treat adults with moderate-to-severe prurigo nodularis'], syn=r'prurigo'),
 'p54-12': dict(cond=['oral ulcers'], dup=['beh.{1,2}et', 'mouth ulcer', 'oral ulcer'],
                brand=['otezla', 'jayempi'],
                ev={'otezla': ['to treat the mouth ulcers'], 'jayempi': ['oral and genital mucous membranes']},
                syn=r'beh.{1,2}et|oral ulcer|mouth ulcer|aphthous'),
 # ---------------- plural condition + named product
 'p54-13': dict(names=['eslicarbazepine'], cond=['focal seizures'], subst=['eslicarbazepine'],
                fda={310: 'eslicarbazepine'}, fda_ev=['partial-onset seizures in patients 4 years of age and older'],
                chem_ok=['eslicarbazepine acetate'], note='"focal seizures" = partial-onset seizures'),
 'p54-14': dict(names=['pravastatin'], cond=['heart attacks'], subst=['pravastatin'],
                fda={744: 'pravastatin'}, fda_ev=['myocardial infarction'],
                chem_ok=['pravastatin', 'pravastatin sodium'],
                excl={'pravafenix': 'pravastatin + fenofibrate fixed combination, used to lower LDL/raise HDL; heart attack named only as a consequence of plaque, no claim to reduce it (and a different product)'}),
 'p54-15': dict(names=['sucralfate'], cond=['duodenal ulcers'], subst=['sucralfate'],
                fda={852: 'sucralfate'}, fda_ev=['maintenance therapy for duodenal ulcer patients']),
 'p54-16': dict(names=['rayasal'], cond=['verrucas'], subst=['rayasal'],
                fda={784: 'rayasal'}, fda_ev=['verrucae'], note='verrucas = plantar warts (verrucae)'),
 'p54-17': dict(names=['onapgo'], cond=['motor fluctuations'], subst=['onapgo', 'apomorphine'],
                fda={653: 'onapgo'}, fda_ev=['motor fluctuations in adults with advanced parkinson'],
                chem_ok=[]),
 'p54-18': dict(names=['terbutaline'], cond=['asthma attacks'], subst=['terbutaline'],
                fda={878: 'terbutaline'},
                fda_ev=['prevention and reversal of bronchospasm in patients 12 years of age and older with asthma'],
                chem_ok=['terbutaline', 'terbutaline sulfate']),
 'p54-19': dict(names=['quzyttir'], cond=['hives'], subst=['quzyttir'],
                fda={160: 'quzyttir'}, fda_ev=['acute urticaria in adults and children 6 months of age and older'],
                note='hives = urticaria; the record is merged with cetirizine oral solution (perennial allergic rhinitis)'),
 'p54-20': dict(names=['amiodarone'], cond=['vf episodes'], subst=['amiodarone'],
                fda={39: 'amiodarone'}, fda_ev=['life-threatening recurrent ventricular fibrillation'],
                chem_ok=['amiodarone', 'amiodarone hydrochloride']),
 'p54-21': dict(names=['lurasidone'], cond=['depressive episodes'], subst=['lurasidone'],
                fda={528: 'lurasidone'},
                fda_ev=['pediatric patients (10 to 17 years) with major depressive episode associated with bipolar i disorder'],
                chem_ok=['lurasidone', 'lurasidone hydrochloride']),
 'p54-22': dict(names=['lamotrigine'], cond=['mood episodes'], subst=['lamotrigine'],
                fda={488: 'lamotrigine'}, fda_ev=['delay the time to occurrence of mood episodes'],
                chem_ok=['lamotrigine']),
 'p54-23': dict(names=['bretaris'], cond=['flare-ups'], subst=['bretaris'],
                brand=['bretaris'], ev=['reduce the number of flare-ups']),
 'p54-24': dict(names=['accofil'], cond=['infections'], subst=['accofil'],
                brand=['accofil'], ev=['after treatment with chemotherapy to help prevent infections']),
 # ---------------- family names
 'p54-25': dict(family=['factor viii'], cond=[], dup=['factor viii'],
                dupq=[r'factor viii|fviii', r'fridge|room temperature|store|storage'],
                brand=['advate', 'adynovi', 'afstyla', 'elocta', 'esperoct', 'jivi', 'kovaltry', 'novoeight', 'voncento'],
                ev={'*': ['room temperature'], 'voncento': ['do not store above 25']},
                syn=r'factor viii',
                excl={'obizur': 'porcine-sequence factor VIII for ACQUIRED haemophilia, hospital use; storage: refrigerator only, no room-temperature period',
                      'hemlibra': 'emicizumab, a bispecific antibody that replaces the function of factor VIII - not a factor VIII product',
                      'roctavian': 'gene therapy (valoctocogene roxaparvovec), not a factor VIII concentrate',
                      'veyvondi': 'recombinant von Willebrand factor only (no factor VIII)',
                      'novoseven': 'factor VIIa bypassing agent (mentions factors VIII/IX only as treatments that fail)',
                      'cevenfacta': 'factor VIIa bypassing agent'}),
 'p54-26': dict(family=['factor ix'], cond=[], dup=['factor ix'], dupq=[r'factor ix|fix\b', r'toddler|child|age'],
                brand=['benefix', 'rixubis', 'idelvion'], ev=['all age groups'],
                syn=r'factor ix',
                excl={'hemgenix': 'gene therapy (etranacogene dezaparvovec), adults only - not a factor IX replacement concentrate',
                      'novoseven': 'factor VIIa for patients who do not respond to factor VIII/IX',
                      'hemlibra': 'emicizumab, haemophilia A only',
                      'cevenfacta': 'factor VIIa for haemophilia with inhibitors'},
                fda_excl={25: 'Alhemo (concizumab): anti-TFPI antibody, 12 years and older',
                          336: 'FEIBA: anti-inhibitor coagulant complex for patients WITH inhibitors',
                          406: 'Hemgenix: gene therapy for adults'}),
 'p54-27': dict(family=['factor xiii'], cond=[], dup=['factor xiii', 'novothirteen'],
                dupq=[r'factor xiii|fxiii|novothirteen|catridecacog', r'bleed|deficien|prevent'],
                brand=['novothirteen'], ev=['missing part of factor xiii'],
                syn=r'factor xiii|catridecacog'),
 'p54-28': dict(family=['factor viia'], cond=[], dup=['factor viia', 'inhibitors'], dupq=[r'factor viia|fviia|novoseven|eptacog|sevenfact', r'inhibitor'],
                brand=['novoseven', 'cevenfacta'], fda={819: 'sevenfact'},
                ev={'novoseven': ['do not respond normally to factors viii or ix'], 'cevenfacta': ['who have developed inhibitors']},
                fda_ev=['hemophilia a or b with inhibitors'],
                syn=r'factor viia|eptacog|coagulation factor vii\b'),
 'p54-29': dict(family=['c1 esterase inhibitor'], cond=[], dup=['c1'], dupq=[r'c1.?(esterase )?inhibitor|c1-inh'],
                brand=['cinryze', 'ruconest'],
                ev={'cinryze': ['stop swelling attacks once they have begun'], 'ruconest': ['acute attack of hae']},
                syn=r'c1.?(esterase )?inhibitor|c1-inh|rhc1',
                excl={'orladeyo': 'berotralstat, an oral plasma kallikrein inhibitor to PREVENT attacks; names C1-inhibitor deficiency only as the cause'}),
 'p54-30': dict(family=['bcg'], cond=[], dup=['bcg', 'calmette', 'bladder'], dupq=[r'\bbcg\b|calmette'],
                fda={891: 'tice bcg'}, fda_ev=['prophylaxis of primary or recurrent stage ta and/or t1 papillary tumors following transurethral resection'],
                syn=r'\bbcg\b|calmette',
                fda_excl={431: 'INLEXZO (gemcitabine intravesical system) for BCG-UNRESPONSIVE bladder cancer - not BCG'}),
 'p54-31': dict(family=['hcg'], cond=[], dup=['hcg', 'chorionic', 'trigger'], dupq=[r'\bhcg\b|chorionic|choriogonadotropin'],
                brand=['ovitrelle'], ev=['in vitro fertilisation'],
                syn=r'chorionic gonadotropin|choriogonadotropin|\bhcg\b',
                excl={'bemfola': 'follitropin alfa (FSH); hCG named only as the follow-up injection',
                      'gonal': 'follitropin alfa (FSH)',
                      'pergoveris': 'follitropin alfa + lutropin alfa (FSH+LH); hCG named as the follow-up',
                      'luveris': 'lutropin alfa (LH); hCG named as the follow-up'},
                fda_excl={635: 'Novarel (hCG): the stored indications text is only "HCG HAS NOT BEEN DEMONSTRATED TO BE EFFECTIVE ADJUNCTIVE THERAPY IN THE TREATMENT OF OBESITY." - no indication quoted',
                          751: 'Pregnyl (hCG): same - only the obesity disclaimer is stored, no indication quoted'}),
 'p54-32': dict(family=['fsh'], cond=[], dup=['fsh', 'follitropin', 'follicle'], dupq=[r'\bfsh\b|follicle.stimulating|follitropin', r'ivf|follicles|in vitro'],
                brand=['bemfola', 'gonal', 'puregon'],
                ev=['in vitro fertilisation', 'in vitro fertilisation (ivf)'],
                syn=r'follicle.stimulating|follitropin|\bfsh\b',
                excl={'pergoveris': 'FSH + LH only for women with SEVERE FSH and LH deficiency, not IVF multi-follicle stimulation',
                      'luveris': 'lutropin alfa (LH), given with FSH in severe LH/FSH deficiency',
                      'ganirelix': 'GnRH antagonist that prevents premature ovulation; FSH named only in the explanation',
                      'ovitrelle': 'hCG, not FSH'},
                fda_hit_ok={398: 'GONAL-f FDA record, the same product as EMA GONAL-f; its stored indications text is truncated to "GONAL-f is indicated for:" so it is not a required answer, but the substring "gonal" (needed for the EMA leaflet named "gonal") also matches it'}),
 'p54-33': dict(family=['g-csf'], cond=[], dup=['g-csf', 'stem cell', 'filgrastim'], dupq=[r'g-csf|filgrastim|colony', r'stem cell|donor|mobili'],
                brand=['accofil', 'filgrastim', 'grastofil', 'nivestim', 'ratiograstim', 'tevagrastim', 'zarzio'],
                ev=['stem cells which can be collected'], ev_all=['donor'],
                syn=r'colony.stimulating|g-csf|grastim',
                excl={d: 'pegfilgrastim (long-acting G-CSF) - only to shorten neutropenia after chemotherapy; no stem cell collection in its leaflet'
                      for d in ['cegfila', 'fulphila', 'grasustek', 'neulasta', 'nyvepria', 'pelmeg', 'stimufend', 'ziextenzo']},
                fda_excl={585: 'Mozobil (plerixafor): a CXCR4 antagonist given "in combination with filgrastim" - not a G-CSF',
                          219: 'Danyelza (naxitamab) for neuroblastoma, used with GM-CSF'},
                excl2={'lonquex': 'lipegfilgrastim (long-acting G-CSF) - chemotherapy neutropenia only'}),
 'p54-34': dict(family=['epo'], cond=[], dup=['epo', 'erythropoie', 'transfusion'], dupq=[r'\bepo\b|erythropoie|epoetin', r'surgery|operation|replacement|orthop'],
                brand=['abseamed', 'binocrit', 'epoetin', 'retacrit', 'silapo'],
                ev=['moderately anaemic adults about to have major orthopaedic surgery'],
                syn=r'erythropoie|epoetin',
                excl={'aranesp': 'darbepoetin: renal anaemia and chemotherapy anaemia only',
                      'eporatio': 'epoetin theta: renal anaemia and chemotherapy anaemia only',
                      'neorecormon': 'epoetin beta: renal, chemotherapy, premature infants and "people donating their own blood before surgery" (autologous pre-donation), not the orthopaedic-surgery transfusion-sparing use',
                      'reblozyl': 'luspatercept (MDS / beta-thalassaemia anaemia), not an erythropoietin',
                      'scenesse': 'afamelanotide for erythropoietic protoporphyria'},
                fda_excl={345: 'Ferrlecit (iron) in dialysis patients "receiving supplemental epoetin therapy"'}),
 'p54-35': dict(family=['growth hormone'], cond=[], dup=['growth hormone'], dupq=[r'growth hormone|somatropin', r'fridge|store|storage|room temperature'],
                brand=['nutropinaq', 'omnitrope', 'ngenla', 'skytrofa'], ev=['refrigerat'],
                syn=r'growth hormone|somatropin|somatrogon|somapacitan',
                excl={'somavert': 'pegvisomant, a growth hormone RECEPTOR ANTAGONIST for acromegaly',
                      'ghryvelin': 'macimorelin, an oral diagnostic test for growth hormone deficiency',
                      'mycapssa': 'oral octreotide for acromegaly (lowers growth hormone)'}),
 'p54-36': dict(family=['insulin'], cond=[], dup=['nph', 'isophane', 'intermediate'], dupq=[r'\bnph\b|isophane|intermediate.acting'],
                brand=['insulatard', 'protaphane'], ev=['gradual onset and long duration of action'],
                ev6=['isophane (nph) human insulin suspension'],
                syn=r'isophane|\bnph\b',
                excl={'mixtard': 'premix of 30% soluble + 70% isophane human insulin, not plain NPH'}),
 'p54-37': dict(family=['insulin'], cond=[], dup=['mealtime', 'rapid-acting', 'fast-acting'], dupq=[r'insulin', r'\bmeals?\b|before eating|after eating'],
                brand=['insulin', 'kirsty', 'liprolog', 'lyumjev', 'novorapid'],
                ev={'*': ['of a meal', 'before a meal', 'mealtime insulin']},
                syn=r'rapid-acting|works more quickly than normal human insulin|mealtime insulin|insulin lispro|insulin aspart',
                excl={'ryzodeg': 'co-formulation of insulin degludec (basal) with insulin aspart, dosed with the main meal(s) - not a plain rapid-acting mealtime insulin',
                      'mixtard': 'premixed human insulin',
                      'tresiba': 'insulin degludec, a basal (long-acting) insulin'},
                note='the EMA leaflet named "insulin" is Insulin lispro Sanofi; FDA insulin records carry only indications, so they cannot hold the dosage section'),
 'p54-38': dict(family=['immunoglobulin'], cond=[], dup=['cidp', 'chronic inflammatory demyelinating'], dupq=[r'cidp|chronic inflammatory demyelinating'],
                brand=['flebogamma', 'hizentra', 'kiovig', 'privigen'], ev=['cidp'],
                syn=r'cidp|chronic inflammatory demyelinating',
                fda_excl={974: 'VYVGART HYTRULO (efgartigimod alfa + hyaluronidase): an FcRn blocker, not an immunoglobulin product'}),
 'p54-39': dict(family=['hepatitis b immunoglobulin'], cond=[], dup=['hepatitis b immun', 'liver transplant'],
                dupq=[r'hepatitis b', r'immunoglobulin|antibod|immune globulin'],
                brand=['zutectra'], ev=['prevent re-infection of hepatitis b in adults who have had a liver transplant'],
                syn=r'hepatitis b immunoglobulin|antibodies against the hepatitis b virus|hepatitis b.{0,40}liver transplant'),
 'p54-40': dict(family=['fish oil', 'omega-3'], cond=[], dup=['fish oil', 'omega-3', 'triglyceride'],
                dupq=[r'fish oil|omega-3|omega 3', r'triglycer'],
                brand=['vazkepa'], fda={649: 'omega-3-acid ethyl esters', 426: 'icosapent ethyl'},
                ev=['lowers levels of triglycerides'],
                fda_ev={649: ['reduce triglyceride (tg) levels'], 426: ['patients with severe hypertriglyceridemia']},
                chem_ok=['omega-3-acid ethyl esters', 'icosapent ethyl'],
                note='FDA #426 (icosapent ethyl capsules) is stored truncated ("Icosapent ethyl capsules are indicated:"); its limitation sentence places it in severe hypertriglyceridemia',
                syn=r'fish oil|omega-3|icosapent',
                fda_excl={650: 'Omegaven / SMOFlipid: intravenous fish-oil lipid emulsions for parenteral nutrition, not capsules for triglycerides'}),
}
for _s in S.values():
    if 'excl2' in _s:
        _s.setdefault('excl', {}).update(_s.pop('excl2'))


def evfor(spec, key, doc):
    ev = spec.get(key)
    if isinstance(ev, dict):
        return ev.get(doc, ev.get('*', []))
    return ev or []


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


def contains(secs, term):
    t = term.lower()
    if t in secs.get(6, '').lower():
        return True
    return re.search(r'contain\w*[^.]{0,80}' + re.escape(t), secs.get(1, '').lower()) is not None


def wordin(term, text):
    return re.search(r'(?<![a-z0-9])' + re.escape(term) + r'(?![a-z0-9])', text) is not None


def ws(t):
    return re.sub(r'\s+', ' ', t)


def check_notes(rows, ema, fda, p):
    if not os.path.exists(NOTES):
        p('notes file %s missing' % NOTES)
        return
    lines = {}
    for l in open(NOTES):
        m = re.match(r'(%s-\d\d) \[' % PFX, l)
        if m:
            if m.group(1) in lines:
                p('notes: two lines for %s' % m.group(1))
            lines[m.group(1)] = l.rstrip('\n')
    for r in rows:
        rid = r['id']
        l = lines.get(rid)
        if not l:
            p('notes: no line for %s' % rid)
            continue
        if r['query'] not in l:
            p('notes: %s line does not repeat the query' % rid)
        spec = S.get(rid, {})
        secn = SECNUM.get(r.get('expected_section'), 1)
        for m in re.finditer(r'EMA (\S+), section (\d)[^:"]*: "\.\.\.(.*?)\.\.\."(?= \||$)', l):
            d, sn, q = m.group(1), int(m.group(2)), m.group(3)
            if q not in ws(ema.get(d, {}).get(sn, '')):
                p('notes: %s quote not found in EMA %s section %d: %r' % (rid, d, sn, q[:60]))
        for m in re.finditer(r'FDA #(\d+) \([^"]*?\): "\.\.\.(.*?)\.\.\."(?= \||$)', l):
            i, q = int(m.group(1)), m.group(2)
            if not (0 <= i < len(fda)) or q not in ws(fda[i][1]):
                p('notes: %s quote not found in FDA #%s: %r' % (rid, i, q[:60]))
        for d in spec.get('brand', []):
            if not re.search(r'EMA %s, section %d[^:"]*: "\.\.\.' % (re.escape(d), secn), l):
                p('notes: %s does not quote EMA %s section %d' % (rid, d, secn))
        if secn == 1:
            for i in spec.get('fda', {}):
                if not re.search(r'FDA #%d \(' % i, l):
                    p('notes: %s does not quote FDA #%d' % (rid, i))


def main():
    ema, fda, chemrows = load()
    chem = [n.lower() for n, _ in chemrows]
    probs = []
    p = probs.append
    rows = [json.loads(l) for l in open(PROBE) if l.strip()]
    avoid = sorted({l.strip().lower() for l in open(AVOID_FILE) if l.strip()})
    for fn in ('drug_kb_dev.jsonl', 'drug_kb_dev_more.jsonl'):
        for l in open(os.path.join(DATA, fn)):
            if l.strip():
                avoid += [s.lower() for s in json.loads(l)['expected_doc_name_substrings']]
    avoid = sorted(set(avoid))
    prev = [json.loads(l)['query'] for l in open(PREV_FILE) if l.strip()]
    prevl = [q.lower() for q in prev]
    # vocabulary of product / substance names (for "names no medicine")
    vocab = set(ema)
    for nm, _ in fda:
        vocab |= {x.strip() for x in nm.split('|') if x.strip()}
    vocab |= set(chem)
    vocab = {v for v in vocab if len(v) >= 4} - NOT_NAMES
    # --- format
    if len(rows) != 40:
        p('expected 40 rows, got %d' % len(rows))
    ids = [r.get('id') for r in rows]
    if ids != ['%s-%02d' % (PFX, i) for i in range(1, 41)]:
        p('ids are not %s-01..%s-40 in order' % (PFX, PFX))
    kinds = {}
    for r in rows:
        kinds[r.get('kind')] = kinds.get(r.get('kind'), 0) + 1
    if kinds != KINDS:
        p('kind counts %s != %s' % (kinds, KINDS))
    if [r.get('kind') for r in rows] != KIND_ORDER[:len(rows)]:
        p('kinds are not in the required order')
    allowed = {'id', 'query', 'expected_doc_name_substrings', 'k', 'expected_section', 'kind'}
    queries = set()
    report = []
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
        ql = r['query'].lower()
        if ql in queries:
            p('%s: duplicate query' % rid)
        queries.add(ql)
        if ql in prevl:
            p('%s: query already in %s' % (rid, PREV_FILE))
        subs = r.get('expected_doc_name_substrings')
        if not isinstance(subs, list) or not subs or any(not isinstance(s, str) or s != s.lower() or not s.strip() for s in subs):
            p('%s: substrings must be a non-empty list of lower-case strings' % rid)
            continue
        if len(set(subs)) != len(subs):
            p('%s: duplicate substrings' % rid)
        sec = r.get('expected_section')
        if sec is not None and sec not in SECNUM:
            p('%s: unknown section %r' % (rid, sec))
        spec = S.get(rid)
        if spec is None:
            p('%s: no spec' % rid)
            continue
        nomed, named, family = rid in NOMED, rid in NAMED, kind == 'family_name'
        if (nomed or named) and sec is not None:
            p('%s: plural_condition rows ask about indications and take no section' % rid)
        # --- avoid list
        bad = set()
        if named:
            if not spec.get('names'):
                p('%s: named row without names' % rid)
            for n in set(spec.get('names', [])) | set(subs):
                for a in avoid:
                    if a in n or n in a:
                        bad.add('%s~%s' % (n, a))
            for n in spec.get('names', []):
                if n not in ql:
                    p('%s: name %r not in the query' % (rid, n))
        for a in avoid:
            if wordin(a, ql):
                bad.add('query:' + a)
        if family:
            for t in spec.get('family', []):
                if t in avoid:
                    bad.add('family term:' + t)
        if bad:
            p('%s: uses avoided product/substance %s' % (rid, sorted(bad)))
        # --- names no medicine (no-medicine rows) / only the family term (family rows)
        if nomed or family:
            qq = ql
            for t in spec.get('family', []):
                if t not in ql:
                    p('%s: family term %r not in the query' % (rid, t))
                qq = qq.replace(t, ' ')
            named_in_q = sorted(v for v in vocab if wordin(v, qq))
            if named_in_q:
                p('%s: query names a product/substance %s' % (rid, named_in_q))
            if spec.get('names'):
                p('%s: no-medicine/family row must not rely on product names' % rid)
        # --- plural condition phrase and earlier queries
        for c in spec.get('cond', []):
            if c not in ql:
                p('%s: condition phrase %r not in the query' % (rid, c))
        if kind == 'plural_condition' and not spec.get('cond'):
            p('%s: plural_condition row without cond' % rid)
        if nomed or family:
            for c in spec.get('cond', []):
                hits = [q for q in prev if c in q.lower()]
                if hits:
                    p('%s: earlier query already uses %r: %s' % (rid, c, hits[:3]))
            if spec.get('dupq'):
                hits = [q for q in prev if all(re.search(x, q, re.I) for x in spec['dupq'])]
                if hits:
                    p('%s: near-duplicate earlier query %s' % (rid, hits[:3]))
            for st in spec.get('dup', []):
                for q in prev:
                    if re.search(st, q, re.I):
                        report.append('%s  stem %r  earlier: %s' % (rid, st, q))
        # --- substrings match something
        for s in subs:
            n = sum(s in d for d in ema) + sum(s in nm for nm, _ in fda) + sum(s in c for c in chem)
            if n == 0:
                p('%s: substring %r matches no document' % (rid, s))

        def hit(name):
            return any(s in name for s in subs)
        secn = SECNUM.get(sec, 1)
        fda_counts = sec in (None, 'indications_and_usage')
        excl = spec.get('excl', {})
        fexcl = spec.get('fda_excl', {})
        for d, why in excl.items():
            if not why or d not in ema:
                p('%s: exclusion %r needs an existing document and a reason' % (rid, d))
            elif hit(d):
                p('%s: excluded document %r is matched by a substring' % (rid, d))
        for i, why in fexcl.items():
            if not why or not (0 <= i < len(fda)):
                p('%s: FDA exclusion %r needs an existing record and a reason' % (rid, i))
            elif hit(fda[i][0]):
                p('%s: excluded FDA record %d is matched by a substring' % (rid, i))
        # --- required EMA documents
        req = set(spec.get('brand', []))
        for d in sorted(req):
            if d not in ema:
                p('%s: brand %r is not an EMA document' % (rid, d))
                continue
            if d in excl:
                p('%s: %r both required and excluded' % (rid, d))
            if not hit(d):
                p('%s: answering leaflet %r not matched by %s' % (rid, d, subs))
            txt = ema[d].get(secn)
            if not txt:
                p('%s: %r has no section %s' % (rid, d, secn))
                continue
            ev = evfor(spec, 'ev', d)
            if not ev:
                p('%s: no evidence terms for %r' % (rid, d))
            elif not any(e in txt.lower() for e in ev):
                p('%s: %r section %s lacks evidence %s' % (rid, d, secn, ev))
            if spec.get('ev6') and not any(e in ema[d].get(6, '').lower() for e in spec['ev6']):
                p('%s: %r section 6 lacks %s' % (rid, d, spec['ev6']))
        if spec.get('ev_all'):
            if not any(any(e in ema[d].get(secn, '').lower() for e in spec['ev_all']) for d in req if d in ema):
                p('%s: no required leaflet holds %s' % (rid, spec['ev_all']))
        for d in ema:
            if hit(d) and d not in req:
                p('%s: substring matches EMA document %r that the spec does not require' % (rid, d))
        # --- required FDA records
        freq = dict(spec.get('fda', {}))
        if freq and not fda_counts:
            p('%s: FDA answers listed for a non-indication section' % rid)
        if fda_counts:
            for i, term in freq.items():
                nm, ind = fda[i]
                if term not in nm:
                    p('%s: FDA record %d names %r, not %r' % (rid, i, nm[:60], term))
                if not hit(nm):
                    p('%s: answering FDA record %d (%s) not matched' % (rid, i, nm[:80]))
                ev = evfor(spec, 'fda_ev', i)
                if not ev or not any(e in ind.lower() for e in ev):
                    p('%s: FDA record %d lacks evidence %s' % (rid, i, ev))
            for i, (nm, ind) in enumerate(fda):
                if hit(nm) and i not in freq:
                    if i in spec.get('fda_hit_ok', {}):
                        continue
                    p('%s: substring matches FDA record %d (%s) that the spec does not require' % (rid, i, nm[:80]))
        for i, why in spec.get('fda_hit_ok', {}).items():
            if not why or not hit(fda[i][0]):
                p('%s: fda_hit_ok %d needs a reason and must be matched' % (rid, i))
        # --- ChEMBL matches
        for c in chem:
            if hit(c) and c not in spec.get('chem_ok', []):
                p('%s: substring matches ChEMBL record %r not listed in chem_ok' % (rid, c))
        for c in spec.get('chem_ok', []):
            if c not in chem:
                pass  # allowance only
        # --- answer counts
        nans = len(req) + (len(freq) if fda_counts else 0)
        if nans == 0:
            p('%s: no answering document' % rid)
        if nomed and nans > 8:
            p('%s: %d answering documents (> 8) for a no-medicine row' % (rid, nans))
        # --- condition / family search: nothing that answers is left out
        if nomed or family:
            if not spec.get('syn'):
                p('%s: no synonym search' % rid)
            else:
                rx = re.compile(spec['syn'], re.I)
                for d, secs in ema.items():
                    txt = secs.get(1, '') + (' ' + secs.get(6, '') if family else '')
                    if rx.search(txt) and d not in req and d not in excl:
                        p('%s: leaflet %r matches the condition/family search but is neither required nor excluded' % (rid, d))
                if fda_counts:
                    for i, (nm, ind) in enumerate(fda):
                        if rx.search(ind) and i not in freq and i not in fexcl and i not in spec.get('fda_hit_ok', {}):
                            p('%s: FDA record %d (%s) matches the condition/family search but is neither required nor excluded' % (rid, i, nm[:60]))
        # --- named rows: every document of the named product/substance is accounted for
        if named:
            for t in spec.get('subst', []):
                for d, secs in ema.items():
                    if (t in d or contains(secs, t)) and d not in req and d not in excl:
                        p('%s: leaflet %r holds %r but is neither required nor excluded' % (rid, d, t))
                if fda_counts:
                    for i, (nm, ind) in enumerate(fda):
                        if t in nm and i not in freq and i not in fexcl:
                            p('%s: FDA record %d holds %r but is neither required nor excluded' % (rid, i, t))
        # --- the expected section exists for a matched document
        if sec is not None:
            ok = any(hit(d) and secn in secs for d, secs in ema.items())
            ok = ok or (sec == 'indications_and_usage' and any(hit(nm) for nm, _ in fda))
            if not ok:
                p('%s: no matched document has section %s' % (rid, sec))
    check_notes(rows, ema, fda, p)
    if report:
        sys.stderr.write('earlier queries sharing a stem (reviewed, see notes):\n' + '\n'.join(report) + '\n')
    if probs:
        print('\n'.join(probs))
        print('%d problem(s)' % len(probs))
        return 1
    print('OK')
    return 0


if __name__ == '__main__':
    sys.exit(main())
