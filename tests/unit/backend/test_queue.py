"""SchedulingQueue: ordering, backoff, hint-driven moves, in-flight events, gates, timeouts."""

from __future__ import annotations

import anyio
import pytest

from asched.api import Pod
from asched.backend.backoff import backoff_duration
from asched.backend.hints import HintMap
from asched.backend.queue import QueueClosed, SchedulingQueue
from asched.base.clock import FakeClock
from asched.framework.events import (
    NODE_ADD,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo
from tests.builders import make_pod

PROFILE = "default-scheduler"
NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelUpdate")
PG_ADD = ClusterEvent(EventResource.POD_GROUP, ActionType.ADD, "PodGroupAdd")
POD_ADD_EVENT = ClusterEvent(EventResource.POD, ActionType.ADD, "AssignedPodAdd")
POD_LABEL_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL)


def _skip(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


class CountingHint:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        self.calls.append(pod.name)
        return QueueingHint.QUEUE


class Gates:
    """PreEnqueue: SchedulingGates, plus a 'Quorum' gate a test opens by pod name."""

    def __init__(self) -> None:
        self.waiting_for_quorum: set[str] = set()
        self.calls: list[str] = []

    def __call__(self, pod: Pod) -> tuple[str, Status] | None:
        self.calls.append(pod.name)
        if pod.scheduling_gates:
            return "SchedulingGates", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("gated",))
        if pod.name in self.waiting_for_quorum:
            return "Quorum", Status(Code.UNSCHEDULABLE, ("waiting for quorum",))
        return None


class Metrics:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def incoming(self, queue: str, event: str) -> None:
        self.seen.append((queue, event))


def _less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort's order."""
    p1, p2 = a.pod.priority, b.pod.priority
    return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


class Env:
    def __init__(
        self,
        *,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        hints: HintMap | None = None,
    ) -> None:
        self.clock = FakeClock()
        self.gates = Gates()
        self.metrics = Metrics()
        self.node_label_hint = CountingHint()
        self.hints: HintMap = (
            hints
            if hints is not None
            else {
                PROFILE: {
                    "A": [ClusterEventWithHint(NODE_ADD)],
                    "B": [ClusterEventWithHint(NODE_LABEL, self.node_label_hint)],
                    "Skipper": [ClusterEventWithHint(NODE_ADD, _skip)],
                    "Waiter": [ClusterEventWithHint(PG_ADD)],
                    "Labels": [ClusterEventWithHint(POD_LABEL_UPDATE)],
                    "SchedulingGates": [],
                    "Quorum": [ClusterEventWithHint(POD_ADD_EVENT)],
                }
            }
        )
        self.q = SchedulingQueue(
            _less,
            self.clock,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
            pre_enqueue=self.gates,
            hints=self.hints,
            metrics=self.metrics,
        )

    async def pop_and_fail(
        self,
        *unschedulable: str,
        pending: tuple[str, ...] = (),
        error: bool = False,
        events: tuple[ClusterEvent, ...] = (),
    ) -> QueuedPodInfo:
        """One failed attempt; `events` arrive while the pod is in flight."""
        qpi = await self.q.pop()
        for event in events:
            self.q.move_all_to_active_or_backoff(event, None, None)
        qpi.unschedulable_plugins = set(unschedulable)
        qpi.pending_plugins = set(pending)
        self.q.add_unschedulable_if_not_present(qpi, error=error)
        return qpi


@pytest.fixture
def env() -> Env:
    return Env()


async def _drain(q: SchedulingQueue) -> list[str]:
    names = []
    while q.pending_counts()["active"]:
        qpi = await q.pop()
        names.append(qpi.pod.name)
        q.done(qpi.uid)
    return names


async def _tick(clock: FakeClock, seconds: int) -> None:
    """Advance one second at a time, letting the queue's run() loop react to each."""
    for _ in range(seconds):
        clock.advance(1.0)
        await anyio.wait_all_tasks_blocked()


# ---- ordering ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pods", "expected"),
    [
        pytest.param(
            [("low", 1), ("high", 10), ("mid", 5)], ["high", "mid", "low"], id="by-priority"
        ),
        pytest.param(
            [("first", 0), ("second", 0), ("third", 0)],
            ["first", "second", "third"],
            id="equal-priority-by-arrival",
        ),
        pytest.param(
            [("a", 0), ("b", 5), ("c", 0), ("d", 5)],
            ["b", "d", "a", "c"],
            id="priority-then-arrival",
        ),
    ],
)
async def test_pop_order(env: Env, pods: list[tuple[str, int]], expected: list[str]) -> None:
    for name, priority in pods:
        env.q.add(make_pod(name).priority(priority).obj())
        env.clock.advance(0.001)
    assert await _drain(env.q) == expected


