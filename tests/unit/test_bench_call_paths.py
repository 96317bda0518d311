"""The served benchmark's call paths (``bench.encoders._call_paths``): which merge modes
an encoder deployment is measured with, and which of them the served / limit target
counts (the ingress's own, issue 16)."""

from __future__ import annotations

import pytest

from bench.encoders import _call_paths, _ingress_path
from bench.tables import targets
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


@pytest.mark.parametrize("merge_modes", [False, True])
def test_the_target_row_is_the_ingress_path_merged_when_the_profile_merges(config, merge_modes):
    name = _encoder(config)
    paths = _call_paths(config, "encoder", name, merge_modes=merge_modes)
    assert paths[_ingress_path(paths)] == config.serve.encoder_for(name).caller_merge()
    unmerged = config.model_copy(update={"serve": config.serve.model_copy(update={
        "encoder": config.serve.encoder.model_copy(update={"caller_merge_items": None})})})
    alone = _call_paths(unmerged, "encoder", name, merge_modes=merge_modes)
    assert _ingress_path(alone) == "one per text" and list(alone) == ["one per text"]


def test_targets_count_the_ingress_path_and_show_the_others_for_comparison():
    row = {"concurrency": 32, "deployment": "Encoder-x", "label": "int8", "unit": "texts/s",
           "served_rate": 300.0, "limit_rate": 1000.0, "ratio": 0.3}
    report = {"encoders": [{**row, "calls": "one per text", "ingress_path": False},
                           {**row, "calls": "merged", "ingress_path": True, "ratio": 0.9}]}
    met = {item["target"]: item["met"] for item in targets(report)}
    assert met == {"served/limit Encoder-x (int8, one per text)": None,
                   "served/limit Encoder-x (int8, merged)": True}
