#!/usr/bin/env python3
"""Verify /work/probe47/probe47.jsonl against the shared drug-label data (stdlib only)."""
import json, re, sys, os
from collections import Counter

DATA = '/work/shared/data'
HERE = os.path.dirname(os.path.abspath(__file__))
QFILE = os.path.join(HERE, 'probe47.jsonl')
SECNUM = {'indications_and_usage': '1', 'warnings': '2', 'dosage_and_administration': '3',
          'adverse_reactions': '4', 'storage': '5', 'description': '6'}
# The brief asks for 60 rows but its per-kind numbers add up to 56; the 4 extra rows are "named".
WANT = {'named': 24, 'typo': 8, 'salt': 6, 'noise': 8, 'class': 8, 'combination': 6}

# Completeness: which active substances each row is about.  ('any', terms): every product that
# contains any term must be covered; ('all', terms): every product that contains all terms.
# Brand-only questions (named/noise about one brand) are not listed: the brand is the answer.
COVER = {
 'p47-25': ('any', ['ustekinumab']), 'p47-26': ('any', ['aflibercept']),
 'p47-27': ('any', ['riluzole']), 'p47-28': ('any', ['tofacitinib']),
 'p47-29': ('any', ['natalizumab']), 'p47-30': ('any', ['vortioxetine']),
 'p47-31': ('any', ['olaparib']), 'p47-32': ('any', ['entecavir']),
 'p47-33': ('any', ['memantine']), 'p47-34': ('any', ['pramipexole']),
 'p47-35': ('any', ['sitagliptin']), 'p47-36': ('any', ['eltrombopag']),
 'p47-37': ('any', ['sevelamer']), 'p47-38': ('any', ['isavuconazonium', 'isavuconazole']),
 'p47-42': ('any', ['linagliptin']), 'p47-44': ('any', ['faricimab']),
 'p47-47': ('any', ['erenumab', 'fremanezumab', 'galcanezumab', 'eptinezumab']),
 'p47-48': ('any', ['secukinumab', 'ixekizumab', 'brodalumab', 'bimekizumab']),
 'p47-49': ('any', ['ocrelizumab', 'ofatumumab', 'ublituximab']),
 'p47-50': ('any', ['bortezomib', 'carfilzomib', 'ixazomib']),
 'p47-51': ('any', ['bosentan', 'ambrisentan', 'macitentan']),
 'p47-52': ('any', ['mepolizumab', 'reslizumab', 'benralizumab']),
 'p47-53': ('any', ['eculizumab', 'ravulizumab', 'crovalimab']),
 'p47-54': ('any', ['ivacaftor', 'lumacaftor', 'tezacaftor', 'elexacaftor']),
 'p47-55': ('all', ['sacubitril', 'valsartan']), 'p47-56': ('all', ['glecaprevir', 'pibrentasvir']),
 'p47-57': ('all', ['indacaterol', 'glycopyrronium']), 'p47-58': ('all', ['degludec', 'liraglutide']),
 'p47-59': ('all', ['netupitant', 'palonosetron']), 'p47-60': ('any', ['abiraterone']),
}
# Products that contain the substance(s) but do not answer the question (judgement calls).
EXCLUDE = {
 'p47-51': {'uptravi': 'selexipag (IP-receptor agonist), not an endothelin receptor antagonist'},
 'p47-57': {'enerzair': 'indacaterol/glycopyrronium/mometasone triple for asthma, not COPD',
            'zimbus': 'indacaterol/glycopyrronium/mometasone triple for asthma, not COPD'},
 'p47-60': {'lynparza': 'olaparib; its label mentions use with abiraterone + prednisone'},
}

# Class rows: products whose section 1 (EMA) or indications (FDA) mention a class word AND the
# condition.  Each must be covered or listed here with the reason it is not a member.
CLASS_SCAN = {
 'p47-47': (['cgrp', 'calcitonin gene'], ['migraine']),
 'p47-48': (['il-17', 'interleukin-17', 'interleukin 17'], ['psoriasis']),
 'p47-49': (['cd20', 'cd-20'], ['multiple sclerosis']),
 'p47-50': (['proteasome'], ['myeloma']),
 'p47-51': (['endothelin'], ['pulmonary arterial hypertension']),
 'p47-52': (['il-5', 'interleukin-5', 'interleukin 5', 'eosinophil'], ['asthma']),
 'p47-53': (['c5', 'complement'], ['paroxysmal nocturnal']),
 'p47-54': (['cftr'], ['cystic fibrosis']),
}
NOT_MEMBER = {
 'aquipta': 'atogepant: small-molecule CGRP receptor antagonist, not an antibody',
 'vydura': 'rimegepant: small-molecule CGRP receptor antagonist, not an antibody',
 'uptravi': 'selexipag: prostacyclin (IP) receptor agonist',
 'elrexfio': 'elranatamab: BCMAxCD3 bispecific; label only mentions prior proteasome inhibitor',
 'tecvayli': 'teclistamab: BCMAxCD3 bispecific; label only mentions prior proteasome inhibitor',
 'dupixent': 'dupilumab: anti-IL-4R alpha, not anti-IL-5',
 'prednisolone sodium phosphate': 'corticosteroid',
}