async def test_update_in_active_queue_reorders(env: Env) -> None:
    old = make_pod("a").uid("ua").priority(1).obj()
    env.q.add(old)
    env.q.add(make_pod("b").priority(5).obj())
    env.q.update(old, make_pod("a").uid("ua").priority(9).obj())
    assert await _drain(env.q) == ["a", "b"]


async def test_failed_pod_goes_behind_equal_priority_pods(env: Env) -> None:
    env.q = SchedulingQueue(
        _less, env.clock, max_backoff=0.0, pre_enqueue=env.gates, hints=env.hints
    )
    env.q.add(make_pod("first").obj())
    env.clock.advance(1)
    env.q.add(make_pod("second").obj())
    env.clock.advance(1)
    await env.pop_and_fail(error=True)  # "first" fails, no backoff: straight back to activeQ
    assert await _drain(env.q) == ["second", "first"]


# ---- backoff -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("attempts", "expected"),
    [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (6, 10.0), (60, 10.0)],
    ids=str,
)
def test_backoff_duration(attempts: int, expected: float) -> None:
    assert backoff_duration(attempts, 1.0, 10.0) == expected


@pytest.mark.parametrize(
    ("attempts", "size", "expected"),
    [
        # calculateBackoffDuration: a pod group entity's cap is podMaxBackoff times the
        # square root of its size; below the cap it doubles as a single pod's does.
        (4, 4, 8.0),
        (5, 4, 16.0),
        (6, 4, 20.0),
        (60, 4, 20.0),
        (6, 9, 30.0),
        (6, 1, 10.0),
        (6, 2, 10.0 * 2**0.5),
    ],
    ids=str,
)
def test_a_pod_group_entity_backs_off_up_to_sqrt_size_times_the_max(
    attempts: int, size: int, expected: float
) -> None:
    assert backoff_duration(attempts, 1.0, 10.0, size) == pytest.approx(expected)


async def test_a_member_requeued_with_its_group_entity_waits_the_group_backoff(env: Env) -> None:
    env.q.add(make_pod("p").obj())
    for expected in (1.0, 2.0, 4.0, 8.0, 16.0, 20.0):
        qpi = await env.q.pop()
        env.q.add_unschedulable_if_not_present(qpi, error=True, entity_size=4)
        assert env.q.where(qpi.uid) == "backoff"
        assert qpi.backoff_expiry - env.clock.now() == expected
        env.clock.advance(expected + 1)
        assert env.q.flush_backoff_completed() == 1


async def test_backoff_grows_with_errors_and_flushes_the_window_after_expiry(env: Env) -> None:
    # The clock starts on a whole second, so every expiry is now + duration; the pod
    # backs off while its expiry is not before the current window (isEntityBackingoff).
    env.q.add(make_pod("p").obj())
    for expected in (1.0, 2.0, 4.0, 8.0, 10.0, 10.0):
        qpi = await env.pop_and_fail(error=True)
        assert env.q.where(qpi.uid) == "backoff"
        assert qpi.backoff_expiry - env.clock.now() == expected
        env.clock.advance(expected + 0.99)
        assert env.q.flush_backoff_completed() == 0
        assert env.q.where(qpi.uid) == "backoff"
        env.clock.advance(0.01)
        assert env.q.flush_backoff_completed() == 1
        assert env.q.where(qpi.uid) == "active"
        env.clock.advance(-env.clock.now() % 1.0)


async def test_expiry_is_aligned_to_the_ordering_window(env: Env) -> None:
    env.clock.advance(0.3)
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail(error=True)
    # backoffQueue.getBackoffTime: alignToWindow(timestamp + 1s) = the whole second.
    assert qpi.backoff_expiry == 1001.0


async def test_backoff_flush_moves_whole_windows_in_active_order(env: Env) -> None:
    env.q.add(make_pod("a").priority(1).obj())
    await env.pop_and_fail(error=True)  # a: window 1001
    env.clock.advance(0.5)
    env.q.add(make_pod("b").priority(5).obj())
    await env.pop_and_fail(error=True)  # b: window 1001 too
    env.clock.advance(0.6)
    env.q.add(make_pod("c").obj())
    await env.pop_and_fail(error=True)  # c: window 1002
    env.clock.advance(0.9)  # 1002.0: window 1001 is over, 1002 is current
    assert env.q.flush_backoff_completed() == 2
    assert env.q.pending_counts() == {"active": 2, "backoff": 1, "unschedulable": 0, "gated": 0}
    assert await _drain(env.q) == ["b", "a"]


async def test_zero_max_backoff_disables_backoff() -> None:
    env = Env(initial_backoff=1.0, max_backoff=0.0)
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail(error=True)
    assert env.q.where(qpi.uid) == "active"


