"""PrioritySort: higher priority first, then earlier queue timestamp.

Cases follow kube-scheduler's queuesort/priority_sort_test.go.
"""

from __future__ import annotations

import pytest

from asched.framework.types import QueuedPodInfo
from asched.plugins.queuesort import PrioritySort
from tests.builders import make_pod
from tests.unit.plugins.fakes import FakeHandle


def qpi(priority: int, timestamp: float) -> QueuedPodInfo:
    return QueuedPodInfo(make_pod(f"p{priority}-{timestamp}").priority(priority).obj(), timestamp)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(qpi(100, 2.0), qpi(50, 1.0), True, id="higher-priority-first"),
        pytest.param(qpi(50, 1.0), qpi(100, 2.0), False, id="lower-priority-later"),
        pytest.param(qpi(100, 1.0), qpi(100, 2.0), True, id="same-priority-earlier-first"),
        pytest.param(qpi(100, 2.0), qpi(100, 1.0), False, id="same-priority-later-second"),
        pytest.param(qpi(100, 1.0), qpi(100, 1.0), False, id="equal-is-not-less"),
        pytest.param(qpi(-5, 1.0), qpi(0, 0.5), False, id="negative-priority"),
    ],
)
def test_less(a: QueuedPodInfo, b: QueuedPodInfo, want: bool) -> None:
    assert PrioritySort(None, FakeHandle()).less(a, b) is want


def test_sorts_a_queue() -> None:
    plugin = PrioritySort(None, FakeHandle())
    pods = [qpi(0, 3.0), qpi(10, 5.0), qpi(0, 1.0), qpi(10, 4.0)]
    ordered = sorted(pods, key=lambda p: sum(plugin.less(o, p) for o in pods))
    assert [(p.pod.priority, p.timestamp) for p in ordered] == [
        (10, 4.0),
        (10, 5.0),
        (0, 1.0),
        (0, 3.0),
    ]
