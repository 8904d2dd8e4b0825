"""GangScheduling (native PodGroups): PreEnqueue, PlacementFeasible, Permit and the hints,
each pinned to gangscheduling.go's outcome and wording."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from asched.api import Pod
from asched.api.workload import NativePodGroup
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.status import Code
from asched.framework.waiting import WaitingPod
from asched.framework.workloads import NATIVE_POD_GROUPS
from asched.plugins.gangscheduling import PERMIT_TIMEOUT_SECONDS, GangScheduling
from tests.builders import make_native_pod_group, make_pod
from tests.unit.plugins.fakes import FakeHandle


class _Handle(FakeHandle):
    def __init__(self, groups: Sequence[NativePodGroup], members: Sequence[Pod]) -> None:
        super().__init__(stores={NATIVE_POD_GROUPS.resource: groups})
        self.members = list(members)

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return [p for p in self.members if (p.namespace, p.scheduling_group) == (namespace, name)]


def member(name: str, group: str = "g", node: str = "") -> Pod:
    b = make_pod(name).uid(f"u-{name}").scheduling_group(group)
    return (b.node(node) if node else b).obj()


def plugin(
    groups: Sequence[NativePodGroup] = (), members: Sequence[Pod] = ()
) -> tuple[GangScheduling, _Handle]:
    h = _Handle(groups, members)
    return GangScheduling(None, h), h


def gang(min_count: int, name: str = "g") -> NativePodGroup:
    return make_native_pod_group(name).min_count(min_count).obj()


def test_pod_outside_any_group_passes_everything() -> None:
    p, _ = plugin()
    pod = make_pod("solo").obj()
    assert p.pre_enqueue(pod) is None
    assert p.permit(CycleState(), pod, "n1") == (None, 0.0)


@pytest.mark.parametrize(
    ("groups", "count", "want"),
    [
        pytest.param(
            [], 3, 'waiting for pods\'s pod group "g" to appear in scheduling queue', id="no-group"
        ),
        pytest.param(
            [gang(3)],
            2,
            "waiting for minCount pods from a gang to appear in scheduling queue",
            id="below-min-count",
        ),
        pytest.param([gang(3)], 3, None, id="quorum"),
        pytest.param([make_native_pod_group("g").basic().obj()], 1, None, id="basic-policy"),
    ],
)
def test_pre_enqueue(groups: list[NativePodGroup], count: int, want: str | None) -> None:
    pods = [member(f"m{i}") for i in range(count)]
    p, _ = plugin(groups, pods)
    st = p.pre_enqueue(pods[0])
    if want is None:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, want)


@pytest.mark.parametrize(
    ("scheduled", "remaining", "code", "message"),
    [
        (0, 3, Code.WAIT, "minCount (3) is not yet satisfied: 0 scheduled, 3 remaining"),
        (1, 1, Code.UNSCHEDULABLE, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"),
        (3, 0, None, ""),
        (4, 2, None, ""),
    ],
)
def test_placement_feasible(
    scheduled: int, remaining: int, code: Code | None, message: str
) -> None:
    p, _ = plugin([gang(3)])
    st = p.placement_feasible("default", "g", scheduled, remaining)
    if code is None:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.message()) == (code, message)


def test_placement_feasible_for_a_basic_group_needs_one() -> None:
    p, _ = plugin([make_native_pod_group("g").basic().obj()])
    assert p.placement_feasible("default", "g", 1, 0) is None
    st = p.placement_feasible("default", "g", 0, 0)
    assert st is not None
    assert st.message() == "minCount (1) cannot be satisfied: 0 scheduled, 0 remaining"


def test_permit_waits_without_quorum_and_activates_the_unscheduled() -> None:
    pods = [member("a", node="n1"), member("b"), member("c")]
    p, h = plugin([gang(3)], pods)
    st, timeout = p.permit(CycleState(), pods[0], "n1")
    assert st is not None
    assert (st.code, st.message()) == (
        Code.WAIT,
        "waiting for minCount pods from a gang to be scheduled",
    )
    assert timeout == PERMIT_TIMEOUT_SECONDS
    assert [x.name for x in h.activated] == ["b", "c"]


def test_permit_with_quorum_allows_the_waiting_siblings() -> None:
    pods = [member("a", node="n1"), member("b", node="n2")]
    p, h = plugin([gang(2)], pods)
    h.waiting_pods.add(WaitingPod(pods[0], "n1", {"GangScheduling": 300.0}, 0.0))
    assert p.permit(CycleState(), pods[1], "n2") == (None, 0.0)
    wp = h.waiting_pods.get(pods[0].uid)
    assert wp is not None
    assert wp.pending_plugins == []


def test_registered_events() -> None:
    p, _ = plugin()
    regs = [(r.event.resource, r.event.action) for r in p.events_to_register()]
    assert regs == [
        (EventResource.UNSCHEDULED_POD, ActionType.ADD),
        (EventResource.POD, ActionType.ADD),
        (EventResource.SCHEDULING_POD_GROUP, ActionType.ADD),
        (EventResource.SCHEDULING_POD_GROUP, ActionType.UPDATE),
    ]


def _hint(index: int, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    p, _ = plugin()
    fn = p.events_to_register()[index].hint
    assert fn is not None
    return fn(pod, old, new)


def test_pod_added_hint() -> None:
    target = member("t")
    assert _hint(0, target, None, member("x")) is QueueingHint.QUEUE
    assert _hint(0, target, None, member("x", group="other")) is QueueingHint.QUEUE_SKIP
    assert _hint(0, target, None, make_pod("x").obj()) is QueueingHint.QUEUE_SKIP
    assert _hint(1, target, None, member("x", node="n1")) is QueueingHint.QUEUE


def _scope(index: int, p: GangScheduling, new: object | None) -> frozenset[str] | None:
    fn = p.events_to_register()[index].scope
    assert fn is not None
    return fn(None, new)


@pytest.mark.parametrize("index", [0, 1], ids=["unscheduled-pod-add", "assigned-pod-add"])
def test_pod_added_scope_is_its_own_gang_once_it_has_min_count(index: int) -> None:
    """The scope never leaves out a pod the hint and PreEnqueue would let through."""
    present = [member("m1"), member("m2")]
    p, h = plugin([gang(3)], present)
    # Two of three: PreEnqueue would turn every member away, so nobody is asked.
    assert _scope(index, p, present[-1]) == frozenset()
    h.members.append(member("m3"))
    assert _scope(index, p, h.members[-1]) == frozenset({"default/g"})
    assert all(p.pre_enqueue(m) is None for m in h.members)
    # No PodGroup yet, no group at all, or not a pod.
    assert _scope(index, p, member("x", group="missing")) == frozenset()
    assert _scope(index, p, make_pod("solo").obj()) == frozenset()
    assert _scope(index, p, None) is None
    # A basic group (no minCount) is complete with its first pod.
    p2, _ = plugin([make_native_pod_group("b").obj()], [member("b1", group="b")])
    assert _scope(index, p2, member("b1", group="b")) == frozenset({"default/b"})


def test_group_hints() -> None:
    target = member("t")
    assert _hint(2, target, None, gang(3)) is QueueingHint.QUEUE
    assert _hint(2, target, None, gang(3, name="other")) is QueueingHint.QUEUE_SKIP
    # isSchedulableAfterPodGroupUpdated: only a lowered minCount.
    assert _hint(3, target, gang(3), gang(2)) is QueueingHint.QUEUE
    assert _hint(3, target, gang(3), gang(3)) is QueueingHint.QUEUE_SKIP
    assert _hint(3, target, gang(2), gang(3)) is QueueingHint.QUEUE_SKIP
