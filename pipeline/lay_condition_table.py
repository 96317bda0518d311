"""Everyday names of conditions that the stored leaflets do not pair with the clinical
name themselves (A-25), read by ``scripts/build_vocabulary.py``.

``pipeline.condition_names.leaflet_lay_names`` finds the pairs the leaflets write ("high
blood pressure (hypertension)"); these are the names patients and carers use that no
leaflet pairs often enough: "piles", "bedwetting", "BV", "period pain". Each key is a
clinical name as the labels write it; the build adds its lay names to the disease row of
that name (a new row where there is none) unless another row already owns them; a bare
disease row titled by the lay name (ICD's "Swimmer's ear") joins the clinical row. Public
facts: the names of the NHS Health A to Z and MedlinePlus health topics.

Left out on purpose: lay names that are symptoms or lab values the leaflets list
as side effects in the same words ("sore throat", "hair loss", "feeling sick", "high
blood pressure", "low potassium", "painful sex"; A-21 reads those) or that name a side
effect more often than an indication ("heart attack", "angina", "lupus", "kidney
stones", "restless legs": in 124 / 41 / 40 / 23 / 18 leaflets' side effects against 27 /
11 / 3 / 3 / 4 uses), lab wordings that would hide a drug or hormone ("low
testosterone", "low thyroid" stimulating hormone, "overactive parathyroid" hormone,
"vitamin D resistant rickets"), names with another common sense ("fits", "the runs",
"reflux" alone, "ED", "AF", "a heavy period of use", "low T3"; "bipolar" and "autism"
alone sit inside "bipolar I disorder", "autism spectrum disorder"), names wider than
one condition ("eczema": hand, contact or varicose; "bone marrow cancer"; "bird flu",
which would also hide "flu vaccine"; "St Vitus dance" would gloss plain chorea), lay
names asked about mostly as a side effect ("low libido"), "blood clot in the leg" (the
leaflets write it; glossed, a child's anticoagulant lost to the adults' ones),
organisms ("staph", "strep"), "change of life" (it made "menopause" a disease row),
A-6's clinical abbreviations ("UTI", "DVT") and the abbreviations clinicians write of a
clinical name ("COPD", "RA", "ALS", "PsA"; glossed, "COPD" turned a question about
covid antivirals to COPD inhalers). Abbreviations patients use as the name ("OCD",
"IBS", "BPH", "MND", "GORD") stay. The
leaflets' own pairs are aliases (A-24) but no glosses: they pair symptoms ("loss of
appetite (anorexia)") and run either way ("pertussis (whooping cough)").
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
    "irritable bowel syndrome": ("IBS", "irritable bowel", "spastic colon"),
    "anal fissure": ("anal tear",),
    "travellers' diarrhoea": ("Delhi belly", "Montezuma's revenge"),
    "enterobiasis": ("threadworm", "threadworms", "pinworm", "pinworms"),
    # women's health and pregnancy
    "bacterial vaginosis": ("BV",),
    "vulvovaginal candidiasis": ("vaginal thrush", "vaginal yeast infection",
                                 "vaginal yeast infections"),
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
    "enuresis": ("bedwetting", "bed-wetting", "bed wetting", "wetting the bed", "wets the bed"),
    "urinary tract infection": ("water infection", "bladder infection"),
    "benign prostatic hyperplasia": ("enlarged prostate", "BPH", "prostate enlargement"),
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
    "absence seizures": ("absence fits", "petit mal", "petit mal seizures", "petit mal epilepsy"),
    "bipolar disorder": ("manic depression", "manic-depressive illness",
                         "manic depressive illness"),
    "obsessive-compulsive disorder": ("OCD",),
    "neuropathic pain": ("nerve pain",),
    "amyotrophic lateral sclerosis": ("motor neurone disease", "motor neuron disease", "MND",
                                      "Lou Gehrig's disease", "Lou Gehrig disease",
                                      "Lou Gehrigs disease"),
    "transient ischaemic attack": ("mini-stroke", "mini stroke"),
    # heart, blood and lungs
    "atrial fibrillation": ("AFib", "A-fib"),
    "pulmonary embolism": ("blood clot in the lung", "blood clot in the lungs"),
    "atherosclerosis": ("hardening of the arteries", "hardened arteries", "clogged arteries",
                        "furred arteries", "furring of the arteries"),
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
    "gastroenteritis": ("stomach flu", "tummy bug", "stomach bug", "stomach virus", "gastric flu"),
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
    "androgenetic alopecia": ("male pattern baldness", "male pattern hair loss",
                              "female pattern baldness", "female pattern hair loss",
                              "pattern baldness"),
    "hirsutism": ("unwanted facial hair", "excess facial hair"),
    "gingivitis": ("gum disease",),
    "dental caries": ("tooth decay",),
    "hyperhidrosis": ("excessive sweating",),
    # the labels' name; ICD's "Anogenital (venereal) warts" matched neither
    "anogenital warts": ("genital warts", "venereal warts"),
    "alopecia areata": ("patchy hair loss", "spot baldness"),
    "seborrhoeic dermatitis": ("dandruff", "cradle cap"),
    "atopic dermatitis": ("atopic eczema",),  # not hand, contact or varicose eczema
    "conjunctivitis": ("pink eye", "pinkeye"),
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
    # conditions the labels treat, by their everyday, old or local names (NHS Health A to Z,
    # MedlinePlus, Wikipedia; two helpers wrote them from the list of conditions the
    # labels' indications name, blind to the evaluation questions)
    "tonic-clonic seizures": ("grand mal", "grand mal seizure", "grand mal seizures",
                              "grand mal epilepsy"),
    "epilepsy": ("falling sickness", "seizure disorder"),
    "major depressive disorder": ("clinical depression", "major depression"),
    "Alzheimer's disease": ("Alzheimer's", "Alzheimers"),
    "Parkinson's disease": ("Parkinson's",),
    "Huntington's disease": ("Huntington's", "Huntington's chorea"),
    "Tourette syndrome": ("Tourette's",),
    "attention deficit hyperactivity disorder": ("attention deficit disorder",),
    "Trigeminal neuralgia": ("tic douloureux",),
    "diabetic peripheral neuropathic pain": ("diabetic nerve pain",),
    "type 1 diabetes mellitus": ("juvenile diabetes", "juvenile-onset diabetes"),
    "type 2 diabetes mellitus": ("adult-onset diabetes", "adult onset diabetes"),
    "Prediabetes": ("borderline diabetes",),
    "hyperparathyroidism": ("overactive parathyroid gland", "overactive parathyroid glands"),
    "hypoparathyroidism": ("underactive parathyroid gland", "underactive parathyroid glands"),
    "beta thalassaemia": ("Mediterranean anaemia", "Mediterranean anemia", "Cooley's anaemia",
                          "Cooley's anemia"),
    "haemophilia B": ("Christmas disease",),
    "Ocular hypertension": ("high eye pressure", "raised eye pressure"),
    "allergic conjunctivitis": ("eye allergy", "eye allergies"),
    "seasonal allergic rhinitis": ("seasonal allergies",),
    "common cold": ("head cold", "head colds"),
    "pre-eclampsia": ("toxemia of pregnancy", "toxaemia of pregnancy"),
    "Premature ejaculation": ("early ejaculation", "rapid ejaculation"),
    "pyelonephritis": ("kidney infection", "kidney infections"),
    "Osteomyelitis": ("bone infection", "bone infections"),
    "fecal incontinence": ("bowel incontinence", "accidental bowel leakage",
                           "loss of bowel control"),
    "short bowel syndrome": ("short gut", "short gut syndrome"),
    "Pruritus ani": ("itchy bottom", "anal itching"),
    "Lateral epicondylitis": ("tennis elbow",),
    "Medial epicondylitis": ("golfer's elbow",),
    "bursitis": ("housemaid's knee", "clergyman's knee", "student's elbow"),
    # skin
    "acne": ("zits",),
    "actinic keratosis": ("solar keratosis", "solar keratoses"),
    "basal cell carcinoma": ("rodent ulcer",),
    "epidermolysis bullosa": ("butterfly skin", "butterfly skin disease"),
    "ichthyosis vulgaris": ("fish scale disease", "fish skin disease"),
    "impetigo": ("school sores",),
    "senile lentigines": ("liver spots", "age spots"),
    "Mycetoma": ("Madura foot",),
    # infections by their old or local names
    "brucellosis": ("Malta fever", "undulant fever"),
    "coccidioidomycosis": ("valley fever", "San Joaquin valley fever"),
    "tularemia": ("rabbit fever", "deer fly fever"),
    "giardiasis": ("beaver fever",),
    "visceral leishmaniasis": ("kala-azar", "kala azar"),
    "intestinal amebiasis": ("amoebic dysentery", "amebic dysentery"),
    "poliomyelitis": ("polio", "infantile paralysis"),
    "Vincent's infection": ("trench mouth",),
    "gonorrhoea": ("the clap",),
    "Ebola virus disease": ("Ebola",),
    # immune, blood and rare diseases, by their short names
    "Crohn's disease": ("Crohn's", "Crohns"),
    "sarcoidosis": ("sarcoid",),
    "Severe combined immunodeficiency": ("bubble boy disease", "bubble baby disease"),
    "multiple myeloma": ("myeloma",),
}  # fmt: skip
