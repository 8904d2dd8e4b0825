"""The gang state machine: ordering, quorum, timeouts, backoff, the gate, failing fast."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import anyio
import pytest

from asched.api import Pod
from asched.api.podgroup import VOLCANO_GROUP_ANNOTATION, ObjectRef
from asched.framework.cycle_state import CycleState
from asched.framework.events import QueueingHint
from asched.framework.status import Code
from asched.framework.types import NodeToStatus, QueuedPodInfo
from asched.framework.waiting import WaitingPod
from tests.builders import PodBuilder, PodGroupBuilder, make_node, make_pod, make_pod_group
from tests.unit.plugins.coscheduling.fakes import GangHandle, plugin_for, qpi

NODE_4CPU = make_node("n1").capacity(cpu="4", memory="32Gi", pods="110")


def members(group: str, n: int, cpu: str = "1", prefix: str = "") -> list[Pod]:
    return [
        make_pod(f"{prefix or group}{i}").pod_group(group).cpu(cpu).obj() for i in range(1, n + 1)
    ]


def gang_handle(*groups: tuple[str, int], nodes: int = 1) -> GangHandle:
    return GangHandle(
        [make_node(f"n{i}").capacity(cpu="4", pods="110").obj() for i in range(1, nodes + 1)],
        [make_pod_group(name).min_member(m).obj() for name, m in groups],
    )


# ---- QueueSort ---------------------------------------------------------------------------


def test_queue_sort_keeps_siblings_together_in_group_creation_order() -> None:
    h = GangHandle(
        [NODE_4CPU.obj()],
        [
            make_pod_group("b").created("2026-01-01T00:00:00Z").obj(),
            make_pod_group("a").created("2026-01-01T00:00:00Z").obj(),
            make_pod_group("c").created("2025-12-31T00:00:00Z").obj(),
        ],
    )
    pl = plugin_for(h)
    pods = [
        make_pod("z1").pod_group("a").obj(),
        make_pod("y9").pod_group("b").obj(),
        make_pod("a1").pod_group("b").obj(),
        make_pod("z0").pod_group("a").obj(),
        make_pod("m").pod_group("c").obj(),
        make_pod("hi").priority(100).pod_group("b").obj(),
    ]

    def cmp(x: QueuedPodInfo, y: QueuedPodInfo) -> int:
        return -1 if pl.less(x, y) else 1

    order = sorted((qpi(p) for p in pods), key=functools.cmp_to_key(cmp))
    assert [q.pod.name for q in order] == ["hi", "m", "z0", "z1", "a1", "y9"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param(
            make_pod("p").priority(5), make_pod("q").pod_group("old"), id="higher-priority-first"
        ),
        pytest.param(
            make_pod("q").pod_group("old"), make_pod("p").pod_group("new"), id="older-group-first"
        ),
        pytest.param(
            make_pod("solo"), make_pod("q").pod_group("old"), id="pod-without-group-by-queue-time"
        ),
        pytest.param(
            make_pod("q").pod_group("missing"),
            make_pod("p").pod_group("new"),
            id="unknown-group-falls-back-to-queue-time",
        ),
    ],
)
def test_queue_sort_pairs(first: PodBuilder, second: PodBuilder) -> None:
    h = GangHandle(
        [NODE_4CPU.obj()],
        [
            make_pod_group("old").created("2026-01-01T00:00:00Z").obj(),
            make_pod_group("new").created("2026-02-01T00:00:00Z").obj(),
        ],
    )
    pl = plugin_for(h)
    a, b = qpi(first.obj()), qpi(second.obj())
    assert pl.less(a, b)
    assert not pl.less(b, a)


def test_failed_group_sorts_by_its_failure_time() -> None:
    """scheduler-plugins' head-of-line fix: a group that failed goes behind newer ones."""
    old_member = make_pod("o1").pod_group("old").obj()
    # Both created before the FakeClock's wall time (2023-11-14), as real groups would be.
    h = GangHandle(
        [NODE_4CPU.obj()],
        [
            make_pod_group("old").min_member(2).created("2023-01-01T00:00:00Z").obj(),
            make_pod_group("new").created("2023-06-01T00:00:00Z").obj(),
        ],
    )
    h.add(old_member, make_pod("o2").pod_group("old").obj())
    pl = plugin_for(h)
    newer = qpi(make_pod("n1").pod_group("new").obj())
    assert pl.less(qpi(old_member), newer)
    pl.permit(CycleState(), old_member, "n1")  # parks without quorum, takes the gate
    pl.unreserve(CycleState(), old_member, "n1")  # ... and gives up
    assert pl.less(newer, qpi(old_member))


