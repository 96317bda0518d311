"""A question's everyday condition names glossed with the clinical name (A-25).

People write "piles", "bedwetting", "BV" or "an underactive thyroid"; the labels write
"haemorrhoids", "enuresis", "bacterial vaginosis" and "hypothyroidism". A-24 found the
condition, but only the dense query's R-EXP-1 suffix carried its name: BM25 and the
cross-encoder still read the lay word alone. Here the question every stage reads gets the
clinical name in brackets after the lay one, as the leaflets themselves write the pair:
"something for piles" -> "something for piles (haemorrhoids)". The lay names are the
vocabulary's ``Entity.lay_names``, from a curated table (``pipeline.lay_condition_table``),
so the other names of a condition ("hep B", "covid", the leaflets' own pairs) are left
as written.
"""

from __future__ import annotations

from pipeline.text import match_key
from pipeline.text_normalise import _DASHES
from pipeline.vocabulary import Vocabulary

__all__ = ["glossed_lay_names", "lay_name_glosses"]


def lay_name_glosses(text: str, vocabulary: Vocabulary) -> list[tuple[int, str]]:
    """Where ``text`` writes a condition by a lay name only: ``(end, clinical name)`` per
    condition, at the end (character offset) of its first lay name, in text order. A
    condition the text also names otherwise ("piles (haemorrhoids)") gets none, nor does
    a lay name the question follows with brackets of its own ("high cholesterol (familial
    hypercholesterolaemia)"), one inside a hyphenated word ("hypo-allergenic") or one
    read from a misspelling."""
    matches = [m for m in vocabulary.find(text) if not m.correction]
    lay_keys = {
        m.entity.canonical: {match_key(name) for name in m.entity.lay_names}
        for m in matches
        if m.entity.lay_names
    }
    named = {
        m.entity.canonical
        for m in matches
        if match_key(m.surface) not in lay_keys.get(m.entity.canonical, ())
    }
    glosses: dict[str, int] = {}
    for match in matches:
        canonical = match.entity.canonical
        # "hypo-allergenic" is no hypo: a lay name inside a hyphenated word is left alone,
        # and so is one the question glosses itself ("high cholesterol (familial ...)")
        beside = text[match.start - 1 : match.start] + text[match.end : match.end + 1]
        inside = any(ch in _DASHES for ch in beside)
        glossed = text[match.end :].lstrip().startswith("(")
        if canonical in lay_keys and canonical not in named and not (inside or glossed):
            glosses.setdefault(canonical, match.end)
    return sorted((end, canonical) for canonical, end in glosses.items())


def glossed_lay_names(text: str, vocabulary: Vocabulary) -> str:
    """``text`` with each condition it names by a lay name only followed by its clinical
    name in brackets (:func:`lay_name_glosses`): ``"bedwetting in a 7 year old"`` ->
    ``"bedwetting (enuresis) in a 7 year old"``; unchanged when there is none."""
    for end, name in reversed(lay_name_glosses(text, vocabulary)):
        if name[1:2].islower():  # "Enuresis" from an ICD title reads as "enuresis"
            name = name[0].lower() + name[1:]
        text = f"{text[:end]} ({name}){text[end:]}"
    return text