async def test_run_flushes_backoff_on_whole_seconds(env: Env) -> None:
    env.clock.advance(0.4)
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail(error=True)  # window 1001: flushed on the 1002 tick
    async with anyio.create_task_group() as tg:
        tg.start_soon(env.q.run)
        await anyio.wait_all_tasks_blocked()
        env.clock.advance(0.6)  # 1001.0
        await anyio.wait_all_tasks_blocked()
        assert env.q.where(qpi.uid) == "backoff"
        env.clock.advance(0.99)
        await anyio.wait_all_tasks_blocked()
        assert env.q.where(qpi.uid) == "backoff"
        env.clock.advance(0.01)  # 1002.0: the aligned tick
        await anyio.wait_all_tasks_blocked()
        assert env.q.where(qpi.uid) == "active"
        tg.cancel_scope.cancel()


# ---- the backoff exponent (AddUnschedulablePodIfNotPresent, getBackoffTime) -------
@pytest.mark.parametrize(
    ("history", "counts", "duration"),
    [
        pytest.param("UUU", (3, 0), 4.0, id="rejections-double"),
        pytest.param("EEE", (0, 3), 4.0, id="errors-double"),
        pytest.param("UUE", (2, 1), 1.0, id="an-error-after-rejections-starts-at-one"),
        pytest.param("UUEEU", (3, 0), 4.0, id="a-rejection-resets-errors"),
        pytest.param("EEU", (1, 0), 1.0, id="errors-do-not-raise-the-unschedulable-count"),
    ],
)
async def test_backoff_exponent_follows_go_counts(
    env: Env, history: str, counts: tuple[int, int], duration: float
) -> None:
    env.q.add(make_pod("p").obj())
    for outcome in history:
        # Rejected by "A" (or an error); the pod is popped again at once from backoffQ
        # when it is rejected-with-event, or after the flush.
        qpi = await env.pop_and_fail(*(("A",) if outcome == "U" else ()), error=outcome == "E")
        env.clock.advance(20.0)
        env.q.flush_backoff_completed()
        env.q.flush_unschedulable_left_over()
        env.q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert (qpi.unschedulable_count, qpi.consecutive_errors_count) == counts
    assert qpi.attempts == len(history)
    assert qpi.backoff_expiry - qpi.timestamp == duration


# ---- SchedulerPopFromBackoffQ -----------------------------------------------------
async def test_pop_takes_a_rejected_pod_from_backoff_when_active_is_empty(env: Env) -> None:
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail("A", events=(NODE_ADD,))  # moved in flight: backoffQ
    assert env.q.where(qpi.uid) == "backoff"
    with anyio.fail_after(1):
        again = await env.q.pop()
    assert again is qpi
    assert env.q.where(qpi.uid) == "in_flight"
    assert ("active", "PopFromBackoffQ") in env.metrics.seen


async def test_pop_prefers_active_over_backoff(env: Env) -> None:
    env.q.add(make_pod("p").priority(100).obj())
    await env.pop_and_fail("A", events=(NODE_ADD,))
    env.q.add(make_pod("fresh").priority(1).obj())
    assert [(await env.q.pop()).pod.name, (await env.q.pop()).pod.name] == ["fresh", "p"]


async def test_backoff_pops_by_window_then_priority(env: Env) -> None:
    env.q.add(make_pod("low").priority(1).obj())
    await env.pop_and_fail("A", events=(NODE_ADD,))  # window 1001
    env.clock.advance(0.2)
    env.q.add(make_pod("high").priority(9).obj())
    await env.pop_and_fail("A", events=(NODE_ADD,))  # window 1001, higher priority
    env.clock.advance(0.9)
    env.q.add(make_pod("top").priority(99).obj())
    await env.pop_and_fail("A", events=(NODE_ADD,))  # window 1002
    names = [(await env.q.pop()).pod.name for _ in range(3)]
    assert names == ["high", "low", "top"]


async def test_pop_never_takes_an_errored_pod_early(env: Env) -> None:
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail(error=True)
    assert env.q.where(qpi.uid) == "backoff"
    async with anyio.create_task_group() as tg:
        tg.start_soon(env.q.pop)
        await anyio.wait_all_tasks_blocked()  # pop() is waiting, not taking it
        assert env.q.where(qpi.uid) == "backoff"
        tg.cancel_scope.cancel()


async def test_pre_enqueue_runs_on_entering_backoff_not_on_the_flush(env: Env) -> None:
    env.q.add(make_pod("member").uid("u").obj())
    await env.pop_and_fail(error=True)
    assert env.q.where("u") == "backoff"
    env.gates.waiting_for_quorum.add("member")
    env.clock.advance(2.0)
    # moveToActiveQ from backoffQ skips PreEnqueue: it ran on the way in.
    assert env.q.flush_backoff_completed() == 1
    assert env.q.where("u") == "active"


