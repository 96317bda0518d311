"""The served benchmark's call paths (``bench.encoders._call_paths``): which merge modes
an encoder deployment is measured with (issue 16)."""

from __future__ import annotations

import pytest

from bench.encoders import _call_paths
from deployments.config import load_config
from deployments.roles import model_deployments

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return load_config("default", data_dir=tmp_path_factory.mktemp("call-paths"))


def _encoder(config) -> str:
    return next(d.name for d in model_deployments(config) if d.kind == "encoder")


def test_profile_paths_are_one_call_per_text_and_its_own_merge(config):
    name = _encoder(config)
    paths = _call_paths(config, "encoder", name)
    assert list(paths.values()) == [None, config.serve.encoder_for(name).caller_merge()]
    assert _call_paths(config, "cross-encoder", "CrossEncoder") == {"one per request": None}


def test_merge_modes_add_each_mode_once_with_labels_that_tell_them_apart(config):
    name = _encoder(config)
    merge = config.serve.encoder_for(name).caller_merge()
    paths = _call_paths(config, "encoder", name, merge_modes=True)
    modes = {(m.max_in_flight, m.send_full_calls) for m in paths.values() if m is not None}
    bound = merge.max_in_flight
    assert modes == {(bound, False), (bound, True), (None, False)}
    assert len(paths) == 4 and merge in paths.values()
    assert sum("full calls past it" in label for label in paths) == 1
    assert sum("no bound" in label for label in paths) == 1
