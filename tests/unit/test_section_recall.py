"""A-28: a question that names no drug or class and cues only the indications also
searches each leg within the indications sections, and fuses the two rankings; any other
question searches every section once."""

import pytest

from pipeline.intent import detect_retrieval_intent
from pipeline.schema import Node, NodeWithScore
from pipeline.section_recall import (
    INDICATIONS,
    leg_within_sections,
    names_a_drug_or_class,
    recall_sections,
)

pytestmark = pytest.mark.unit


def sections_for(query: str, vocabulary) -> tuple[str, ...]:
    intent = detect_retrieval_intent(query, vocabulary)
    return recall_sections(intent, names_a_drug_or_class(query, vocabulary))


@pytest.mark.parametrize(
    "query",
    [
        "acid reflux and heartburn",  # A-27's inferred cue
        "something for painful swollen piles",
        "what can the GP prescribe for hay fever",  # A-26's request
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
        ("tablets for anxiety", False),  # a plain word
        ("does high LDL cholesterol cause a stroke", False),  # a lab value
    ],
)
def test_a28_names_a_drug_or_class(query, named, vocabulary):
    assert names_a_drug_or_class(query, vocabulary) is named


def _hits(*ids: str) -> list[NodeWithScore]:
    return [
        NodeWithScore(node=Node(node_id=i, text=i), score=1.0 / rank)
        for rank, i in enumerate(ids, 1)
    ]


async def test_a28_leg_fuses_its_ranking_within_the_sections():
    calls: list[tuple[str, ...]] = []
    everywhere = _hits("side-effects-a", "side-effects-b", "indications-c", "warnings-d")
    within = _hits("indications-c", "indications-e")

    async def search(sections):
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

    async def search(sections):
        return [] if sections else everywhere

    assert await leg_within_sections(search, (INDICATIONS,), depth=10) == everywhere