async def test_pre_enqueue_gates_a_pod_on_its_way_to_backoff(env: Env) -> None:
    env.q.add(make_pod("member").uid("u").obj())
    await env.pop_and_fail("A")
    env.gates.waiting_for_quorum.add("member")
    assert env.q.move_all_to_active_or_backoff(NODE_ADD, None, None) == 0
    assert env.q.where("u") == "gated"


# ---- failures and cluster events ---------------------------------------------------
@pytest.mark.parametrize(
    ("rejected_by", "event", "moved", "where"),
    [
        pytest.param({"A"}, NODE_ADD, 1, "backoff", id="event-registered-by-rejector"),
        pytest.param({"A"}, NODE_LABEL, 0, "unschedulable", id="event-of-another-plugin"),
        pytest.param({"B"}, NODE_LABEL, 1, "backoff", id="hint-says-queue"),
        pytest.param({"Skipper"}, NODE_ADD, 0, "unschedulable", id="hint-says-skip"),
        pytest.param(
            {"A"},
            ClusterEvent(EventResource.NODE, ActionType.DELETE),
            0,
            "unschedulable",
            id="event-nobody-registered",
        ),
        pytest.param({"A"}, UNSCHEDULABLE_TIMEOUT, 1, "backoff", id="wildcard-moves-all"),
    ],
)
async def test_event_moves_pod_rejected_by_a_plugin_that_registered_it(
    env: Env, rejected_by: set[str], event: ClusterEvent, moved: int, where: str
) -> None:
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail(*rejected_by)
    assert env.q.where(qpi.uid) == "unschedulable"
    assert env.q.move_all_to_active_or_backoff(event, None, None) == moved
    assert env.q.where(qpi.uid) == where


async def test_keep_and_pre_check_leave_pods_where_they_are(env: Env) -> None:
    # kube-scheduler's PreEnqueueCheck on MoveAllToActiveOrBackoffQueue.
    env.q.add(make_pod("low").priority(10).obj())
    low = await env.pop_and_fail("A")
    env.q.add(make_pod("high").priority(1000).obj())
    high = await env.pop_and_fail("A")
    moved = env.q.move_all_to_active_or_backoff(
        NODE_ADD, None, None, pre_check=lambda p: p.priority <= 100
    )
    assert moved == 1
    assert (env.q.where(low.uid), env.q.where(high.uid)) == ("backoff", "unschedulable")
    assert env.q.move_all_to_active_or_backoff(NODE_ADD, None, None, keep=high.uid) == 0
    assert env.q.where(high.uid) == "unschedulable"


async def test_event_after_backoff_expired_goes_straight_to_active(env: Env) -> None:
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail("A")
    env.clock.advance(2.0)  # window 1001 is over
    env.q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert env.q.where(qpi.uid) == "active"


async def test_pending_plugin_queue_skips_backoff(env: Env) -> None:
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail(pending=("Waiter",))
    assert env.q.where(qpi.uid) == "unschedulable"
    assert qpi.backoff_expiry > env.clock.now()
    env.q.move_all_to_active_or_backoff(PG_ADD, None, None)
    assert env.q.where(qpi.uid) == "active"


@pytest.mark.parametrize(
    ("rejected_by", "pending", "error", "where"),
    [
        pytest.param((), (), True, "backoff", id="error"),
        pytest.param((), (), False, "backoff", id="no-rejecting-plugin"),
        pytest.param(("A",), (), True, "backoff", id="error-ignores-stale-plugins"),
        pytest.param(("A",), (), False, "unschedulable", id="rejected"),
        pytest.param((), ("Waiter",), False, "unschedulable", id="pending"),
    ],
)
async def test_where_a_failed_pod_goes(
    env: Env, rejected_by: tuple[str, ...], pending: tuple[str, ...], error: bool, where: str
) -> None:
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail(*rejected_by, pending=pending, error=error)
    assert env.q.where(qpi.uid) == where
    assert env.q.in_flight_pods() == []


async def test_event_visits_only_pods_rejected_by_interested_plugins(env: Env) -> None:
    for name in ("a1", "a2"):
        env.q.add(make_pod(name).obj())
        await env.pop_and_fail("A")
    for name in ("b1", "b2"):
        env.q.add(make_pod(name).obj())
        await env.pop_and_fail("B")
    assert env.q.move_all_to_active_or_backoff(NODE_LABEL, None, None) == 2
    assert sorted(env.node_label_hint.calls) == ["b1", "b2"]
    assert env.q.pending_counts() == {"active": 0, "backoff": 2, "unschedulable": 2, "gated": 0}


