"""GangScheduling with the CompositePodGroup gate on: a PodGroup under a composite is
judged with its whole hierarchy (gangscheduling.go preEnqueueWithHierarchies,
permitPodForHierarchy, getMinCount of a composite, the composite Add hint)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from asched.api import Pod
from asched.api.composite import CompositePodGroup
from asched.api.workload import NativePodGroup
from asched.base import featuregates
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.status import Code
from asched.framework.waiting import WaitingPod
from asched.framework.workloads import COMPOSITE_POD_GROUPS, NATIVE_POD_GROUPS
from asched.plugins.gangscheduling import PERMIT_TIMEOUT_SECONDS, GangScheduling
from tests.builders import make_composite_pod_group, make_native_pod_group, make_pod
from tests.unit.plugins.fakes import FakeHandle


@pytest.fixture(autouse=True)
def _gate() -> Iterator[None]:
    featuregates.set_current({"CompositePodGroup": True})
    yield
    featuregates.set_current(featuregates.DEFAULTS)


class _Handle(FakeHandle):
    def __init__(
        self,
        groups: Sequence[NativePodGroup],
        composites: Sequence[CompositePodGroup],
        members: Sequence[Pod],
    ) -> None:
        super().__init__(
            stores={NATIVE_POD_GROUPS.resource: groups, COMPOSITE_POD_GROUPS.resource: composites}
        )
        self.members = list(members)

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return [p for p in self.members if (p.namespace, p.scheduling_group) == (namespace, name)]


def member(name: str, group: str, node: str = "") -> Pod:
    b = make_pod(name).uid(f"u-{name}").scheduling_group(group)
    return (b.node(node) if node else b).obj()


def tree(
    members: Sequence[Pod], *, parent: str = "cg", min_group_count: int = 2
) -> tuple[GangScheduling, _Handle]:
    groups = [
        make_native_pod_group("g1").min_count(2).parent(parent).obj(),
        make_native_pod_group("g2").min_count(2).parent(parent).obj(),
    ]
    composites = [make_composite_pod_group("cg").min_group_count(min_group_count).obj()]
    h = _Handle(groups, composites, members)
    return GangScheduling(None, h), h


def test_a_missing_parent_holds_the_pod() -> None:
    pods = [member("a1", "g1"), member("a2", "g1")]
    p, _ = tree(pods, parent="gone")
    st = p.pre_enqueue(pods[0])
    assert st is not None
    assert (st.code, st.message()) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "failed to build hierarchy snapshot: parent composite pod group state not found for "
        "CompositePodGroup/default/gone",
    )


@pytest.mark.parametrize(
    ("names", "min_group_count", "ready"),
    [
        pytest.param(["a1", "a2", "b1"], 2, False, id="second-gang-short"),
        pytest.param(["a1", "a2", "b1", "b2"], 2, True, id="both-gangs"),
        pytest.param(["a1", "a2", "b1"], 1, True, id="one-gang-enough"),
    ],
)
def test_pre_enqueue_waits_for_the_tree(
    names: list[str], min_group_count: int, ready: bool
) -> None:
    pods = [member(n, "g1" if n.startswith("a") else "g2") for n in names]
    p, _ = tree(pods, min_group_count=min_group_count)
    st = p.pre_enqueue(pods[0])
    if ready:
        assert st is None
    else:
        assert st is not None
        assert st.message() == 'waiting for composite pod group "cg" tree to meet quorum'


def test_composite_placement_feasible_counts_children() -> None:
    p, _ = tree([])
    out = p.composite_placement_feasible("default", "cg", 1, 0)
    assert out is not None
    assert (out.code, out.message()) == (
        Code.UNSCHEDULABLE,
        "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining",
    )
    waiting = p.composite_placement_feasible("default", "cg", 1, 1)
    assert waiting is not None
    assert waiting.code == Code.WAIT
    assert p.composite_placement_feasible("default", "cg", 2, 0) is None


def test_permit_waits_for_the_tree_then_allows_every_waiting_pod_of_it() -> None:
    pods = [
        member("a1", "g1", "n1"),
        member("a2", "g1", "n1"),
        member("b1", "g2", "n2"),
        member("b2", "g2"),
    ]
    p, h = tree(pods)
    st, timeout = p.permit(CycleState(), pods[0], "n1")
    assert st is not None
    assert (st.code, st.message(), timeout) == (
        Code.WAIT,
        'waiting for composite pod group "cg" tree to meet quorum',
        PERMIT_TIMEOUT_SECONDS,
    )
    assert [x.name for x in h.activated] == ["b2"]
    # b2 is now scheduled too: the tree is ready, a1 (waiting, of the other gang) is let go.
    pods[3] = member("b2", "g2", "n2")
    h.members = pods
    h.waiting_pods.add(WaitingPod(pods[0], "n1", {"GangScheduling": 300.0}, 0.0))
    assert p.permit(CycleState(), pods[3], "n2") == (None, 0.0)
    wp = h.waiting_pods.get(pods[0].uid)
    assert wp is not None
    assert wp.pending_plugins == []


def test_a_new_pod_of_one_gang_wakes_the_whole_tree_once_it_is_ready() -> None:
    pods = [member("a1", "g1"), member("a2", "g1"), member("b1", "g2"), member("b2", "g2")]
    p, _ = tree(pods)
    regs = p.events_to_register()
    assert (regs[-1].event.resource, regs[-1].event.action) == (
        EventResource.COMPOSITE_POD_GROUP,
        ActionType.ADD,
    )
    add = regs[0]
    assert add.hint is not None
    assert add.scope is not None
    assert add.scope(None, pods[3]) == frozenset({"default/g1", "default/g2"})
    # a1 (gang g1) is woken by b2's arrival: same root.
    assert add.hint(pods[0], None, pods[3]) == QueueingHint.QUEUE
    outsider = member("x", "elsewhere")
    assert add.hint(outsider, None, pods[3]) == QueueingHint.QUEUE_SKIP
    cpg_add = regs[-1].hint
    assert cpg_add is not None
    assert cpg_add(pods[0], None, make_composite_pod_group("cg").obj()) == QueueingHint.QUEUE


def test_with_the_gate_off_a_parent_is_ignored() -> None:
    """podGroupHasParent is false with CompositePodGroup off: the gang alone decides."""
    featuregates.set_current(featuregates.DEFAULTS)
    pods = [member("a1", "g1"), member("a2", "g1")]
    p, _ = tree(pods, parent="gone")
    assert p.pre_enqueue(pods[0]) is None
    assert [r.event.resource for r in p.events_to_register()].count(
        EventResource.COMPOSITE_POD_GROUP
    ) == 0
    assert p.informers()[-1].resource != COMPOSITE_POD_GROUPS.resource
