#!/usr/bin/env python3
"""Write probe54.jsonl (rows below) and probe54_notes.md (evidence snippets cut from the
corpus with the spec in verify54.py). Run verify54.py afterwards."""
import json, os, re, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import verify54 as V

P, N, F = 'plural_condition', 'plural_condition', 'family_name'
# (query, substrings, section)
ROWS = [
 # ---- plural condition, no medicine named (12)
 ("My nasal polyps keep growing back even with steroid nose sprays - is there an injection that shrinks them?",
  ['dupixent', 'nucala'], None),
 ("my ultrasound showed a couple of liver lesions - is there a contrast injection they can give during the ultrasound to work out what they are?",
  ['lumason'], None),
 ("what treats discoid lupus patches? I have scaly round patches on my face and scalp that leave scars",
  ['hydroxychloroquine', 'celestone'], None),
 ("is there an injection that flattens thick raised keloids on my chest and shoulders?",
  ['celestone'], None),
 ("my hands shake when I hold a cup - the doctor says essential tremors, it runs in the family. Is any tablet licensed for them?",
  ['propranolol'], None),
 ("I keep getting vertigo attacks from an inner ear problem, the whole room spins - what tablet is used for them?",
  ['meclizine'], None),
 ("I keep getting genital herpes outbreaks every couple of months - is there a tablet I can take every day to stop them?",
  ['valacyclovir'], None),
 ("my son has tuberous sclerosis and lots of red bumps on his cheeks and nose (facial angiofibromas) - is there a gel or cream for them?",
  ['hyftor'], None),
 ("I get cluster headaches - stabbing pain behind one eye for an hour - what can stop one once it has started?",
  ['sumatriptan succinate'], None),
 ("is there a tablet that can shrink thyroid nodules in a thyroid that otherwise works normally?",
  ['armour thyroid'], None),
 ("I've got dozens of hard, very itchy lumps on my arms and legs (prurigo nodularis) - is there an injection that helps?",
  ['dupixent'], None),
 ("treatment options for recurrent oral ulcers in Behcet's disease",
  ['otezla', 'jayempi'], None),
 # ---- plural condition + a named product (12)
 ("Can my 6 year old take eslicarbazepine for his focal seizures?",
  ['eslicarbazepine'], None),
 ("does pravastatin lower the chance of more heart attacks if you already have heart disease?",
  ['pravastatin'], None),
 ("is sucralfate used to heal duodenal ulcers, and can it keep them from coming back?",
  ['sucralfate'], None),
 ("can I put Rayasal on the verrucas on the soles of my feet?",
  ['rayasal'], None),
 ("is Onapgo for the motor fluctuations ('off' spells) in advanced Parkinson's?",
  ['onapgo'], None),
 ("do terbutaline tablets help prevent asthma attacks in a 14 year old?",
  ['terbutaline'], None),
 ("is Quzyttir injection used for a sudden outbreak of hives in a young child?",
  ['quzyttir'], None),
 ("oral amiodarone for recurrent VF episodes that other antiarrhythmics have not controlled",
  ['amiodarone'], None),
 ("lurasidone for depressive episodes of bipolar I disorder in a 15-year-old",
  ['lurasidone'], None),
 ("can lamotrigine stop mood episodes coming back in bipolar disorder?",
  ['lamotrigine'], None),
 ("will Bretaris Genuair cut down my COPD flare-ups?",
  ['bretaris'], None),
 ("Mum starts chemo next week - does Accofil help stop her getting infections when her white cells drop?",
  ['accofil'], None),
 # ---- family names (16)
 ("can my son's factor VIII be kept out of the fridge at room temperature, and for how long?",
  ['advate', 'adynovi', 'afstyla', 'elocta', 'esperoct', 'jivi', 'kovaltry', 'novoeight', 'voncento'], 'storage'),
 ("factor IX replacement for a toddler with haemophilia B - which products are licensed for all ages?",
  ['benefix', 'rixubis', 'idelvion'], None),
 ("factor XIII concentrate to prevent bleeding in someone born without enough factor XIII",
  ['novothirteen'], None),
 ("recombinant factor VIIa for bleeds in haemophilia patients who have developed inhibitors",
  ['novoseven', 'cevenfacta', 'sevenfact'], None),
 ("C1 esterase inhibitor to treat an acute hereditary angioedema attack",
  ['cinryze', 'ruconest'], None),
 ("my dad is having BCG put into his bladder after they scraped out some early bladder tumours - which product is that?",
  ['tice bcg'], None),
 ("the hCG trigger shot that ripens the eggs before IVF egg collection - which product is it?",
  ['ovitrelle'], None),
 ("FSH injections to grow several follicles for IVF",
  ['bemfola', 'gonal', 'puregon'], None),
 ("G-CSF injections for a stem cell donor to move stem cells into the blood so they can be collected",
  ['accofil', 'filgrastim', 'grastofil', 'nivestim', 'ratiograstim', 'tevagrastim', 'zarzio'], None),
 ("can I have EPO injections before my knee replacement so I don't need a blood transfusion?",
  ['abseamed', 'binocrit', 'epoetin', 'retacrit', 'silapo'], None),
 ("how should my daughter's growth hormone pen be stored - always in the fridge, or can it be kept at room temperature?",
  ['nutropinaq', 'omnitrope', 'ngenla', 'skytrofa'], 'storage'),
 ("cloudy intermediate-acting NPH (isophane) human insulin - which products are there?",
  ['insulatard', 'protaphane'], None),
 ("how close to a meal should I inject my rapid-acting mealtime insulin - before or after eating?",
  ['insulin', 'kirsty', 'liprolog', 'lyumjev', 'novorapid'], 'dosage_and_administration'),
 ("immunoglobulin therapy for CIDP (chronic inflammatory demyelinating polyneuropathy)",
  ['flebogamma', 'hizentra', 'kiovig', 'privigen'], None),
 ("hepatitis B immunoglobulin injections after a liver transplant to stop the virus coming back",
  ['zutectra'], None),
 ("prescription fish oil (omega-3) capsules to bring down very high triglycerides",
  ['vazkepa', 'omega-3-acid ethyl esters', 'icosapent ethyl'], None),
]
KINDS = [P] * 24 + [F] * 16

