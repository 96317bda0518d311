"""Abbreviations a text defines ("myelodysplastic syndromes (MDS)"), and which of them
name a condition.

Why: HGNC lists disease abbreviations among gene aliases (a gene was named after the
disease, or an old name collided): MDS is an alias of PAFAH1B1, MCL of CLEC4D, COPD of
ARCN1, HCC of HYCC1. In a question those letters almost always mean the disease, and
reading them as a gene drops them from the topic terms and adds an entity the question
does not have. The leaflets themselves say what they mean: ``scripts/build_vocabulary.py``
drops a gene name that the leaflets define as a condition (A-6).

The long form is found as Schwartz and Hearst do (PSB 2003, "A simple algorithm for
identifying abbreviation definitions in biomedical text"): the words just before the
parenthesis, no more than ``min(len(abbr) + 5, 2 * len(abbr))`` of them, whose letters
hold the abbreviation's letters and digits in order, its first letter at the start of
a word.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

__all__ = [
    "CONDITION_WORDS",
    "PROTEIN_WORDS",
    "condition_abbreviations",
    "defined_abbreviations",
]

#: "long form (ABBR)": at most 10 characters, a capital first, two capitals at least.
_DEFINITION = re.compile(r"\(\s*([A-Z][A-Za-z0-9\-]{1,9})\s*\)")
_WORD = re.compile(r"[A-Za-z0-9][\w\-']*")

#: Words that make a long form a condition, a finding or a measurement, not a gene or
#: a protein (matched as whole words of the lower-cased long form, plural "s" ignored).
CONDITION_WORDS: frozenset[str] = frozenset(
    {
        "disease", "syndrome", "disorder", "lymphoma", "leukaemia", "leukemia",
        "carcinoma", "cancer", "tumour", "tumor", "neoplasm", "myeloma", "sarcoma",
        "melanoma", "failure", "infection", "pneumonia", "hypertension", "coagulation",
        "haemorrhage", "hemorrhage", "anaemia", "anemia", "atrophy", "dystrophy",
        "sclerosis", "arteritis", "fever", "epilepsy", "seizure", "dysplasia",
        "insufficiency", "injury", "ischaemia", "ischemia", "thrombosis", "embolism",
        "deficiency", "lysis", "fibrosis", "cirrhosis", "hepatitis", "arthritis",
        "dermatitis", "colitis", "psoriasis", "asthma", "impairment", "hypophosphataemia",
        "hypophosphatemia", "achondroplasia", "density", "volume", "reaction",
        "event", "pressure", "mycobacteria", "mycobacterium", "haemorrhagic", "hemorrhagic",
        "adrenoleukodystrophy", "adrenomyeloneuropathy", "leukodystrophy", "uraemic",
        "uremic", "aneurysm", "stroke", "inflammation", "hypoglycaemia", "hypoglycemia",
    }
)  # fmt: skip


def _long_form(words: list[str], abbreviation: str) -> str | None:
    """The shortest run of ``words`` (ending at the last) that holds ``abbreviation``'s
    letters and digits in order, the first at a word's start; None when none does."""
    letters = [ch.lower() for ch in abbreviation if ch.isalnum()]
    limit = min(len(letters) + 5, 2 * len(letters))
    for start in range(len(words) - 1, max(len(words) - limit, 0) - 1, -1):
        candidate = " ".join(words[start:])
        if candidate.lower().startswith(letters[0]) and _holds(candidate.lower(), letters):
            return candidate
    return None


def _holds(text: str, letters: list[str]) -> bool:
    # Schwartz-Hearst, right to left: each letter found before the one after it
    position = len(text)
    for letter in reversed(letters):
        position = text.rfind(letter, 0, position)
        if position < 0:
            return False
    return True


def defined_abbreviations(texts: Iterable[str]) -> dict[str, Counter[str]]:
    """Abbreviation (as written) -> how often each long form (lower-cased) defines it in
    ``texts``, from "long form (ABBR)" occurrences.

    >>> defined_abbreviations(["in myelodysplastic syndromes (MDS) and"])["MDS"]
    Counter({'myelodysplastic syndromes': 1})
    """
    found: dict[str, Counter[str]] = defaultdict(Counter)
    for text in texts:
        for match in _DEFINITION.finditer(text):
            abbreviation = match.group(1)
            if sum(ch.isupper() for ch in abbreviation) < 2:
                continue
            if abbreviation.endswith("s") and abbreviation[-2].isupper():
                abbreviation = abbreviation[:-1]  # a plural: "IARs" is IAR, not the gene IARS
            before = _WORD.findall(text[max(0, match.start() - 200) : match.start()])
            long_form = _long_form(before, abbreviation)
            # "COPD and asthma (COPD)" defines nothing (Schwartz-Hearst reject these too)
            if long_form and abbreviation.lower() not in long_form.lower().split():
                found[abbreviation][long_form.lower()] += 1
    return dict(found)


#: Words that make a long form a gene or protein whatever else it says ("anaplastic
#: lymphoma kinase", "tumour necrosis factor", "cystic fibrosis transmembrane conductance
#: regulator"); so does any word ending in "-ase" but these.
PROTEIN_WORDS: frozenset[str] = frozenset(
    {
        "kinase", "factor", "receptor", "regulator", "protein", "antigen", "ligand",
        "enzyme", "channel", "transporter", "hormone", "peptide", "antibody", "gene",
        "interleukin", "integrin", "cytokine", "globulin", "lipoprotein", "molecule",
    }
)  # fmt: skip
#: A long form ending in a number, a Roman numeral or a single letter names a gene or a
#: subtype, not the condition its other words name.
_NUMBERED = re.compile(r"(?:\b\d+|\b[ivx]+|\b[a-z])\s*$")
_NOT_ENZYMES = frozenset({"disease", "release", "increase", "decrease", "phase", "base", "case"})


def _forms(word: str) -> set[str]:
    return {word, word[:-1]} if word.endswith("s") else {word}  # plurals


def _is_protein(word: str) -> bool:
    return bool(_forms(word) & PROTEIN_WORDS) or (word.endswith("ase") and word not in _NOT_ENZYMES)


def _is_condition(long_form: str) -> bool:
    """The head (last word) decides: "cytokine release syndrome" is a condition,
    "anaplastic lymphoma kinase" is not; with another head, a condition word and no
    protein word ("tuberous sclerosis complex")."""
    if _NUMBERED.search(long_form):  # "breast cancer 1 (BRCA1)", "Wilms tumour 1 (WT1)"
        return False
    words = re.findall(r"[a-z]+", long_form)
    if not words:
        return False
    head = words[-1]
    if _forms(head) & CONDITION_WORDS:
        return True
    if any(_is_protein(word) for word in words):
        return False
    return any(_forms(word) & CONDITION_WORDS for word in words)


def condition_abbreviations(defined: Mapping[str, Counter[str]]) -> dict[str, str]:
    """The abbreviations of ``defined`` whose most frequent long form names a condition
    (one of :data:`CONDITION_WORDS`): abbreviation (upper-cased) -> that long form.

    >>> condition_abbreviations({"MCL": Counter({"mantle cell lymphoma": 3})})
    {'MCL': 'mantle cell lymphoma'}
    """
    conditions: dict[str, str] = {}
    for abbreviation, long_forms in defined.items():
        long_form, _ = long_forms.most_common(1)[0]
        if _is_condition(long_form):
            conditions.setdefault(abbreviation.upper(), long_form)
    return conditions
