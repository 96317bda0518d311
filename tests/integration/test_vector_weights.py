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
from tests.support.slices import ingest_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ADMIN = Principal(name="local", kb_ids=None, admin=True)


def _config(root, runtime: str):
    return config_from_data(load_config_data(
        "default", data_dir=root,
        overrides={"stores": {"collection_prefix": "weights_"}, "models": {"runtime": runtime}},
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
