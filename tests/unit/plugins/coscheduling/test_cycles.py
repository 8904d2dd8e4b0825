"""Gang scheduling through asched's real scheduling and binding cycles (no network).

Each test runs pods through SchedulingCycle and BindingCycle with Coscheduling and
NodeResourcesFit in a real Framework (see cluster.py), and asserts what a user would see:
which pods were bound, the FailedScheduling message each member got, the PodGroup event,
what was requeued, and the plugin's gate and backoff afterwards.
"""

from __future__ import annotations

import anyio
import pytest

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.status import Code
from tests.builders import make_node, make_pod, make_pod_group
from tests.unit.plugins.coscheduling.cluster import GangCluster


def members(group: str, n: int, cpu: str = "1", prefix: str = "") -> list[Pod]:
    return [
        make_pod(f"{prefix or group}{i}").pod_group(group).cpu(cpu).obj() for i in range(1, n + 1)
    ]


def cluster(*groups: tuple[str, int], nodes: int = 1, **args: int) -> GangCluster:
    """`nodes` nodes of 4 cpu and PodGroups (name, minMember)."""
    return GangCluster(
        [make_node(f"n{i}").capacity(cpu="4", pods="110").obj() for i in range(1, nodes + 1)],
        [make_pod_group(name).min_member(m).obj() for name, m in groups],
        **args,
    )


async def test_permit_waits_then_allows_every_sibling_at_quorum() -> None:
    c = cluster(("a", 3))
    pods = members("a", 3)
    c.add(*pods)
    async with anyio.create_task_group() as tg:
        assert await c.attempt(pods[0], tg) == "waiting"
        # The first member to park pulls its siblings out of backoff/unschedulable.
        assert c.activated_names() == ["a2", "a3"]
        assert c.plugin.manager.gate_holder == "default/a"
        assert await c.attempt(pods[1], tg) == "waiting"
        assert c.bound == {}
        assert await c.attempt(pods[2], tg) == "bound"
        await c.settle()
    assert c.bound == {"a3": "n1", "a1": "n1", "a2": "n1"}
    assert c.plugin.manager.gate_holder == ""
    # The siblings' bindings and the last member's run concurrently: any order.
    assert sorted(e[2:] for e in c.events.recorded if e[2] == "Scheduled") == [
        ("Scheduled", "Binding", f"Successfully assigned default/{name} to n1")
        for name in ("a1", "a2", "a3")
    ]
    assert c.queue.requeued == []
    assert sorted(c.queue.ended) == ["a1", "a2", "a3"]
    # Bound members are in the cache as bound, not assumed.
    assert all(not c.cache.is_assumed(p.uid) for p in pods)


async def test_permit_timeout_rejects_the_whole_gang_and_backs_off() -> None:
    c = GangCluster(
        [make_node("n1").capacity(cpu="4", pods="110").obj()],
        [make_pod_group("a").min_member(3).timeout(10).obj()],
        pod_group_backoff_seconds=30,
    )
    pods = members("a", 3)
    c.add(*pods)
    async with anyio.create_task_group() as tg:
        assert await c.attempt(pods[0], tg) == "waiting"
        c.clock.advance(5)
        assert await c.attempt(pods[1], tg) == "waiting"
        c.clock.advance(5)  # a1's deadline; a2 still had 5s left
        await c.settle()
    assert c.bound == {}
    # Rejections while waiting at Permit are one-node fit errors (bindingCycle).
    assert c.failed_scheduling("a1") == [
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin "
        "Coscheduling."
    ]
    assert c.failed_scheduling("a2") == [
        "0/1 nodes are available: 1 rejection in Unreserve: PodGroup default/a released "
        "its reservation because pod a1 was unreserved."
    ]
    assert sorted(c.queue.requeued) == [("a1", False), ("a2", False)]
    # Nothing stays reserved: Unreserve ran and the cache forgot both assumptions.
    assert all(not c.pod(p).node_name for p in pods)
    assert c.plugin.manager.gate_holder == ""
    st = c.plugin.manager.pre_filter(CycleState(), pods[2], c.nodes())
    assert st is not None
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message() == (
        "PodGroup default/a failed recently (Permit timeout or rejection of pod a1); "
        "retrying in 30s"
    )
    [event] = c.group_events()
    assert "did not reach minMember 3" in event[4]

    c.queue.activated.clear()
    c.clock.advance(30)
    c.plugin.manager.timers.fire_due()
    assert c.activated_names() == ["a1", "a2", "a3"]
    assert c.plugin.manager.pre_filter(CycleState(), pods[2], c.nodes()) is None


