"""merge.py [--no-abbrev]: layA.tsv + layB.tsv (the helpers' tables) -> the additions to
CURATED_LAY_NAMES, as JSON, less the names of DROP. Run in this folder with the repository on
PYTHONPATH, against the table as it was before bf45179. The commit took the --no-abbrev
additions, less "change of life", and grouped them by hand."""
import csv, json, re, sys, importlib.util
from pipeline.lay_condition_table import CURATED_LAY_NAMES
DROP = {
    # side effects and lab values in the same words (A-25's rule)
    "high blood pressure", "high bp", "raised blood pressure", "low blood pressure", "low bp",
    "high potassium", "high blood potassium", "low potassium", "low blood potassium",
    "low calcium", "low blood calcium", "high calcium", "high blood calcium", "high uric acid",
    "high triglycerides", "painful sex", "painful intercourse", "yeast infection",
    "yeast infections", "ttp", "sjs",
    # wider than one condition, or another condition
    "sugar diabetes", "maturity-onset diabetes", "add", "sma",
    # organisms, not conditions
    # glossed to a generic row ("leukemia", "lymphoma") or a gene, or A-6 abbreviations
    "cml", "nhl", "aml", "dmd", "nf1", "tia", "dvt",
    # matched whatever its case: "PSA" is prostate-specific antigen
    "psa",
    "staph", "staph infection", "staph infections", "golden staph", "strep", "mrsa",
}
def abbrev(n): return bool(re.fullmatch(r"[A-Z][A-Za-z0-9]{1,4}", n)) and sum(c.isupper() for c in n) >= 2
noab = '--no-abbrev' in sys.argv
existing = {k.lower(): k for k in CURATED_LAY_NAMES}
have = {n.lower() for names in CURATED_LAY_NAMES.values() for n in names}
def british(k):
    return k.lower().replace('seborrheic', 'seborrhoeic').replace('leukemia', 'leukaemia')
out = {}
for f in ('layA.tsv', 'layB.tsv'):
    for row in csv.DictReader(open(f), delimiter='\t'):
        key = row['clinical_name'].strip()
        k = existing.get(british(key).lower()) or existing.get(key.lower())
        k = k or next((o for o in out if british(o).lower() == british(key).lower()), None) or key
        for n in (x.strip() for x in row['lay_names'].split('|')):
            if not n or n.lower() in DROP or n.lower() in have or (noab and abbrev(n)):
                continue
            if n.lower() not in {m.lower() for m in out.get(k, [])}:
                out.setdefault(k, []).append(n)
print(json.dumps(out, indent=0, ensure_ascii=False))
print(len(out), sum(map(len, out.values())), file=sys.stderr)
