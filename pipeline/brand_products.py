"""A question that names a product by its brand asks about that product (A-38).

The vocabulary reads a brand as its substance ("Vemlidy" is tenofovir, "Abilify"
aripiprazole), so R-T2-5 scores every product of the substance alike: for "vemlidy 25mg -
take w/ food or not?" the EMA leaflet of tenofovir disoproxil (245 mg, another product)
came first, Vemlidy's own second. Where a chunk of the Tier-2 window is the named brand's
own (its product title is the name the question used), the other products of that
substance keep at most 0.75, R-T2-5's score of a chunk that names the drug, as A-22 caps
the parts of a named combination. Pure functions over the window.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz import fuzz

from pipeline.schema import NodeWithScore, parse_drug_list
from pipeline.scoring import combination_parts
from pipeline.text import match_key
from pipeline.vocabulary import Vocabulary

__all__ = ["brand_entity_caps", "product_titles"]


def product_titles(metadata: dict) -> frozenset[str]:
    """The product names a chunk belongs to, as ``match_key`` keys: its ``title`` (an
    FDA label's is up to three names joined with ", "), else its ``document_name`` up to
    the substances in brackets ("Vemlidy (tenofovir) — EMA package leaflet")."""
    title = str(metadata.get("title") or "")
    if not title:
        title = str(metadata.get("document_name") or "").split(" (")[0].split(" — ")[0]
    return frozenset(match_key(name) for name in title.split(", ") if name.strip())


#: ``rapidfuzz.fuzz.ratio`` at or above which a name is a spelling of the substance's
#: own ("aciclovir" / "acyclovir" 89, "oestradiol" / "estradiol" 95), not a brand
#: ("Vemlidy" / "tenofovir" 25).
SPELLING_RATIO = 80.0


def _is_substance_name(surface: str, substances: frozenset[str]) -> bool:
    # "tenofovir disoproxil", "imatinib mesylate" and "aciclovir" name the substance
    name = match_key(surface)
    return any(
        part in name or fuzz.ratio(name, part) >= SPELLING_RATIO
        for part in (match_key(s) for s in substances)
    )


def _named_brands(query: str, vocabulary: Vocabulary) -> dict[str, frozenset[str]]:
    """Each name ``query`` gives a drug by that is no spelling of its substances (a brand,
    "Vemlidy"), as a ``match_key`` key -> the drug's substances."""
    brands: dict[str, frozenset[str]] = {}
    for match in vocabulary.find(query, correct_typos=False):
        if match.entity.semantic_type != "drug":
            continue
        substances = combination_parts(match.entity.canonical)
        if not _is_substance_name(match.surface, substances):
            brands[match_key(match.surface)] = substances
    return brands


def _is_brand(title: str, brand: str) -> bool:
    # "Relvar Ellipta" names the product Relvar; "Abilify" names Abilify
    return brand == title or brand.startswith(title + " ")


def brand_entity_caps(
    nodes: Sequence[NodeWithScore], query: str, vocabulary: Vocabulary
) -> list[float] | None:
    """The highest entity score (R-T2-5) each of ``nodes`` may keep when ``query`` names
    a product by its brand and a chunk of ``nodes`` is that product's (A-38), else None.

    A chunk of another product whose ``primary_drugs`` share a substance with the named
    brand's drug keeps at most 0.75; every other chunk (the brand's own, another drug the
    question names by its own name: "Humira and methotrexate") keeps its score. A name
    misspelt, or the substance's own name ("tenofovir dose"), names no brand.
    """
    brands = _named_brands(query, vocabulary)
    if not brands:
        return None
    titles = [product_titles(item.node.metadata) for item in nodes]
    own = [any(_is_brand(t, b) for t in found for b in brands) for found in titles]
    if not any(own):
        return None
    substances = frozenset().union(*brands.values())
    caps = []
    for item, is_own in zip(nodes, own, strict=True):
        drugs = parse_drug_list(item.node.metadata.get("primary_drugs"))
        shared = any(combination_parts(drug) & substances for drug in drugs)
        caps.append(0.75 if shared and not is_own else 1.0)
    return caps
