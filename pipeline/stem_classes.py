"""Drug classes named by their INN stem, with members read off the stored documents
(A-51).

Why: a class's members came from the leaflets' own sentences ("belongs to a group of
medicines called benzodiazepines") and a short curated list. The FDA labels never say a
class: "Temazepam capsules are indicated for the short-term treatment of insomnia". So
"benzodiazepine sleeping pill" had one member (remimazolam, a sedative for procedures),
and R-T2-7 took the temazepam and triazolam labels for other drugs' chunks.

A class here is a family whose members share the stem of their International
Nonproprietary Name: WHO, "The use of stems in the selection of International
Nonproprietary Names (INN) for pharmaceutical substances" (2018), e.g. "-azepam" and
"-azolam" (benzodiazepines), "-sartan" (angiotensin II receptor antagonists), "-setron"
(5-HT3 antagonists); "cef-" and "ceph-" start the cephalosporins. Its members are the
vocabulary's drugs whose canonical name has the stem and which a stored document has for
its subject (its name or opening names them), most such documents first: the class's
products, not every substance the synonym table knows. Stems that also end other words
("-parin" ends heparin, which is no low-molecular-weight heparin; "-tidine" ends
histidine; "-prazole" aripiprazole) are written out as the members' stems. Merged into
a class the leaflets or the curated list already have, they come after its members.
Latent: "-olol" would take stanozolol, "-flurane" norflurane, were a stored document about
them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from pipeline.condition_names import plural_word

__all__ = ["STEM_CLASSES", "StemClass", "stem_class_members"]


class StemClass:
    """One class: ``c`` (its name, plural), ``names`` (what questions call it) and
    ``stem``, a pattern the whole canonical name of a member matches (lower case)."""

    __slots__ = ("c", "names", "stem")

    def __init__(self, c: str, names: Iterable[str], stem: str) -> None:
        self.c = c
        self.names = list(dict.fromkeys([c, *names]))
        self.stem = re.compile(rf"[a-z]*(?:{stem})")


def _names(*singulars: str) -> list[str]:
    """Each name and its plural ("benzodiazepine", "benzodiazepines")."""
    return [form for name in singulars for form in (name, plural_word(name))]


#: The classes (WHO INN stems; the family in brackets where the stem is a family's).
STEM_CLASSES: list[StemClass] = [
    # "benzos", not "benzo": "benzo(a)pyrene"
    StemClass("benzodiazepines", [*_names("benzodiazepine"), "benzos"],
              r"azepam|azolam|azepate|obazam"),
    StemClass(
        "non-benzodiazepine hypnotics",
        _names("Z-drug", "Z drug", "non-benzodiazepine", "nonbenzodiazepine",
               "non-benzodiazepine hypnotic", "non-benzodiazepine sleeping pill"),
        r"zolpidem|zopiclone|eszopiclone|zaleplon",
    ),
    StemClass("meglitinides", _names("meglitinide", "glinide", "prandial glucose regulator"),
              r"glinide"),
    StemClass("taxanes", _names("taxane"), r"taxel"),
    StemClass(
        "volatile anaesthetics",
        _names("volatile anaesthetic", "volatile anesthetic", "inhaled anaesthetic",
               "inhaled anesthetic", "inhalational anaesthetic", "inhalational anesthetic",
               "halogenated anaesthetic", "halogenated anesthetic", "volatile agent"),
        r"flurane",
    ),
    # a prefix, not a stem at the end ("cef-"); not cepharanthine
    StemClass("cephalosporins", _names("cephalosporin"), r"(?<=^ce)(?:f[a-z]+|phal[a-z]+)"),
    StemClass("carbapenems", _names("carbapenem"), r"penem"),
    # not "tetracycline antibiotic": the drug tetracycline, an antibiotic
    StemClass("tetracyclines", ["tetracycline antibiotics"], r"cycline"),
    StemClass("macrolides", _names("macrolide", "macrolide antibiotic"), r"thromycin"),
    StemClass("fluoroquinolones", _names("fluoroquinolone", "quinolone antibiotic"), r"oxacin"),
    StemClass("azole antifungals", _names("azole antifungal", "triazole antifungal",
                                          "imidazole antifungal"), r"conazole"),
    StemClass("angiotensin II receptor antagonists",
              _names("sartan", "angiotensin receptor blocker"), r"sartan"),
    StemClass("beta blockers", _names("beta blocker", "beta-blocker", "beta-adrenergic blocker"),
              r"olol|alol|ilol"),
    # not "dihydropyridine calcium channel blocker": the calcium channel blockers' class
    # is matched beside it, and read alone where "non-" negates the dihydropyridines
    StemClass("dihydropyridines", _names("dihydropyridine"), r"dipine"),
    StemClass("proton pump inhibitors", _names("prazole"), r"(?<!pi)prazole"),  # aripiprazole
    StemClass("H2 receptor antagonists",
              _names("H2 blocker", "H2 antagonist", "H2 receptor antagonist",
                     "H2-receptor antagonist", "histamine H2 antagonist"),
              r"(?:cime|famo|rani|niza|roxa|lafu)tidine"),
    StemClass("triptans", _names("triptan"), r"triptan"),
    StemClass("5-HT3 antagonists",
              _names("5-HT3 antagonist", "5-HT3 receptor antagonist", "setron",
                     "serotonin 5-HT3 antagonist"), r"setron"),
    StemClass("low-molecular-weight heparins",
              _names("low molecular weight heparin", "low-molecular-weight heparin", "LMWH"),
              r"(?:enoxa|dalte|tinza|certo|parna|revi|bemi|nadro)parin"),
    StemClass("anthracyclines", _names("anthracycline"), r"rubicin"),
    StemClass("platinum agents", [*_names("platinum agent", "platinum compound", "platinum drug"),
                                  "platinum-based chemotherapy"], r"platin"),
    StemClass("leukotriene receptor antagonists",
              _names("leukotriene receptor antagonist", "leukotriene antagonist"), r"lukast"),
    StemClass("COX-2 inhibitors", _names("coxib"), r"coxib"),
    StemClass("thrombolytics", _names("thrombolytic", "clot-busting drug", "clot buster"),
              r"teplase"),
]  # fmt: skip


def stem_class_members(
    classes: Iterable[StemClass], drugs: Iterable[str], openings: Iterable[str]
) -> list[dict]:
    """The classes in the shape of the leaflets' classes (``c``, ``names``, ``members``),
    each with the ``drugs`` (the vocabulary's canonical drug names) whose whole name its
    stem matches and which at least one of ``openings`` (a stored document's name and
    first characters, any case) names as a word, most openings first, then by name. A
    class with no such member is left out."""
    folded = [_as_words(text) for text in openings]
    names = sorted({drug.lower() for drug in drugs})
    rows = []
    for cls in classes:
        counts: Counter[str] = Counter()
        for name in names:
            if cls.stem.fullmatch(name):
                key = _as_words(name)
                counts[name] = sum(key in text for text in folded)
        members = [name for name, n in sorted(counts.items(), key=lambda i: (-i[1], i[0])) if n]
        if members:
            rows.append({"c": cls.c, "names": list(cls.names), "members": members})
    return rows


def _as_words(text: str) -> str:
    """``text`` lower case, each run of other characters than letters and digits one
    space, with a space at each end: a name is a word of a text when its own form is in
    the text's."""
    return f" {re.sub(r'[^a-z0-9]+', ' ', text.lower()).strip()} "
