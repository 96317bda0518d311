"""Stage budgets for tests that check which paths a served search runs, not how fast.

The default budgets (``pipeline.settings_request.StageBudgets``: 5 s a plan) are a
production service's; on a busy two-core CI machine the first searches after start warm
every deployment, and one plan once took 5.0 s and was recorded as degraded. Speed goals
live in ``bench/``, never in timed tests.
"""

from __future__ import annotations

#: Stage budgets in ms: no stage degrades on a slow machine, and a request still ends
#: within the tests' 120 s HTTP timeout.
SLOW_MACHINE_BUDGETS = {
    "plan_ms": 60_000.0,
    "supplement_ms": 60_000.0,
    "rerank_ms": 60_000.0,
    "request_ms": 100_000.0,
}
