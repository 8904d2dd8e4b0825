"""The group cycle simulates placements in the snapshot alone, as kube-scheduler's does
(Snapshot.AssumePod and ForgetPod), and decides exactly as it did when it simulated
through the cache: generated racks and gangs run through the real GroupCycle and default
profile twice, once simulating in the snapshot and once through the cache (the reference
world below, the cycle's former one), and every gang must end the same.

After each cycle nothing simulated is left: the snapshot holds the very NodeInfos it held
before the cycle (reverted, not rebuilt), and the cache holds only what the cycle
committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from asched.api import Pod
from asched.api.workload import NativePodGroup
from asched.backend.cache import Cache
from asched.backend.queue import SchedulingQueue
from asched.backend.snapshot import Snapshot, SnapshotError
from asched.base.clock import FakeClock
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.framework.workloads import NATIVE_POD_GROUPS
from asched.scheduler import groupcycle
from asched.scheduler.algorithm import Algorithm
from asched.scheduler.cycle import Assumed, release_assumption
from asched.scheduler.groupcycle import GroupCycle
from asched.scheduler.groupstate import Member
from asched.scheduler.outcome import Outcomes
from asched.testing.profiles import default_profile
from tests.builders import make_native_pod_group, make_node, make_pod
from tests.unit.framework.fakes import EmptyStores, Recorder

RACK = "topology.kubernetes.io/rack"


class CacheWorld:
    """The reference: the cycle's former world, which assumed each simulated member in
    the scheduler's cache and refreshed the snapshot from it after each change."""

    def __init__(self, cache: Cache, snapshot: Snapshot) -> None:
        self._cache = cache
        self._snapshot = snapshot

    def nodes(self) -> Sequence[NodeInfo]:
        return self._snapshot.node_infos()

    def assume(self, fwk: Framework, m: Member, pod: Pod) -> Status | None:
        self._cache.assume_pod(pod)
        status = fwk.run_reserve(m.state, pod, pod.node_name)
        if status is not None:
            release_assumption(fwk, self._cache, pod, m.state)
        else:
            self._cache.update_snapshot(self._snapshot)
        return status

    def release(self, fwk: Framework, m: Member) -> None:
        assert m.assumed is not None
        release_assumption(fwk, self._cache, m.assumed, m.state)
        self._cache.update_snapshot(self._snapshot)


class Pods(EmptyStores):
    """The informer's pods as the scheduler's PodView gives them: assumed ones placed."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__(snapshot)
        self.pods: dict[str, Pod] = {}

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return list(self.pods.values())


class Conditions:
    def __init__(self) -> None:
        self.pods: dict[str, tuple[str, str, str | None]] = {}
        self.groups: list[tuple[str, str, str, str]] = []

    def set_unschedulable(self, pod: Pod, reason: str, message: str, nominated: str | None) -> None:
        self.pods[pod.name] = (reason, message, nominated)

    def set(self, pg: NativePodGroup, status: str, reason: str, message: str) -> None:
        self.groups.append((pg.name, status, reason, message))


@dataclass(frozen=True)
class Gang:
    size: int
    min_count: int
    cpu: str
    topology: bool


@dataclass
class Ending:
    """What one gang's cycle decided, and the cluster it left."""

    bound: list[tuple[str, str]]
    conditions: dict[str, tuple[str, str, str | None]]
    groups: list[tuple[str, str, str, str]]
    nodes: dict[str, tuple[list[str], int, int]]
    next_start: int


