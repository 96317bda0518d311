"""Everyday names of conditions that the stored leaflets do not pair with the clinical
name themselves (A-25), read by ``scripts/build_vocabulary.py``.

``pipeline.condition_names.leaflet_lay_names`` finds the pairs the leaflets write ("high
blood pressure (hypertension)"); these are the names patients and carers use that no
leaflet pairs often enough: "piles", "bedwetting", "BV", "period pain". Each key is a
clinical name as the labels write it; the build adds its lay names to the disease row of
that name (a new row where there is none) unless another row already owns them. Public
facts: the names of the NHS Health A to Z and MedlinePlus health topics.

Left out on purpose: lay names that are symptoms the leaflets list as side effects in
the same words ("sore throat", "hair loss", "feeling sick"; A-21 reads those), names
with another common sense ("fits", "the runs", "reflux" alone, "ED", "AF", "a heavy
period of use", "low T3"), names wider than one condition ("eczema": hand, contact or
varicose; "bone marrow cancer"; "bird flu", which would also hide "flu vaccine"), lay
names asked about mostly as a side effect ("low libido"), "blood clot in the leg" (the
leaflets write it; glossed, a child's anticoagulant lost to the adults' ones), and A-6's clinical
abbreviations ("UTI"). The leaflets' own pairs are aliases (A-24) but no
glosses: they pair symptoms ("loss of appetite (anorexia)") and run either way
("pertussis (whooping cough)").
"""

from __future__ import annotations

__all__ = ["CURATED_LAY_NAMES"]