# ---- in-flight events --------------------------------------------------------------
@pytest.mark.parametrize(
    ("rejected_by", "events", "where", "moved_during_cycle"),
    [
        pytest.param(("A",), (NODE_ADD,), "backoff", True, id="matching-event-mid-cycle"),
        pytest.param(("A",), (NODE_LABEL,), "unschedulable", False, id="other-plugins-event"),
        pytest.param(("Skipper",), (NODE_ADD,), "unschedulable", False, id="hint-skips"),
        pytest.param(("A",), (), "unschedulable", False, id="no-event"),
        pytest.param(("A", "B"), (NODE_LABEL,), "backoff", True, id="second-rejector"),
        pytest.param((), (PG_ADD,), "active", True, id="pending-plugin-event"),
    ],
)
async def test_event_during_flight_decides_requeue(
    env: Env,
    rejected_by: tuple[str, ...],
    events: tuple[ClusterEvent, ...],
    where: str,
    moved_during_cycle: bool,
) -> None:
    env.q.add(make_pod("p").obj())
    pending = ("Waiter",) if not rejected_by else ()
    qpi = await env.pop_and_fail(*rejected_by, pending=pending, events=events)
    assert env.q.where(qpi.uid) == where
    assert qpi.moved_during_cycle is moved_during_cycle


async def test_event_before_pop_does_not_count(env: Env) -> None:
    env.q.add(make_pod("early").obj())
    env.clock.advance(0.001)
    env.q.add(make_pod("late").obj())
    early = await env.q.pop()
    env.q.move_all_to_active_or_backoff(NODE_ADD, None, None)  # early in flight, late queued
    late = await env.q.pop()
    for qpi in (late, early):
        qpi.unschedulable_plugins = {"A"}
        env.q.add_unschedulable_if_not_present(qpi)
    assert (env.q.where(early.uid), env.q.where(late.uid)) == ("backoff", "unschedulable")


async def test_update_during_flight_is_used_on_requeue(env: Env) -> None:
    pod = make_pod("p").uid("u").obj()
    env.q.add(pod)
    qpi = await env.q.pop()
    newer = make_pod("p").uid("u").label("app", "web").obj()
    env.q.update(pod, newer)
    assert env.q.where("u") == "in_flight"
    qpi.unschedulable_plugins = {"Labels"}
    env.q.add_unschedulable_if_not_present(qpi)
    assert qpi.pod is newer
    assert env.q.where("u") == "backoff"  # its own label update is a Labels event


@pytest.mark.parametrize(
    "change",
    [pytest.param("delete", id="deleted"), pytest.param("bound", id="bound-meanwhile")],
)
async def test_pod_gone_during_flight_is_not_requeued(env: Env, change: str) -> None:
    pod = make_pod("p").uid("u").obj()
    env.q.add(pod)
    qpi = await env.q.pop()
    if change == "delete":
        env.q.delete(pod)
    else:
        env.q.update(pod, make_pod("p").uid("u").node("n1").obj())
    qpi.unschedulable_plugins = {"A"}
    env.q.add_unschedulable_if_not_present(qpi)
    assert env.q.where("u") is None
    assert env.q.pending_pods() == []


# ---- unschedulable timeout ---------------------------------------------------------
async def test_leftover_flush_moves_pods_older_than_max_duration(env: Env) -> None:
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail("A")
    env.clock.advance(300.0)
    assert env.q.flush_unschedulable_left_over() == 0
    assert env.q.where(qpi.uid) == "unschedulable"
    env.clock.advance(0.001)
    assert env.q.flush_unschedulable_left_over() == 1
    assert env.q.where(qpi.uid) == "active"
    assert ("active", "UnschedulableTimeout") in env.metrics.seen


async def test_run_moves_leftovers_on_the_30s_flush_after_5_minutes(env: Env) -> None:
    env.q.add(make_pod("p").obj())
    qpi = await env.pop_and_fail("A")
    async with anyio.create_task_group() as tg:
        tg.start_soon(env.q.run)
        await anyio.wait_all_tasks_blocked()
        await _tick(env.clock, 329)
        assert env.q.where(qpi.uid) == "unschedulable"  # the flush at 300 s is not "longer"
        await _tick(env.clock, 1)
        assert env.q.where(qpi.uid) == "active"
        tg.cancel_scope.cancel()


