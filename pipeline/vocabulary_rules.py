"""Name rules of the vocabulary (A-6, R-VOC-2): what can be a name, and what a drug name
is made of.

- the stop lists of A-6: clinical abbreviations (``CLINICAL_ABBREVIATIONS``) and English
  words in capitals (``CAPITALISED_WORDS``);
- the name filters (``name_filter_reason``: numbers, percentages, doses, units, single
  letters, salt words, clinical abbreviations), applied to every source by
  ``scripts/build_vocabulary.py`` and to ``MRCONSO.RRF`` rows;
- salt stripping (``strip_salt``: ``imatinib mesylate`` -> ``imatinib``) over
  ``SALT_FORMS``, and the pattern of salt words that follow a drug name in a text;
- the R-VOC-2 drug suffixes (``has_drug_suffix``) and their stop list.
"""

from __future__ import annotations

import re

__all__ = [
    "CAPITALISED_WORDS",
    "CLINICAL_ABBREVIATIONS",
    "DRUG_SUFFIXES",
    "SALT_FORMS",
    "SALT_TAIL_RE",
    "has_drug_suffix",
    "name_filter_reason",
    "strip_salt",
]

#: R-VOC-2 suffixes; ``formin`` also matches as a whole word.
DRUG_SUFFIXES: tuple[str, ...] = ("mab", "nib", "tinib", "rafenib", "parib", "stat", "formin")

#: Counter-ion, ester, hydrate and form words that follow a drug's active moiety (A-6):
#: ``imatinib mesylate`` is imatinib. Multi-word forms are listed as one string.
SALT_FORMS: frozenset[str] = frozenset(
    {
        # sulfonates
        "mesylate", "mesilate", "dimesylate", "methanesulfonate", "besylate", "besilate",
        "tosylate", "tosilate", "ditosylate", "camsylate", "esylate", "edisylate",
        "napsylate", "isethionate",
        # halides and mineral acids
        "hydrochloride", "dihydrochloride", "trihydrochloride", "hcl", "hydrobromide",
        "hydroiodide", "bromide", "chloride", "iodide", "nitrate", "sulfate", "sulphate",
        "bisulfate", "hemisulfate", "hydrogen sulfate", "phosphate", "diphosphate",
        "dihydrogen phosphate", "carbonate", "bicarbonate",
        # carboxylates
        "maleate", "malate", "fumarate", "hemifumarate", "succinate", "tartrate",
        "bitartrate", "hydrogen tartrate", "citrate", "acetate", "diacetate", "lactate",
        "gluconate", "oxalate", "pamoate", "embonate", "stearate", "palmitate",
        "decanoate", "enanthate", "cypionate", "valerate", "propionate", "dipropionate",
        "butyrate", "benzoate", "xinafoate", "furoate", "undecanoate", "hexanoate",
        "acetonide", "hyclate",
        # cations and bases
        "sodium", "disodium", "trisodium", "potassium", "dipotassium", "calcium",
        "magnesium", "meglumine", "trometamol", "tromethamine",
        # hydrates and solvates
        "hydrate", "monohydrate", "dihydrate", "trihydrate", "sesquihydrate",
        "hemihydrate", "anhydrous", "solvate", "ethanolate",
        # prodrug esters
        "etexilate", "mofetil", "medoxomil", "axetil", "pivoxil", "proxetil", "cilexetil",
        "disoproxil", "alafenamide", "marboxil",
    }
)  # fmt: skip

#: Parents that stay whole with their "salt" word: ``sodium chloride``, ``ferrous sulfate``.
_INORGANIC_PARENTS = frozenset(
    {
        "sodium", "potassium", "calcium", "magnesium", "lithium", "zinc", "iron", "ferrous",
        "ferric", "aluminium", "aluminum", "ammonium", "silver", "copper", "cupric",
        "barium", "strontium", "hydrogen", "stannous", "bismuth", "selenium", "chromium",
        "manganese", "cobalt", "gold", "sodium hydrogen", "acid", "water",
    }
)  # fmt: skip

