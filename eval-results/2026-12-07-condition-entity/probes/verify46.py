#!/usr/bin/env python3
"""Standalone checker for probe46 (stdlib only).

Re-reads the raw drug-label files and checks, for every question:
  * format: 40 rows, unique ids, kinds 20 clinical / 12 lay / 8 patient, k=5,
    expected_section, lower-case substrings;
  * every expected substring matches at least one product name
    (EMA "drug" field or an FDA product name, case-insensitive);
  * every evidence quote (<=200 chars) occurs verbatim in the named record's
    indications text (EMA section "1. ..." / FDA "indications"), and the named
    record is covered by one of the question's expected substrings;
  * purity: every product matched by an expected substring has indications text
    naming one of the question's condition_words (also EMA products whose
    section-1 opening names the substring as their active substance);
  * completeness: every product whose indications name a condition word is
    covered by an expected substring, or is listed (with a reason) in
    incidental_mentions;
  * the query names no expected product / EMA product and no drug-class word.
Prints OK or the list of problems.
"""
import json
import os
import re
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = '/work/shared/data/drug_labels/'
EMA_FILE = 'ema_leaflet_sections.jsonl'
FDA_FILE = 'fda_indications.jsonl'

BANNED = ['antibiotic', 'antifungal', 'antiviral', 'statin', 'steroid', 'corticosteroid',
          'antihistamine', 'painkiller', 'inhaler', 'vaccine', 'opioid antagonist',
          'antidepressant', 'antipsychotic', 'anticonvulsant', 'antiepileptic', 'nsaid',
          'chelat', 'enzyme replacement', 'hormone replacement', 'hrt', 'jak inhibitor',
          'monoclonal', 'antibody', 'biologic', 'beta blocker', 'ssri', 'gene therapy',
          'dopamine agonist', 'benzodiazepine', 'local anaesthetic', 'local anesthetic',
          'immunosuppress', 'diuretic', 'antiemetic', 'retinoid', 'sedative']


def load():
    ema = {}
    for line in open(DATA + EMA_FILE, encoding='utf-8'):
        r = json.loads(line)
        if r['section'].startswith('1.'):
            ema[r['drug']] = r['text']
    fda = [json.loads(line) for line in open(DATA + FDA_FILE, encoding='utf-8')]
    return ema, fda


