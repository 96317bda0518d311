"""The base of the pipeline settings models: the frozen pydantic model every settings
section derives from, and ``choice_for_scope`` for per-kb choices. Re-exported by
``pipeline.settings``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

__all__ = ["choice_for_scope"]

T = TypeVar("T")


def choice_for_scope(default: T, by_kb: Mapping[str, T], kb_names: Sequence[str]) -> T:
    """A per-kb setting for a request scoped to ``kb_names``: the kbs' own choice when
    every kb of the scope names the same one in ``by_kb``, else ``default`` (also for an
    unscoped request, ``kb_names == ()``)."""
    chosen = {by_kb.get(kb) for kb in kb_names}
    if kb_names and len(chosen) == 1 and None not in chosen:
        return chosen.pop()  # type: ignore[return-value]
    return default


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