#: The stop list of A-6, in capitals. Clinical abbreviations (``ANA`` antinuclear
#: antibodies, ``OS`` overall survival, ``HR`` hazard ratio) are never a name of an
#: entity, even where HGNC uses one as a gene symbol (HR, EFS, CAD). English words in
#: capitals (``WAS``, ``SET``, ``CAN``, ``AND``) are never an alias; a gene whose official
#: symbol one is keeps it as a guarded name (matched as written inside a mixed-case
#: sentence only).
CLINICAL_ABBREVIATIONS: frozenset[str] = frozenset(
    {
        # outcomes, statistics and trial words
        "ANA", "OS", "PFS", "ORR", "DFS", "EFS", "RFS", "TTP", "DOR", "DCR", "CR", "PR",
        "SD", "PD", "NE", "NR", "AE", "SAE", "TEAE", "ADR", "ITT", "CI", "HR", "RR", "NNT",
        "QOL", "ECOG", "KPS", "RCT", "PK", "MTD", "DLT", "BICR", "IRC",
        # routes, frequencies and forms
        "IV", "SC", "IM", "PO", "SL", "QD", "OD", "BID", "TID", "QID", "QW", "PRN", "TAB",
        "INJ", "SOL", "SUSP", "ER", "SR", "XR", "XL", "IR", "DR", "MG", "ML", "KG", "IU",
        # tests and measurements
        "BMI", "BP", "ECG", "EKG", "LVEF", "QTC", "ALT", "AST", "ALP", "GGT", "LDH", "INR",
        "APTT", "PTT", "PT", "BUN", "CBC", "WBC", "RBC", "ANC", "PLT", "HB", "HGB", "GFR",
        "CRCL", "TSH", "PSA", "ESR", "CT", "MRI", "PET",
        # care settings and conditions written as abbreviations
        "ICU", "ED", "OPD", "GP", "CKD", "AKI", "DVT", "PE", "MI", "CHF", "HF", "AF", "CAD",
        "TIA", "UTI", "URTI", "GI", "CNS", "ILD", "SOB", "NSAID", "NSAIDS", "OTC", "HRT",
        "IVF",
    }
)  # fmt: skip
CAPITALISED_WORDS: frozenset[str] = frozenset(
    {
        "WAS", "ALL", "CAN", "MAY", "SET", "AND", "OR", "NOT", "FOR", "THE", "ARE", "HAS",
        "HAD", "HIS", "HER", "OUT", "GET", "YES", "END", "CALL", "STOP", "BEST", "FIND",
        "MEN", "AT", "IN", "ON", "IS", "IT", "TO", "BE", "AS", "AN", "BY", "OF", "DO", "IF",
        "UP", "US", "WE", "ME", "MY", "HE", "NO", "SO", "CAP", "ECHO",
    }
)  # fmt: skip


#: Words that end in a drug suffix but are not drugs (R-VOC-2 stop list).
_SUFFIX_STOP_WORDS = frozenset(
    {
        "thermostat",
        "rheostat",
        "cryostat",
        "hemostat",
        "haemostat",
        "photostat",
        "aerostat",
        "heliostat",
        "gyrostat",
        "hydrostat",
        "humidistat",
        "barostat",
        "chemostat",
        "coelostat",
        "siderostat",
        "pyrostat",
        "klinostat",
        "clinostat",
        "turbidostat",
        "nutristat",
        "pHstat".lower(),
        "autostat",
        "electrostat",
    }
)

_SALT_ALTERNATION = "|".join(
    sorted((re.escape(form).replace(r"\ ", r"\s+") for form in SALT_FORMS), key=len, reverse=True)
)
#: One or more salt / form words right after a drug name (``imatinib mesylate``).
SALT_TAIL_RE = re.compile(rf"(?:[\s\-]+(?:{_SALT_ALTERNATION}))+(?![^\W\d_])", re.I)
_SALT_AS_RE = re.compile(rf"\s*\(\s*as\s+(?:{_SALT_ALTERNATION})(?:\s+\w+)?\s*\)", re.I)

