"""Suite-wide options. ``--order reversed`` (or ``shuffled``, with ``--order-seed``) runs
the collected tests in another order, to show that no test depends on another's
leftovers or position (issue 14); the default keeps file order."""

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
    order = config.getoption("--order")
    if order == "reversed":
        items.reverse()
    elif order == "shuffled":
        random.Random(config.getoption("--order-seed")).shuffle(items)
