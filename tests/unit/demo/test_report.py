from __future__ import annotations

import pytest

from asched.demo.progress import PodState
from asched.demo.report import PENDING, Row, build_rows, render_rows
from asched.demo.workload import DemoPod, Workload

WORKLOAD = Workload(
    "demo",
    [],
    [DemoPod("a", "s1", {}, "shows a"), DemoPod("big", "s2", {}, "too big", expect_pending=True)],
)


@pytest.mark.parametrize(
    ("state", "want"),
    [
        (PodState("big", "n9"), Row("big", "s2", "n9", "too big")),
        (
            PodState("big", failure="0/8 nodes: 7 Insufficient cpu", condition="older"),
            Row("big", "s2", PENDING, "0/8 nodes: 7 Insufficient cpu"),
        ),
        (
            PodState("big", condition="0/8 nodes (condition)"),
            Row("big", "s2", PENDING, "0/8 nodes (condition)"),
        ),
        (None, Row("big", "s2", PENDING, "not scheduled yet (no FailedScheduling event)")),
    ],
    ids=["bound-shows-intent", "event-first", "condition-fallback", "nothing-known"],
)
def test_why(state: PodState | None, want: Row) -> None:
    states = {"a": PodState("a", "n1")}
    if state is not None:
        states["big"] = state
    rows = build_rows(WORKLOAD, states)
    assert rows[0] == Row("a", "s1", "n1", "shows a")
    assert rows[1] == want


def test_render_rows() -> None:
    lines = render_rows([Row("a", "s1", "n1", "x"), Row("big-pod", "s2", PENDING, "why not")])
    assert lines == [
        "POD      SCHEDULER  NODE     WHY",
        "a        s1         n1       x",
        "big-pod  s2         pending  why not",
    ]
