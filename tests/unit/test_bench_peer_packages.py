"""The baselines report names the peer's package versions (issue 16: its engines' speed
moved with them between runs)."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

from bench import baselines
from bench.tables import markdown


def test_the_peers_package_versions_are_read_in_its_own_python():
    packages = baselines._peer_packages(Path(sys.executable))
    assert packages["torch"] == importlib.metadata.version("torch")
    assert "infinity-emb" not in packages  # only what that python has installed


def test_a_python_that_cannot_answer_gives_no_versions_rather_than_failing(tmp_path):
    assert baselines._peer_packages(tmp_path / "no-python") == {}
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\necho not json\n")
    script.chmod(0o755)
    assert baselines._peer_packages(script) == {}


def test_the_report_shows_the_versions_beside_the_peers_table():
    report = {"infinity": {"packages": {"infinity-emb": "0.0.78", "optimum": "2.1.0"},
                           "rows": [{"engine": "torch", "concurrency": 1, "texts_per_s": 10.0,
                                     "texts": 10, "failures": 0}]}}
    assert "The peer's packages: infinity-emb 0.0.78, optimum 2.1.0." in markdown(report)
    del report["infinity"]["packages"]
    assert "The peer's packages" not in markdown(report)