def main():
    ema, fda = load()
    probs = []
    probe = [json.loads(l) for l in open(os.path.join(HERE, 'probe46.jsonl'), encoding='utf-8') if l.strip()]
    evid = [json.loads(l) for l in open(os.path.join(HERE, 'probe46-evidence.jsonl'), encoding='utf-8') if l.strip()]

    # ---------- format
    ids = [p['id'] for p in probe]
    if len(probe) != 40:
        probs.append('expected 40 questions, got %d' % len(probe))
    if len(set(ids)) != len(ids):
        probs.append('duplicate ids')
    kinds = Counter(p['kind'] for p in probe)
    if kinds != Counter({'clinical': 20, 'lay': 12, 'patient': 8}):
        probs.append('kind counts wrong: %s' % dict(kinds))
    for p in probe:
        if p.get('k') != 5:
            probs.append('%s: k != 5' % p['id'])
        if p.get('expected_section') != 'indications_and_usage':
            probs.append('%s: expected_section wrong' % p['id'])
        if not p['expected_doc_name_substrings']:
            probs.append('%s: no expected substrings' % p['id'])
        for s in p['expected_doc_name_substrings']:
            if s != s.lower():
                probs.append('%s: substring not lower-case: %r' % (p['id'], s))
            if ', ' in s:
                probs.append('%s: substring looks like a joined pair: %r' % (p['id'], s))
    if len(set(p['query'].lower() for p in probe)) != len(probe):
        probs.append('duplicate queries')

    ev_by = defaultdict(list)
    for e in evid:
        ev_by[e['id']].append(e)
    for i in ids:
        if not ev_by.get(i):
            probs.append('%s: no evidence rows' % i)
    for i in ev_by:
        if i not in ids:
            probs.append('evidence for unknown id %s' % i)

    def ema_hits(sub):
        return [d for d in ema if sub in d.lower()]

    def fda_hits(sub):
        return [r for r in fda if any(sub in n.lower() for n in r['product_names'])]

    def names_cond(text, words):
        t = text.lower()
        return any(w.lower() in t for w in words)

    ema_names = sorted(ema)
    for p in probe:
        pid = p['id']
        subs = p['expected_doc_name_substrings']
        rows = ev_by.get(pid, [])
        if not rows:
            continue
        cw = rows[0].get('condition_words') or []
        if not cw:
            probs.append('%s: no condition_words' % pid)
            continue
        for r in rows:
            if r.get('condition_words') != cw:
                probs.append('%s: condition_words differ between evidence rows' % pid)
        incid = {}
        for r in rows:
            for m in r.get('incidental_mentions', []):
                if not m.get('reason'):
                    probs.append('%s: incidental mention without reason: %s' % (pid, m.get('doc')))
                incid[(m['file'], m['doc'].lower())] = m['reason']

        # --- substrings match a product; purity
        for s in subs:
            eh, fh = ema_hits(s), fda_hits(s)
            if not eh and not fh:
                probs.append('%s: substring %r matches no product name' % (pid, s))
            for d in eh:
                if not names_cond(ema[d], cw):
                    probs.append('%s: substring %r matches EMA %s whose indications lack %s' % (pid, s, d, cw))
            for r in fh:
                if not names_cond(r['indications'], cw):
                    probs.append('%s: substring %r matches FDA %s whose indications lack %s'
                                 % (pid, s, r['product_names'], cw))
            # EMA product whose opening names the substring (e.g. as active substance)
            for d, t in ema.items():
                if d in eh:
                    continue
                pat = r'(active substances? (?:called |is |are )?|contains (?:the active substances? )?)' + re.escape(s) + r'\b'
                if re.search(pat, t[:400].lower()) and not names_cond(t, cw):
                    probs.append('%s: substring %r appears in opening of EMA %s (active substance?) whose indications lack %s'
                                 % (pid, s, d, cw))

        # --- evidence quotes
        for r in rows:
            q = r['quote']
            if len(q) > 200:
                probs.append('%s: quote > 200 chars for %s' % (pid, r['doc']))
            if r['file'] == EMA_FILE:
                text = ema.get(r['doc'])
                if text is None:
                    probs.append('%s: EMA product %s not found' % (pid, r['doc']))
                    continue
                texts = [text]
                covered = any(s in r['doc'].lower() for s in subs)
            elif r['file'] == FDA_FILE:
                recs = [x for x in fda if r['doc'] in x['product_names']]
                if r.get('unii'):
                    recs = [x for x in recs if x['unii'] == r['unii']]
                if not recs:
                    probs.append('%s: FDA product %s (unii %s) not found' % (pid, r['doc'], r.get('unii')))
                    continue
                texts = [x['indications'] for x in recs]
                covered = any(any(s in n.lower() for n in x['product_names']) for x in recs for s in subs)
            else:
                probs.append('%s: unknown file %s' % (pid, r['file']))
                continue
            if not any(q in t for t in texts):
                probs.append('%s: quote not found verbatim in %s: %r' % (pid, r['doc'], q[:80]))
            if not any(names_cond(t, cw) for t in texts):
                probs.append('%s: evidence record %s lacks condition words' % (pid, r['doc']))
            if not covered:
                probs.append('%s: evidence doc %s is not covered by any expected substring' % (pid, r['doc']))

        # --- completeness
        for d, t in ema.items():
            if names_cond(t, cw) and not any(s in d.lower() for s in subs):
                if (EMA_FILE, d.lower()) not in incid:
                    probs.append('%s: EMA %s names %s but is not expected nor listed as incidental' % (pid, d, cw))
        for x in fda:
            if names_cond(x['indications'], cw) and not any(s in n.lower() for n in x['product_names'] for s in subs):
                if not any((FDA_FILE, n.lower()) in incid for n in x['product_names']):
                    probs.append('%s: FDA %s names %s but is not expected nor listed as incidental'
                                 % (pid, x['product_names'], cw))
        for (f, d) in incid:
            if f == EMA_FILE:
                if d not in ema or not names_cond(ema[d], cw):
                    probs.append('%s: incidental EMA %s does not exist or does not mention %s' % (pid, d, cw))
            else:
                rr = [x for x in fda if d in (n.lower() for n in x['product_names'])]
                if not rr or not any(names_cond(x['indications'], cw) for x in rr):
                    probs.append('%s: incidental FDA %s does not exist or does not mention %s' % (pid, d, cw))

        # --- query names no medicine / class
        ql = p['query'].lower()
        for s in subs:
            if s in ql:
                probs.append('%s: query contains expected product %r' % (pid, s))
        for d in ema_names:
            if len(d) >= 4 and re.search(r'\b' + re.escape(d) + r'\b', ql):
                probs.append('%s: query contains EMA product name %r' % (pid, d))
        for w in BANNED:
            if re.search(r'\b' + re.escape(w), ql):
                probs.append('%s: query contains class word %r' % (pid, w))

    if probs:
        print('PROBLEMS (%d):' % len(probs))
        for x in probs:
            print(' -', x)
        sys.exit(1)
    print('OK  (%d questions: %s; %d evidence rows)' % (len(probe), dict(kinds), len(evid)))


if __name__ == '__main__':
    main()
