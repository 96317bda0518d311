"""A-28: a question that names no drug or class and cues only the indications also
searches each leg within the indications sections, and fuses the two rankings; any other
question searches every section once."""

import asyncio

import pytest

from pipeline.errors import BackendUnavailable
from pipeline.intent import detect_retrieval_intent
from pipeline.schema import Node, NodeWithScore, ScopeFilter
from pipeline.section_recall import (
    INDICATIONS,
    SectionlessScopes,
    leg_within_sections,
    names_a_medicine,
    recall_sections,
    scope_key,
)

pytestmark = pytest.mark.unit


def sections_for(query: str, vocabulary) -> tuple[str, ...]:
    intent = detect_retrieval_intent(query, vocabulary)
    return recall_sections(intent, names_a_medicine(query, vocabulary))


@pytest.mark.parametrize(
    "query",
    [
        "acid reflux and heartburn",  # A-27's inferred cue
        "something for painful swollen piles",
        "what can the GP prescribe for hay fever",  # a request, cue inferred by A-27
        "what is approved for eosinophilic esophagitis",  # the cue named
        "eye drops for gritty, dry eyes",  # a plain word is no drug or class
    ],
)
def test_a28_no_drug_indications_questions_recall_indications(query, vocabulary):
    assert sections_for(query, vocabulary) == (INDICATIONS,)


@pytest.mark.parametrize(
    "query",
    [
        "what is Tagrisso used for",  # names a drug: its own chunks answer
        "osimertinib for lung cancer",
        "JAK inhibitors approved for rheumatoid arthritis",  # a class narrows the answer
        "BRAF inhibitor for melanoma",  # so does a gene target
        "side effects of statins",  # another section
        "how should I store the eye drops once opened",
        "drugs for which a REMS programme is required",  # no condition: no cue
        "CC(=O)Oc1ccccc1C(=O)O",  # a structure
    ],
)
def test_a28_other_questions_recall_every_section(query, vocabulary):
    assert sections_for(query, vocabulary) == ()


def test_a28_needs_the_indications_as_the_one_cue(vocabulary):
    intent = detect_retrieval_intent("acid reflux and heartburn", vocabulary)
    assert intent.section_cues == (INDICATIONS,) and intent.section_cues_implied
    both = intent.model_copy(update={"section_cues": (INDICATIONS, "warnings")})
    assert recall_sections(both, names_a_medicine=False) == ()
    assert recall_sections(intent, names_a_medicine=True) == ()
    chemical = intent.model_copy(update={"workflow": "chemical"})
    assert recall_sections(chemical, names_a_medicine=False) == ()


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("Tagrisso for lung cancer", True),  # a brand
        ("osimertinb for lung cancer", True),  # a misspelt drug
        ("SSRIs for anxiety", True),  # a class
        ("anti-CD20 antibody for multiple sclerosis", True),  # a gene target
        ("tablets for anxiety", False),  # a plain word
        ("does high LDL cholesterol cause a stroke", False),  # a lab value
    ],
)
def test_a28_names_a_drug_or_class(query, named, vocabulary):
    assert names_a_medicine(query, vocabulary) is named


def _hits(*ids: str) -> list[NodeWithScore]:
    return [
        NodeWithScore(node=Node(node_id=i, text=i), score=1.0 / rank)
        for rank, i in enumerate(ids, 1)
    ]


async def test_a28_leg_fuses_its_ranking_within_the_sections():
    calls: list[tuple[str, ...]] = []
    everywhere = _hits("side-effects-a", "side-effects-b", "indications-c", "warnings-d")
    within = _hits("indications-c", "indications-e")

    async def search(*, sections):
        calls.append(tuple(sections))
        return within if sections else everywhere

    fused = await leg_within_sections(search, (INDICATIONS,), depth=4)
    assert sorted(calls) == [(), (INDICATIONS,)]
    ids = [hit.node_id for hit in fused]
    assert ids[0] == "indications-c"  # two votes beat one
    assert ids[1:] == ["side-effects-a", "indications-e", "side-effects-b"]  # depth 4
    calls.clear()
    assert [h.node_id for h in await leg_within_sections(search, (), depth=4)] == [
        h.node_id for h in everywhere
    ]
    assert calls == [()]  # no sections: one search


async def test_a28_a_leg_without_such_sections_passes_unchanged():
    everywhere = _hits("a", "b", "c")

    async def search(*, sections):
        return [] if sections else everywhere

    told: list[bool] = []
    fused = await leg_within_sections(search, (INDICATIONS,), depth=10, found_any=told.append)
    assert fused == everywhere and told == [False]


async def test_a28_a_failed_search_cancels_its_sibling():
    started, cancelled = asyncio.Event(), []

    async def search(*, sections):
        if sections:
            await started.wait()
            raise BackendUnavailable("store down")
        started.set()
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return _hits("a")

    with pytest.raises(BackendUnavailable):  # the error itself, not an ExceptionGroup
        await leg_within_sections(search, (INDICATIONS,), depth=10)
    await asyncio.sleep(0)
    assert cancelled == [True]  # the search over every section is not left running


def test_a28_sectionless_scopes_are_remembered_for_their_ttl():
    now = [0.0]
    memo = SectionlessScopes(ttl_s=300.0, clock=lambda: now[0])
    papers = ScopeFilter(kb_names=("papers",))
    wanted = (INDICATIONS,)
    assert memo.keep("biomed_text", papers, wanted) == wanted
    memo.record(scope_key("biomed_text", papers, wanted), found_any=False)
    assert memo.keep("biomed_text", papers, wanted) == ()
    assert memo.keep("biomed_text", ScopeFilter(kb_names=("labels",)), wanted) == wanted
    assert memo.keep("medcpt_text", papers, wanted) == wanted
    now[0] = 299.0
    assert memo.keep("biomed_text", papers, wanted) == ()
    now[0] = 300.0  # an ingest may have added such sections since
    assert memo.keep("biomed_text", papers, wanted) == wanted
    memo.record(scope_key("biomed_text", papers, wanted), found_any=False)
    memo.record(scope_key("biomed_text", papers, wanted), found_any=True)
    assert memo.keep("biomed_text", papers, wanted) == wanted


def test_a28_sectionless_scopes_stay_bounded():
    memo = SectionlessScopes(max_scopes=2)
    keys = [
        scope_key("biomed_text", ScopeFilter(document_ids=(f"d{i}",)), (INDICATIONS,))
        for i in range(3)
    ]
    for key in keys:
        memo.record(key, found_any=False)
    assert [memo.skips(key) for key in keys] == [False, True, True]  # the oldest dropped
