"""Drugs whose overdose the labels name by their class (A-34) or by its effect (A-46).

The naloxone and nalmefene labels name "opioid overdose" and "opioid depression ...
induced by natural and synthetic opioids", not oxycodone or tramadol. So a question about
an oxycodone overdose that asks what treats it needs the class's condition beside the
drug. "Paracetamol overdose" and "cyanide poisoning" name the substance.

The members of the opioids are the opioid agonists and partial agonists of WHO ATC N02A
(opioid analgesics), N01AH (opioid anaesthetics), N07BC (drugs used in opioid
dependence) and R05DA (opium alkaloids used as cough suppressants), as the shipped
vocabulary names them (its canonical names: "meperidine" for pethidine, "heroin" for
diamorphine, "opium" for papaveretum). Antagonists (naloxone, naltrexone, nalmefene) and
the peripheral opioids used for diarrhoea (loperamide, diphenoxylate) are not members: an
overdose of those is no opioid overdose the antidotes treat.

A-46: two overdoses the antidotes' labels name by what they do. The glucagon labels
(Ogluo, Baqsimi, Zegalogue) treat "severe hypoglycaemia", not an insulin overdose; the
methylene blue label treats "acquired methemoglobinemia", not dapsone, benzocaine or
poppers. Their members are the drugs whose overdose or use causes it: the insulins (any
name with the word "insulin"), the sulfonylureas and glinides (ATC A10BB, A10BX) and
mecasermin; the oxidising drugs labels name for acquired methaemoglobinaemia (dapsone,
the local anaesthetics benzocaine and prilocaine, the nitrites, rasburicase,
metoclopramide; not primaquine and tafenoquine, whose harm in G6PD deficiency is
haemolysis, where methylene blue is contraindicated; rasburicase is a member because
its leaflet names methaemoglobinaemia as its own risk). In this corpus "severe
hypoglycaemia" is in the leaflets of the glucagons, the insulins, repaglinide and
Increlex (mecasermin) only, and "methaemoglobinaemia" in the methylene blue,
metoclopramide, Fasturtec (rasburicase) and Fortacin (prilocaine) texts: every other
product that names it is a member, on the subject and not the answer (A-35).

A-50: the vitamin K antagonists (warfarin, acenocoumarol, phenprocoumon, the
indanediones; ATC B01AA). The one phytonadione (vitamin K1) label treats "coagulation
disorders ... caused by vitamin K deficiency or interference with vitamin K activity",
never warfarin or an overdose. Their condition is ICD-10-CM's "acquired coagulation
factor deficiency" (D68.4), the words prothrombin complex labels use for it. An INR of 5
or more beside a member says its overdose as a word of taking would ("mum is on
warfarin and her INR came back at 9").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.scoring import combination_parts
from pipeline.vocabulary import Vocabulary

__all__ = [
    "CLASS_OVERDOSES",
    "ClassOverdose",
    "class_overdose_of",
    "class_overdose_terms",
    "names_a_class_at",
    "overdose_told_by_result",
]


@dataclass(frozen=True)
class ClassOverdose:
    """One class's overdose: ``members`` (the vocabulary's canonical names of drugs, and
    of "insulin", lower case) and ``label_terms``, the words the antidotes' labels name it
    with (whole words, lower case; what A-11's Tier-2 score reads in a chunk's first
    characters)."""

    members: frozenset[str]
    label_terms: tuple[str, ...]
    #: Words a question names the class with ("what reverses opioids"), not as the
    #: cause of another condition ("opioid-induced constipation").
    class_words: re.Pattern[str]
    #: A-50: a result that says a member's overdose with no word of taking ("her INR came
    #: back at 9"); None: none.
    result: re.Pattern[str] | None = None


_OPIOIDS = frozenset(
    {
        "alfentanil",
        "bezitramide",
        "buprenorphine",
        "butorphanol",
        "carfentanil",
        "codeine",
        "dextromoramide",
        "dextropropoxyphene",
        "dezocine",
        "dihydrocodeine",
        "dipipanone",
        "ethylmorphine",
        "fentanyl",
        "heroin",
        "hydrocodone",
        "hydromorphone",
        "ketobemidone",
        "levomethadone",
        "levorphanol",
        "meperidine",
        "meptazinol",
        "methadone",
        "morphine",
        "nalbuphine",
        "nicomorphine",
        "oliceridine",
        "opium",
        "oxycodone",
        "oxymorphone",
        "pentazocine",
        "phenazocine",
        "pholcodine",
        "pirinitramide",
        "remifentanil",
        "sufentanil",
        "tapentadol",
        "tilidine",
        "tramadol",
    }
)

_GLUCOSE_LOWERING = frozenset(
    {
        "insulin",
        "acetohexamide",
        "carbutamide",
        "chlorpropamide",
        "glibornuride",
        "glibenclamide",
        "gliclazide",
        "glimepiride",
        "glipizide",
        "gliquidone",
        "glyburide",
        "tolazamide",
        "tolbutamide",
        "mitiglinide",
        "nateglinide",
        "repaglinide",
        "mecasermin",
    }
)

_OXIDISING = frozenset(
    {
        "dapsone",
        "benzocaine",
        "prilocaine",
        "amyl nitrite",
        "isobutyl nitrite",
        "sodium nitrite",
        "rasburicase",
        "metoclopramide",
    }
)

_VITAMIN_K_ANTAGONISTS = frozenset(
    {
        "warfarin",
        "acenocoumarol",
        "phenprocoumon",
        "dicumarol",
        "tioclomarol",
        "fluindione",
        "phenindione",
        "anisindione",
    }
)

#: A-50: an INR of 5 or more (2-3 is the usual target; the BNF treats 5-8 and above as
#: over-anticoagulation), "INR came back 9", "INR: 6.2", "INR >10", "supratherapeutic
#: INR"; not "INR 2.5", "INR of 4.8", a time ("recheck INR 7 days after", "INR at 9am"),
#: a date ("INR 12/05") or a sum ("INR 5,000").
_HIGH_INR = re.compile(
    r"\bINR\s*(?:[:=>]\s*|(?:(?:came|comes)\s+back|is|was|of|at|now|reading|level|has|have|"
    r"risen|rose|gone|went|climbed|up|to|above|over|(?:greater|more)\s+than)\s+){0,4}"
    r"(?:[5-9]|[1-9]\d)(?:\.\d+)?(?!\d|/|,\d|\.\d|\s*(?:%|[ap]\.?m\b|(?:mg|units?|days?|"
    r"weeks?|months?|years?|hours?|hrs?|h|minutes?|mins?|seconds?|secs?|s)\b))"
    r"|\bsupratherapeutic\s+INR\b",
    re.IGNORECASE,
)

#: An overdose the antidotes' labels name by a condition, by the vocabulary's canonical
#: name of that condition: the opioids' (A-34; Narcan's "reversal of opioid depression",
#: "acute opioid overdosage", Zurnai's "opioid overdose", "reversal of opioid drug
#: effects"), two by their effect (A-46) and the vitamin K antagonists' (A-50; the
#: module's docstring).
CLASS_OVERDOSES: dict[str, ClassOverdose] = {
    "opioid overdose": ClassOverdose(
        members=_OPIOIDS,
        label_terms=(
            "opioid overdose",
            "opioid overdosage",
            "opioid depression",
            "opioid drug effects",
        ),
        class_words=re.compile(
            r"(?:opioids?|opiates?|narcotics?)\b(?![\s-]*induced)", re.IGNORECASE
        ),
    ),
    "hypoglycemia": ClassOverdose(
        members=_GLUCOSE_LOWERING,
        label_terms=("severe hypoglycaemia", "severe hypoglycemia"),
        # not "insulin": "antidote for insulin allergy", "reverse insulin resistance"
        class_words=re.compile(r"(?:sulfonylureas?|sulphonylureas?)\b", re.IGNORECASE),
    ),
    "Methemoglobinemia": ClassOverdose(
        members=_OXIDISING,
        label_terms=("methemoglobinemia", "methaemoglobinaemia"),
        class_words=re.compile(r"(?:nitrites?|poppers)\b", re.IGNORECASE),
    ),
    "Acquired coagulation factor deficiency": ClassOverdose(
        members=_VITAMIN_K_ANTAGONISTS,
        label_terms=("interference with vitamin k activity",),
        class_words=re.compile(r"(?:vitamin[\s-]+k antagonists?|VKAs?)\b", re.IGNORECASE),
        result=_HIGH_INR,
    ),
}


def class_overdose_of(canonical: str) -> str | None:
    """The class overdose (a key of :data:`CLASS_OVERDOSES`) of a drug the vocabulary
    names ``canonical``, or None. A fixed combination or a product form counts when one
    of its substances or words is a member: "buprenorphine/naloxone", "fentanyl patch",
    "acetaminophen and codeine"."""
    parts = combination_parts(canonical)
    words = {word for part in parts for word in part.split()}
    for condition, overdose in CLASS_OVERDOSES.items():
        if parts & overdose.members or words & overdose.members:
            return condition
    return None


def overdose_told_by_result(canonical: str, text: str) -> bool:
    """Whether ``text`` gives a result that says an overdose of the drug the vocabulary
    names ``canonical`` (A-50: "INR came back 9" beside warfarin); False for a drug of no
    class overdose with such a result."""
    condition = class_overdose_of(canonical)
    result = CLASS_OVERDOSES[condition].result if condition else None
    return bool(result and result.search(text))


def class_overdose_terms(query: str, vocabulary: Vocabulary) -> list[str]:
    """The label terms of each class overdose ``query`` names as a condition (A-34: "...
    (oxycodone overdose, opioid overdose)", "overdosed on heroin overdose"), in order;
    [] when it names none."""
    found = (match.entity.canonical for match in vocabulary.find(query, correct_typos=False))
    terms = [
        term
        for name in found
        if name in CLASS_OVERDOSES
        for term in CLASS_OVERDOSES[name].label_terms
    ]
    return list(dict.fromkeys(terms))


def names_a_class_at(text: str, start: int) -> bool:
    """Whether a class of :data:`CLASS_OVERDOSES` is named by its own words at ``start``
    of ``text`` ("what reverses the opioid", "reversal of opioid depression"; not
    "opioid-induced constipation")."""
    return any(overdose.class_words.match(text, start) for overdose in CLASS_OVERDOSES.values())
