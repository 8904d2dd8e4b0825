"""Scoped registrations: an event asks only the waiting pods of the PodGroups it names."""

from __future__ import annotations

from asched.api import Pod
from asched.backend.queue import SchedulingQueue
from asched.base.clock import FakeClock
from asched.framework.events import ClusterEventWithHint, QueueingHint
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo
from tests.builders import make_pod
from tests.unit.backend.test_queue import POD_ADD_EVENT, PROFILE, CountingHint


def _less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    return a.timestamp < b.timestamp


class Quorum:
    """PreEnqueue: a pod of group g waits until `open` names g."""

    def __init__(self) -> None:
        self.open: set[str] = set()

    def __call__(self, pod: Pod) -> tuple[str, Status] | None:
        if pod.scheduling_group and pod.scheduling_group not in self.open:
            return "Gang", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for minCount",))
        return None


class Scope:
    def __init__(self) -> None:
        self.answer: frozenset[str] | None = None
        self.calls = 0

    def __call__(self, old: object | None, new: object | None) -> frozenset[str] | None:
        self.calls += 1
        return self.answer


def _queue() -> tuple[SchedulingQueue, Quorum, CountingHint, Scope]:
    gates, hint, scope = Quorum(), CountingHint(), Scope()
    hints = {PROFILE: {"Gang": [ClusterEventWithHint(POD_ADD_EVENT, hint, scope)]}}
    q = SchedulingQueue(_less, FakeClock(), pre_enqueue=gates, hints=hints)
    for name, group in (("a1", "a"), ("a2", "a"), ("b1", "b")):
        q.add(make_pod(name).uid(name).scheduling_group(group).obj())
    return q, gates, hint, scope


def test_unscoped_event_asks_every_gated_pod() -> None:
    q, _, hint, scope = _queue()
    assert q.move_all_to_active_or_backoff(POD_ADD_EVENT, None, None) == 0
    assert sorted(hint.calls) == ["a1", "a2", "b1"]
    assert scope.calls == 1


def test_scoped_event_asks_only_its_groups_pods_and_moves_them() -> None:
    q, gates, hint, scope = _queue()
    gates.open.add("a")
    scope.answer = frozenset({"default/a"})
    assert q.move_all_to_active_or_backoff(POD_ADD_EVENT, None, None) == 2
    assert sorted(hint.calls) == ["a1", "a2"]
    assert (q.where("a1"), q.where("a2"), q.where("b1")) == ("active", "active", "gated")


def test_empty_scope_asks_nobody() -> None:
    q, gates, hint, scope = _queue()
    gates.open.update({"a", "b"})
    scope.answer = frozenset()
    assert q.move_all_to_active_or_backoff(POD_ADD_EVENT, None, None) == 0
    assert hint.calls == []
    assert q.pending_counts()["gated"] == 3


def test_a_failing_scope_narrows_nothing() -> None:
    def broken(old: object | None, new: object | None) -> frozenset[str] | None:
        raise RuntimeError("boom")

    gates = Quorum()
    gates.open.add("b")
    hints = {PROFILE: {"Gang": [ClusterEventWithHint(POD_ADD_EVENT, CountingHint(), broken)]}}
    q = SchedulingQueue(_less, FakeClock(), pre_enqueue=gates, hints=hints)
    gates.open.clear()
    q.add(make_pod("b1").uid("b1").scheduling_group("b").obj())
    gates.open.add("b")
    assert q.move_all_to_active_or_backoff(POD_ADD_EVENT, None, None) == 1


def test_hint_result_is_what_moves_a_scoped_pod() -> None:
    gates, scope = Quorum(), Scope()

    def skip(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        return QueueingHint.QUEUE_SKIP

    hints = {PROFILE: {"Gang": [ClusterEventWithHint(POD_ADD_EVENT, skip, scope)]}}
    q = SchedulingQueue(_less, FakeClock(), pre_enqueue=gates, hints=hints)
    q.add(make_pod("a1").uid("a1").scheduling_group("a").obj())
    gates.open.add("a")
    scope.answer = frozenset({"default/a"})
    assert q.move_all_to_active_or_backoff(POD_ADD_EVENT, None, None) == 0
    assert q.where("a1") == "gated"
