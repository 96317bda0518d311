"""Suite-wide options. ``--order reversed`` (or ``shuffled``, with ``--order-seed``) runs
the collected tests in another order, to show that no test depends on another's
leftovers or position (issue 14); the default keeps file order.

Under pytest-xdist (``scripts/test.sh`` runs two workers) the work units are modules,
and every module that starts Ray (the session's Ray Serve, ``serve_cluster``, or a
``starts_ray`` module: the production profile's own service) is in one unit: one worker
runs them one after another, and a module's fixtures are set up once, on one worker.
The other worker runs at a lower CPU priority (nice 10), so that a Ray starting beside
it registers its raylet within Ray's 30 s. (``--dist loadgroup`` with ``xdist_group``
marks cannot do it: xdist 3.8 renames the node id, which pytest 9 no longer reads.)"""

from __future__ import annotations

import functools
import os
import random
from pathlib import Path

import pytest
from hypothesis import settings

# No test is timed (speed goals live in bench/): Hypothesis' 200 ms deadline per example
# failed a property test on a CI machine loaded by two evaluation runs (475 ms once).
settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")


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


#: What names a module that starts Ray (``tests/integration/conftest.py``'s fixture, or
#: the ``starts_ray`` mark).
RAY_WORDS = ("serve_cluster", "starts_ray")


@functools.cache
def ray_modules(root: Path) -> frozenset[str]:
    """The test files (relative to ``root``, ``/``-separated) that start Ray."""
    return frozenset(
        path.relative_to(root).as_posix()
        for path in (root / "tests").rglob("test_*.py")
        if any(word in path.read_text(encoding="utf-8") for word in RAY_WORDS)
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """pytest-xdist's scheduler: modules as work units (``--dist loadscope``), the
    modules that start Ray one unit together; xdist's own for ``each`` or ``worksteal``."""
    if config.getvalue("dist") not in {"load", "loadscope", "loadfile", "loadgroup"}:
        return None
    from xdist.scheduler import LoadScopeScheduling

    starting_ray = ray_modules(config.rootpath)

    class RayModulesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = _module(nodeid)
            return "ray" if module in starting_ray else module

    return RayModulesTogether(config, log)


def pytest_runtest_setup(item: pytest.Item) -> None:
    # an xdist worker that runs a module without Ray yields the CPU to the one with it
    if os.environ.get("PYTEST_XDIST_WORKER") is None or os.nice(0) >= 10:
        return
    if _module(item.nodeid) not in ray_modules(item.config.rootpath):
        os.nice(10)


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]