# Typo rows: the misspelt word and the name it should be (one dropped, doubled or swapped letter).
TYPO = {'p47-25': 'ustekinumab', 'p47-26': 'aflibercept', 'p47-27': 'riluzole', 'p47-28': 'xeljanz',
        'p47-29': 'natalizumab', 'p47-30': 'vortioxetine', 'p47-31': 'olaparib', 'p47-32': 'entecavir'}

def one_slip(a, b):
    """True if a is b with one letter dropped, doubled/inserted, or two adjacent letters swapped."""
    if a == b: return False
    if len(a) == len(b):
        d = [i for i in range(len(a)) if a[i] != b[i]]
        return len(d) == 2 and d[1] == d[0] + 1 and a[d[0]] == b[d[1]] and a[d[1]] == b[d[0]]
    if abs(len(a) - len(b)) != 1: return False
    s, l = (a, b) if len(a) < len(b) else (b, a)
    return any(l[:i] + l[i+1:] == s for i in range(len(l)))

def load():
    ema = [json.loads(l) for l in open(f'{DATA}/drug_labels/ema_leaflet_sections.jsonl')]
    fda = [json.loads(l) for l in open(f'{DATA}/drug_labels/fda_indications.jsonl')]
    return ema, fda

def main():
    ema, fda = load()
    ema_secs = {}
    for r in ema:
        m = re.match(r'\s*(\d)\.', r['section'])
        if m:
            ema_secs.setdefault(r['drug'], {})[m.group(1)] = r['text']
    # what a product contains: the start of section 6 ("What X contains The active substance ...")
    # plus the start of section 1 (one leaflet pair has storage text under section 6); later parts
    # of section 1 name other medicines to be used with it, which are not its contents.
    ema_text = {d: (s.get('6', '')[:700] + ' ' + s.get('1', '')[:250]).lower() for d, s in ema_secs.items()}
    ema_drugs = sorted(ema_secs)
    fda_names = [[p.lower() for p in r['product_names']] for r in fda]

    def matches(sub):
        e = [d for d in ema_drugs if sub in d]
        f = sorted({p for names in fda_names for p in names if sub in p})
        return e, f

    dev = [json.loads(l) for f in ('drug_kb_dev.jsonl', 'drug_kb_dev_more.jsonl') for l in open(f'{DATA}/{f}')]
    dev_queries = {d['query'].strip().lower() for d in dev}
    dev_products = set()
    for d in dev:
        for s in d['expected_doc_name_substrings']:
            e, f = matches(s.lower())
            dev_products.update(e)

    errors, warns = [], []
    rows = [json.loads(l) for l in open(QFILE) if l.strip()]
    ids = Counter(r.get('id') for r in rows)
    for i, c in ids.items():
        if c > 1: errors.append(f'duplicate id {i}')
    kinds = Counter(r.get('kind') for r in rows)
    if dict(kinds) != WANT: errors.append(f'kind counts {dict(kinds)} != {WANT}')
    if len(rows) != 60: errors.append(f'{len(rows)} rows, want 60')
    seen_q = set()
    for r in rows:
        rid = r.get('id', '?')
        allowed = {'id', 'kind', 'query', 'expected_doc_name_substrings', 'k', 'expected_section'}
        if set(r) - allowed: errors.append(f'{rid}: unknown keys {set(r) - allowed}')
        if not re.fullmatch(r'p47-\d\d', rid): errors.append(f'{rid}: bad id')
        if r.get('kind') not in WANT: errors.append(f'{rid}: bad kind')
        q = r.get('query')
        if not isinstance(q, str) or not q.strip(): errors.append(f'{rid}: bad query'); continue
        if q.strip().lower() in dev_queries: errors.append(f'{rid}: query copied from dev set')
        if q.strip().lower() in seen_q: errors.append(f'{rid}: duplicate query')
        seen_q.add(q.strip().lower())
        if r.get('k') != 5: errors.append(f'{rid}: k != 5')
        subs = r.get('expected_doc_name_substrings')
        if not isinstance(subs, list) or not subs or not all(isinstance(s, str) and s == s.lower() and s.strip() for s in subs):
            errors.append(f'{rid}: bad expected_doc_name_substrings'); continue
        sec = r.get('expected_section')
        if sec is not None and sec not in SECNUM: errors.append(f'{rid}: bad expected_section {sec}')
        print(f"\n{rid} [{r['kind']}] {q!r}" + (f"  section={sec}" if sec else ''))
        all_ema = set()
        for s in subs:
            e, f = matches(s)
            all_ema.update(e)
            print(f'   {s!r:16} EMA={e} FDA={f}')
            if not e and not f: errors.append(f'{rid}: substring {s!r} matches no product')
            if len(s) < 5: warns.append(f'{rid}: short substring {s!r}')
            if len(e) + len(f) > 6: warns.append(f'{rid}: substring {s!r} matches {len(e)+len(f)} names')
            if sec:
                for d in e:
                    if SECNUM[sec] not in ema_secs[d]:
                        errors.append(f'{rid}: EMA {d} lacks section {sec}')
                    elif len(ema_secs[d][SECNUM[sec]]) < 100:
                        warns.append(f'{rid}: EMA {d} section {sec} is very short')
        reused = sorted(all_ema & dev_products)
        if reused:
            (warns if r['kind'] == 'class' else errors).append(f'{rid}: product(s) also in dev sets: {reused}')
        # kind-specific sanity
        ql = q.lower()
        if r['kind'] == 'typo':
            for s in subs:
                if re.search(r'\b' + re.escape(s) + r'\b', ql):
                    errors.append(f'{rid}: typo row spells expected name {s!r} correctly')
        if r['kind'] == 'typo':
            toks = re.findall(r"[a-z]+", ql)
            slips = [t for t in toks if one_slip(t, TYPO.get(rid, ''))]
            print(f"   typo {slips} -> {TYPO.get(rid)!r}")
            if not slips: errors.append(f'{rid}: no one-letter slip of {TYPO.get(rid)!r} in query')
        if r['kind'] == 'salt':
            m = re.search(r'(\w+ (hydrochloride|dihydrochloride monohydrate|phosphate monohydrate|olamine|carbonate|sulfate|mesilate|mesylate|etexilate|maleate|citrate|fumarate|tartrate|acetate))', ql)
            if not m: errors.append(f'{rid}: no salt/ester phrase')
            else:
                phrase = m.group(1)
                inlab = [d for d in ema_drugs if phrase in ema_text.get(d, '')] + \
                        [p for names in fda_names for p in names if phrase in p]
                print(f'   salt phrase {phrase!r} appears in: {sorted(set(inlab))}')
                if not inlab: errors.append(f'{rid}: salt phrase {phrase!r} not found in labels')
        if r['kind'] == 'noise':
            if not (re.search(r'[A-Z]{4,}', q) or re.search(r'(^|\W)(w/|pts?\b|tx\b|AEs?\b|BID\b|q\d+w|\d+ ?mg\b|yrs?\b)', q) or re.search(r'[?!]{2,}|->|<|>', q)):
                errors.append(f'{rid}: does not look noisy')
        if r['kind'] == 'class':
            low = [s for s in subs if s in ql]
            if low: errors.append(f'{rid}: class query names a product {low}')
        # completeness against substance look-up
        if rid in COVER:
            mode, terms = COVER[rid]
            ex = EXCLUDE.get(rid, {})
            need_e = [d for d in ema_drugs if (any if mode == 'any' else all)(t in ema_text.get(d, '') or t in d for t in terms)]
            need_f = [names for names in fda_names if (any if mode == 'any' else all)(any(t in p for p in names) for t in terms)]
            for d in need_e:
                if d in ex:
                    print(f'   (excluded {d}: {ex[d]})'); continue
                if not any(s in d for s in subs):
                    errors.append(f'{rid}: EMA product {d} contains {terms} but is not covered')
            for names in need_f:
                if not any(s in p for s in subs for p in names):
                    errors.append(f'{rid}: FDA row {names} contains {terms} but is not covered')
            print(f'   coverage check {mode}{terms}: EMA {need_e}; FDA rows {len(need_f)}')
        if rid in CLASS_SCAN:
            cls, cond = CLASS_SCAN[rid]
            hits = [('EMA', d) for d in ema_drugs
                    if any(c in ema_secs[d].get('1', '').lower() for c in cls)
                    and any(c in ema_secs[d].get('1', '').lower() for c in cond)]
            hits += [('FDA', r['product_names']) for r in fda
                     if any(c in r['indications'].lower() for c in cls)
                     and any(c in r['indications'].lower() for c in cond)]
            for src, name in hits:
                names = [name] if src == 'EMA' else [p.lower() for p in name]
                if any(s in p for s in subs for p in names):
                    continue
                why = NOT_MEMBER.get(name if src == 'EMA' else names[0])
                if why:
                    print(f'   (class scan: {name} not a member: {why})')
                else:
                    warns.append(f'{rid}: class scan found uncovered {src} {name}')
            print(f'   class scan {cls} x {cond}: {len(hits)} hits')
    for w in warns: print('WARN', w)
    for e in errors: print('ERROR', e)
    print('\nkinds:', dict(kinds), 'total', len(rows))
    if errors:
        print('FAILED'); sys.exit(1)
    print('OK')

if __name__ == '__main__':
    main()