# ---- gated pods --------------------------------------------------------------------
async def test_gated_pod_stays_until_its_gate_clears(env: Env) -> None:
    gated = make_pod("p").uid("u").gate("example.com/wait").obj()
    env.q.add(gated)
    assert env.q.where("u") == "gated"
    assert env.q.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert env.q.move_all_to_active_or_backoff(NODE_ADD, None, None) == 0
    env.clock.advance(1000)
    assert env.q.flush_unschedulable_left_over() == 0
    relabeled = make_pod("p").uid("u").gate("example.com/wait").label("x", "y").obj()
    env.q.update(gated, relabeled)
    assert env.q.where("u") == "gated"
    env.q.update(relabeled, make_pod("p").uid("u").label("x", "y").obj())
    assert env.q.where("u") == "active"
    assert env.q.pending_counts() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 0}
    assert ("unschedulable", "PodAdd") in env.metrics.seen
    assert ("active", "PodUpdate") in env.metrics.seen


async def test_gated_pod_retries_pre_enqueue_on_its_gating_plugins_event(env: Env) -> None:
    env.gates.waiting_for_quorum.add("member")
    env.q.add(make_pod("member").uid("u").obj())
    assert env.q.where("u") == "gated"
    assert env.q.move_all_to_active_or_backoff(POD_ADD_EVENT, None, None) == 0  # still gated
    assert env.q.where("u") == "gated"
    env.gates.waiting_for_quorum.clear()
    # Only the gating plugin's events re-run PreEnqueue; other events leave it gated.
    assert env.q.move_all_to_active_or_backoff(NODE_ADD, None, None) == 0
    assert env.q.where("u") == "gated"
    assert env.q.move_all_to_active_or_backoff(POD_ADD_EVENT, None, None) == 1
    assert env.q.where("u") == "active"


async def test_leftover_flush_reruns_pre_enqueue_on_gated_pods_once_per_period(env: Env) -> None:
    # moveEntitiesToActiveOrBackoffQueue: a wildcard event re-evaluates gated pods too
    # (a missing hint must not strand them); FlushTimestamp: a pod the flush sent back
    # to the pool gated is flushed again only after another full period.
    calls = env.gates.calls
    env.gates.waiting_for_quorum.add("member")
    env.q.add(make_pod("member").uid("u").obj())
    assert (env.q.where("u"), len(calls)) == ("gated", 1)
    env.clock.advance(300.001)
    assert env.q.flush_unschedulable_left_over() == 0  # PreEnqueue ran again: still gated
    assert (env.q.where("u"), len(calls)) == ("gated", 2)
    env.clock.advance(30.0)
    assert env.q.flush_unschedulable_left_over() == 0
    assert len(calls) == 2  # flushed 30 s ago: not yet again
    env.gates.waiting_for_quorum.clear()
    env.clock.advance(270.0)
    assert env.q.flush_unschedulable_left_over() == 0  # exactly 5 minutes is not longer
    assert len(calls) == 2
    env.clock.advance(0.001)
    assert env.q.flush_unschedulable_left_over() == 1
    assert (env.q.where("u"), len(calls)) == ("active", 3)
    assert ("active", "UnschedulableTimeout") in env.metrics.seen


# ---- update of pooled pods ---------------------------------------------------------
@pytest.mark.parametrize(
    ("rejected_by", "label_change", "where"),
    [
        pytest.param("Labels", True, "backoff", id="update-event-registered"),
        pytest.param("Labels", False, "unschedulable", id="unrelated-update"),
        pytest.param("A", True, "unschedulable", id="rejector-not-interested"),
    ],
)
async def test_update_of_pooled_pod_is_an_event(
    env: Env, rejected_by: str, label_change: bool, where: str
) -> None:
    old = make_pod("p").uid("u").obj()
    env.q.add(old)
    await env.pop_and_fail(rejected_by)
    builder = make_pod("p").uid("u")
    new = (builder.label("app", "x") if label_change else builder.annotation("k", "v")).obj()
    env.q.update(old, new)
    assert env.q.where("u") == where
    queued = env.q.get("u")
    assert queued is not None
    assert queued.pod is new


# ---- delete, activate, pop/close ---------------------------------------------------
async def _place(env: Env, where: str) -> Pod:
    pod = make_pod("p").uid("u").nominated("n1").obj()
    if where == "gated":
        pod = make_pod("p").uid("u").nominated("n1").gate("g").obj()
    env.q.add(pod)
    if where in ("backoff", "unschedulable", "in_flight"):
        qpi = await env.q.pop()
        if where != "in_flight":
            qpi.unschedulable_plugins = {"A"} if where == "unschedulable" else set()
            env.q.add_unschedulable_if_not_present(qpi)
    assert env.q.where("u") == where
    return pod