_NUMBER_RE = re.compile(r"[\s\d.,:;/+\-\u2013%()\[\]]*")
_PERCENT_RE = re.compile(r"\d\s*%")
_MARKUP_RE = re.compile(r"^[,;:]|[,;:]$|&lt;|&gt;|&quot;|\{\{|\}\}")
_UNITS = (
    r"mg|mcg|µg|μg|ug|kg|ng|pg|ml|dl|iu|units?|mmol|µmol|mol|meq|mg/ml|mg/kg|mg/g|"
    r"micrograms?|milligrams?|grams?|litres?|liters?|millilitres?|milliliters?|%|"
    r"tablets?|capsules?|puffs?|drops?|doses?"
)
#: A number (not glued to a letter: ``kir2dl5`` is a gene) with a unit; one-letter units
#: (g, l) only after a space (``1 g``), so ``4g`` and ``L1`` stay names.
_DOSE_RE = re.compile(rf"(?<![^\W_])\d+(?:[.,]\d+)?(?:\s*(?:{_UNITS})|\s+[gl])(?![^\W_])", re.I)
_UNIT_RE = re.compile(rf"(?:{_UNITS}|g|l)", re.I)


def strip_salt(name: str) -> str:
    """The active moiety of a drug name (A-6): trailing salt, ester, hydrate and form
    words stripped (``imatinib mesylate`` -> ``imatinib``, ``dabigatran etexilate
    mesilate`` -> ``dabigatran``, ``lapatinib ditosylate monohydrate`` -> ``lapatinib``),
    and a ``(as ...)`` note dropped. Inorganic salts stay whole (``sodium chloride``,
    ``ferrous sulfate``); a name that is only salt words is returned unchanged. Case is
    kept."""
    text = _SALT_AS_RE.sub("", name).strip()
    words = text.split()
    changed = True
    while changed and len(words) > 1:
        changed = False
        for size in (2, 1):
            if len(words) > size and " ".join(words[-size:]).lower() in SALT_FORMS:
                parent = " ".join(words[:-size])
                lowered = parent.lower()
                if lowered in _INORGANIC_PARENTS or lowered in SALT_FORMS or len(parent) < 4:
                    return text
                words = words[:-size]
                changed = True
                break
    return " ".join(words)


def name_filter_reason(name: str) -> str | None:
    """Why ``name`` cannot be a vocabulary name (A-6), or None, checked in this order:
    ``markup`` (a cut-off list item or wiki markup: a name that starts or ends with ``,``
    ``;`` ``:``, or holds ``&lt;`` / ``&gt;`` / ``&quot;`` / ``{{`` / ``}}``; ``alcohol,``
    read "alcohol, coffee or tea" as benzyl alcohol), ``percentage``, ``number`` (digits
    and punctuation only), ``dose`` (a number with a unit: ``500 mg``), ``unit`` (a unit
    or form word alone), ``single letter``, ``salt`` (a salt or form word alone),
    ``clinical abbreviation`` (``CLINICAL_ABBREVIATIONS``). The word-frequency filter of
    the build script comes on top of these."""
    stripped = name.strip()
    if _MARKUP_RE.search(stripped):
        return "markup"
    if _PERCENT_RE.search(stripped):
        return "percentage"
    if _NUMBER_RE.fullmatch(stripped):
        return "number"
    if _DOSE_RE.search(stripped):
        return "dose"
    if _UNIT_RE.fullmatch(stripped):
        return "unit"
    if sum(1 for ch in stripped if ch.isalnum()) <= 1:
        return "single letter"
    if stripped.lower() in SALT_FORMS or stripped.lower().rstrip("s") in SALT_FORMS:
        return "salt"
    if stripped.upper() in CLINICAL_ABBREVIATIONS and (stripped.isupper() or stripped.islower()):
        return "clinical abbreviation"
    return None


def has_drug_suffix(name: str) -> bool:
    """True when ``name`` ends in one of the R-VOC-2 drug suffixes (case-insensitive) and is
    not on the stop list."""
    lowered = name.lower()
    if lowered in _SUFFIX_STOP_WORDS:
        return False
    return lowered == "formin" or lowered.endswith(DRUG_SUFFIXES)