# ---- PreEnqueue ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pods", "groups", "want"),
    [
        pytest.param([make_pod("p")], [], None, id="not-in-a-group"),
        pytest.param(
            [make_pod("p").pod_group("g")],
            [],
            "waiting for PodGroup default/g to be created",
            id="podgroup-missing",
        ),
        pytest.param(
            [make_pod("p").pod_group("g"), make_pod("q").pod_group("g")],
            [make_pod_group("g").min_member(3)],
            "waiting for PodGroup default/g: 2 of its minMember 3 pods exist",
            id="fewer-than-min-member",
        ),
        pytest.param(
            [
                make_pod("p").pod_group("g"),
                make_pod("q").pod_group("g"),
                make_pod("r").pod_group("g").phase("Succeeded"),
            ],
            [make_pod_group("g").min_member(3)],
            "waiting for PodGroup default/g: 2 of its minMember 3 pods exist",
            id="finished-pods-do-not-count",
        ),
        pytest.param(
            [
                make_pod("p").pod_group("g"),
                make_pod("q").pod_group("g"),
                make_pod("r").annotation(VOLCANO_GROUP_ANNOTATION, "g"),
            ],
            [make_pod_group("g").min_member(3)],
            None,
            id="volcano-annotation-joins-too",
        ),
        pytest.param(
            [
                make_pod("p").pod_group("g"),
                make_pod("q").pod_group("g"),
                make_pod("r").pod_group("g"),
            ],
            [make_pod_group("g").min_member(3)],
            None,
            id="quorum-exists",
        ),
    ],
)
def test_pre_enqueue_holds_until_group_and_min_member_exist(
    pods: list[PodBuilder], groups: list[PodGroupBuilder], want: str | None
) -> None:
    decoded = [p.obj() for p in pods]
    h = GangHandle([NODE_4CPU.obj()], [g.obj() for g in groups])
    h.add(*decoded[1:])  # the first pod is being enqueued, maybe not yet in the view
    st = plugin_for(h).pre_enqueue(decoded[0])
    if want is None:
        assert st is None
    else:
        assert st is not None
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.message() == want
        assert st.plugin == "Coscheduling"


# ---- PreFilter -----------------------------------------------------------------------------


def _busy(cpu: str) -> Pod:
    return make_pod("other").cpu(cpu).node("n1").obj()


@pytest.mark.parametrize(
    ("group", "member_cpu", "extra", "want_code", "want"),
    [
        pytest.param(make_pod_group("g").min_member(3), "1", [], None, "", id="fits"),
        pytest.param(
            make_pod_group("g").min_member(4),
            "1",
            [],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "pre-filter pod g1 cannot find enough sibling pods, current pods number: 3, "
            "minMember of group: 4",
            id="fewer-pods-than-min-member",
        ),
        pytest.param(
            make_pod_group("g").min_member(3),
            "1",
            [make_pod("g-gated").pod_group("g").gate("wait").obj()],
            None,
            "",
            id="gated-extra-member-is-tolerated",
        ),
        pytest.param(
            make_pod_group("g").min_member(3).min_resources(cpu="8"),
            "1",
            [],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "PodGroup default/g can never fit: it needs 8 cpu but the cluster's "
            "allocatable cpu is 4",
            id="min-resources-above-allocatable",
        ),
        pytest.param(
            make_pod_group("g").min_member(3),
            "2",
            [],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "PodGroup default/g can never fit: it needs 6 cpu but the cluster's "
            "allocatable cpu is 4",
            id="member-requests-above-allocatable",
        ),
        pytest.param(
            make_pod_group("g").min_member(3).min_resources(cpu="2"),
            "500m",
            [_busy("3")],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "PodGroup default/g does not fit now: its minResources need 2 cpu but 1 "
            "is free in the cluster",
            id="min-resources-above-free",
        ),
        pytest.param(
            make_pod_group("g").min_member(3).min_resources(cpu="4"),
            "500m",
            [make_pod("g-bound").pod_group("g").cpu("3").node("n1").obj()],
            None,
            "",
            id="own-assigned-members-count-as-free",
        ),
    ],
)
def test_pre_filter(
    group: PodGroupBuilder, member_cpu: str, extra: list[Pod], want_code: Code | None, want: str
) -> None:
    h = GangHandle([NODE_4CPU.obj()], [group.obj()])
    pods = members("g", 3, member_cpu)
    h.add(*pods, *extra)
    pl = plugin_for(h)
    st = pl.manager.pre_filter(CycleState(), pods[0], list(h.infos.values()))
    if want_code is None:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.message()) == (want_code, want)