FOOTER = """## Earlier queries (near-duplicate review)

verify54.py fails a no-medicine or family row if any earlier query (/tmp/q/all.jsonl, 2,634 queries) contains its plural condition
phrase (`cond`) or matches all of its `dupq` patterns, and prints to stderr every earlier query that shares a looser stem (`dup`).
That review removed these first choices, because an earlier query already asked the same thing:
absence seizures ("absence fits in a 7 year old"), muscle spasms ("muscle relaxer for when you throw your back out"),
dizzy spells on standing / orthostatic hypotension ("I get a head rush and nearly black out every time I stand up..."),
digital (finger) ulcers ("endothelin receptor antagonist to cut down new finger ulcers in scleroderma"),
bone metastases ("bisphosphonate to prevent fractures from cancer that has spread to the bones"),
impetigo ("school sores round her nose and mouth"), tension headaches ("Is Fioricet OK for stress headaches?"),
Gaucher enzyme replacement ("type I Gaucher disease - ERT or substrate reduction"), factor IX gene therapy
("one-off gene therapy for severe haemophilia B in a grown man"), Kawasaki immunoglobulin, pancreatic enzymes.
Stems still shared and judged different in condition or purpose: "tremor" (a brain scan for Parkinson's), "herpes" (first-episode
aciclovir ointment; cold sores), "mouth ulcers" (everolimus side effect, brace, methotrexate overdose - not Behcet's),
"tuberous" (kidney angiomyolipomas), "cluster" (seizure clusters), "growth hormone" (indication / weekly products, not storage),
"filgrastim" (pegfilgrastim for neutropenia, not stem-cell mobilisation), "fish oil" (Vazkepa and gout), "lupus" (lupus nephritis),
"factor viii" (emicizumab with inhibitors), "fsh" (follitropin + lutropin in severe LH/FSH deficiency), "contrast" (gadopiclenol overdose).

## Compromises and exceptions

* p54-32: the substring "gonal" (needed: the EMA leaflet is named "gonal") also matches FDA #398 (GONAL-f), the same product, whose
  stored indications text is truncated to "GONAL-f is indicated for:"; it is allowed as a hit (fda_hit_ok) but not required.
* p54-40: FDA #426 (icosapent ethyl capsules) is stored truncated; it is required on the strength of its limitation sentence about
  "patients with severe hypertriglyceridemia".
* p54-31: the two FDA hCG records (Novarel #635, Pregnyl #751) store only an obesity disclaimer, so nothing supports them as an IVF
  trigger; they are not counted (and not matched by "ovitrelle").
* p54-10: FDA #637 (NP Thyroid) is stored truncated and states no use; only Armour Thyroid is quoted for thyroid nodules.
  The word "thyroid" is an FDA product name ("armour thyroid | thyroid"); the no-medicine check treats it as an ordinary word.
* p54-03 and p54-04 share the answer Celestone Soluspan (FDA #87/#88, intralesional betamethasone), the corpus's only keloid product.
* p54-37: the EMA leaflet called "insulin" is Insulin lispro Sanofi, so the family word itself is the substring; FDA insulin records
  (indications only) cannot hold the dosage section and are not answers for that row.
* Named rows rely on product names that are not on avoid54.txt; where the same substance has another document (Pravafenix for
  pravastatin) it is listed as not counted with the reason. Rows 25-40 may answer with avoid-list products (family rows).
* ChEMBL records matched by a substring are only the substance itself (chem_ok in verify54.py).
"""