async def test_unreserve_is_idempotent() -> None:
    c = cluster(("a", 3), pod_group_backoff_seconds=30)
    pods = members("a", 3)
    c.add(*pods)
    pl = c.plugin
    async with anyio.create_task_group() as tg:
        await c.attempt(pods[0], tg)
        await c.attempt(pods[1], tg)
        a1 = c.pod(pods[0])
        assert a1.node_name == "n1"
        pl.unreserve(CycleState(), a1, "n1")  # e.g. a later Permit plugin rejected a1
        first_backoff = pl.manager.backoff_until("default/a")
        c.clock.advance(3)
        await c.settle()  # the waiting members are rejected and their Unreserve echoes
        pl.unreserve(CycleState(), a1, "n1")
        pl.unreserve(CycleState(), make_pod("x").pod_group("a").obj(), "n1")
    assert c.failed_scheduling("a2")[-1].startswith(
        "0/1 nodes are available: 1 rejection in Unreserve"
    )
    assert len(c.group_events()) == 1
    assert pl.manager.backoff_until("default/a") == first_backoff
    assert pl.manager.gate_holder == ""


async def test_bind_failure_after_quorum_does_not_back_off_the_group() -> None:
    c = cluster(("a", 2), pod_group_backoff_seconds=30)
    pods = members("a", 2)
    c.add(*pods)
    c.bind_fails.add("a2")
    async with anyio.create_task_group() as tg:
        assert await c.attempt(pods[0], tg) == "waiting"
        await c.attempt(pods[1], tg)
        await c.settle()
    assert c.bound == {"a1": "n1"}
    # The binding cycle ran Unreserve for a2 and requeued it as an error ...
    assert ("a2", True) in c.queue.requeued
    assert not c.cache.is_assumed(pods[1].uid)
    assert c.failed_scheduling("a2") == ['running Bind plugin "InformerBinder": etcd timeout']
    # ... but the group reached its quorum, so it is not punished with a backoff.
    assert not c.plugin.manager.in_backoff("default/a")
    assert c.group_events() == []


async def test_gate_serializes_competing_gangs_so_none_is_left_partial() -> None:
    # 4 cpu for two gangs of 3 x 1 cpu: only one can be placed. Interleaved in the queue,
    # per-pod Permit would let both reserve a part and wait forever; the gate lets A finish.
    c = cluster(("a", 3), ("b", 3))
    a, b = members("a", 3), members("b", 3)
    c.add(*a, *b)
    waiting_for_a = (
        "0/1 nodes are available: waiting for PodGroup default/a to finish its reservation."
    )
    async with anyio.create_task_group() as tg:
        assert await c.attempt(a[0], tg) == "waiting"
        assert await c.attempt(b[0], tg) == waiting_for_a
        assert await c.attempt(a[1], tg) == "waiting"
        c.queue.activated.clear()
        assert await c.attempt(b[1], tg) == waiting_for_a
        assert c.queue.activated == []
        assert await c.attempt(a[2], tg) == "bound"
        await c.settle()
        # A completed: the gate is free and B's turned-away members are back in the queue.
        assert sorted(c.bound) == ["a1", "a2", "a3"]
        assert {"b1", "b2"} <= set(c.activated_names())
        assert await c.attempt(b[0], tg) == "waiting"
        out = await c.attempt(b[1], tg)
        assert out == (
            "0/1 nodes are available: 1 Insufficient cpu. "
            "PodGroup default/b gets rejected due to Pod b2 is unschedulable even after PostFilter"
        )
        await c.settle()
    assert sorted(c.bound) == ["a1", "a2", "a3"]  # no partial B
    assert not any(c.pod(p).node_name for p in b)
    assert c.failed_scheduling("b1")[-1] == (
        "0/1 nodes are available: 1 optimistic rejection in PostFilter: PodGroup default/b "
        "cannot be placed now because pod b2 fits no node."
    )
    assert max(len(s) for s in c.partial_groups_seen) == 1


