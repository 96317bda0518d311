"""``biomed-search stop-stores``: ``serve run`` leaves the embedded servers of its data
directory running (``build_app`` starts them detached, to outlive its Ray worker); the
command stops them, whoever started them, keeps the data, and names what it did."""

from __future__ import annotations

import json

import pytest

from biomed_search.cli import main
from deployments.config import load_config
from deployments.runtime import EmbeddedPostgres, MilvusLiteServer
from deployments.stores import stop_embedded_servers

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_stop_stores_stops_servers_left_running_and_then_finds_none(tmp_path, capsys):
    milvus = MilvusLiteServer(tmp_path, stop_at_exit=False).start()
    postgres = EmbeddedPostgres(tmp_path).start()
    try:
        assert milvus.is_running() and postgres.is_running()
        assert main(["stop-stores", "--data-dir", str(tmp_path)]) == 0
        assert json.loads(capsys.readouterr().out) == {"milvus": "stopped",
                                                       "postgres": "stopped"}
        assert not MilvusLiteServer(tmp_path).is_running()
        assert not EmbeddedPostgres(tmp_path).is_running()
        assert (tmp_path / "postgres" / "PG_VERSION").exists()  # the data stays
        assert main(["stop-stores", "--data-dir", str(tmp_path)]) == 0
        assert json.loads(capsys.readouterr().out) == {"milvus": "not running",
                                                       "postgres": "not running"}
    finally:  # a failed assertion must not leave servers behind
        milvus.stop()
        postgres.stop()


def test_a_store_the_config_names_is_left_alone(tmp_path):
    config = load_config("default", data_dir=tmp_path,
                         overrides={"stores": {"milvus_uri": "http://127.0.0.1:1"}})
    assert stop_embedded_servers(config) == {"milvus": "external", "postgres": "not running"}
