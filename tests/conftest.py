"""Suite-wide options. ``--order reversed`` (or ``shuffled``, with ``--order-seed``) runs
the collected tests in another order, to show that no test depends on another's
leftovers or position (issue 14); the default keeps file order.

Under pytest-xdist (``scripts/test.sh`` runs two workers) the work units are modules,
and every module that uses the session's Ray Serve (``serve_cluster``) is one unit: one
worker starts Ray once, and a module's fixtures are set up once, on one worker.
(``--dist loadgroup`` with ``xdist_group`` marks cannot do it: xdist 3.8 renames the
node id, which pytest 9 no longer reads.)"""

from __future__ import annotations

import random
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--order",
        choices=["file", "reversed", "shuffled"],
        default="file",
        help="test order: file (default), reversed, or shuffled by --order-seed",
    )
    parser.addoption("--order-seed", type=int, default=0, help="seed of --order shuffled")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    order = config.getoption("--order")
    if order == "reversed":
        items.reverse()
    elif order == "shuffled":
        random.Random(config.getoption("--order-seed")).shuffle(items)


#: The fixture whose modules share one worker (``tests/integration/conftest.py``).
SERVE_FIXTURE = "serve_cluster"


def serve_modules(root: Path) -> frozenset[str]:
    """The test files (relative to ``root``, ``/``-separated) that name ``serve_cluster``:
    the modules on the session's Ray Serve."""
    return frozenset(
        path.relative_to(root).as_posix()
        for path in (root / "tests").rglob("test_*.py")
        if SERVE_FIXTURE in path.read_text(encoding="utf-8")
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """pytest-xdist's scheduler: modules as work units (``--dist loadscope``), the Ray
    Serve modules one unit together; xdist's own for ``--dist each`` or ``worksteal``."""
    if config.getvalue("dist") not in {"load", "loadscope", "loadfile", "loadgroup"}:
        return None
    from xdist.scheduler import LoadScopeScheduling

    serve = serve_modules(config.rootpath)

    class ServeModulesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return SERVE_FIXTURE if module in serve else module

    return ServeModulesTogether(config, log)
