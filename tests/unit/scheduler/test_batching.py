"""Opportunistic batching through the real default plugins (batch.go, schedulePod).

A cluster of real NodeInfos in the real Cache and Snapshot, the default profile with
PodTopologySpread's system defaults off (the only way pods become signable), and the real
Algorithm; each placed pod is assumed in the cache as the scheduler does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from asched.api import Node, Pod
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.base import featuregates
from asched.framework.cycle_state import CycleState
from asched.framework.opportunistic import MAX_BATCH_AGE
from asched.framework.runtime import Framework
from asched.scheduler.algorithm import Algorithm, ScheduleResult
from asched.testing import make_node, make_pod
from asched.testing.profiles import default_profile
from tests.unit.framework.fakes import EmptyStores


class BatchCounts:
    """The runtime metrics a cycle reports; only the batch counters are kept."""

    def __init__(self) -> None:
        self.attempts: Counter[str] = Counter()
        self.flushed: Counter[str] = Counter()
        self.rescores = 0

    def batch_attempt(self, profile: str, result: str) -> None:
        self.attempts[result] += 1

    def batch_flushed(self, profile: str, reason: str) -> None:
        self.flushed[reason] += 1

    def batch_rescore(self, profile: str) -> None:
        self.rescores += 1

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


class Cluster:
    def __init__(self, nodes: list[Node], *, batching: bool = True, batchable: bool = True):
        self.cache, self.snapshot = Cache(), Snapshot()
        for n in nodes:
            self.cache.add_node(n)
        self.services = EmptyStores(self.snapshot)
        self.counts = BatchCounts()
        self.services.metrics = self.counts  # type: ignore[assignment]
        spec, registry = default_profile(batchable=batchable)
        self.fwk = Framework(spec, registry, self.services, batching=batching)
        self.algo = Algorithm(0)
        self.cycle = 0

    async def schedule(self, pod: Pod, *, skip_cycles: int = 0) -> ScheduleResult:
        """One scheduling cycle (the next, or after `skip_cycles` others), then assume."""
        self.cycle += 1 + skip_cycles
        self.cache.update_snapshot(self.snapshot)
        result = await self.algo.schedule_pod(
            self.fwk, CycleState(), pod, self.snapshot.node_infos(), cycle=self.cycle
        )
        self.cache.assume_pod(replace(pod, node_name=result.suggested_host))
        return result

    async def place(self, pod: Pod, **kw: Any) -> str:
        return (await self.schedule(pod, **kw)).suggested_host

    async def totals(self, pod: Pod) -> dict[str, int]:
        """Every node's total in a full evaluation now (batching not involved)."""
        self.cache.update_snapshot(self.snapshot)
        state, nodes = CycleState(), self.snapshot.node_infos()
        await self.fwk.run_pre_filter(state, pod, nodes)
        feasible = [n for n in nodes if await self.fwk.run_filter_plugins(state, pod, n) is None]
        await self.fwk.run_pre_score(state, pod, feasible)
        table, _ = await self.fwk.run_score_plugins(state, pod, feasible)
        return dict(zip(table.nodes, table.totals, strict=True))


def node(name: str, cpu: int = 4, **labels: str) -> Node:
    b = make_node(name).capacity(cpu=str(cpu), memory="32Gi", pods="110")
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


def pod(name: str, cpu: str = "500m") -> Pod:
    return make_pod(name).cpu(cpu).memory("1Gi").obj()


async def test_the_next_alike_pod_takes_the_hint_and_skips_the_search() -> None:
    c = Cluster([node(f"n{i}", cpu=4 + i) for i in range(6)])
    first = await c.schedule(pod("p0"))
    assert first.feasible_nodes == 6
    start = c.algo.next_start_node_index
    second = await c.schedule(pod("p1"))
    # Only the hinted node was filtered, nothing was scored, the round robin stayed.
    assert (second.evaluated_nodes, second.feasible_nodes, second.table) == (1, 1, None)
    assert (first.hinted, second.hinted) == (False, True)
    assert c.algo.next_start_node_index == start
    assert c.counts.attempts == {"no_hint": 1, "hint_used": 1}
    assert c.fwk.batch is not None
    assert c.fwk.batch.batched_pods == 1
    # The node p0 took still fit p1, so it was rescored to compete again.
    assert c.counts.rescores == 1


@settings(max_examples=40, deadline=None)
@given(
    cpus=st.lists(st.integers(2, 12), min_size=2, max_size=12),
    request=st.sampled_from(["100m", "500m", "1", "2"]),
    count=st.integers(2, 8),
)
def test_under_100_nodes_a_batched_pick_is_a_best_node(
    cpus: list[int], request: str, count: int
) -> None:
    """With every node evaluated (fewer than 100), the hint is a node with the best total
    of a full evaluation: the kept ranking plus the rescored last node is every feasible
    node. (Which of tied nodes comes out differs from a fresh heap; Go's does too.)"""
    import anyio

    async def run() -> None:
        c = Cluster([node(f"n{i}", cpu=cpu) for i, cpu in enumerate(cpus)])
        for i in range(count):
            p = make_pod(f"p{i}").cpu(request).memory("1Gi").obj()
            totals = await c.totals(p)
            if not totals:
                return
            chosen = await c.place(p)
            assert totals[chosen] == max(totals.values()), (i, chosen, totals)
        # Everything after the first pod came from the batch, or the test proves nothing.
        assert c.counts.attempts["hint_used"] >= 1

    anyio.run(run)


