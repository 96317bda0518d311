"""Which chunks cover the drugs a question names; pure functions over Tier-2's window.

- A question that names several drugs opens with one chunk of each (A-10): "gleevec vs
  tasigna" should not return ten Tasigna chunks before the first Glivec one.
- A question that names the substances of a fixed combination asks for that product
  (A-22): "nirmatrelvir taken with ritonavir" is Paxlovid, not Norvir.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate

from pipeline.brand_products import brand_entity_caps
from pipeline.schema import NodeWithScore, parse_drug_list
from pipeline.scoring import drug_key, primary_drug_names, substances_of
from pipeline.vocabulary import Vocabulary

__all__ = ["COMPARISON_CUE", "combination_entity_caps", "cover_named_drugs", "entity_caps"]

#: Words of a question that weighs drugs against each other or asks whether they mix:
#: each drug's own chunks answer it, not a product of both ("can I take X and Y
#: together", "X vs Y").
COMPARISON_CUE = re.compile(
    r"\b(?:vs|versus|or|compared?|comparing|comparison|switch\w*|instead|interact\w*|"
    r"differ\w*|between|alternatives?|alternating|better|safer|safe|affect\w*|mix\w*|"
    r"alongside|while (?:on|taking|using)|same time|at once|is it (?:ok|okay|fine|alright)|"
    r"(?:can|could|may|should|shall) (?:i|you|we|he|she|they|my \w+) (?:safely |still )?"
    r"(?:take|have|use|give|combine)\b[^.?!]*?\b(?:with|and|together))\b",
    re.IGNORECASE,
)


def combination_entity_caps(
    nodes: Sequence[NodeWithScore], query: str, vocabulary: Vocabulary
) -> list[float] | None:
    """The highest entity score (R-T2-5) each of ``nodes`` may keep when ``query`` asks
    for a fixed combination (A-22), or None when it does not.

    It does when the drugs ``query`` names (``vocabulary``) are two substances or more,
    none named twice ("Paxlovid and Norvir" names ritonavir beside its combination), it
    does not weigh them against each other or ask whether they mix (``COMPARISON_CUE``:
    "X vs Y", "can I take X with Y", "mixing X and Y"), and one of the
    ``primary_drugs`` of a chunk of ``nodes`` is a fixed combination (a name or brand) of
    those substances, no fewer and no more: a literature chunk that names both drugs,
    each its own entry, is none.
    Then such a chunk keeps its score and every other chunk at most 0.75, R-T2-5's score
    of a chunk that names a drug (and so no A-7 topic part, which only the named drugs'
    own chunks take): for "nirmatrelvir taken with ritonavir", Paxlovid's
    leaflet before Norvir's; for "apixaban and rivaroxaban dosing", Ondexxya (andexanet
    alfa, which reverses both) is no product of the two.
    """
    named = [substances_of([drug], vocabulary) for drug in vocabulary.match_drug_entities(query)]
    wanted = frozenset().union(*named)
    if len(wanted) < 2 or sum(map(len, named)) > len(wanted) or COMPARISON_CUE.search(query):
        return None  # "Paxlovid and Norvir" names a part beside its combination
    whole = [
        any(
            substances_of([name], vocabulary) == wanted
            for name in parse_drug_list(item.node.metadata.get("primary_drugs"))
        )
        for item in nodes
    ]
    return [1.0 if covers else 0.75 for covers in whole] if any(whole) else None


def entity_caps(
    nodes: Sequence[NodeWithScore],
    query: str,
    vocabulary: Vocabulary,
    fixed_combinations: bool,
    brand_products: bool,
) -> tuple[list[float] | None, list[float] | None, list[float] | None]:
    """Tier-2's entity caps per node: A-22's (``combination_entity_caps``, when
    ``fixed_combinations``), A-38's (``pipeline.brand_products.brand_entity_caps``, when
    ``brand_products``) and, per node, the lower of the two; None where none applies."""
    combination = combination_entity_caps(nodes, query, vocabulary) if fixed_combinations else None
    brand = brand_entity_caps(nodes, query, vocabulary) if brand_products else None
    given = [caps for caps in (combination, brand) if caps is not None]
    lowest = [min(values) for values in zip(*given, strict=True)] if given else None
    return combination, brand, lowest


def cover_named_drugs(ranked: list[NodeWithScore], named: Sequence[str]) -> list[NodeWithScore]:
    """``ranked`` (best first) with the best chunk of each of the ``named`` drugs (a
    ``primary_drugs`` value or a part of a combination) moved to the first places, in
    their own order, the rest after in theirs (A-10): "gleevec vs tasigna" opens with one
    chunk of each. A moved chunk keeps its similarity and the ones it passes take it where
    theirs is higher, so similarities stay non-increasing (A-2). ``ranked`` itself (the
    same list) when fewer than two named drugs have a chunk of their own, or their best
    chunks already lead."""
    wanted = {drug_key(drug) for drug in named}
    if len(wanted) < 2:
        return ranked
    leaders: list[int] = []
    covered: set[str] = set()
    for index, item in enumerate(ranked):
        own = wanted & primary_drug_names(item.node.metadata)
        if own - covered:
            leaders.append(index)
            covered |= own
            if covered == wanted:
                break
    if len(leaders) < 2 or leaders == list(range(len(leaders))):
        return ranked
    chosen = set(leaders)
    order = leaders + [i for i in range(len(ranked)) if i not in chosen]
    similarities = accumulate((ranked[i].score_parts["similarity"] for i in order), min)
    return [
        ranked[i].model_copy(update={"score_parts": {**ranked[i].score_parts, "similarity": value}})
        for i, value in zip(order, similarities, strict=True)
    ]
