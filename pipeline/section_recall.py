"""Section-fused recall (A-28): a question that names no medicine (no drug, class or gene
target) and cues only the indications ("acid reflux and heartburn", "something for
painful swollen piles"; A-27 infers that cue) is answered by an indications section. Over
every section, the condition's words also match the side-effect and warning sections of
other medicines that list it ("acid reflux, heartburn" in Ozempic's side effects): BM25
ranks those first, and the fused first stage followed it where the dense leg had the
answer first.

Each leg (dense, BM25) of such a question runs twice, over every section and within the
indications, and its two rankings are fused by RRF (k 60). The search within keeps the
leg's own order, so an indications chunk that the leg ranks within its first 61 has two
votes and comes before every chunk of another section: in effect the leg's indications
first, in its order, then the other sections, with indications from beyond the leg's
depth among them. The other sections stay in the pool. A search within the indications only was
measured and dropped: it lost questions whose answer is told apart by its form or
schedule ("an implant that lasts six months", "a once-weekly injection": words of the
dosage section); see README "A-28".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable, Sequence

from pipeline.fusion import merge_rrf
from pipeline.schema import NodeWithScore, QueryRetrievalIntent, ScopeFilter
from pipeline.supplement import names_drug_terms
from pipeline.vocabulary import Vocabulary

__all__ = [
    "INDICATIONS",
    "SectionlessScopes",
    "leg_within_sections",
    "names_a_medicine",
    "recall_sections",
    "scope_key",
]

#: The canonical section of "what X is and what it is used for" (R-ING-2).
INDICATIONS = "indications_and_usage"


def names_a_medicine(query: str, vocabulary: Vocabulary) -> bool:
    """True when ``query`` names a drug or brand (``Vocabulary.match_drug_entities``), a
    drug class (an entity of ``semantic_type`` ``class``: "JAK inhibitors", "SSRIs") or
    a gene target with related drugs ("BRAF inhibitor", "anti-CD20 antibody"; A-16's
    reading, ``pipeline.supplement.names_drug_terms``)."""
    if names_drug_terms(query, vocabulary, ("gene",)):
        return True
    return any(entity.semantic_type == "class" for entity in vocabulary.match_entities(query))


class SectionlessScopes:
    """Search scopes whose search within the sections found nothing (a knowledge base
    without such sections: NFCorpus's chunks are all ``body``), remembered for ``ttl_s``
    seconds so that their questions skip A-28's second searches. Keys are
    :func:`scope_key` values; an ingest that adds such sections is seen after ``ttl_s``.
    At most ``max_scopes`` are kept, the oldest dropped first."""

    def __init__(
        self,
        ttl_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        max_scopes: int = 1024,
    ):
        self.ttl_s = ttl_s
        self.max_scopes = max_scopes  # document-id scopes vary per request: keep it bounded
        self._clock = clock
        self._until: dict[Hashable, float] = {}

    def skips(self, key: Hashable) -> bool:
        """True while ``key`` is remembered as having none of the sections."""
        until = self._until.get(key)
        if until is None:
            return False
        if self._clock() >= until:
            del self._until[key]
            return False
        return True

    def keep(
        self, collection: str, scope: ScopeFilter | None, sections: Sequence[str]
    ) -> tuple[str, ...]:
        """``sections``, or ``()`` while their search of ``collection`` within ``scope`` is
        remembered to have found nothing."""
        sections = tuple(sections)
        return () if sections and self.skips(scope_key(collection, scope, sections)) else sections

    def record(self, key: Hashable, found_any: bool) -> None:
        """Remember (``found_any`` False) or forget (True) ``key`` as sectionless."""
        self._until.pop(key, None)
        if not found_any:
            self._until[key] = self._clock() + self.ttl_s  # newest last
            while len(self._until) > self.max_scopes:
                del self._until[next(iter(self._until))]


def scope_key(collection: str, scope: ScopeFilter | None, sections: Sequence[str]) -> Hashable:
    """The :class:`SectionlessScopes` key of a search of ``collection`` within ``scope``
    and ``sections``."""
    scope = scope or ScopeFilter()
    return (collection, scope.kb_names, scope.tags, scope.document_ids, tuple(sections))


def recall_sections(intent: QueryRetrievalIntent, names_a_medicine: bool) -> tuple[str, ...]:
    """The canonical sections both recall legs also search within for this question
    (A-28): the indications, where the question names no medicine (``names_a_medicine``,
    :func:`names_a_medicine`: no drug, class or gene target; a plain word such as
    "tablets" or "eye drops" is none), is not a structure question and its one section
    cue is the indications: named (A-5, "what is approved for eosinophilic esophagitis")
    or inferred (A-27, ``section_cues_implied``, for nearly every question that names no
    medicine and no other section). Else ``()``: one search over every section.

    "what is Tagrisso used for" names a drug, whose own chunks answer; "JAK inhibitors
    for rheumatoid arthritis" names a class and "BRAF inhibitor for melanoma" a target,
    which already narrow the answer to their members, told apart by what the other
    sections say ("a nasal spray", "once a year"); "side effects of eye drops" cues
    another section.
    """
    if names_a_medicine or intent.workflow == "chemical":
        return ()
    return (INDICATIONS,) if tuple(intent.section_cues) == (INDICATIONS,) else ()


async def leg_within_sections(
    search: Callable[..., Awaitable[list[NodeWithScore]]],
    sections: Sequence[str],
    depth: int,
    k: int = 60,
    found_any: Callable[[bool], None] | None = None,
) -> list[NodeWithScore]:
    """One recall leg's hits for A-28: ``search(sections=())`` (the leg over every section)
    fused by RRF (R-RRF-1, ``k``) with ``search(sections=sections)`` (the same leg within
    ``sections``), at most ``depth`` of them, best first. ``sections`` empty: the first
    alone.

    Both searches run concurrently; when one fails the other is cancelled and the error
    propagates (the plan's own handling applies). Where no chunk is of those sections
    the leg's own ranking passes unchanged (R-RRF-3); ``found_any`` is told whether the
    search within the sections returned anything.
    """
    if not sections:
        return await search(sections=())
    tasks = [
        asyncio.ensure_future(search(sections=tuple(sections))),
        asyncio.ensure_future(search(sections=())),
    ]
    try:
        within, everywhere = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:  # gather leaves the sibling of a failed search running
            task.cancel()
        raise
    if found_any is not None:
        found_any(bool(within))
    return merge_rrf([within, everywhere], k)[:depth]