@pytest.mark.parametrize("where", ["active", "backoff", "unschedulable", "gated", "in_flight"])
async def test_delete_removes_from_every_queue(env: Env, where: str) -> None:
    pod = await _place(env, where)
    env.q.delete(pod)
    assert env.q.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}
    assert env.q.nominator.nominated_pods_for_node("n1") == []
    if where == "in_flight":
        env.q.add_unschedulable_if_not_present(QueuedPodInfo(pod, env.clock.now(), attempts=1))
    assert env.q.where("u") is None


@pytest.mark.parametrize(
    ("where", "activated", "after"),
    [
        pytest.param("backoff", 1, "active", id="from-backoff"),
        pytest.param("unschedulable", 1, "active", id="from-pool"),
        pytest.param("gated", 0, "gated", id="gated-stays-gated"),
        pytest.param("active", 0, "active", id="already-active"),
    ],
)
async def test_activate(env: Env, where: str, activated: int, after: str) -> None:
    pod = await _place(env, where)
    assert env.q.activate([pod]) == activated
    assert env.q.where("u") == after


async def test_activate_in_flight_pod_requeues_only_that_pod_after_failure(env: Env) -> None:
    target, other = make_pod("target").obj(), make_pod("other").obj()
    env.q.add(target)
    env.clock.advance(0.001)
    env.q.add(other)
    first, second = await env.q.pop(), await env.q.pop()
    assert env.q.activate([target, make_pod("stranger").obj()]) == 0
    for qpi in (first, second):
        qpi.unschedulable_plugins = {"A"}
        env.q.add_unschedulable_if_not_present(qpi)
    assert (env.q.where(target.uid), env.q.where(other.uid)) == ("backoff", "unschedulable")


async def test_pop_waits_for_add(env: Env) -> None:
    popped: list[str] = []

    async def popper() -> None:
        popped.append((await env.q.pop()).pod.name)

    async with anyio.create_task_group() as tg:
        tg.start_soon(popper)
        await anyio.wait_all_tasks_blocked()
        assert popped == []
        env.q.add(make_pod("p").obj())
        await anyio.wait_all_tasks_blocked()
        assert popped == ["p"]
    assert env.q.where(env.q.in_flight_pods()[0].uid) == "in_flight"


async def test_close_wakes_pop_with_queue_closed(env: Env) -> None:
    outcome: list[str] = []

    async def popper() -> None:
        try:
            await env.q.pop()
        except QueueClosed:
            outcome.append("closed")

    async with anyio.create_task_group() as tg:
        tg.start_soon(popper)
        tg.start_soon(popper)
        await anyio.wait_all_tasks_blocked()
        env.q.close()
    assert outcome == ["closed", "closed"]
    with pytest.raises(QueueClosed):
        await env.q.pop()
    late = QueuedPodInfo(make_pod("late").obj(), env.clock.now(), attempts=1)
    env.q.add_unschedulable_if_not_present(late, error=True)  # shutdown: not requeued
    assert env.q.where(late.uid) is None


async def test_pop_counts_attempts_and_resets_plugins(env: Env) -> None:
    env.q.add(make_pod("p").obj())
    first = await env.pop_and_fail("A", events=(NODE_ADD,))
    assert first.initial_attempt_timestamp == env.clock.now()
    env.clock.advance(1.0)
    env.q.flush_backoff_completed()
    second = await env.q.pop()
    assert second is first
    assert (second.attempts, second.unschedulable_plugins) == (2, set())
    assert second.initial_attempt_timestamp == env.clock.now() - 1.0
    assert env.q.scheduling_cycle == 2


