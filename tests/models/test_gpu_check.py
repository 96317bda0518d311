"""Smoke test of bench/gpu_check.py (the prepared script for a lent GPU machine): the quick
run builds tiny random models through the product's loaders and prints one table; on a
machine without CUDA it says so and still checks batch against one-by-one outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from bench import gpu_check

pytestmark = pytest.mark.slow


def test_quick_run_prints_one_table_and_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    measurements = tmp_path / "measured.json"
    code = gpu_check.main(
        [
            "--quick",
            "--families",
            "hf-text,cross-encoder,open-clip",  # open-clip: its HF text tower's vocabulary
            "--budget-s",
            "60",
            "--measurements-out",
            str(measurements),
        ]
    )
    output = capsys.readouterr().out
    assert code == 0, output
    lines = output.splitlines()
    assert lines[0].startswith("device: ")
    assert "b=1" in lines[1] and "b=32" in lines[1]
    assert sum(line.startswith(("hf-text", "cross-encoder")) for line in lines) >= 4
    assert "FAIL" not in output
    if not torch.cuda.is_available():
        assert "no CUDA" in lines[0]
        assert "batch=single" in output
    assert set(json.loads(measurements.read_text())) == {"device", "models"}


def test_unknown_family_is_refused() -> None:
    with pytest.raises(SystemExit):
        gpu_check.main(["--quick", "--families", "no-such-family"])


def test_layouts_run_every_production_layout_in_half_precision(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = gpu_check.main(["--layouts", "--no-real"])
    output = capsys.readouterr().out
    assert code == 0, output
    lines = output.splitlines()
    assert lines[1].split()[:4] == ["family", "layout", "dtype", "ok"]
    rows = [line for line in lines[3:] if line.strip()]
    assert len(rows) == 9 and all(" ok " in row for row in rows), output
    expected = "fp16" if torch.cuda.is_available() else "bf16"
    assert all(f" {expected} " in row for row in rows)
