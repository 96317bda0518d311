"""Small real slices of the shipped demo corpus for integration tests."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from deployments.config import DEMO_DIR
from pipeline.ingest.readers import read_source
from pipeline.ingest.records import SourceRecord
from pipeline.vocabulary import Vocabulary

DEFAULT_PRODUCTS = ("tagrisso", "iressa", "lynparza", "xarelto", "cabometyx")
DEFAULT_COMPOUNDS = ("OSIMERTINIB", "GEFITINIB", "ERLOTINIB", "OLAPARIB", "RIVAROXABAN",
                     "CABOZANTINIB", "ASPIRIN", "CAFFEINE", "IMATINIB", "APIXABAN")


def demo_slice(
    vocabulary: Vocabulary,
    products: Sequence[str] = DEFAULT_PRODUCTS,
    compounds: Sequence[str] = DEFAULT_COMPOUNDS,
) -> Iterator[SourceRecord]:
    """Leaflet sections of ``products``, their FDA labels, and ``compounds``."""
    wanted = {p.lower() for p in products}
    names = {c.lower() for c in compounds}
    for record in read_source(DEMO_DIR / "ema_leaflet_sections.jsonl.gz", vocabulary):
        if record.document_id.removeprefix("ema-") in wanted:
            yield record
    for record in read_source(DEMO_DIR / "chembl_compounds.csv.gz", vocabulary):
        if record.title.lower() in names:
            yield record
