"""Small real slices of the shipped demo corpus for integration tests."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from deployments.config import DEMO_DIR
from pipeline.ingest.readers import read_source
from pipeline.ingest.records import SourceRecord
from pipeline.vocabulary import Vocabulary, default_vocabulary

DEFAULT_PRODUCTS = ("tagrisso", "iressa", "lynparza", "xarelto", "cabometyx")
DEFAULT_COMPOUNDS = (
    "OSIMERTINIB",
    "GEFITINIB",
    "ERLOTINIB",
    "OLAPARIB",
    "RIVAROXABAN",
    "CABOZANTINIB",
    "ASPIRIN",
    "CAFFEINE",
    "IMATINIB",
    "APIXABAN",
)


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


async def ingest_slice(
    config,  # deployments.config.AppConfig
    endpoints,  # deployments.stores.StoreEndpoints
    kb: str,
    products: Sequence[str] = DEFAULT_PRODUCTS,
    compounds: Sequence[str] = DEFAULT_COMPOUNDS,
    id_prefix: str = "",
):
    """Ingest a demo slice with the in-process runner and the profile's offline models;
    ``id_prefix`` makes document ids unique per knowledge base. Returns the report."""
    from dataclasses import replace

    from deployments.ingest import document_roles, run_ingest
    from deployments.local import load_local_models
    from deployments.stores import collection_metrics, collection_weights, open_stores

    encoders = dict(load_local_models(config.models, document_roles(config)).encoders)
    vocabulary = default_vocabulary()
    records = [
        replace(record, document_id=f"{id_prefix}{record.document_id}")
        for record in demo_slice(vocabulary, products, compounds)
    ]
    metrics, weights = collection_metrics(config), collection_weights(config, "document")
    async with open_stores(endpoints, config.stores, metrics, weights) as (store, registry):
        return await run_ingest(config, records, kb, store, registry, encoders, progress=False)
