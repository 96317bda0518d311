"""Questions that ask what reverses a drug (A-11): "antidote for dabigatran", "reversal of
rocuronium neuromuscular blockade". The drug they name is not what they ask for: the
answer is another product whose text names that drug (Praxbind for dabigatran, Bridion
for rocuronium). Pure functions over Tier-2's window.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence

from pipeline.fusion import merge_rrf
from pipeline.overdose_classes import class_overdose_terms
from pipeline.schema import Node, NodeWithScore, parse_drug_list
from pipeline.scoring import combination_parts, entity_match_score
from pipeline.vocabulary import Vocabulary

__all__ = [
    "OVERDOSE_TREATMENT_CUE",
    "REVERSAL_CUE",
    "REVERSAL_WORDS",
    "asks_for_reversal",
    "reversal_entity_score",
    "reversal_query",
    "reversal_subject",
    "with_reversal_leg",
]

#: Words of a question that asks for a reversal agent or antidote. "reverse
#: transcriptase" (an enzyme) and "reversible" (an inhibitor's kind) are not cues, nor is
#: "counteract" (NFCorpus: "spices that counteract the effects of a high-fat meal").
REVERSAL_CUE = re.compile(
    r"\b(?:revers(?:e|es|ed|ing|al)(?!\s+transcriptase)|antidotes?|"
    r"undo(?:es|ing)? the effects?)\b",
    re.IGNORECASE,
)


#: Words anywhere in a question that say more was taken than a dose (A-34): "overdosed",
#: "an OD", "poisoning", "toxicity", "a handful", "took too many", "took double his
#: dose", "took 3 times his dose", "took extra", "a double dose". "Too many", "double",
#: "twice" and "extra" only after a taking verb or before "dose": "bone marrow makes
#: too many red cells", "double vision" and "extra strength" say no overdose; nor do
#: "blood poisoning" (sepsis), "food poisoning", or "o.d." (once a day).
_TAKING = (
    r"(?:took|taken|take|takes|taking|swallowed|had|given|gave|injected|drank|drunk|used|"
    r"chewed|downed)\s+(?:[\w\'\u2019-]+\s+){0,3}?"
)
_OVERDOSE_WORDS = re.compile(
    r"\b(?:overdos\w*|(?-i:OD)|od(?:[\'\u2019]d|ed|ing)|(?<!blood )(?<!food )poison\w*|"
    r"toxicity|intoxicat\w*|handful|"
    rf"{_TAKING}(?:too\s+(?:many|much)|double|twice|extra|\d+\s*(?:x|times))|"
    r"(?:double|twice\s+the|extra|\d+\s*(?:x|times)(?:\s+(?:the|his|her|my|their))?)"
    r"\s+(?:[\w-]+\s+)?doses?)\b",
    re.IGNORECASE,
)

#: Words of a question that asks what treats something (A-34): "what treats",
#: "treatment", "what do paramedics give", "what can we keep at home", "emergency
#: injection", "counteract", "rescue", "bring him round". Read only beside
#: :data:`_OVERDOSE_WORDS`: "counteract" alone is no cue (NFCorpus: "spices that
#: counteract the effects of a high-fat meal").
OVERDOSE_TREATMENT_CUE = re.compile(
    r"\b(?:treat(?:s|ed|ing|ments?)?|counteract\w*|rescue|"
    r"emergency\s+(?:[\w-]+\s+){0,2}?(?:med\w*|injections?|jabs?|sprays?|treatments?|"
    r"drugs?|pens?|kits?)|"
    r"what\s+(?:do|does|did|can|could|should|would|will)\s+(?:[\w&\'\u2019-]+\s+){0,3}?"
    r"(?:give|use|carry|keep|administer)|"
    r"(?:bring|wake)\s+(?:[\w-]+\s+){0,2}?(?:round|around|up))\b",
    re.IGNORECASE,
)

#: The words leaflets and labels say it with, added to a reversal question's BM25 query
#: (``lexical.reversal_words``): Praxbind is "a reversal agent", Cyanokit "an antidote",
#: Ondexxya "reverses the effects".
REVERSAL_WORDS: tuple[str, ...] = ("antidote", "reversal", "reverse")


def asks_for_reversal(query: str) -> bool:
    """True when ``query`` asks what reverses a drug or is its antidote (A-11), or says
    an overdose and asks what treats it (A-34: "took a handful of her oxycodone, what do
    paramedics give", "methanol intoxication treatment"; not "signs of a morphine
    overdose" or "took too much of my oxycodone, what should I do", which the drug's own
    leaflet answers)."""
    if REVERSAL_CUE.search(query):
        return True
    return bool(_OVERDOSE_WORDS.search(query) and OVERDOSE_TREATMENT_CUE.search(query))


def reversal_entity_score(node: Node, drugs: Sequence[str], window: int = 512) -> float:
    """Tier-2 entity score of a reversal question (A-11, in place of R-T2-5): 0.5 for a
    chunk of a product each of whose drugs shares a substance with a named drug (on the
    subject, not the answer: R-ENT-1's score of a name in the path); 1.0 for any other
    chunk that R-T2-5 scores above 0, i.e. that names one of ``drugs`` (the drugs to
    reverse, and the label terms of a class overdose: :func:`reversal_subject`) in
    ``text[:window]`` (``window`` in characters), its path blob or its
    ``primary_drugs`` (Ondexxya, whose leaflet's first lines name apixaban beside
    andexanet alfa); else 0.0."""
    if not drugs:
        return 0.0
    wanted = frozenset().union(*(combination_parts(drug) for drug in drugs))
    listed = parse_drug_list(node.metadata.get("primary_drugs"))
    # a listed name shares a substance with the named drugs: Zubsolv's "buprenorphine"
    # and "buprenorphine/naloxone" are both on the subject of "antidote for buprenorphine"
    if listed and all(combination_parts(name) & wanted for name in listed):
        return 0.5
    return 1.0 if entity_match_score(node, drugs, window) > 0 else 0.0


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
    """A-32: the short BM25 query of a question that asks what reverses a drug: the
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
    return " ".join([*dict.fromkeys(names), *REVERSAL_WORDS, "overdose"])


async def with_reversal_leg(
    hits: Sequence[NodeWithScore],
    query: str,
    vocabulary: Vocabulary,
    search: Callable[[str], Awaitable[list[NodeWithScore]]],
    k: int = 60,
) -> list[NodeWithScore]:
    """The BM25 leg's ``hits`` fused by RRF (R-RRF-1, ``k``) with ``search``'s hits for
    :func:`reversal_query` (A-32), at most as many as the longer list; ``hits`` as they
    are when the question asks no reversal. ``search(text)`` runs one BM25 query, its
    words read as the leg reads the question's."""
    short = reversal_query(query, vocabulary)
    if short is None:
        return list(hits)
    extra = await search(short)
    return merge_rrf([hits, extra], k)[: max(len(hits), len(extra))]