def test_pre_filter_rejects_when_gated_members_break_the_quorum() -> None:
    h = gang_handle(("g", 3))
    pods = [*members("g", 2), make_pod("g3").pod_group("g").gate("wait").obj()]
    h.add(*pods)
    st = plugin_for(h).manager.pre_filter(CycleState(), pods[0], list(h.infos.values()))
    assert st is not None
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert "cannot proceed due to 1 scheduling-gated pods in PodGroup default/g" in st.message()


def test_never_fit_group_gets_a_warning_event_on_the_pod_group() -> None:
    h = GangHandle([NODE_4CPU.obj()], [make_pod_group("g").min_member(3).obj()])
    pods = members("g", 3, "2")
    h.add(*pods)
    pl = plugin_for(h)
    for p in pods:
        pl.manager.pre_filter(CycleState(), p, list(h.infos.values()))
    [(ref, kind, reason, _, message)] = h.events.recorded  # deduplicated across members
    pg = h.groups.get("default/g")
    assert pg is not None
    assert ref == ObjectRef("PodGroup", "default", "g", pg.uid, "scheduling.x-k8s.io/v1alpha1")
    assert (kind, reason) == ("Warning", "Unschedulable")
    assert "can never fit" in message


# ---- Permit: wait, then allow all at quorum -----------------------------------------------


@pytest.mark.parametrize(
    ("group_timeout", "args", "want"),
    [
        pytest.param(7, {}, 7.0, id="podgroup-schedule-timeout-wins"),
        pytest.param(None, {"permit_waiting_time_seconds": 30}, 30.0, id="plugin-args"),
        pytest.param(None, {}, 60.0, id="default"),
        pytest.param(0, {"permit_waiting_time_seconds": 0}, 60.0, id="zero-means-default"),
    ],
)
def test_permit_timeout(group_timeout: int | None, args: dict[str, int], want: float) -> None:
    pg = make_pod_group("a").min_member(2)
    if group_timeout is not None:
        pg = pg.timeout(group_timeout)
    h = GangHandle([NODE_4CPU.obj()], [pg.obj()])
    pods = members("a", 2)
    h.add(*pods)
    st, timeout = plugin_for(h, **args).permit(CycleState(), pods[0], "n1")
    assert st is not None
    assert st.code == Code.WAIT
    assert timeout == want


def test_permit_without_group_succeeds_and_with_missing_group_rejects() -> None:
    h = GangHandle([NODE_4CPU.obj()])
    pl = plugin_for(h)
    assert pl.permit(CycleState(), make_pod("solo").obj(), "n1") == (None, 0.0)
    st, _ = pl.permit(CycleState(), make_pod("lost").pod_group("gone").obj(), "n1")
    assert st is not None
    assert st.code == Code.UNSCHEDULABLE


# ---- timeout, backoff, Unreserve ---------------------------------------------------------


# ---- the gate: no deadlock between competing gangs ----------------------------------------


async def test_gate_is_taken_back_when_its_holder_outlives_the_timeout() -> None:
    h = gang_handle(("a", 3), ("b", 2))
    a, b = members("a", 3), members("b", 2)
    h.add(*a, *b)
    pl = plugin_for(h, permit_waiting_time_seconds=10)
    pl.permit(CycleState(), a[0], "n1")  # parked, but its binding cycle never times out
    assert pl.manager.gate_holder == "default/a"
    h.clock.advance(10)
    st = pl.manager.pre_filter(CycleState(), b[0], list(h.infos.values()))
    assert st is not None
    assert st.code == Code.PENDING
    h.clock.advance(5)  # the grace is over
    pl.manager.timers.fire_due()
    assert pl.manager.gate_holder == ""
    assert "b1" in h.activated_names()
    assert pl.manager.pre_filter(CycleState(), b[0], list(h.infos.values())) is None


def test_gate_is_released_when_its_pod_group_is_deleted() -> None:
    h = gang_handle(("a", 3), ("b", 2))
    a, b = members("a", 3), members("b", 2)
    h.add(*a, *b)
    pl = plugin_for(h)
    pl.permit(CycleState(), a[0], "n1")
    h.groups.delete("default/a")
    assert pl.manager.pre_filter(CycleState(), b[0], list(h.infos.values())) is None
    assert pl.manager.gate_holder == ""