class Cluster:
    def __init__(self, racks: Sequence[Sequence[int]], busy: Sequence[int]) -> None:
        """`racks`: each rack's nodes' CPU cores; `busy[i]`: milli-CPU already used on
        the i-th node (a pod bound there before)."""
        spec, registry = default_profile()
        self.cache, self.snapshot = Cache(), Snapshot()
        self.services = Pods(self.snapshot)
        self.fwk = Framework(spec, registry, self.services)
        self.groups = self.services.store(NATIVE_POD_GROUPS)
        i = 0
        for r, cores in enumerate(racks):
            for c in cores:
                node = make_node(f"n{i}").label(RACK, f"rack-{r}")
                self.cache.add_node(node.capacity(cpu=str(c), memory="8Gi", pods="110").obj())
                used = busy[i % len(busy)] if busy else 0
                if used:
                    self.cache.add_pod(
                        make_pod(f"busy-{i}").uid(f"b{i}").node(f"n{i}").cpu(f"{used}m").obj()
                    )
                i += 1
        self.clock = FakeClock()
        self.queue = SchedulingQueue(
            self.fwk.less,
            self.clock,
            pre_enqueue=lambda pod: None,
            hints={spec.scheduler_name: self.fwk.enqueue_hints()},
        )
        self.conditions = Conditions()
        self.bound: list[tuple[str, str]] = []
        self.algorithm = Algorithm(0)
        self.cycle = GroupCycle(
            frameworks={spec.scheduler_name: self.fwk},
            cache=self.cache,
            snapshot=self.snapshot,
            algorithm=self.algorithm,
            take=self.queue.take,
            members=lambda ns, name: [
                p for p in self.services.pods.values() if p.scheduling_group == name
            ],
            groups=lambda: self.groups,  # type: ignore[arg-type,return-value]
            conditions=self.conditions,  # type: ignore[arg-type]
            outcomes=Outcomes(
                queue=self.queue,
                current_pod=self.services.pods.get,
                events=lambda profile: Recorder(),
                conditions=self.conditions,
                clock=self.clock,
            ),
            skip=lambda pod: False,
            to_binding=self._bind,
        )
        self.cache.update_snapshot(self.snapshot)
        self.reference = False

    def _bind(self, a: Assumed) -> None:
        self.bound.append((a.pod.name, a.node))
        self.services.pods[a.pod.key] = a.pod

    async def run(self, g: int, gang: Gang) -> Ending:
        name = f"gang-{g}"
        pg = make_native_pod_group(name).min_count(gang.min_count)
        if gang.topology:
            pg = pg.topology(RACK)
        built = pg.obj()
        self.groups.upsert(built.key, built, "1")  # type: ignore[attr-defined]
        for j in range(gang.size):
            pod = make_pod(f"{name}-{j}").uid(f"{name}-u{j}").scheduling_group(name)
            obj = pod.cpu(gang.cpu).memory("100Mi").obj()
            self.services.pods[obj.key] = obj
            self.queue.add(obj)
        self.bound.clear()
        self.conditions.pods.clear()
        first = await self.queue.pop()
        self.cache.update_snapshot(self.snapshot)
        before = list(self.snapshot.node_infos())
        await self.cycle.run(first)
        # Nothing simulated is left in the snapshot: its rows are the NodeInfos it had
        # (the reference world refreshes them from the cache instead).
        assert self.snapshot.assumed_pods() == 0
        if not self.reference:
            after = list(self.snapshot.node_infos())
            assert all(a is b for a, b in zip(after, before, strict=True))
        # Whatever is still queued (members that did not fit) leaves for the next gang.
        for q in self.queue.take([p.uid for p in self.services.pods.values() if not p.node_name]):
            del self.services.pods[q.pod.key]
        self.cache.update_snapshot(self.snapshot)
        nodes = {
            ni.name: (
                sorted(p.uid for p in ni.pods),
                ni.requested.milli_cpu,
                ni.requested.memory,
            )
            for ni in self.snapshot.node_infos()
        }
        return Ending(
            sorted(self.bound),
            dict(self.conditions.pods),
            list(self.conditions.groups),
            nodes,
            self.algorithm.next_start_node_index,
        )


def _endings(
    racks: Sequence[Sequence[int]], busy: Sequence[int], gangs: Sequence[Gang], *, old: bool
) -> list[Ending]:
    """Every gang's ending, simulating in the snapshot, or through the cache (`old`)."""

    async def run() -> list[Ending]:
        cluster = Cluster(racks, busy)
        with pytest.MonkeyPatch.context() as mp:
            if old:
                cluster.reference = True
                mp.setattr(
                    groupcycle, "SnapshotWorld", lambda snap: CacheWorld(cluster.cache, snap)
                )
            return [await cluster.run(g, gang) for g, gang in enumerate(gangs)]

    return anyio.run(run)