async def test_member_that_fits_no_node_releases_the_gang_at_once() -> None:
    # 8 cpu in total is enough for 1 + 1 + 5, but no node has 5 free.
    c = cluster(("a", 3), nodes=2)
    a = [*members("a", 2), make_pod("a3").pod_group("a").cpu("5").obj()]
    c.add(*a)
    pl = c.plugin
    async with anyio.create_task_group() as tg:
        await c.attempt(a[0], tg)
        await c.attempt(a[1], tg)
        out = await c.attempt(a[2], tg)
        await c.settle()  # no clock advance: nobody waits for the Permit timeout
    assert out == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "PodGroup default/a gets rejected due to Pod a3 is unschedulable even after PostFilter"
    )
    for sibling in ("a1", "a2"):
        assert c.failed_scheduling(sibling) == [
            "0/1 nodes are available: 1 optimistic rejection in PostFilter: PodGroup "
            "default/a cannot be placed now because pod a3 fits no node."
        ]
    assert c.bound == {}
    assert pl.manager.gate_holder == ""
    [event] = c.group_events()
    assert "pod a3 fits no node: 2 Insufficient cpu" in event[4]
    # Siblings wait for a3 instead of taking the gate for a gang that cannot complete ...
    st = pl.manager.pre_filter(CycleState(), a[0], c.nodes())
    assert st is not None
    assert st.code == Code.PENDING
    assert st.message() == "PodGroup default/a waits for its member a3, which fits no node"
    # ... until a3 itself is retried.
    assert pl.manager.pre_filter(CycleState(), a[2], c.nodes()) is None
    assert pl.manager.pre_filter(CycleState(), a[0], c.nodes()) is None


@pytest.mark.parametrize(
    ("gangs", "size", "nodes", "complete"),
    [
        pytest.param(6, 3, 3, 4, id="150pct-gangs-of-3"),
        pytest.param(3, 8, 3, 1, id="150pct-gangs-of-8"),
        pytest.param(12, 2, 2, 4, id="300pct-gangs-of-2"),
    ],
)
async def test_oversubscribed_interleaved_gangs_end_all_or_nothing(
    gangs: int, size: int, nodes: int, complete: int
) -> None:
    names = [f"g{i}" for i in range(gangs)]
    c = cluster(*[(n, size) for n in names], nodes=nodes, permit_waiting_time_seconds=10)
    pods = {n: members(n, size, prefix=f"{n}-") for n in names}
    c.add(*[p for ps in pods.values() for p in ps])
    interleaved = [pods[n][i] for i in range(size) for n in names]
    async with anyio.create_task_group() as tg:
        for _ in range(4 * gangs):  # what the queue's retries would do, many times over
            for p in interleaved:
                if not c.pod(p).node_name:
                    await c.attempt(p, tg)
            await c.settle()
            c.clock.advance(10)  # Permit timeouts fire
            await c.settle()
            c.plugin.manager.timers.fire_due()
    bound = {n: sum(p.name in c.bound for p in pods[n]) for n in names}
    assert sorted(bound.values()) == [0] * (gangs - complete) + [size] * complete
    assert len(c.fwk.waiting_pods) == 0
    assert max(len(s) for s in c.partial_groups_seen) <= 1
    # Nothing is left assumed: every pod is either bound or forgotten.
    assert all(c.pod(p).node_name == c.bound.get(p.name, "") for ps in pods.values() for p in ps)
