"""DESIGN.md layers: pipeline/ imports no ray and no torch; models/ no ray."""

import subprocess
import sys

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
    ("package", "blocked"), [("pipeline", {"ray", "torch"}), ("models", {"ray", "pipeline"})]
)
def test_package_imports_without_forbidden_layers(package, blocked):
    code = BLOCKER.format(blocked=sorted(blocked), package=package)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("ok")
