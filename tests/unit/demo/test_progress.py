from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from asched.base.clock import FakeClock
from asched.demo.progress import POLL_SECONDS, PodState, Progress, pod_states, settled
from asched.demo.workload import DemoPod, Workload

PODS = "/api/v1/namespaces/demo/pods"
EVENTS = "/apis/events.k8s.io/v1/namespaces/demo/events"


def pod(name: str, node: str = "", condition: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {}
    if condition:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "message": condition}]
    return {
        "metadata": {"name": name},
        "spec": {"nodeName": node} if node else {},
        "status": status,
    }


def event(name: str, note: str, when: str, reason: str = "FailedScheduling") -> dict[str, Any]:
    return {"regarding": {"name": name}, "reason": reason, "note": note, "eventTime": when}


@pytest.mark.parametrize(
    ("pods", "events", "want"),
    [
        ([pod("a", "n1")], [], PodState("a", "n1")),
        (
            [pod("a")],
            [
                event("a", "old", "2026-01-01T00:00:01.000000Z"),
                event("a", "new", "2026-01-01T00:00:02.000000Z"),
                event("a", "other", "2026-01-01T00:00:03.000000Z", reason="Scheduled"),
                event("b", "not a's", "2026-01-01T00:00:04.000000Z"),
            ],
            PodState("a", "", "new"),
        ),
        ([pod("a", condition="0/3 nodes")], [], PodState("a", "", "", "0/3 nodes")),
        (
            [pod("a")],
            [
                {
                    "regarding": {"name": "a"},
                    "reason": "FailedScheduling",
                    "note": "series",
                    "eventTime": "2026-01-01T00:00:01.000000Z",
                    "series": {"lastObservedTime": "2026-01-01T00:00:09.000000Z"},
                },
                event("a", "single", "2026-01-01T00:00:05.000000Z"),
            ],
            PodState("a", "", "series"),
        ),
    ],
    ids=["bound", "latest-failure-wins", "condition", "series-last-observed"],
)
def test_pod_states(
    pods: list[dict[str, Any]], events: list[dict[str, Any]], want: PodState
) -> None:
    assert pod_states(pods, events)["a"] == want


WORKLOAD = Workload(
    "demo",
    [],
    [DemoPod("a", "s1", {}, "shows a"), DemoPod("big", "s2", {}, "too big", expect_pending=True)],
)


@pytest.mark.parametrize(
    ("states", "want"),
    [
        ({"a": PodState("a", "n1"), "big": PodState("big", failure="no")}, True),
        ({"a": PodState("a", "n1")}, False),
        ({"a": PodState("a"), "big": PodState("big", failure="no")}, False),
        ({"a": PodState("a", "n1"), "big": PodState("big", condition="waiting")}, False),
    ],
    ids=["all-decided", "pod-missing", "unbound", "pending-without-event"],
)
def test_settled(states: dict[str, PodState], want: bool) -> None:
    assert settled(WORKLOAD, states) is want


class SteppingClock(FakeClock):
    """Time passes only by sleeping, instantly."""

    async def sleep(self, seconds: float) -> None:
        self.advance(seconds)
        await anyio.lowlevel.checkpoint()


class Script:
    """A lister answering each poll from the next (pods, events) pair; the last repeats."""

    def __init__(self, *polls: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
        self.polls = list(polls)
        self.calls = 0

    async def list(self, path: str) -> list[dict[str, Any]]:
        i = min(self.calls // 2, len(self.polls) - 1)
        self.calls += 1
        return self.polls[i][0] if path == PODS else self.polls[i][1]


async def test_follow_prints_each_decision_once_and_stops_when_settled() -> None:
    lines: list[str] = []
    failed = event("big", "0/3 nodes are available", "2026-01-01T00:00:01.000000Z")
    script = Script(
        ([pod("a"), pod("big")], []),
        ([pod("a"), pod("big")], [failed]),
        ([pod("a", "n1"), pod("big")], [failed]),
        ([pod("a", "n1"), pod("big")], [failed]),
    )
    progress = Progress(WORKLOAD, lines.append, SteppingClock())
    await progress.follow(script)
    assert progress.settled
    assert progress.states["a"].node == "n1"
    assert lines == [
        f"  {POLL_SECONDS:5.1f}s  big is unschedulable  (s2)",
        f"  {2 * POLL_SECONDS:5.1f}s  a -> n1  (s1)",
    ]
    assert script.calls == 6  # it stopped polling once settled


async def test_follow_can_be_bounded_from_outside() -> None:
    progress = Progress(WORKLOAD, lambda _: None, SteppingClock())
    script = Script(([pod("a")], []))
    with anyio.CancelScope() as scope:
        real_list = script.list

        async def list_then_give_up(path: str) -> list[dict[str, Any]]:
            if script.calls == 10:
                scope.cancel()  # what the caller's move_on_after does
            return await real_list(path)

        script.list = list_then_give_up  # type: ignore[method-assign]
        await progress.follow(script)
    assert scope.cancelled_caught
    assert not progress.settled
    assert progress.states == {"a": PodState("a")}
