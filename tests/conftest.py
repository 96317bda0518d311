"""Suite-wide options. ``--order reversed`` (or ``shuffled``, with ``--order-seed``) runs
the collected tests in another order, to show that no test depends on another's
leftovers or position (issue 14); the default keeps file order.

Every test is in an ``xdist_group`` for pytest-xdist's ``--dist loadgroup``
(``scripts/test.sh`` runs two workers): the tests on the session's Ray Serve
(``serve_cluster``) all in one, so one worker starts Ray once; every other test in its
module's, so a module's fixtures are set up once, on one worker."""

from __future__ import annotations

import random

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
    for item in items:
        group = "serve" if "serve_cluster" in item.fixturenames else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))
    order = config.getoption("--order")
    if order == "reversed":
        items.reverse()
    elif order == "shuffled":
        random.Random(config.getoption("--order-seed")).shuffle(items)
