"""Document profile routing (R-ING-4): which collections, with which encoder, a document
goes into. A document with little biomedical content goes to the general text
collection and encoder, not to PubMedBERT."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.ingest.records import SourceRecord
from pipeline.settings import CollectionSpec, PipelineSettings
from pipeline.text import tokens
from pipeline.vocabulary import Vocabulary

__all__ = ["BIOMEDICAL_KINDS", "biomedical_density", "document_profile", "target_collections"]

#: Kinds that are biomedical by nature, whatever their wording.
BIOMEDICAL_KINDS = frozenset({"leaflet", "label", "paper"})


def biomedical_density(text: str, vocabulary: Vocabulary) -> float:
    """Vocabulary entity hits per 100 words of ``text``."""
    words = len(tokens(text))
    if words == 0:
        return 0.0
    return 100.0 * len(vocabulary.find(text, correct_typos=False)) / words


def document_profile(
    records: Sequence[SourceRecord], vocabulary: Vocabulary, settings: PipelineSettings
) -> str:
    """``compound``, ``biomedical`` or ``general`` (R-ING-4)."""
    kinds = {record.kind for record in records}
    if "compound" in kinds:
        return "compound"
    if kinds & BIOMEDICAL_KINDS:
        return "biomedical"
    text = " ".join(record.text for record in records)[:20000]
    density = biomedical_density(text, vocabulary)
    return "biomedical" if density >= settings.ingest.biomedical_density else "general"


def target_collections(profile: str, settings: PipelineSettings) -> list[CollectionSpec]:
    """Enabled collections for ``profile``: compounds -> chemical; biomedical -> the
    hybrid text collections (biomedical text, MedCPT text); general -> general text
    (falling back to biomedical text when the profile does not enable it)."""
    enabled = settings.enabled_collections()
    routing = settings.routing
    if profile == "compound":
        names = [routing.chemical_collection]
    elif profile == "biomedical":
        names = [routing.biomed_text_collection, routing.medcpt_text_collection]
    else:
        names = [routing.general_text_collection]
        if routing.general_text_collection not in enabled:
            names = [routing.biomed_text_collection]
    return [enabled[name] for name in names if name in enabled]
