"""int8 and float encoder vectors are not comparable (``bench/README.md`` "int8
quality"): a collection records the weights that wrote it, and a service configured to
query it with the other weights says so on ``/readyz`` and in every response.

The real ``SearchService`` over real Milvus Lite and PostgreSQL; the collections are
ingested with the default (float) profile. The int8 configuration is given to the
service only: its query vectors come from the same float models, since what is checked
is the service's reading of the record, not the int8 encoder."""

from __future__ import annotations

import pytest

from deployments.config import config_from_data, load_config_data
from deployments.inprocess import local_model_ports
from deployments.service import Principal, SearchService
from deployments.stores import collection_weights
from pipeline.schema import SearchRequest
from tests.support.budgets import SLOW_MACHINE_BUDGETS
from tests.support.slices import ingest_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ADMIN = Principal(name="local", kb_ids=None, admin=True)


def _config(root, runtime: str):
    return config_from_data(load_config_data(
        "default", data_dir=root,
        overrides={
            "stores": {"collection_prefix": "weights_"},
            "models": {"runtime": runtime},
            "pipeline": {"budgets": SLOW_MACHINE_BUDGETS},  # paths, not speed
        },
    ))


def test_int8_runtime_gives_int8_weights_to_text_and_smiles_collections_only(tmp_path):
    float_weights = collection_weights(_config(tmp_path, "torch"), "query")
    int8_weights = collection_weights(_config(tmp_path, "onnx-int8"), "document")
    assert set(float_weights.values()) == {"float"}
    assert int8_weights["biomed_text"] == "int8" and int8_weights["chemical"] == "int8"
    assert set(collection_weights(_config(tmp_path, "onnx"), "document").values()) == {"float"}
    images = [name for name, spec in _config(tmp_path, "onnx-int8")
              .pipeline.enabled_collections().items() if spec.modality == "image"]
    assert all(int8_weights.get(name, "float") == "float" for name in images)


async def test_a_service_querying_float_vectors_with_int8_weights_warns(tmp_path, endpoints):
    floats = _config(tmp_path, "torch")
    report = await ingest_slice(floats, endpoints, "clinic", ("tagrisso",), ("ASPIRIN",))
    assert report.chunks_written.get("biomed_text"), report.as_dict()
    assert report.chunks_written.get("chemical"), report.as_dict()
    ports, _models = local_model_ports(floats)
    request = SearchRequest(
        query="osimertinib side effects", kb_ids=["clinic"], collections=["biomed_text"])

    matching = SearchService(floats, endpoints, ports)
    int8 = SearchService(_config(tmp_path, "onnx-int8"), endpoints, ports)
    try:
        answered = await matching.search(request, ADMIN)
        assert answered.total > 0
        assert not any("encoder weights" in line for line in answered.warnings)
        assert "warnings" not in await matching.readiness()

        warned = await int8.search(request, ADMIN)
        [line] = [line for line in warned.warnings if "encoder weights" in line]
        assert "'biomed_text'" in line and "float encoder weights" in line
        assert "int8 ones" in line
        assert [chunk.chunk_id for chunk in warned.chunks] == [
            chunk.chunk_id for chunk in answered.chunks]  # it still answers
        ready = await int8.readiness()  # every collection; a response: those it searched
        assert any("'biomed_text'" in warning for warning in ready["warnings"])
        assert any("'chemical'" in warning for warning in ready["warnings"])
    finally:
        await matching.close()
        await int8.close()


async def test_serving_a_float_data_dir_with_int8_is_not_refused(tmp_path, endpoints):
    """Only an ingest is refused: ``serve`` on a data dir that already holds documents
    ingests no demo corpus, so the weights check must not stop it (it then warns)."""
    from deployments.serve_cli import ensure_demo_corpus

    floats = _config(tmp_path, "torch")
    await ingest_slice(floats, endpoints, "served", ("tagrisso",), compounds=())
    assert await ensure_demo_corpus(_config(tmp_path, "onnx-int8"), endpoints) is None


async def test_a_collection_that_cannot_be_read_is_a_warning_not_a_failure(endpoints):
    """A configured collection whose index the store cannot use (here an L2 index): the
    weights check reports it and the others, and raises nothing."""
    from pymilvus import DataType, MilvusClient

    from pipeline.stores.milvus import MilvusVectorStore

    client = MilvusClient(endpoints.milvus_uri)
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("node_id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=4)
    index = client.prepare_index_params()
    index.add_index("dense", index_type="FLAT", metric_type="L2")
    client.create_collection("odd_l2", schema=schema, index_params=index)
    store = MilvusVectorStore(endpoints.milvus_uri, collection_prefix="odd_",
                              weights={"l2": "int8", "missing": "int8"})
    try:
        lines = await store.weights_mismatches()
        assert list(lines) == ["l2"] and "cannot be read" in lines["l2"], lines
    finally:
        await store.close()
        client.drop_collection("odd_l2")
        client.close()
