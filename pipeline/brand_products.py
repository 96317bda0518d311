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

import re
from collections.abc import Sequence

from rapidfuzz import fuzz

from pipeline.schema import NodeWithScore, parse_drug_list
from pipeline.scoring import combination_parts, substances_of
from pipeline.text import match_key
from pipeline.vocabulary import Vocabulary

__all__ = ["BESIDE_OTHERS_CUE", "PRODUCT_KINDS", "brand_entity_caps", "product_titles"]


#: Words of a question that sets the brand beside other products of its substance: each
#: product's own chunks answer it ("which biosimilars of Humira", "Pradaxa vs Xarelto",
#: "is Xarelto the same as generic rivaroxaban", "alternatives to Abilify").
BESIDE_OTHERS_CUE = re.compile(
    r"\b(?:vs|versus|compared?|comparing|comparison|switch\w*|instead|differ\w*|between|"
    r"alternatives?|biosimilars?|generics?|versions?|same as|equivalents?|cheaper|"
    r"other brands?)\b",
    re.IGNORECASE,
)

#: Document kinds that are products: a brand's own chunk is one, and only another
#: product's chunk is capped (a paper or a compound record that names the drug is none).
PRODUCT_KINDS = frozenset({"leaflet", "label"})

_BRACKETS_RE = re.compile(r"\s*\([^)]*\)|[\u00ae\u2122]")


def product_titles(metadata: dict) -> frozenset[str]:
    """The product names a chunk belongs to, as ``match_key`` keys: its ``title`` (an
    FDA label's is up to three names joined with ", "), else its ``document_name`` up to
    the substances in brackets ("Vemlidy (tenofovir) — EMA package leaflet"); brackets
    and the signs ® and ™ left out ("Gablofen, Lioresal (baclofen)")."""
    title = str(metadata.get("title") or "")
    if not title:
        title = str(metadata.get("document_name") or "").split(" (")[0].split(" — ")[0]
    title = _BRACKETS_RE.sub("", title)
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
    "Vemlidy"), as a ``match_key`` key -> the drug's substances; none of a substance the
    question also names by its own name ("is Xarelto the same as rivaroxaban")."""
    brands: dict[str, frozenset[str]] = {}
    plain: set[str] = set()
    for match in vocabulary.find(query, correct_typos=False):
        if match.entity.semantic_type != "drug":
            continue
        substances = combination_parts(match.entity.canonical)
        if _is_substance_name(match.surface, substances):
            plain.update(substances)
        else:
            brands[match_key(match.surface)] = substances
    return {brand: found for brand, found in brands.items() if not found & plain}


def _own_titles(brand: str, titles: set[str], query_key: str) -> set[str]:
    """The product titles of the window ``brand`` names: the title itself, the title
    of which the name adds a device ("Relvar Ellipta" for Relvar), or a longer title
    that the question writes whole ("Abilify Maintena", where "Abilify" alone matched);
    the longest of these only (Abilify Maintena, not the oral Abilify)."""
    found = {
        title
        for title in titles
        if brand == title
        or brand.startswith(title + " ")
        or (title.startswith(brand + " ") and title in query_key)
    }
    longest = max(map(len, found), default=0)
    return {title for title in found if len(title) == longest}


def brand_entity_caps(
    nodes: Sequence[NodeWithScore], query: str, vocabulary: Vocabulary
) -> list[float] | None:
    """The highest entity score (R-T2-5) each of ``nodes`` may keep when ``query`` names
    a product by its brand and a leaflet or label chunk of ``nodes`` is that product's
    (A-38), else None.

    Then a leaflet or label chunk of another product whose ``primary_drugs`` share a
    substance with such a brand keeps at most 0.75; every other chunk (the brand's own,
    a paper or compound record, a product of a drug the question names by its own name)
    keeps its score. None also where the question sets the brand beside other products
    (``BESIDE_OTHERS_CUE``), or where no cap would be under 1. ``query`` is the question
    as the stages read it: a misspelt brand counts once the intent corrected it
    ("Exorge" is read as Exforge); the substance's own name, a salt or a spelling of it
    ("tenofovir disoproxil", "aciclovir") names no brand.
    """
    if BESIDE_OTHERS_CUE.search(query):
        return None
    brands = _named_brands(query, vocabulary)
    if not brands:
        return None
    products = [str(item.node.metadata.get("kind") or "") in PRODUCT_KINDS for item in nodes]
    titles = [product_titles(item.node.metadata) if is_product else frozenset()
              for item, is_product in zip(nodes, products, strict=True)]  # fmt: skip
    window = set().union(*titles)
    query_key = match_key(query)
    own = {brand: _own_titles(brand, window, query_key) for brand in brands}
    substances = frozenset().union(*(brands[brand] for brand, found in own.items() if found))
    if not substances:  # no named brand has a chunk of its own here
        return None
    owned = set().union(*own.values())
    read: dict[tuple[str, ...], bool] = {}  # a document's chunks share their primary drugs
    caps = []
    for item, found, is_product in zip(nodes, titles, products, strict=True):
        shared = False
        if is_product and not found & owned:
            drugs = tuple(parse_drug_list(item.node.metadata.get("primary_drugs")))
            if drugs not in read:
                read[drugs] = bool(substances_of(drugs, vocabulary) & substances)
            shared = read[drugs]
        caps.append(0.75 if shared else 1.0)
    return caps if min(caps, default=1.0) < 1.0 else None
