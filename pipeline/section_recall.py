"""Section-fused recall (A-28): a question that names no drug or class and asks what
treats a condition ("acid reflux and heartburn", "something for painful swollen piles") is
answered by an indications section. Over every section, the condition's words and
meaning also match the side-effect and warning sections of other medicines that list it
("acid reflux, heartburn" in Ozempic's side effects), and those fill the legs' depth
before the indications that answer.

Each leg (dense, BM25) of such a question runs twice, over every section and within the
indications, and its two rankings are fused by RRF: an indications chunk gains a vote
from the search within the indications (and may come from beyond the leg's depth), a
chunk of another section keeps its one vote. A search within the indications only was
measured and dropped: it lost questions whose answer is told apart by its form or
schedule ("an implant that lasts six months", "a once-weekly injection": words of the
dosage section); see README "A-28".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from pipeline.fusion import merge_rrf
from pipeline.schema import NodeWithScore, QueryRetrievalIntent
from pipeline.vocabulary import Vocabulary

__all__ = ["INDICATIONS", "leg_within_sections", "names_a_drug_or_class", "recall_sections"]

#: The canonical section of "what X is and what it is used for" (R-ING-2).
INDICATIONS = "indications_and_usage"


def names_a_drug_or_class(query: str, vocabulary: Vocabulary) -> bool:
    """True when ``query`` names a drug or brand (``Vocabulary.match_drug_entities``) or a
    drug class (an entity of ``semantic_type`` ``class``: "JAK inhibitors", "SSRIs")."""
    if vocabulary.match_drug_entities(query):
        return True
    return any(entity.semantic_type == "class" for entity in vocabulary.match_entities(query))


def recall_sections(intent: QueryRetrievalIntent, names_a_medicine: bool) -> tuple[str, ...]:
    """The canonical sections both recall legs also search within for this question
    (A-28): the indications, where the question names no drug and no class
    (``names_a_medicine``, :func:`names_a_drug_or_class`; a plain word such as "tablets"
    or "eye drops" is neither), is not a structure question and its one section cue is
    the indications, asked for (A-26) or inferred (A-27, ``section_cues_implied``).
    Else ``()``: one search over every section.

    "what is Tagrisso used for" names a drug, whose own chunks answer; "JAK inhibitors
    for rheumatoid arthritis" names a class, which already narrows the answer to its
    members and whose questions tell them apart by what the other sections say ("a
    nasal spray", "once a year"); "side effects of eye drops" cues another section.
    """
    if names_a_medicine or intent.workflow == "chemical":
        return ()
    return (INDICATIONS,) if tuple(intent.section_cues) == (INDICATIONS,) else ()


async def leg_within_sections(
    search: Callable[[Sequence[str]], Awaitable[list[NodeWithScore]]],
    sections: Sequence[str],
    depth: int,
    k: int = 60,
) -> list[NodeWithScore]:
    """One recall leg's hits for A-28: ``search(())`` (the leg over every section) fused by
    RRF (R-RRF-1, ``k``) with ``search(sections)`` (the same leg within ``sections``), at
    most ``depth`` of them, best first. Both searches run concurrently. ``sections`` empty:
    ``search(())`` alone. Where no chunk is of those sections (a knowledge base without
    sections, NFCorpus) the leg's own ranking passes unchanged (R-RRF-3).

    Raises:
        whatever ``search`` raises (the plan's own error handling applies).
    """
    if not sections:
        return await search(())
    within, everywhere = await asyncio.gather(search(tuple(sections)), search(()))
    return merge_rrf([within, everywhere], k)[:depth]
