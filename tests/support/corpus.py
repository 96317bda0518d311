"""A tiny drug-label corpus for retriever tests: leaflet sections, a paper, compounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.lexical import lexical_document_text
from pipeline.schema import DocumentRecord, Node
from pipeline.vocabulary import Vocabulary

OSIMERTINIB_SMILES = "COc1cc(N(C)CCN(C)C)c(Nc2nccc(-c3cn(C)c4ccccc34)n2)cc1NC(=O)C=C"
GEFITINIB_SMILES = "COc1cc2ncnc(Nc3ccc(F)c(Cl)c3)c2cc1OCCCN1CCOCC1"
ASPIRIN_SMILES = "CC(=O)Oc1ccccc1C(=O)O"


@dataclass(frozen=True)
class Section:
    document_id: str
    document_name: str
    section: str
    text: str
    drugs: tuple[str, ...]
    kb: str = "labels"


SECTIONS = [
    Section(
        "tagrisso",
        "Tagrisso (osimertinib) — EMA package leaflet",
        "warnings",
        "Talk to your doctor before taking Tagrisso if you have lung problems or heart "
        "problems. Tagrisso may cause interstitial lung disease.",
        ("osimertinib",),
    ),
    Section(
        "tagrisso",
        "Tagrisso (osimertinib) — EMA package leaflet",
        "adverse_reactions",
        "Possible side effects of Tagrisso: diarrhoea, skin rash, dry skin, nail "
        "problems, mouth sores and tiredness.",
        ("osimertinib",),
    ),
    Section(
        "tagrisso",
        "Tagrisso (osimertinib) — EMA package leaflet",
        "dosage_and_administration",
        "The recommended dose is one 80 mg tablet of Tagrisso each day.",
        ("osimertinib",),
    ),
    Section(
        "iressa",
        "Iressa (gefitinib) — EMA package leaflet",
        "adverse_reactions",
        "Possible side effects of Iressa include diarrhoea, skin rash and liver problems.",
        ("gefitinib",),
    ),
    Section(
        "iressa",
        "Iressa (gefitinib) — EMA package leaflet",
        "indications_and_usage",
        "Iressa is used to treat adults with non-small cell lung cancer with EGFR mutations.",
        ("gefitinib",),
    ),
    Section(
        "lynparza",
        "Lynparza (olaparib) — EMA package leaflet",
        "adverse_reactions",
        "Side effects of Lynparza: nausea, tiredness, anaemia and vomiting.",
        ("olaparib",),
    ),
    Section(
        "lynparza",
        "Lynparza (olaparib) — EMA package leaflet",
        "dosage_and_administration",
        "Take Lynparza tablets twice a day; your doctor may lower the dose.",
        ("olaparib",),
    ),
    Section(
        "diet-paper",
        "Dietary fibre and colon health",
        "results",
        "Higher dietary fibre intake was associated with a lower risk of colon cancer.",
        (),
        kb="papers",
    ),
    Section(
        "sleep-paper",
        "Sleep duration and blood pressure",
        "results",
        "Short sleep duration was associated with higher blood pressure in adults.",
        (),
        kb="papers",
    ),
]

COMPOUNDS = [
    ("cmp-osimertinib", "OSIMERTINIB", OSIMERTINIB_SMILES, "osimertinib"),
    ("cmp-gefitinib", "GEFITINIB", GEFITINIB_SMILES, "gefitinib"),
    ("cmp-aspirin", "ASPIRIN", ASPIRIN_SMILES, "aspirin"),
]


def text_nodes(
    vocabulary: Vocabulary, sections: Sequence[Section] = tuple(SECTIONS)
) -> tuple[list[Node], list[str]]:
    """Nodes of ``biomed_text`` and their BM25 texts (``SECTIONS`` unless ``sections``)."""
    nodes, lexical = [], []
    for index, section in enumerate(sections):
        node_id = f"{section.document_id}-{index}"
        metadata = {
            "node_id": node_id,
            "source_chunk_id": node_id,
            "document_id": section.document_id,
            "path": f"{section.document_id}/{section.section}",
            "file_name": "",
            "document_name": section.document_name,
            "source_uri": "",
            "kb_name": section.kb,
            "tags": [],
            "primary_drugs": list(section.drugs),
            "biomed_section": section.section,
            "content_summary": section.text[:200],
        }
        nodes.append(Node(node_id=node_id, text=section.text, metadata=metadata))
        lexical.append(lexical_document_text(section.text, section.section, vocabulary))
    return nodes, lexical


def compound_nodes() -> list[Node]:
    nodes = []
    for doc_id, name, smiles, drug in COMPOUNDS:
        metadata = {
            "node_id": doc_id,
            "source_chunk_id": doc_id,
            "document_id": doc_id,
            "path": doc_id,
            "file_name": "",
            "document_name": f"{name.title()} — ChEMBL compound",
            "source_uri": "",
            "kb_name": "compounds",
            "tags": [],
            "primary_drugs": [drug],
            "biomed_section": "compound",
            "content_summary": name,
            "smiles": smiles,
        }
        nodes.append(
            Node(node_id=doc_id, text=f"{name} ({drug}) SMILES: {smiles}", metadata=metadata)
        )
    return nodes


def documents(sections: Sequence[Section] = tuple(SECTIONS)) -> list[DocumentRecord]:
    records: dict[str, DocumentRecord] = {}
    for section in sections:
        records[section.document_id] = DocumentRecord(
            document_id=section.document_id,
            name=section.document_name,
            kb_name=section.kb,
            collections=("biomed_text",),
            encoders=("pubmedbert",),
        )
    for doc_id, name, _smiles, _drug in COMPOUNDS:
        records[doc_id] = DocumentRecord(
            document_id=doc_id,
            name=f"{name.title()} — ChEMBL compound",
            kb_name="compounds",
            collections=("chemical",),
            encoders=("molformer",),
        )
    return list(records.values())