@pytest.mark.parametrize(
    ("pod", "min_member", "bound"),
    [
        pytest.param(make_pod("solo"), 3, 0, id="pod-without-group"),
        pytest.param(make_pod("c1").pod_group("c"), 1, 0, id="single-member-group"),
        pytest.param(make_pod("c1").pod_group("c"), 2, 1, id="completes-its-quorum"),
    ],
)
def test_gate_lets_through_pods_that_never_wait(
    pod: PodBuilder, min_member: int, bound: int
) -> None:
    h = gang_handle(("a", 3), ("c", min_member))
    h.add(
        *members("a", 3),
        *[make_pod(f"cb{i}").pod_group("c").node("n1").obj() for i in range(bound)],
    )
    pl = plugin_for(h)
    pl.permit(CycleState(), h.pods[next(iter(h.pods))], "n1")
    assert pl.manager.gate_holder == "default/a"
    p = pod.obj()
    h.add(p)
    assert pl.manager.pre_filter(CycleState(), p, list(h.infos.values())) is None


# ---- failing fast ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("percentage", "assigned", "pods", "rejected"),
    [
        # scheduler-plugins' podGroupRejectPercentage cases (minMember 10).
        pytest.param(10, 9, 12, False, id="default-10pct-9-of-10-keeps"),
        pytest.param(10, 8, 12, True, id="default-10pct-8-of-10-rejects"),
        pytest.param(0, 9, 12, True, id="0pct-always-rejects"),
        pytest.param(100, 0, 12, False, id="100pct-never-rejects"),
        pytest.param(50, 6, 12, False, id="50pct-6-of-10-keeps"),
        pytest.param(50, 4, 12, True, id="50pct-4-of-10-rejects"),
        # Ours: when the untried members cannot make up minMember, reject regardless.
        pytest.param(100, 9, 10, True, id="cannot-complete-rejects-even-at-100pct"),
        pytest.param(10, 10, 12, False, id="quorum-already-assigned"),
    ],
)
async def test_post_filter_reject_percentage(
    percentage: int, assigned: int, pods: int, rejected: bool
) -> None:
    h = GangHandle(
        [make_node("n1").capacity(cpu="64", pods="110").obj()],
        [make_pod_group("g").min_member(10).obj()],
    )
    group = members("g", pods)
    for i, p in enumerate(group):
        h.add(
            make_pod(p.name).uid(p.uid).pod_group("g").cpu("1").node("n1").obj()
            if i < assigned
            else p
        )
    failing = group[assigned] if assigned < pods else group[-1]
    pl = plugin_for(h, pod_group_reject_percentage=percentage)
    _, st = await pl.post_filter(CycleState(), failing, NodeToStatus())
    assert st is not None
    assert st.code == Code.UNSCHEDULABLE
    assert ("gets rejected" in st.message()) == rejected
    assert (pl.manager.describe()["blocked"] != {}) == rejected


async def test_post_filter_is_quiet_after_our_own_pre_filter_rejection() -> None:
    h = gang_handle(("a", 3), ("b", 2))
    a, b = members("a", 3), members("b", 2)
    h.add(*a, *b)
    pl = plugin_for(h, pod_group_backoff_seconds=30)
    pl.permit(CycleState(), a[0], "n1")
    state = CycleState()
    _, st = pl.pre_filter(state, b[0], list(h.infos.values()))
    assert st is not None
    assert st.code == Code.PENDING
    _, pst = await pl.post_filter(state, b[0], NodeToStatus(absent=st))
    assert pst is not None
    assert pst.code == Code.SKIP
    assert not pl.manager.in_backoff("default/b")  # waiting for the gate is no failure
    _, pst = await pl.post_filter(CycleState(), make_pod("solo").obj(), NodeToStatus())
    assert pst is not None
    assert pst.code == Code.SKIP


# ---- timers and hints ---------------------------------------------------------------------


async def test_run_activates_a_group_when_its_backoff_ends() -> None:
    h = gang_handle(("a", 2))
    a = members("a", 2)
    h.add(*a)
    pl = plugin_for(h, pod_group_backoff_seconds=5)
    async with anyio.create_task_group() as tg:
        tg.start_soon(pl.manager.run)
        await anyio.wait_all_tasks_blocked()
        pl.permit(CycleState(), a[0], "n1")
        h.activated.clear()
        pl.unreserve(CycleState(), a[0], "n1")  # fails the group: backoff until +5s
        await anyio.wait_all_tasks_blocked()
        h.clock.advance(4.9)
        await anyio.wait_all_tasks_blocked()
        assert h.activated == []
        h.clock.advance(0.1)
        await anyio.wait_all_tasks_blocked()
        assert h.activated_names() == ["a1", "a2"]
        tg.cancel_scope.cancel()


