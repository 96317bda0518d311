"""Questions that ask what reverses a drug (A-11): "antidote for dabigatran", "reversal of
rocuronium neuromuscular blockade", and since A-34 those that say an overdose and ask
what treats it ("dihydrocodeine overdose treatment", ``pipeline.overdose_questions``).
The drug they name is not what they ask for: the answer is another product whose text
names that drug (Praxbind for dabigatran, Bridion for rocuronium) or its class's
overdose (Narcan's "opioid overdose"). Pure functions over Tier-2's window, and the
short BM25 query's helpers (A-32, A-44), which take the store's search as an argument.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence

from pipeline.fusion import merge_rrf
from pipeline.overdose_classes import CLASS_OVERDOSES, class_overdose_of, class_overdose_terms
from pipeline.overdose_questions import asks_to_treat_an_overdose, says_an_overdose
from pipeline.schema import Node, NodeWithScore, parse_drug_list
from pipeline.scoring import combination_parts, entity_match_score
from pipeline.vocabulary import Vocabulary

__all__ = [
    "REVERSAL_CUE",
    "REVERSAL_WORDS",
    "WEAK_REVERSAL_CUE",
    "asks_for_reversal",
    "fuse_reversal_hits",
    "reversal_entity_score",
    "reversal_hits",
    "reversal_query",
    "reversal_subject",
]

#: Words of a question that asks for a reversal agent or antidote. "reverse
#: transcriptase" (an enzyme) and "reversible" (an inhibitor's kind) are not cues, nor is
#: "counteract" (NFCorpus: "spices that counteract the effects of a high-fat meal").
REVERSAL_CUE = re.compile(
    r"\b(?:revers(?:e|es|ed|ing|al)(?!\s+transcriptase)|antidotes?|"
    r"undo(?:es|ing)? the effects?)\b",
    re.IGNORECASE,
)

#: A-45, A-49: verbs that ask the same where the question also says an overdose, a bleed or an
#: emergency (``_URGENT``): "can the hospital undo it", "what inactivates it" (not
#: "inactivated", a vaccine's kind), "cancels out the blood thinner", "what switches
#: dabigatran off"; not "does ibuprofen cancel out my aspirin", "does grapefruit
#: inactivate my simvastatin", "can I switch warfarin off before surgery", "undo the damage
#: of years of ibuprofen".
WEAK_REVERSAL_CUE = re.compile(
    r"\b(?:undo(?:es|ing|ne)?|inactivat(?:e|es|ing)|cancel(?:s|ed|led|ing|ling)?\s+"
    r"(?:(?:it|them|this|that)\s+)?out|"
    # "neutralises the anticoagulant", "stop the blood thinner working"
    r"neutrali[sz](?:e|es|ing)|stop\s+(?:the|his|her|my|their)\s+"
    r"(?:blood[\s-]thinners?|anticoagulants?)\s+(?:from\s+)?working|"
    r"switch(?:es|ed|ing)?\s+(?!(?:to|from|over)\b)(?:[\w-]+\s+){0,2}?off(?![\s-]*label))\b",
    re.IGNORECASE,
)
_URGENT = re.compile(
    r"\b(?:bleed\w*|haemorrhag\w*|hemorrhag\w*|emergency|urgent\w*)\b", re.IGNORECASE
)


#: The words leaflets and labels say it with, added to a reversal question's BM25 query
#: (``lexical.reversal_words``): Praxbind is "a reversal agent", Cyanokit "an antidote",
#: Ondexxya "reverses the effects".
REVERSAL_WORDS: tuple[str, ...] = ("antidote", "reversal", "reverse")


def asks_for_reversal(query: str) -> bool:
    """True when ``query`` asks what reverses a drug or is its antidote (A-11), or says
    an overdose and asks what treats it (A-34, ``pipeline.overdose_questions``:
    "methanol intoxication treatment", and, as the stages read it after A-30's gloss,
    "took a handful of her oxycodone (oxycodone overdose), what do paramedics give"; not
    "signs of a morphine overdose" or "took too much of my oxycodone (oxycodone
    overdose), what should I do", which the drug's own leaflet answers). Since A-45 also
    where a verb of :data:`WEAK_REVERSAL_CUE` asks it beside an overdose, a bleed or an
    emergency ("dad on pradaxa has a brain bleed, what switches dabigatran off")."""
    if REVERSAL_CUE.search(query) or asks_to_treat_an_overdose(query):
        return True
    urgent = says_an_overdose(query, strong_only=True) or _URGENT.search(query)
    return bool(urgent and WEAK_REVERSAL_CUE.search(query))


def reversal_entity_score(node: Node, drugs: Sequence[str], window: int = 512) -> float:
    """Tier-2 entity score of a reversal question (A-11, in place of R-T2-5): 0.5 for a
    chunk of a product each of whose drugs shares a substance with a named drug (on the
    subject, not the answer: R-ENT-1's score of a name in the path); 1.0 for any other
    chunk that R-T2-5 scores above 0, i.e. that names one of ``drugs`` (the drugs to
    reverse, and the label terms of a class overdose: :func:`reversal_subject`) in
    ``text[:window]`` (``window`` in characters), its path blob or its
    ``primary_drugs`` (Ondexxya, whose leaflet's first lines name apixaban beside
    andexanet alfa); else 0.0. A chunk that names them but whose product holds a member
    of a class overdose whose label terms are in ``drugs`` is on the subject too, 0.5
    (A-35: a morphine leaflet names opioid overdose as a risk of morphine, Narcan's label
    as what it treats; Percocet's ``["oxycodone", "acetaminophen"]`` holds one); a
    chunk that names none of them stays at 0.0."""
    if not drugs:
        return 0.0
    wanted = frozenset().union(*(combination_parts(drug) for drug in drugs))
    listed = parse_drug_list(node.metadata.get("primary_drugs"))
    # a listed name shares a substance with the named drugs: Zubsolv's "buprenorphine"
    # and "buprenorphine/naloxone" are both on the subject of "antidote for buprenorphine"
    if listed and all(combination_parts(name) & wanted for name in listed):
        return 0.5
    if entity_match_score(node, drugs, window) <= 0:
        return 0.0
    named = {term.lower() for term in drugs}
    classes = {
        condition
        for condition, overdose in CLASS_OVERDOSES.items()
        if named.intersection(overdose.label_terms)
    }
    # another member of a class overdose named (a morphine leaflet that names opioid
    # overdose, beside an overdose of oxycodone) is on the subject, not the answer
    if classes and any(class_overdose_of(name) in classes for name in listed):
        return 0.5
    return 1.0


def reversal_subject(
    query: str, vocabulary: Vocabulary, drugs: Sequence[str], protected: Sequence[str]
) -> tuple[list[str], list[str]]:
    """What a reversal question's Tier-2 scores read as its subject (A-34): ``drugs``
    (the terms of :func:`reversal_entity_score`) and ``protected`` (R-T2-7's protected
    drugs) each with the label terms of the class overdoses ``query`` names
    (``pipeline.overdose_classes``): Narcan's chunk names "opioid overdose", not
    oxycodone, and takes no cross-drug penalty. ``protected`` stays empty when it is
    (nothing protected: no chunk is penalised)."""
    terms = class_overdose_terms(query, vocabulary)
    return [*drugs, *terms], ([*protected, *terms] if protected else [])


def reversal_query(query: str, vocabulary: Vocabulary) -> str | None:
    """A-32: the short BM25 query of a reversal question (:func:`asks_for_reversal`): the
    drugs, classes and conditions it names, as written, then ``REVERSAL_WORDS`` and
    "overdose"; None when it asks no reversal or names none. In "my teenager has taken
    too many paracetamol tablets, what's the antidote they give in hospital" the other
    words ("teenager", "tablets", "hospital") fill the long query's top hits with the
    drug's own labels; the antidote's label shares only the drug and "antidote"."""
    if not asks_for_reversal(query):
        return None
    names = [
        match.surface
        for match in vocabulary.find(query)
        if match.entity.is_drug or match.entity.semantic_type in ("class", "disease")
    ]
    if not names:
        return None
    # A-46: and the words the antidotes' labels name a class overdose with ("severe
    # hypoglycaemia": the glucagon labels say neither insulin nor antidote)
    labels = class_overdose_terms(query, vocabulary)
    return " ".join([*dict.fromkeys([*names, *labels]), *REVERSAL_WORDS, "overdose"])


async def reversal_hits(
    query: str, vocabulary: Vocabulary, search: Callable[[str], Awaitable[list[NodeWithScore]]]
) -> list[NodeWithScore]:
    """``search``'s hits for :func:`reversal_query` (A-32), best first; [] when the
    question asks no reversal or names nothing. ``search(text)`` runs one BM25 query, its
    words read as the leg reads the question's."""
    short = reversal_query(query, vocabulary)
    return [] if short is None else await search(short)


def fuse_reversal_hits(
    hits: Sequence[NodeWithScore], extra: Sequence[NodeWithScore], k: int = 60
) -> list[NodeWithScore]:
    """``hits`` fused by RRF (R-RRF-1, ``k``) with ``extra`` (:func:`reversal_hits`), at
    most as many as the longer list; ``hits`` as they are when ``extra`` is empty."""
    if not extra:
        return list(hits)
    return merge_rrf([hits, extra], k)[: max(len(hits), len(extra))]
