"""``ingest --engine ray`` (issue 17) against real Ray Data, Milvus Lite and PostgreSQL
with the offline models: the same chunks, vectors and registry rows as the in-process
runner; a run whose encoder fails mid-way, re-run, stores every chunk exactly once; a
second run writes nothing."""

from __future__ import annotations

import json
import time
import uuid
from collections import defaultdict

import numpy as np
import pytest
from pymilvus import MilvusClient

from deployments.config import load_config
from deployments.ingest_ray import RayIngestSettings, ingest_ray
from deployments.ingest_rows import BatchEncoder
from deployments.runtime import EmbeddedPostgres
from pipeline.ingest.runner import content_hash
from pipeline.stores.milvus import MilvusVectorStore
from pipeline.stores.registry import PostgresDocumentRegistry
from tests.integration import test_ingest_runner as runner_tests

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KB = "drug-kb"
# the in-process runner's test module's demo slice, model ports, reset and runner
records = runner_tests.records
encoders = runner_tests.encoders
_reset = runner_tests._reset
#: Small batches and blocks: many encoder calls and store writes, so a failure lands
#: mid-way. A quarter CPU per actor: the session's Ray also holds other modules' replicas.
RAY = RayIngestSettings(
    actors=1,
    batch_size=4,
    write_rows=4,
    block_rows=4,
    queue_blocks=2,
    block_bytes=2048,
    num_cpus=0.25,
)


@pytest.fixture(scope="module")
def config():
    return load_config("default", overrides={"pipeline": {"ingest": {"batch_documents": 1}}})


@pytest.fixture(scope="module")
def ray_session(serve_cluster):
    """The session's Ray (started by ``serve_cluster``); the engine joins it."""
    import ray

    assert ray.is_initialized()
    return serve_cluster


@pytest.fixture
async def stores(milvus_server, postgres_server, module_dsn):
    """In-process and Ray targets: two collection prefixes, two registry databases."""
    other_dsn = (
        EmbeddedPostgres(
            postgres_server.data_dir, database=f"t_ingest_ray_b_{uuid.uuid4().hex[:8]}"
        )
        .start()
        .dsn
    )
    opened = []
    for prefix, dsn in (("ingray_ip_", module_dsn), ("ingray_ray_", other_dsn)):
        store = MilvusVectorStore(milvus_server.uri, collection_prefix=prefix)
        registry = PostgresDocumentRegistry(dsn, max_size=4)
        await registry.open()
        opened.append((store, registry))
    yield opened
    for store, registry in opened:
        await registry.close()
        await store.close()


class FailingEncoder(BatchEncoder):
    """The real encoder actor; the first model group's raises on its 8th batch, after a
    pause that lets the driver store what came through before (injected fault)."""

    calls = 0

    def __call__(self, batch):
        if self.group == 0:
            self.calls += 1
            if self.calls == 8:
                time.sleep(5.0)
                raise RuntimeError("encoder crashed (injected fault)")
        return super().__call__(batch)


def _stored(uri, store, config) -> dict[str, dict[str, np.ndarray]]:
    """Collection -> node id -> vector, read with a plain client (no de-duplication).
    A dedicated connection: a shared one pymilvus had to recover after the server sent
    GOAWAY (too many pings, under load) failed this test once."""
    client = MilvusClient(uri=uri, dedicated=True)
    try:
        result: dict[str, dict[str, np.ndarray]] = {}
        for name in config.pipeline.enabled_collections():
            physical = store.physical_name(name)
            if not client.has_collection(physical):
                continue
            rows = client.query(
                physical, filter='node_id != ""', output_fields=["node_id", "dense"], limit=16000
            )
            ids = [row["node_id"] for row in rows]
            assert len(ids) == len(set(ids)), f"duplicate rows in {name}"
            if rows:
                result[name] = {
                    row["node_id"]: np.asarray(row["dense"], np.float32) for row in rows
                }
        return result
    finally:
        client.close()


