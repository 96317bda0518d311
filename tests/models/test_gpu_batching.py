"""Smoke tests of bench/gpu_batching.py (replica batching on / off, ray-free, for a lent GPU
machine; tiny models on the CPU, the replica's own batcher and batch functions) and of
bench/gpu_stages.py (tokenising against forward passes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import gpu_batching, gpu_stages

pytestmark = pytest.mark.slow


def test_quick_run_batches_concurrent_callers_only_when_batching_is_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "batching.json"
    code = gpu_batching.main(
        [
            "--quick",
            "--concurrency",
            "1",
            "8",
            "--pair-concurrency",
            "2",
            "--pairs",
            "4",
            "--seconds",
            "0.6",
            "--warmup-s",
            "0.2",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    table = capsys.readouterr().out
    assert "| hf-text | 8 |" in table and "| cross-encoder per-request | 2 |" in table
    rows = json.loads(out.read_text())["rows"]
    by = {(r["family"], r["mode"], r["c"]): r for r in rows}
    assert by[("hf-text", "on", 8)]["batch"] > 1  # 8 callers share forward passes
    assert by[("hf-text", "off", 8)]["batch"] == 1
    assert by[("cross-encoder", "off", 2)]["batch"] == 1  # one pair per pass
    assert by[("cross-encoder", "per-request", 2)]["batch"] == 4  # one request's pairs
    assert all(r["items_s"] > 0 for r in rows)


def test_batch_settings_are_read_from_the_gpu_serve_config() -> None:
    config = gpu_batching.REPOSITORY / "configs" / "serve.gpu.yaml"
    assert gpu_batching.batch_settings("CrossEncoder", config)["max_batch_size"] == 256
    with pytest.raises(KeyError):
        gpu_batching.batch_settings("NoSuchDeployment", config)


def test_stage_table_splits_each_call_into_tokenising_and_forward_passes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert gpu_stages.main(["--quick", "--batches", "1", "8", "--repeats", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    body = [line.split(" | ") for line in rows[1:]]  # rows[0]: the header
    assert [(cells[0], cells[1]) for cells in body] == [
        ("| hf-text", "1"),
        ("| hf-text", "8"),
        ("| cross-encoder", "1"),
        ("| cross-encoder", "8"),
    ]
    # Timings only need to exist here (speed goals live in bench/: a loaded CI machine once
    # timed one tokenising pass at 4.7 ms and the whole call at 4.1 ms); the token counts
    # are exact, so they are checked: 8 items tokenise to more tokens than 1.
    for cells in body:
        assert all(float(cells[i]) > 0 for i in (3, 4, 5))
    tokens = {(cells[0], cells[1]): int(cells[2]) for cells in body}
    for family in ("| hf-text", "| cross-encoder"):
        assert 0 < tokens[(family, "1")] < tokens[(family, "8")]