SECLABEL = {1: 'section 1 what it is used for', 2: 'section 2 before you take', 3: 'section 3 how to take',
            4: 'section 4 side effects', 5: 'section 5 storage', 6: 'section 6 contents'}


def snippet(text, terms, w=95):
    tl = text.lower()
    for t in terms:
        i = tl.find(t.lower())
        if i >= 0:
            a = max(0, i - w)
            b = min(len(text), i + len(t) + w)
            while a > 0 and text[a - 1] != ' ':
                a += 1
            while b < len(text) and text[b] != ' ':
                b -= 1
            s = re.sub(r'\s+', ' ', text[a:b].strip())
            return s
    return None


def main():
    assert len(ROWS) == 40
    rows = []
    for i, ((q, subs, sec), kind) in enumerate(zip(ROWS, KINDS), 1):
        r = {'id': 'p54-%02d' % i, 'query': q, 'expected_doc_name_substrings': subs, 'k': 5, 'kind': kind}
        if sec:
            r['expected_section'] = sec
        rows.append(r)
    with open(os.path.join(HERE, 'probe54.jsonl'), 'w') as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + '\n')
    ema, fda, chemrows = V.load()
    out = ['# probe54 evidence notes', '',
           'One line per row: id [kind] query -> evidence (document, section, quoted words cut verbatim from the corpus).',
           'EMA = EMA leaflet (`drug`), FDA = FDA indications record (#line index in fda_indications.jsonl, product_names), ChEMBL = chembl_approved_drugs.csv.',
           'Rows 01-12 name no medicine (all answering documents listed; "not counted" lists the documents the condition search also found and why they do not answer); rows 13-24 name a product that is not on avoid54.txt; rows 25-40 name only a family / generic protein name (answers may be any products, including ones on the avoid list).',
           'verify54.py re-checks every quote below against the corpus, the avoid list, the earlier queries in /tmp/q/all.jsonl, and that the condition / family search finds no other answering document.',
           '']
    for r in rows:
        spec = V.S[r['id']]
        secn = V.SECNUM.get(r.get('expected_section'), 1)
        parts = []
        for d in spec.get('brand', []):
            ev = V.evfor(spec, 'ev', d)
            s = snippet(ema[d][secn], ev)
            parts.append('EMA %s, %s: "...%s..."' % (d, SECLABEL[secn], s))
        if secn == 1:
            for idx in sorted(spec.get('fda', {})):
                ev = V.evfor(spec, 'fda_ev', idx)
                s = snippet(fda[idx][1], ev)
                parts.append('FDA #%d (%s): "...%s..."' % (idx, fda[idx][0][:70], s))
        ex = ['%s (%s)' % (d, why) for d, why in spec.get('excl', {}).items()]
        ex += ['FDA #%d %s (%s)' % (i, fda[i][0][:45], why) for i, why in spec.get('fda_excl', {}).items()]
        if ex:
            parts.append('not counted: ' + '; '.join(ex))
        for i, why in spec.get('fda_hit_ok', {}).items():
            parts.append('exception: substring also matches FDA #%d (%s) - %s' % (i, fda[i][0][:45], why))
        if spec.get('note0'):
            parts.append(spec['note0'])
        if spec.get('note'):
            parts.append(spec['note'])
        out.append('%s [%s] %s -> %s' % (r['id'], r['kind'], r['query'], ' | '.join(parts)))
    out += ['', FOOTER]
    with open(os.path.join(HERE, 'probe54_notes.md'), 'w') as f:
        f.write('\n'.join(out) + '\n')
    print('wrote', len(rows), 'rows')


if __name__ == '__main__':
    main()
