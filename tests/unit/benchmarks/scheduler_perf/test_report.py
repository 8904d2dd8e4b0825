"""The table's row of one workload's results file."""

from __future__ import annotations

import pytest

from benchmarks.scheduler_perf.report import row


@pytest.mark.parametrize(("threshold", "shown"), [(0, "-"), (None, "-"), (64, "64")])
def test_threshold_column_says_dash_when_upstream_sets_none(
    threshold: float | None, shown: str
) -> None:
    document = {
        "runs": [],
        "test_case": "T",
        "workload": "W",
        "nodes": 5,
        "threshold": threshold,
        "backlog": True,
        "overrides": {},
    }
    cells = [c.strip() for c in row(document).split("|")]
    assert cells[1] == "T/W"
    assert cells[9] == shown
