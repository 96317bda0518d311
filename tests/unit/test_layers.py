"""DESIGN.md layers: pipeline/ imports no ray and no torch; models/ no ray; neither starts
a process; nothing the service ships imports bench; the command line and offline tools
(biomed_search/) sit above deployments/, which never imports them; no module edits
sys.path."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

BLOCKER = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {blocked!r}:
            raise ImportError('blocked by layer test: ' + name)
sys.meta_path.insert(0, Block())
import pkgutil, importlib, {package}
for module in pkgutil.walk_packages({package}.__path__, '{package}.'):
    importlib.import_module(module.name)
print('ok')
"""


@pytest.mark.parametrize(
    ("package", "blocked"),
    [
        ("pipeline", {"ray", "torch", "bench", "biomed_search"}),
        ("models", {"ray", "pipeline", "bench", "biomed_search"}),
        ("deployments", {"bench", "biomed_search"}),
        ("biomed_search", {"bench"}),
    ],
)
def test_package_imports_without_forbidden_layers(package, blocked):
    code = BLOCKER.format(blocked=sorted(blocked), package=package)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("ok")


ROOT = Path(__file__).resolve().parents[2]


def test_no_module_edits_sys_path():
    # Packages are installed (pip install -e .); bench runs as ``python -m bench.x``.
    offenders = []
    for folder in (
        "pipeline",
        "models",
        "deployments",
        "biomed_search",
        "bench",
        "scripts",
        "tests",
    ):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr == "path"
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "sys"
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_pipeline_and_models_start_no_process():
    # Process managers live in deployments/runtime/; the pure core only computes.
    spawning = {"subprocess", "psutil", "multiprocessing"}
    offenders = []
    for folder in ("pipeline", "models"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                if any(name.split(".")[0] in spawning for name in names):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_service_modules_stay_small():
    # The house issue: one job per module; a file over 400 lines is a sign of two jobs.
    offenders = [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for folder in ("pipeline", "models", "deployments")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400
    ]
    assert offenders == []