async def test_sampling_keeps_a_batch_within_the_first_pods_window() -> None:
    """150 nodes: each pod evaluates 100 (adaptive percentageOfNodesToScore). The big node
    sits outside the first pod's window. A fresh evaluation of the second pod starts at
    node 100 and finds it; a batched pod picks from the first window's ranking, as
    kube-scheduler does."""
    nodes = [node(f"n{i:03}", cpu=64 if i == 120 else 4) for i in range(150)]
    batched, fresh = Cluster(nodes), Cluster(nodes, batching=False)
    got_b = [await batched.place(pod(f"p{i}")) for i in range(4)]
    got_f = [await fresh.place(pod(f"p{i}")) for i in range(4)]
    assert got_b[0] == got_f[0] != "n120"
    assert "n120" not in got_b
    assert got_f[1:3] == ["n120"] * 2
    assert batched.counts.attempts["hint_used"] == 3


async def test_the_default_profile_never_batches() -> None:
    nodes = [node(f"n{i:03}", cpu=64 if i == 120 else 4) for i in range(150)]
    c = Cluster(nodes, batchable=False)
    got = [await c.place(pod(f"p{i}")) for i in range(3)]
    assert got[1:] == ["n120", "n120"]
    assert c.counts.attempts == {"no_hint": 3}
    assert c.counts.flushed == {"pod_not_batchable": 3}


async def test_the_gate_off_means_no_batch_at_all() -> None:
    c = Cluster([node(f"n{i}") for i in range(3)], batching=False)
    await c.place(pod("p0"))
    assert c.fwk.batch is None
    assert not c.counts.attempts


async def test_a_different_pod_a_skipped_cycle_and_a_nomination_flush() -> None:
    c = Cluster([node(f"n{i}", cpu=4 + i) for i in range(5)])
    await c.place(pod("p0"))
    await c.place(pod("other", cpu="1"))  # another signature
    assert c.counts.flushed["pod_incompatible"] == 1
    await c.place(pod("p1", cpu="1"), skip_cycles=1)  # another profile's pod came between
    assert c.counts.flushed["pod_skipped"] == 1
    nominated = make_pod("p2").cpu("1").memory("1Gi").nominated("n0").obj()
    assert await c.place(nominated) == "n0"
    assert c.counts.flushed["pod_nominated"] == 1
    assert c.counts.attempts["hint_used"] == 0


async def test_members_of_one_group_cycle_share_its_number_and_still_batch() -> None:
    """A pod-group cycle places its members under one cycle number; batchStateCompatible
    accepts the same number there (GenericWorkload, which asched always serves)."""
    c = Cluster([node(f"n{i}", cpu=4 + i) for i in range(5)])
    await c.place(pod("m0"))
    c.cycle -= 1  # the next member runs in the same cycle
    second = await c.schedule(pod("m1"))
    assert second.hinted
    c.cycle -= 2  # an earlier cycle number is neither the next nor the same
    await c.place(pod("m2"))
    assert c.counts.flushed["pod_skipped"] == 1


async def test_a_ranking_older_than_half_a_second_is_not_used() -> None:
    c = Cluster([node(f"n{i}", cpu=4 + i) for i in range(5)])
    await c.place(pod("p0"))
    c.services.clock.advance(MAX_BATCH_AGE + 0.01)
    res = await c.schedule(pod("p1"))
    assert res.feasible_nodes == 5
    assert c.counts.flushed["expired"] == 1


async def test_a_last_node_that_no_longer_fits_is_not_rescored() -> None:
    """refreshHintCandidates: rejected by Filter, the last chosen node just drops out."""
    c = Cluster([node(f"n{i}", cpu=2 + i) for i in range(4)])
    first = await c.place(pod("p0", cpu="1500m"))
    second = await c.place(pod("p1", cpu="1500m"))
    assert second != first
    assert c.counts.attempts["hint_used"] == 1
    assert c.counts.rescores == 0 or first == "n3"  # only the biggest fits twice


async def test_a_removed_last_node_ends_the_batch() -> None:
    c = Cluster([node(f"n{i}", cpu=4 + i) for i in range(4)])
    first = await c.place(pod("p0"))
    c.cache.remove_node(first)
    res = await c.schedule(pod("p1"))
    assert res.feasible_nodes == 3
    assert c.counts.flushed["node_missing"] == 1


def test_feature_gates_flag() -> None:
    defaults = featuregates.parse("")
    assert defaults["OpportunisticBatching"]
    assert not defaults["DRAWorkloadResourceClaims"]
    assert not defaults["CompositePodGroup"]
    assert featuregates.parse("OpportunisticBatching=false") == defaults | {
        "OpportunisticBatching": False
    }
    assert featuregates.parse("DRAWorkloadResourceClaims=true")["DRAWorkloadResourceClaims"]
    assert featuregates.parse("CompositePodGroup=true")["CompositePodGroup"]