# ---- bookkeeping -------------------------------------------------------------------
async def test_pending_counts_and_incoming_metrics(env: Env) -> None:
    env.q.add(make_pod("active").obj())
    env.clock.advance(0.001)
    env.q.add(make_pod("rejected").obj())
    env.clock.advance(0.001)
    env.q.add(make_pod("errored").obj())
    env.q.add(make_pod("gated").gate("g").obj())
    await env.q.pop()  # "active" goes in flight and stays there
    await env.pop_and_fail("A")
    await env.pop_and_fail(error=True)
    assert env.q.pending_counts() == {"active": 0, "backoff": 1, "unschedulable": 1, "gated": 1}
    env.q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    env.clock.advance(2.0)
    env.q.flush_backoff_completed()
    assert env.q.pending_counts() == {"active": 2, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert env.metrics.seen == [
        ("active", "PodAdd"),
        ("active", "PodAdd"),
        ("active", "PodAdd"),
        ("unschedulable", "PodAdd"),
        ("unschedulable", "ScheduleAttemptFailure"),
        ("backoff", "ScheduleAttemptFailure"),
        ("backoff", "NodeAdd"),
        ("active", "BackoffComplete"),
        ("active", "BackoffComplete"),
    ]


async def test_nominated_pods_tracked_through_add_and_delete(env: Env) -> None:
    pod = make_pod("p").nominated("n1").obj()
    env.q.add(pod)
    assert [p.name for p in env.q.nominator.nominated_pods_for_node("n1")] == ["p"]
    env.q.delete(pod)
    assert env.q.nominator.nominated_pods_for_node("n1") == []


async def test_readd_of_known_pod_is_an_update(env: Env) -> None:
    pod = make_pod("p").uid("u").priority(1).obj()
    env.q.add(pod)
    env.q.add(make_pod("p").uid("u").priority(7).obj())
    assert env.q.pending_counts()["active"] == 1
    queued = env.q.get("u")
    assert queued is not None
    assert queued.pod.priority == 7


async def test_take_pops_siblings_from_every_queue_but_a_closed_gate(env: Env) -> None:
    """SchedulingQueue.take (the group cycle's siblings): activeQ, backoffQ and the pool
    give their pod up; one PreEnqueue still holds stays; each taken pod is in flight."""
    pods = {n: make_pod(n).uid(f"u-{n}").obj() for n in ("first", "active", "backoff", "pool")}
    gated = make_pod("gated").uid("u-gated").gate("wait").obj()
    for p in [*pods.values(), gated]:
        env.q.add(p)
    first = await env.q.pop()
    assert first.pod.name == "first"
    # "backoff" and "pool" fail once; the backoff one is then woken by a Node add.
    for _ in range(3):
        qpi = await env.q.pop()
        if qpi.pod.name == "active":
            env.q.add_unschedulable_if_not_present(qpi, error=False)
            continue
        qpi.unschedulable_plugins = {"A" if qpi.pod.name == "backoff" else "B"}
        env.q.add_unschedulable_if_not_present(qpi)
    env.q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert env.q.where("u-backoff") == "backoff"
    assert env.q.where("u-pool") == "unschedulable"
    taken = env.q.take(["u-active", "u-backoff", "u-pool", "u-gated", "u-unknown"])
    assert sorted(t.pod.name for t in taken) == ["active", "backoff", "pool"]
    assert {env.q.where(t.uid) for t in taken} == {"in_flight"}
    assert env.q.where("u-gated") == "gated"
    assert {t.pod.name: t.attempts for t in taken} == {"active": 2, "backoff": 2, "pool": 2}
    in_flight = sorted(p.name for p in env.q.in_flight_pods())
    assert in_flight == ["active", "backoff", "first", "pool"]


async def test_drained_means_nothing_active_backing_off_or_in_a_cycle(env: Env) -> None:
    assert env.q.drained()
    env.q.add(make_pod("a").obj())
    assert not env.q.drained()  # active
    qpi = await env.q.pop()
    assert not env.q.drained()  # in flight
    qpi.unschedulable_plugins = {"NodeResourcesFit"}
    env.q.add_unschedulable_if_not_present(qpi, error=False)
    # Unschedulable pods wait for a cluster event, not for the scheduler.
    assert env.q.where(qpi.uid) == "unschedulable"
    assert env.q.drained()
    env.q.add(make_pod("b").obj())
    b = await env.pop_and_fail(error=True)
    assert env.q.where(b.uid) == "backoff"
    assert not env.q.drained()


# ---- a pod-group member failing outside its group cycle --------------------------------
@pytest.mark.parametrize(
    ("sibling", "expected"),
    [
        pytest.param(None, "active", id="no-sibling-queued-new-entity-in-active"),
        pytest.param("active", "active", id="joins-sibling-in-active"),
        pytest.param("backoff", "backoff", id="joins-sibling-in-backoff"),
        pytest.param("unschedulable", "unschedulable", id="joins-sibling-in-the-pool"),
    ],
)
async def test_a_group_member_failing_in_binding_goes_where_its_group_waits(
    env: Env, sibling: str | None, expected: str
) -> None:
    """addPodGroupMember: a member whose binding cycle failed (an error, no backoff of its
    own) joins its group's queued entity, or starts a new one in activeQ."""
    env.q.add(make_pod("p1").obj())
    member = await env.q.pop()
    siblings: list[str] = []
    if sibling is not None:
        env.q.add(make_pod("p2").obj())
        other = await env.q.pop()
        siblings.append(other.uid)
        if sibling == "active":
            env.q.add_unschedulable_if_not_present(other, error=True, group_siblings=[])
        else:
            other.unschedulable_plugins = {"GangScheduling"}
            env.q.add_unschedulable_if_not_present(other, error=sibling == "backoff")
        assert env.q.where(other.uid) == sibling
    env.q.add_unschedulable_if_not_present(member, error=True, group_siblings=siblings)
    assert env.q.where(member.uid) == expected
    assert member.consecutive_errors_count == 1