gang_st = st.builds(
    lambda size, short, cpu, topology: Gang(size, max(1, size - short), cpu, topology),
    st.integers(1, 5),
    st.integers(0, 2),
    st.sampled_from(["500m", "1", "1500m", "2"]),
    st.booleans(),
)


@settings(max_examples=25, deadline=None)
@given(
    racks=st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=4), min_size=1, max_size=4),
    busy=st.lists(st.sampled_from([0, 0, 500, 1000, 2500]), max_size=6),
    gangs=st.lists(gang_st, min_size=1, max_size=5),
)
def test_simulating_in_the_snapshot_decides_as_the_cache_did(
    racks: list[list[int]], busy: list[int], gangs: list[Gang]
) -> None:
    new = _endings(racks, busy, gangs, old=False)
    assert new == _endings(racks, busy, gangs, old=True)
    for e in new:
        # What the generated gangs exercise (pytest --hypothesis-show-statistics).
        event(f"gang {e.groups[-1][2] if e.groups else 'no condition'}")


def test_forgetting_out_of_order_still_restores_the_node() -> None:
    cache, snapshot = Cache(), Snapshot()
    cache.add_node(make_node("n0").capacity(cpu="4", memory="8Gi", pods="110").obj())
    cache.update_snapshot(snapshot)
    [original] = snapshot.node_infos()
    a = make_pod("a").uid("a").node("n0").cpu("1").obj()
    b = make_pod("b").uid("b").node("n0").cpu("500m").obj()
    snapshot.assume_pod(a)
    snapshot.assume_pod(b)
    assert snapshot.columns.req_cpu[0] == 1500
    snapshot.forget_pod(a)
    [ni] = snapshot.node_infos()
    assert ([p.name for p in ni.pods], ni.requested.milli_cpu) == (["b"], 500)
    assert snapshot.columns.req_cpu[0] == 500
    snapshot.forget_pod(b)
    assert snapshot.node_infos()[0] is original
    assert snapshot.get("n0") is original
    assert snapshot.columns.req_cpu[0] == 0
    # The cache never saw either pod.
    n0 = cache.get_node_info("n0")
    assert n0 is not None
    assert n0.pods == []


def test_inconsistent_assume_or_forget_is_a_bug() -> None:
    cache, snapshot = Cache(), Snapshot()
    cache.add_node(make_node("n0").obj())
    cache.update_snapshot(snapshot)
    pod = make_pod("a").uid("a").node("n0").obj()
    with pytest.raises(SnapshotError):
        snapshot.forget_pod(pod)
    snapshot.assume_pod(pod)
    with pytest.raises(SnapshotError):
        snapshot.assume_pod(pod)
    with pytest.raises(SnapshotError):
        snapshot.assume_pod(make_pod("b").uid("b").node("elsewhere").obj())


def test_a_cache_refresh_forgets_what_a_cycle_left_assumed() -> None:
    """Cache.UpdateSnapshot's forgetAllAssumedPods: the refresh starts from the cache."""
    cache, snapshot = Cache(), Snapshot()
    cache.add_node(make_node("n0").capacity(cpu="4", memory="8Gi", pods="110").obj())
    cache.update_snapshot(snapshot)
    snapshot.assume_pod(make_pod("a").uid("a").node("n0").cpu("1").obj())
    # The cache changed the node meanwhile: its version must win, without the pod.
    cache.add_pod(make_pod("real").uid("r").node("n0").cpu("2").obj())
    cache.update_snapshot(snapshot)
    assert snapshot.assumed_pods() == 0
    [ni] = snapshot.node_infos()
    assert ([p.name for p in ni.pods], ni.requested.milli_cpu) == (["real"], 2000)
    assert snapshot.columns.req_cpu[0] == 2000
