"""The group cycle of a CompositePodGroup hierarchy, as kube-scheduler 1.37.2's
podGroupSchedulingRecursiveAlgorithm: every PodGroup of the root's tree placed together,
nothing bound when the whole cannot fit, minGroupCount counted in children, and every
group's status worded as Go's.

Built without a network over the real Cache, Snapshot, Algorithm, queue and Outcomes, with
small fake plugins (a per-group quorum and a one-pod-per-node filter).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asched.api import Pod
from asched.api.composite import CompositePodGroup
from asched.api.workload import NativePodGroup
from asched.backend.cache import Cache
from asched.backend.queue import SchedulingQueue
from asched.backend.snapshot import Snapshot
from asched.base.clock import FakeClock
from asched.framework import status as st
from asched.framework.cycle_state import CycleState
from asched.framework.grouptree import GroupForest
from asched.framework.interfaces import PodGroupScheduling
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import (
    Placement,
    PodGroupInfo,
    PodGroupPostFilterResult,
    whole,
)
from asched.framework.registry import PluginSpec
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.status import Status
from asched.informers.store import Store
from asched.scheduler.algorithm import Algorithm
from asched.scheduler.cycle import Assumed
from asched.scheduler.groupcycle import GroupCycle
from asched.scheduler.outcome import Outcomes
from tests.builders import make_composite_pod_group, make_native_pod_group, make_node, make_pod
from tests.unit.framework.fakes import FakeServices, Recorder, registry

GROUPS: Store[NativePodGroup] = Store()
COMPOSITES: Store[CompositePodGroup] = Store()
POST_FILTER: list[PodGroupScheduling] = []
GENERATED: list[str] = []


def _quorum(need: int, scheduled: int, remaining: int) -> Status | None:
    """GangScheduling's PlacementFeasible wording."""
    if remaining + scheduled < need:
        return st.unschedulable(
            f"minCount ({need}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
        )
    if scheduled < need:
        return st.wait(
            f"minCount ({need}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"
        )
    return None


class Quorum:
    """PlacementFeasible for PodGroups (minCount) and composites (minGroupCount)."""

    name = "Quorum"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def placement_feasible(
        self, namespace: str, group: str, scheduled: int, remaining: int
    ) -> Status | None:
        pg = GROUPS.get(f"{namespace}/{group}")
        assert pg is not None
        return _quorum(pg.min_count or 1, scheduled, remaining)

    def composite_placement_feasible(
        self, namespace: str, composite: str, scheduled: int, remaining: int
    ) -> Status | None:
        cpg = COMPOSITES.get(f"{namespace}/{composite}")
        assert cpg is not None
        return _quorum(cpg.min_group_count or 1, scheduled, remaining)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        return None, 0.0


class OnePerNode:
    name = "OnePerNode"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.pods:
            return st.unschedulable("node full", plugin=self.name)
        return None


class Racks:
    """PlacementGenerate: one placement per `rack` label value when the group has a
    topology key (TopologyPlacementGenerator's rule), else the parent's nodes."""

    name = "Racks"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def generate_placements(
        self, group: PodGroupInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[Placement], Status | None]:
        GENERATED.append(group.pod_group.name)
        if not group.pod_group.topology_key:
            return [whole(nodes)], None
        racks: dict[str, list[int]] = {}
        for i, ni in enumerate(nodes):
            assert ni.node is not None
            racks.setdefault(ni.node.labels["rack"], []).append(i)
        return [Placement(r, tuple(rows)) for r, rows in sorted(racks.items())], None


