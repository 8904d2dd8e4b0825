"""The pod group cycle calls the profile's pod-group extension points, as kube-scheduler's
schedule_one_podgroup.go does: PlacementGenerate once, the members simulated per
placement, PlacementScore over the feasible ones, and PodGroupPostFilter (in profile
order, stopping as RunPodGroupPostFilterPlugins does) only after an Unschedulable group.

Built without a network over the real Cache, Snapshot, Algorithm, queue and Outcomes, with
small fake plugins; assertions are the calls the plugins saw and what the members and the
PodGroup end with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from asched.api import Pod
from asched.api.workload import NativePodGroup
from asched.backend.cache import Cache
from asched.backend.queue import SchedulingQueue
from asched.backend.snapshot import Snapshot
from asched.base.clock import FakeClock
from asched.framework import status as st
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import PodGroupScheduling
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import (
    Placement,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
)
from asched.framework.registry import PluginSpec
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.status import Code, Status
from asched.informers.store import Store
from asched.scheduler.algorithm import Algorithm
from asched.scheduler.cycle import Assumed
from asched.scheduler.groupcycle import GroupCycle
from asched.scheduler.outcome import Outcomes
from tests.builders import make_native_pod_group, make_node, make_pod
from tests.unit.framework.fakes import FakeServices, Recorder, registry

CALLS: list[str] = []


class Quorum:
    """PlacementFeasible: the group needs `min_count` members (GangScheduling's rule)."""

    name = "Quorum"

    def __init__(self, args: Any, handle: Any) -> None:
        self.min_count = 2

    def placement_feasible(
        self, namespace: str, group: str, scheduled: int, remaining: int
    ) -> Status | None:
        if scheduled >= self.min_count:
            return None
        if scheduled + remaining >= self.min_count:
            return st.wait()
        return st.unschedulable("quorum out of reach")

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        return None, 0.0


class Racks:
    """PlacementGenerate: one placement per `rack` label value, in name order."""

    name = "Racks"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def generate_placements(
        self, group: PodGroupInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[Placement], Status | None]:
        CALLS.append(f"Generate:{len(group.unscheduled)}")
        racks: dict[str, list[int]] = {}
        for i, ni in enumerate(nodes):
            assert ni.node is not None
            racks.setdefault(ni.node.labels["rack"], []).append(i)
        return [Placement(r, tuple(rows)) for r, rows in sorted(racks.items())], None


class PreferB:
    """PlacementScore: rack "b" scores 100, others 0 (so "b" wins over the name order)."""

    name = "PreferB"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def score_placement(self, group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
        CALLS.append(f"Score:{assignments.placement.name}:{len(assignments.assignments)}")
        return 100 if assignments.placement.name == "b" else 0


class Fits:
    """Filter: a node fits at most `per_node` members (label `slots`, default 1)."""

    name = "Fits"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        slots = int(node_info.node.labels.get("slots", "1"))
        if len(node_info.pods) >= slots:
            return st.unschedulable("node full", plugin=self.name)
        return None


class PostFilter:
    """A PodGroupPostFilter plugin whose answer the test sets (ANSWERS[name])."""

    name = ""

    def __init__(self, args: Any, handle: Any) -> None:
        self.seen: list[PodGroupScheduling] = []

    async def pod_group_post_filter(
        self, group: PodGroupScheduling
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        CALLS.append(f"PodGroupPostFilter:{self.name}")
        self.seen.append(group)
        status, nominate = ANSWERS[self.name]
        if nominate:
            return PodGroupPostFilterResult({p.uid: "n0" for p in group.info.unscheduled}), status
        return None, status


class First(PostFilter):
    name = "First"


class Second(PostFilter):
    name = "Second"


ANSWERS: dict[str, tuple[Status | None, bool]] = {}


class Conditions:
    """Both the pods' condition writer (Outcomes) and the PodGroup's (GroupCycle)."""

    def __init__(self) -> None:
        self.pods: dict[str, tuple[str, str, str | None]] = {}
        self.group: list[tuple[str, str, str]] = []

    def set_unschedulable(self, pod: Pod, reason: str, message: str, nominated: str | None) -> None:
        self.pods[pod.name] = (reason, message, nominated)

    def set(self, pg: NativePodGroup, status: str, reason: str, message: str) -> None:
        self.group.append((status, reason, message))


class Harness:
    def __init__(self, nodes: Sequence[tuple[str, str, int]], *, min_count: int = 2) -> None:
        CALLS.clear()
        reg = registry()
        for cls in (Quorum, Racks, PreferB, Fits, First, Second):
            reg.register(PluginSpec(cls.name, cls))
        plugins = {
            "queueSort": [("Sort", 0)],
            "filter": [("Fits", 0)],
            "permit": [("Quorum", 0)],
            "bind": [("Binder", 0)],
            "placementGenerate": [("Racks", 0)],
            "placementScore": [("PreferB", 1)],
            "podGroupPostFilter": [("First", 0), ("Second", 0)],
        }
        self.fwk = Framework(ProfileSpec("test", plugins, {}), reg, FakeServices())
        quorum = self.fwk.plugins["Quorum"]
        assert isinstance(quorum, Quorum)
        quorum.min_count = min_count
        self.clock = FakeClock()
        self.cache = Cache()
        for name, rack, slots in nodes:
            node = make_node(name).label("rack", rack).label("slots", str(slots))
            self.cache.add_node(node.obj())
        self.queue = SchedulingQueue(
            self.fwk.less,
            self.clock,
            pre_enqueue=lambda pod: None,
            hints={"test": self.fwk.enqueue_hints()},
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
        self.groups: Store[NativePodGroup] = Store()
        self.bound: list[tuple[str, str]] = []
        self.cycle = GroupCycle(
            frameworks={"test": self.fwk},
            cache=self.cache,
            snapshot=Snapshot(),
            algorithm=Algorithm(100),
            take=self._take,
            members=lambda ns, name: [
                p for p in self.informer.values() if p.scheduling_group == name
            ],
            groups=lambda: self.groups,
            conditions=self.conditions,  # type: ignore[arg-type]
            outcomes=outcomes,
            skip=lambda pod: False,
            to_binding=self._bind,
        )

    def _take(self, uids: Sequence[str]) -> list[Any]:
        return self.queue.take(uids)

    def _bind(self, a: Assumed) -> None:
        self.bound.append((a.qpi.pod.name, a.node))

    async def run(self, members: int) -> None:
        pg = make_native_pod_group("g").min_count(2).obj()
        self.groups.upsert(pg.key, pg, "1")
        for i in range(members):
            pod = make_pod(f"m{i}").uid(f"u{i}").scheduling_group("g").scheduler("test").obj()
            self.informer[pod.key] = pod
            self.queue.add(pod)
        first = await self.queue.pop()
        await self.cycle.run(first)


@pytest.fixture(autouse=True)
def _answers() -> None:
    ANSWERS.clear()
    ANSWERS["First"] = (st.unschedulable("first: nothing to free"), False)
    ANSWERS["Second"] = (st.unschedulable("second: no victims"), False)


async def test_a_group_that_fits_runs_generate_and_score_and_no_post_filter() -> None:
    h = Harness([("n0", "a", 2), ("n1", "b", 1), ("n2", "b", 1)])
    await h.run(2)
    # Both racks fit the two members; PreferB picks "b" over the name order's "a".
    assert CALLS == ["Generate:2", "Score:a:2", "Score:b:2"]
    assert sorted(h.bound) == [("m0", "n1"), ("m1", "n2")]
    assert h.conditions.group[-1][:2] == ("True", "Scheduled")


async def test_one_feasible_placement_is_taken_without_placement_score() -> None:
    # findBestPodGroupPlacement: with one successful placement the PlacementScore plugins
    # are not run. Rack "a" holds both members; rack "b"'s one slot cannot.
    h = Harness([("n0", "a", 2), ("n1", "b", 1)])
    await h.run(2)
    assert CALLS == ["Generate:2"]
    assert sorted(h.bound) == [("m0", "n0"), ("m1", "n0")]
    assert h.conditions.group[-1][:2] == ("True", "Scheduled")


async def test_an_unschedulable_group_runs_every_post_filter_in_order() -> None:
    h = Harness([("n0", "a", 1), ("n1", "b", 1)])
    await h.run(2)
    assert CALLS == [
        "Generate:2",
        "PodGroupPostFilter:First",
        "PodGroupPostFilter:Second",
    ]
    assert h.bound == []
    status, reason, message = h.conditions.group[-1]
    assert (status, reason) == ("False", "Unschedulable")
    # applyPodGroupPostFilterResult appends the gathered reasons as one.
    assert message.endswith("first: nothing to free, second: no victims")
    view = h.fwk.plugins["First"]
    assert isinstance(view, PostFilter)
    [group] = view.seen
    assert [p.name for p in group.info.unscheduled] == ["m0", "m1"]
    assert group.attempted


async def test_success_stops_the_run_and_nominates_the_members() -> None:
    ANSWERS["First"] = (Status(Code.SUCCESS, ("room made",)), True)
    h = Harness([("n0", "a", 1), ("n1", "b", 1)])
    await h.run(2)
    assert CALLS[-1] == "PodGroupPostFilter:First"
    assert "PodGroupPostFilter:Second" not in CALLS
    assert h.conditions.group[-1][2].endswith("room made")
    # Every member goes back to the queue nominated where the plugin said.
    assert {name: nominated for name, (_, _, nominated) in h.conditions.pods.items()} == {
        "m0": "n0",
        "m1": "n0",
    }


async def test_unresolvable_stops_the_run() -> None:
    ANSWERS["First"] = (st.unresolvable("hopeless"), False)
    h = Harness([("n0", "a", 1), ("n1", "b", 1)])
    await h.run(2)
    assert CALLS[-1] == "PodGroupPostFilter:First"
    assert h.conditions.group[-1][2].endswith("hopeless")


async def test_an_error_fails_the_group_naming_the_plugin() -> None:
    ANSWERS["First"] = (st.error("cannot list claims"), False)
    h = Harness([("n0", "a", 1), ("n1", "b", 1)])
    await h.run(2)
    assert "PodGroupPostFilter:Second" not in CALLS
    status, reason, message = h.conditions.group[-1]
    assert (status, reason) == ("False", "SchedulerError")
    assert message == 'error in "First" PodGroupPostFilter plugins: cannot list claims'


async def test_the_what_if_places_the_group_without_the_removed_pods() -> None:
    """PodGroupScheduling.place re-runs the cycle's algorithm on copies of the nodes: with
    the pod on n1 gone, both members fit; the cache and the members are left as they were."""
    h = Harness([("n0", "a", 1), ("n1", "a", 1)])
    blocker = make_pod("blocker").uid("b0").node("n1").obj()
    h.cache.add_pod(blocker)
    seen: list[tuple[dict[str, str], Status | None, bool]] = []

    class WhatIf(First):
        async def pod_group_post_filter(
            self, group: PodGroupScheduling
        ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
            placed, status = await group.place([blocker])
            fits = await group.fits(placed.assignments, [blocker])
            seen.append((dict(placed.assignments), status, fits))
            return None, st.unschedulable("checked")

    h.fwk.pod_group_points.post_filter[0] = WhatIf(None, None)
    await h.run(2)
    [(placed, status, fits)] = seen
    assert (sorted(placed), sorted(placed.values()), status, fits) == (
        ["u0", "u1"],
        ["n0", "n1"],
        None,
        True,
    )
    assert h.bound == []
    n1 = h.cache.get_node_info("n1")
    assert n1 is not None
    assert [p.name for p in n1.pods] == ["blocker"]