_HintFn = Callable[[Pod, object | None, object | None], QueueingHint]


@pytest.mark.parametrize(
    ("hint", "min_member", "old", "new", "want"),
    [
        pytest.param(
            "member",
            2,
            None,
            make_pod("g9").pod_group("g").obj(),
            QueueingHint.QUEUE,
            id="sibling-added-completes-minMember",
        ),
        pytest.param(
            "member",
            3,
            None,
            make_pod("g9").pod_group("g").obj(),
            QueueingHint.QUEUE_SKIP,
            id="sibling-added-still-short-of-minMember",
        ),
        pytest.param(
            "member",
            0,
            None,
            make_pod("g9").pod_group("g").obj(),
            QueueingHint.QUEUE_SKIP,
            id="sibling-added-podgroup-missing",
        ),
        pytest.param(
            "member",
            2,
            None,
            make_pod("x").pod_group("other").obj(),
            QueueingHint.QUEUE_SKIP,
            id="other-group-pod-added",
        ),
        pytest.param(
            "member",
            2,
            None,
            make_pod("g9", "elsewhere").pod_group("g").obj(),
            QueueingHint.QUEUE_SKIP,
            id="same-name-other-namespace",
        ),
        pytest.param(
            "group", 2, None, make_pod_group("g").obj(), QueueingHint.QUEUE, id="own-podgroup-added"
        ),
        pytest.param(
            "group",
            2,
            make_pod_group("h").obj(),
            make_pod_group("h").obj(),
            QueueingHint.QUEUE_SKIP,
            id="other-podgroup-updated",
        ),
    ],
)
def test_queueing_hints(
    hint: str, min_member: int, old: object, new: object, want: QueueingHint
) -> None:
    # min_member 0: no PodGroup exists. The informer knows g1 and the pod the event is about.
    groups = [make_pod_group("g").min_member(min_member).obj()] if min_member else []
    h = GangHandle(groups=groups)
    pod = make_pod("g1").pod_group("g").obj()
    h.add(pod, *([new] if isinstance(new, Pod) else []))
    pl = plugin_for(h)
    fn: _HintFn = (
        pl.manager.hint_member_changed if hint == "member" else pl.manager.hint_pod_group_changed
    )
    assert fn(pod, old, new) == want


def test_member_hint_is_reevaluated_for_each_new_sibling() -> None:
    """The memo is per sibling version: the sibling that completes minMember still queues."""
    h = GangHandle(groups=[make_pod_group("g").min_member(3).obj()])
    pod, second, third = (make_pod(n).pod_group("g").obj() for n in ("g1", "g2", "g3"))
    pl = plugin_for(h)
    h.add(pod, second)
    assert pl.manager.hint_member_changed(pod, None, second) == QueueingHint.QUEUE_SKIP
    h.add(third)
    assert pl.manager.hint_member_changed(pod, None, third) == QueueingHint.QUEUE


def test_a_rejected_member_not_yet_forgotten_does_not_count_toward_the_quorum() -> None:
    # m1 timed out at Permit; until its binding cycle runs Unreserve and forgets it, it
    # still has a node in the view. m2 must not complete the quorum with it.
    h = gang_handle(("a", 2))
    m1, m2 = members("a", 2)
    assumed1 = dataclasses.replace(m1, node_name="n1")
    h.add(assumed1, m2)
    wp = WaitingPod(assumed1, "n1", {"Coscheduling": 60.0}, h.clock.now())
    h.waiting_pods.add(wp)
    wp.reject("Coscheduling", "rejected due to timeout")
    st, _ = plugin_for(h).permit(CycleState(), dataclasses.replace(m2, node_name="n1"), "n1")
    assert st is not None
    assert st.code == Code.WAIT


async def test_status_is_computed_from_the_members_when_written() -> None:
    h = GangHandle([NODE_4CPU.obj()], [make_pod_group("a").min_member(2).obj()])
    a = members("a", 3)
    h.add(*a)
    pl = plugin_for(h)
    assert pl.manager.pre_filter(CycleState(), a[0], list(h.infos.values())) is None
    h.remove(a[0])
    h.add(dataclasses.replace(a[0], node_name="n1", phase="Running"))
    status = pl.manager.status
    assert status is not None
    await status.flush()
    [(_, _, body, _)] = h.client.requests
    assert body["status"] == {
        "phase": "Scheduling",
        "scheduled": 1,
        "running": 1,
        "scheduleStartTime": "2023-11-14T22:13:20Z",
    }