#: Clinical name -> its lay names (case-insensitive, except abbreviations of three
#: letters or fewer in capitals, matched as written).
CURATED_LAY_NAMES: dict[str, tuple[str, ...]] = {
    # gut
    "haemorrhoids": ("piles",),
    "gastro-oesophageal reflux disease": ("acid reflux", "GORD", "GERD"),
    "Clostridioides difficile infection": ("C diff", "C. diff", "C.diff", "C-diff"),
    "peptic ulcer": ("stomach ulcer", "stomach ulcers"),
    "irritable bowel syndrome": ("IBS",),
    "anal fissure": ("anal tear",),
    "travellers' diarrhoea": ("Delhi belly", "Montezuma's revenge"),
    "enterobiasis": ("threadworm", "threadworms", "pinworm", "pinworms"),
    # women's health and pregnancy
    "bacterial vaginosis": ("BV",),
    "vulvovaginal candidiasis": ("vaginal thrush",),
    "oral candidiasis": ("oral thrush",),
    "candidiasis": ("thrush",),
    "dysmenorrhea": ("period pain", "period pains", "painful periods", "period cramps",
                     "menstrual cramps"),
    "nausea and vomiting of pregnancy": ("morning sickness",),
    "heavy menstrual bleeding": ("heavy periods",),  # not "a heavy period of use"
    "premenstrual syndrome": ("PMS",),
    "uterine fibroids": ("fibroids",),
    "melasma": ("mask of pregnancy",),
    # urology and children
    "enuresis": ("bedwetting", "bed-wetting", "bed wetting"),
    "urinary tract infection": ("water infection", "bladder infection"),
    "benign prostatic hyperplasia": ("enlarged prostate", "BPH"),
    "erectile dysfunction": ("impotence", "erection problems"),
    "urinary incontinence": ("leaky bladder", "bladder weakness"),
    "precocious puberty": ("early puberty",),
    # hormones and metabolism
    "hypothyroidism": ("underactive thyroid", "underactive thyroid gland", "hypo thyroid"),
    "hyperthyroidism": ("overactive thyroid", "overactive thyroid gland"),
    "hypoglycaemia": ("hypo", "hypos", "low blood sugar"),
    "hyperglycaemia": ("high blood sugar",),
    "hypercholesterolaemia": ("high cholesterol",),
    "osteoporosis": ("brittle bones", "thinning bones", "bone thinning"),
    "osteoarthritis": ("wear and tear arthritis", "wear-and-tear arthritis"),
    "iron deficiency": ("low iron",),
    # pain, nerves and mind
    "fibromyalgia": ("fibro",),
    "motion sickness": ("travel sickness", "car sickness", "seasickness", "sea sickness"),
    "absence seizures": ("absence fits",),
    "bipolar disorder": ("manic depression",),
    "obsessive-compulsive disorder": ("OCD",),
    "neuropathic pain": ("nerve pain",),
    "amyotrophic lateral sclerosis": ("motor neurone disease", "motor neuron disease", "MND"),
    "transient ischaemic attack": ("mini-stroke", "mini stroke"),
    # heart, blood and lungs
    "atrial fibrillation": ("AFib", "A-fib"),
    "pulmonary embolism": ("blood clot in the lung", "blood clot in the lungs"),
    "atherosclerosis": ("hardening of the arteries",),
    "peripheral arterial disease": ("poor circulation in the legs",),
    "pulmonary arterial hypertension": ("high blood pressure in the lungs",),
    "pulmonary fibrosis": ("scarring of the lungs", "lung scarring"),
    "cystic fibrosis": ("CF",),
    "acute mountain sickness": ("altitude sickness", "mountain sickness"),
    "pertussis": ("whooping cough",),
    "influenza": ("flu",),
    "tetanus": ("lockjaw",),
    "streptococcal pharyngitis": ("strep throat",),
    "African trypanosomiasis": ("sleeping sickness",),
    # no influenza: the longer name wins
    "gastroenteritis": ("stomach flu", "tummy bug", "stomach bug"),
    "zoster": ("shingles",),
    "tuberculosis": ("TB",),
    "sepsis": ("blood poisoning",),
    # skin, eyes and ears
    "herpes labialis": ("cold sore", "cold sores", "fever blister", "fever blisters"),
    "tinea pedis": ("athlete's foot", "athletes foot"),
    "tinea cruris": ("jock itch",),
    "tinea capitis": ("scalp ringworm", "ringworm of the scalp"),
    "tinea corporis": ("ringworm",),
    "onychomycosis": ("nail fungus", "toenail fungus", "fungal nail infection"),
    "androgenetic alopecia": ("male pattern baldness", "male pattern hair loss"),
    "hirsutism": ("unwanted facial hair", "excess facial hair"),
    "gingivitis": ("gum disease",),
    "dental caries": ("tooth decay",),
    "hyperhidrosis": ("excessive sweating",),
    "alopecia areata": ("patchy hair loss",),
    "seborrhoeic dermatitis": ("dandruff",),
    "atopic dermatitis": ("atopic eczema",),  # not hand, contact or varicose eczema
    "conjunctivitis": ("pink eye",),
    "myopia": ("short-sightedness", "short sightedness", "nearsightedness"),
    "otitis externa": ("swimmer's ear", "outer ear infection"),
    "otitis media": ("middle ear infection",),
    "sinusitis": ("sinus infection",),
    "allergic rhinitis": ("hay fever", "hayfever"),
    "rubella": ("German measles",),
    "monkeypox": ("mpox",),  # the new name; the labels write the old one
    # cancers by the organ people name
    "colorectal cancer": ("bowel cancer",),
    "endometrial cancer": ("womb cancer", "cancer of the womb"),
    "renal cell carcinoma": ("kidney cancer",),
    "hepatocellular carcinoma": ("liver cancer",),
    "gastric cancer": ("stomach cancer",),
    "urothelial carcinoma": ("bladder cancer",),
    "oesophageal cancer": ("gullet cancer",),
    # dependence: the substance named with "addiction" is the condition, not the medicine
    "opioid overdose": ("heroin overdose",),
    "opioid dependence": ("heroin addiction", "opioid addiction", "opiate addiction",
                          "heroin dependence"),
    "alcohol dependence": ("alcoholism", "alcohol addiction", "drink problem",
                           "drinking problem"),
    "nicotine dependence": ("nicotine addiction", "smoking addiction"),
}  # fmt: skip