async def test_ray_engine_matches_the_in_process_runner(
    ray_session, milvus_server, stores, config, encoders, records
):
    (ip_store, ip_registry), (ray_store, ray_registry) = stores
    for store, registry in stores:
        await _reset(store, registry, config, records)
    inprocess = await runner_tests._runner(ip_store, ip_registry, encoders, config).run(records, KB)
    result = await ingest_ray(config, records, KB, ray_store, ray_registry, RAY, progress=False)
    assert inprocess.failures == [] and result.report.failures == []
    assert result.report.documents_seen == inprocess.documents_seen == 4
    assert result.report.documents_written == 4
    assert dict(result.report.chunks_written) == dict(inprocess.chunks_written)
    assert result.encoder_peak_mib and all(mib > 100 for mib in result.encoder_peak_mib.values())

    expected = _stored(milvus_server.uri, ip_store, config)
    got = _stored(milvus_server.uri, ray_store, config)
    assert set(expected) == {"biomed_text", "chemical"}
    for name, vectors in expected.items():
        assert set(got[name]) == set(vectors), name
        for node_id, vector in vectors.items():
            np.testing.assert_allclose(got[name][node_id], vector, atol=1e-5, err_msg=node_id)
        ids = sorted(vectors)
        ip_nodes = await ip_store.fetch(name, ids)
        ray_nodes = await ray_store.fetch(name, ids)
        assert [(n.node_id, n.text, n.metadata) for n in ray_nodes] == [
            (n.node_id, n.text, n.metadata) for n in ip_nodes
        ]

    ids = sorted({r.document_id for r in records})
    ip_rows = await ip_registry.lookup_documents(ids)
    ray_rows = await ray_registry.lookup_documents(ids)
    # the content hash includes the collection prefix (one registry, two stores): the
    # Ray engine's must be the runner's hash for its own store
    salt = runner_tests._runner(ray_store, ray_registry, encoders, config)._salt()
    sections = defaultdict(list)
    for record in records:
        sections[record.document_id].append(record)
    for doc_id in ids:
        assert ray_rows[doc_id].content_hash == content_hash(
            sections[doc_id], KB, salt, config.pipeline.namespace
        )
        assert ray_rows[doc_id].model_dump(exclude={"content_hash"}) == ip_rows[doc_id].model_dump(
            exclude={"content_hash"}
        )


async def test_ray_engine_failed_run_resumes_exactly_once_and_rerun_writes_nothing(
    ray_session, milvus_server, stores, config, encoders, records
):
    (ip_store, ip_registry), (store, registry) = stores
    await _reset(ip_store, ip_registry, config, records)
    await runner_tests._runner(ip_store, ip_registry, encoders, config).run(records, KB)
    expected = _stored(milvus_server.uri, ip_store, config)
    expected_rows = {name: len(vectors) for name, vectors in expected.items()}

    await _reset(store, registry, config, records)
    with pytest.raises(Exception, match="injected fault"):
        await ingest_ray(
            config, records, KB, store, registry, RAY, progress=False, encoder_class=FailingEncoder
        )
    partial = {name: len(v) for name, v in _stored(milvus_server.uri, store, config).items()}
    assert sum(partial.values()) < sum(expected_rows.values())
    registered = await registry.count_documents(KB)
    assert sum(partial.values()) > 0 and registered < 4

    resumed = await ingest_ray(config, records, KB, store, registry, RAY, progress=False)
    assert resumed.report.documents_unchanged == registered
    assert resumed.report.documents_written == 4 - registered
    after = _stored(milvus_server.uri, store, config)  # asserts no duplicate rows
    assert {name: set(v) for name, v in after.items()} == {
        name: set(v) for name, v in expected.items()
    }
    assert await registry.count_documents(KB) == 4

    again = await ingest_ray(config, records, KB, store, registry, RAY, progress=False)
    assert again.report.documents_written == 0 and again.report.documents_unchanged == 4
    assert sum(again.report.chunks_written.values()) == 0
    assert {name: len(v) for name, v in _stored(milvus_server.uri, store, config).items()} == (
        expected_rows
    )
    print(
        json.dumps(
            {
                "rows_expected": expected_rows,
                "rows_after_failure": partial,
                "registered_after_failure": registered,
            }
        )
    )