class NoVictims:
    name = "NoVictims"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    async def pod_group_post_filter(
        self, group: PodGroupScheduling
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        POST_FILTER.append(group)
        return None, st.unresolvable("no victims")


class Conditions:
    def __init__(self) -> None:
        self.pods: dict[str, str] = {}
        self.groups: dict[str, tuple[str, str, str]] = {}

    def set_unschedulable(self, pod: Pod, reason: str, message: str, nominated: str | None) -> None:
        self.pods[pod.name] = message

    def set(self, pg: NativePodGroup, status: str, reason: str, message: str) -> None:
        self.groups[pg.name] = (status, reason, message)


class Harness:
    def __init__(self, nodes: int, racks: Sequence[str] = ()) -> None:
        POST_FILTER.clear()
        GENERATED.clear()
        GROUPS.__init__()  # type: ignore[misc]
        COMPOSITES.__init__()  # type: ignore[misc]
        reg = registry()
        for cls in (Quorum, OnePerNode, NoVictims, Racks):
            reg.register(PluginSpec(cls.name, cls))
        plugins = {
            "queueSort": [("Sort", 0)],
            "filter": [("OnePerNode", 0)],
            "permit": [("Quorum", 0)],
            "bind": [("Binder", 0)],
            "podGroupPostFilter": [("NoVictims", 0)],
            "placementGenerate": [("Racks", 0)],
        }
        self.fwk = Framework(ProfileSpec("test", plugins, {}), reg, FakeServices())
        self.clock = FakeClock()
        self.cache = Cache()
        for i in range(nodes):
            rack = racks[i] if racks else "r"
            self.cache.add_node(make_node(f"n{i}").label("rack", rack).obj())
        self.queue = SchedulingQueue(
            self.fwk.less, self.clock, pre_enqueue=lambda pod: None, hints={}
        )
        self.informer: dict[str, Pod] = {}
        self.conditions = Conditions()
        outcomes = Outcomes(
            queue=self.queue,
            current_pod=self.informer.get,
            events=lambda profile: Recorder(),
            conditions=self.conditions,
            clock=self.clock,
        )
        self.bound: list[str] = []
        self.assumed: list[Assumed] = []
        self.cycle = GroupCycle(
            frameworks={"test": self.fwk},
            cache=self.cache,
            snapshot=Snapshot(),
            algorithm=Algorithm(100),
            take=self.queue.take,
            members=lambda ns, name: [
                p for p in self.informer.values() if p.scheduling_group == name
            ],
            groups=lambda: GROUPS,
            conditions=self.conditions,  # type: ignore[arg-type]
            outcomes=outcomes,
            skip=lambda pod: False,
            to_binding=self._bind,
            forest=lambda: GroupForest(GROUPS, COMPOSITES),
        )

    def _bind(self, a: Assumed) -> None:
        self.bound.append(a.qpi.pod.name)
        self.assumed.append(a)

    def composite(
        self, name: str, min_group_count: int, parent: str = "", topology: str = ""
    ) -> None:
        b = make_composite_pod_group(name).min_group_count(min_group_count)
        if topology:
            b = b.topology(topology)
        cpg = (b.parent(parent) if parent else b).obj()
        COMPOSITES.upsert(cpg.key, cpg, "1")

    def gang(self, name: str, parent: str, members: int, min_count: int | None = None) -> None:
        pg = make_native_pod_group(name).min_count(min_count or members).parent(parent).obj()
        GROUPS.upsert(pg.key, pg, "1")
        for i in range(members):
            pod = make_pod(f"{name}-{i}").uid(f"{name}-{i}").scheduling_group(name)
            obj = pod.scheduler("test").obj()
            self.informer[obj.key] = obj
            self.queue.add(obj)

    async def run(self) -> None:
        first = await self.queue.pop()
        await self.cycle.run(first)


PLACEMENT_FAILED = (
    "pod group is unschedulable, 0/1 placements are available, first placement status: "
    "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
)


async def test_a_gang_of_two_gangs_that_cannot_both_fit_binds_none() -> None:
    """The probe: kube-scheduler binds none; the first gang, which fit, reports the
    composite's status, the second its own, and PodGroupPostFilter runs once for all."""
    h = Harness(nodes=3)
    h.composite("cg", 2)
    h.gang("g1", "cg", 2)
    h.gang("g2", "cg", 2)
    await h.run()
    assert h.bound == []
    assert h.conditions.pods == {
        "g1-0": PLACEMENT_FAILED,
        "g1-1": PLACEMENT_FAILED,
        "g2-0": f"pod group is unschedulable, {PLACEMENT_FAILED}, no victims",
        "g2-1": "0/3 nodes are available: 3 node full.",
    }
    # g1 shares the composite's status object: the PostFilter reason lands on it twice.
    assert h.conditions.groups == {
        "g1": ("False", "Unschedulable", f"{PLACEMENT_FAILED}, no victims, no victims"),
        "g2": ("False", "Unschedulable", f"{PLACEMENT_FAILED}, no victims"),
    }
    [view] = POST_FILTER
    assert view.info.pod_group.name == "cg"
    assert sorted(p.name for p in view.info.unscheduled) == ["g1-0", "g1-1", "g2-0", "g2-1"]
    assert h.cache.assumed_pod_count() == 0


async def test_a_composite_that_fits_binds_every_gang() -> None:
    h = Harness(nodes=4)
    h.composite("cg", 2)
    h.gang("g1", "cg", 2)
    h.gang("g2", "cg", 2)
    await h.run()
    assert sorted(h.bound) == ["g1-0", "g1-1", "g2-0", "g2-1"]
    assert {k: v[:2] for k, v in h.conditions.groups.items()} == {
        "g1": ("True", "Scheduled"),
        "g2": ("True", "Scheduled"),
    }
    assert POST_FILTER == []


async def test_min_group_count_one_binds_the_gang_that_fits() -> None:
    h = Harness(nodes=3)
    h.composite("cg", 1)
    h.gang("g1", "cg", 2)
    h.gang("g2", "cg", 2)
    await h.run()
    assert sorted(h.bound) == ["g1-0", "g1-1"]
    assert h.conditions.groups["g1"][:2] == ("True", "Scheduled")
    assert h.conditions.groups["g2"][:2] == ("False", "Unschedulable")
    assert h.conditions.pods["g2-1"] == "0/3 nodes are available: 3 node full."


async def test_nested_composites_are_placed_recursively() -> None:
    """top (minGroupCount 2) over g1 and mid (minGroupCount 1) over g2 and g3: g1 and g2
    fit, g3 does not, mid is satisfied by g2, so top is too."""
    h = Harness(nodes=4)
    h.composite("top", 2)
    h.composite("mid", 1, parent="top")
    h.gang("g1", "top", 2)
    h.gang("g2", "mid", 2)
    h.gang("g3", "mid", 2)
    await h.run()
    assert sorted(h.bound) == ["g1-0", "g1-1", "g2-0", "g2-1"]
    assert h.conditions.groups["g3"][:2] == ("False", "Unschedulable")


async def test_members_must_carry_the_root_priority() -> None:
    h = Harness(nodes=4)
    cpg = make_composite_pod_group("cg").min_group_count(1).priority(5).obj()
    COMPOSITES.upsert(cpg.key, cpg, "1")
    h.gang("g1", "cg", 1)
    await h.run()
    # Every builder pod has priority 0, the root 5: validatePodGroup's error.
    assert h.bound == []
    assert h.conditions.groups["g1"] == (
        "False",
        "SchedulerError",
        "all pods in a single pod group should have the same priority as the pod group's "
        "priority, got 0 and 5",
    )


async def test_a_composite_with_a_topology_key_lands_in_the_one_rack_that_holds_it() -> None:
    """Rack r1 has two nodes (one pod each), r2 four: only r2 holds both gangs. The
    composite's placements are generated once, each gang's inside each rack."""
    h = Harness(nodes=6, racks=["r1", "r1", "r2", "r2", "r2", "r2"])
    h.composite("cg", 2, topology="rack")
    h.gang("g1", "cg", 2)
    h.gang("g2", "cg", 2)
    await h.run()
    assert sorted(h.bound) == ["g1-0", "g1-1", "g2-0", "g2-1"]
    placed = {a.pod.node_name for a in h.assumed}
    assert placed == {"n2", "n3", "n4", "n5"}
    # cg's placements once, then each gang's inside each rack it is tried in.
    assert GENERATED[0] == "cg"
    assert GENERATED.count("cg") == 1
    assert set(GENERATED[1:]) == {"g1", "g2"}


async def test_no_rack_holds_the_composite_so_nothing_is_bound() -> None:
    h = Harness(nodes=4, racks=["r1", "r1", "r2", "r2"])
    h.composite("cg", 2, topology="rack")
    h.gang("g1", "cg", 2)
    h.gang("g2", "cg", 2)
    await h.run()
    assert h.bound == []
    # The first rack's simulation is the one reported: g1 filled r1, so it reports the
    # composite's status; g2 fit nowhere in r1 (only r1's two nodes counted).
    assert h.conditions.pods["g1-0"] == (
        "pod group is unschedulable, 0/2 placements are available, first placement status: "
        "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    )
    assert h.conditions.pods["g2-0"] == "0/2 nodes are available: 2 node full."
    assert h.conditions.groups["g2"][:2] == ("False", "Unschedulable")
