"""The scheduling and binding cycles, driven without a network.

Each test builds the real cycles over the real Cache, Snapshot, Algorithm and
SchedulingQueue, with small plugins (tests/unit/framework/fakes.py), a fake clock, and a
binder that can fail the way the API server does. Assertions are outcomes: where the pod
is assumed or bound, which queue holds it afterwards, the event it got, the condition
written, and what Unreserve saw.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import anyio
import pytest

from asched.api import Pod
from asched.backend.cache import Cache
from asched.backend.queue import SchedulingQueue
from asched.backend.snapshot import Snapshot
from asched.base.clock import FakeClock
from asched.client.protocol import ApiError, TransportError
from asched.client.readback import ReadBack
from asched.extender import ExtenderError, Extenders
from asched.framework import status as st
from asched.framework.cycle_state import CycleState
from asched.framework.prebinding import PodInPreBind
from asched.framework.registry import PluginSpec
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.status import Status
from asched.metrics import Metrics
from asched.scheduler.algorithm import Algorithm
from asched.scheduler.bindcheck import BindCheck
from asched.scheduler.cycle import Assumed, BindingCycle, SchedulingCycle
from asched.scheduler.outcome import Outcomes
from tests.builders import make_node, make_pod
from tests.clocks import JumpingClock
from tests.reads import Reads
from tests.unit.extender.fakes import fake_extender
from tests.unit.framework.fakes import FakeServices, Gate, Recorder, registry


class FlakyBinder:
    """Binds unless the pod's `bind` label says how the API server answers instead."""

    name = "FlakyBinder"

    def __init__(self, args: Any, handle: Any) -> None:
        self.bound: list[tuple[str, str]] = []
        # What the API server applied although Bind failed: pod name -> node.
        self.applied: dict[str, str] = {}
        # When set, Bind waits for it (a slow API server); in_flight counts who waits.
        self.hold: anyio.Event | None = None
        self.in_flight = 0
        self.most_in_flight = 0

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        await anyio.lowlevel.checkpoint()
        if self.hold is not None:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                await self.hold.wait()
            finally:
                self.in_flight -= 1
        answer = pod.labels.get("bind")
        if answer == "lost":
            # Applied, but the connection broke before the answer came.
            self.applied[pod.name] = node_name
            raise TransportError("closed before the answer was complete", broken=True)
        if answer == "cut":
            raise TransportError("closed before the answer was complete", broken=True)
        if answer == "refused":
            raise TransportError("connection refused")
        if answer == "elsewhere":
            self.applied[pod.name] = "n9"  # another scheduler's Binding won
            raise TransportError("closed before the answer was complete", broken=True)
        if answer == "conflict":
            raise ApiError(409, "Conflict", "pod already bound", "POST", "binding")
        if answer == "error":
            raise ApiError(500, "InternalError", "etcd timeout", "POST", "binding")
        if answer == "reject":
            return st.unschedulable("node went away")
        self.bound.append((pod.name, node_name))
        return None


class Volumes:
    """A PreBind plugin with a pre-flight answered by the pod's `prebind` label: `work`
    (Success), `error`, `unschedulable` (unsupported there), anything else Skip."""

    name = "Volumes"

    def __init__(self, args: Any, handle: Any) -> None:
        self.pre_bound: list[str] = []
        # When set, PreBind waits for it (a volume being attached).
        self.hold: anyio.Event | None = None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        answer = pod.labels.get("prebind")
        if answer == "work":
            return None
        if answer == "error":
            return st.error("disk gone")
        if answer == "unschedulable":
            return st.unschedulable("no")
        return st.skip()

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if self.hold is not None:
            await self.hold.wait()
        self.pre_bound.append(pod.name)
        return None


class OldPreBind:
    """An out-of-tree PreBind plugin written before PreBindPreFlight existed."""

    name = "OldPreBind"

    def __init__(self, args: Any, handle: Any) -> None:
        self.pre_bound: list[str] = []

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.pre_bound.append(pod.name)
        return None


class Conditions:
    def __init__(self) -> None:
        self.written: list[tuple[str, str, str, str | None]] = []

    def set_unschedulable(self, pod: Pod, reason: str, message: str, nominated: str | None) -> None:
        self.written.append((pod.name, reason, message, nominated))


class Harness:
    def __init__(
        self,
        node_names: tuple[str, ...] = ("n1", "n2", "n3"),
        metrics: Metrics | None = None,
        pre_bind: tuple[str, ...] = (),
        extenders: Extenders | None = None,
        check: bool = False,
    ) -> None:
        """`check`: a Bind that failed without a clear answer is checked (BindCheck) with
        an API server that knows what the binder applied."""
        reg = registry()
        for cls in (FlakyBinder, Volumes, OldPreBind):
            reg.register(PluginSpec(cls.name, cls))
        plugins = {
            "queueSort": [("Sort", 0)],
            "preFilter": [("Label", 0)],
            "filter": [("Label", 0)],
            "postFilter": [("Preempt", 0)],
            "score": [("Prefer", 1)],
            "reserve": [("Gate", 0)],
            "permit": [("Gate", 0)],
            "preBind": [(name, 0) for name in pre_bind],
            "bind": [("FlakyBinder", 0)],
        }
        self.services = FakeServices()
        self.services.metrics = metrics
        self.fwk = Framework(ProfileSpec("test", plugins, {}), reg, self.services)
        self.clock = FakeClock()
        self.cache = Cache()
        for name in node_names:
            self.cache.add_node(make_node(name).label("ok", "true").obj())
        self.queue = SchedulingQueue(
            self.fwk.less,
            self.clock,
            pre_enqueue=lambda pod: None,
            hints={"test": self.fwk.enqueue_hints()},
            metrics=metrics,
        )
        self.informer: dict[str, Pod] = {}
        self.events = Recorder()
        self.conditions = Conditions()
        self.assumed: list[Assumed] = []
        outcomes = Outcomes(
            queue=self.queue,
            current_pod=self.informer.get,
            events=lambda profile: self.events,
            conditions=self.conditions,
            clock=self.clock,
        )
        self.scheduling = SchedulingCycle(
            frameworks={"test": self.fwk},
            cache=self.cache,
            snapshot=Snapshot(),
            algorithm=Algorithm(0, extenders),
            queue=self.queue,
            outcomes=outcomes,
            skip=lambda pod: self.cache.is_assumed(pod.uid),
            to_binding=self.assumed.append,
            metrics=metrics,
        )
        self.nominations: list[tuple[str, str]] = []
        self.server = Reads(self._server_pod)
        self.binding = BindingCycle(
            cache=self.cache,
            queue=self.queue,
            outcomes=outcomes,
            events=lambda profile: self.events,
            limiter=asyncio.Semaphore(4),
            metrics=metrics,
            nominate=lambda pod, node: self.nominations.append((pod.name, node)),
            before_binding=self._before_binding,
            extenders=extenders,
            check=BindCheck(ReadBack(self.server, JumpingClock())) if check else None,
        )
        # (uid, bindings done when the pod's status patches were settled)
        self.withdrawn: list[tuple[str, int]] = []

    def _server_pod(self, path: str) -> dict[str, Any]:
        """The API server's view of a pod: bound where the binder applied it."""
        name = path.rsplit("/", 1)[1]
        pod = self.informer[f"default/{name}"]
        return make_pod(name).uid(pod.uid).node(self.binder.applied.get(name, "")).raw()

    async def _before_binding(self, uid: str) -> None:
        self.withdrawn.append((uid, len(self.binder.bound)))

    async def schedule(self, pod: Pod) -> Assumed | None:
        """Add the pod, pop it, and run its scheduling cycle."""
        self.informer[pod.key] = pod
        self.queue.add(pod)
        qpi = await self.queue.pop()
        assert qpi.pod.uid == pod.uid
        before = len(self.assumed)
        await self.scheduling.run(qpi)
        return self.assumed[-1] if len(self.assumed) > before else None

    @property
    def gate(self) -> Gate:
        gate = self.fwk.plugins["Gate"]
        assert isinstance(gate, Gate)
        return gate

    @property
    def binder(self) -> FlakyBinder:
        binder = self.fwk.plugins["FlakyBinder"]
        assert isinstance(binder, FlakyBinder)
        return binder

    def failed_scheduling(self) -> list[str]:
        return [msg for _, reason, msg in self.events.events if reason == "FailedScheduling"]


def _pod(name: str, **labels: str) -> Pod:
    b = make_pod(name).scheduler("test")
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


async def test_pod_is_assumed_on_the_best_node_then_bound() -> None:
    h = Harness()
    pod = _pod("p", prefer="n2")
    a = await h.schedule(pod)
    assert a is not None
    assert a.node == "n2"
    assert h.cache.is_assumed(pod.uid)
    assert h.queue.where(pod.uid) == "in_flight"  # until its binding ends

    await h.binding.run(a)

    assert h.binder.bound == [("p", "n2")]
    assert ("Normal", "Scheduled", "Successfully assigned default/p to n2") in h.events.events
    assert h.queue.where(pod.uid) is None
    assert h.failed_scheduling() == []


async def test_binds_in_flight_never_exceed_the_limit_and_all_finish() -> None:
    h = Harness()  # a limit of 4
    h.binder.hold = anyio.Event()
    assumed = []
    for i in range(7):
        a = await h.schedule(_pod(f"p{i}"))
        assert a is not None
        assumed.append(a)
    async with anyio.create_task_group() as tg:
        for a in assumed:
            tg.start_soon(h.binding.run, a)
        await anyio.wait_all_tasks_blocked()
        assert h.binder.in_flight == 4
        h.binder.hold.set()
    assert h.binder.most_in_flight == 4
    assert sorted(name for name, _ in h.binder.bound) == [f"p{i}" for i in range(7)]


async def test_no_fit_requeues_to_the_pool_with_the_fit_error() -> None:
    h = Harness()
    h.cache.update_node(make_node("n1").obj())  # loses ok=true
    h.cache.update_node(make_node("n2").obj())
    h.cache.update_node(make_node("n3").obj())
    pod = _pod("p")
    assert await h.schedule(pod) is None
    msg = "0/3 nodes are available: 3 node(s) didn't have ok=true. preemption: not eligible"
    assert h.failed_scheduling() == [msg]
    assert h.conditions.written == [("p", "Unschedulable", msg, None)]
    # Label registers no events: only a flush after the unschedulable timeout brings it back.
    assert h.queue.where(pod.uid) == "unschedulable"
    assert not h.cache.is_assumed(pod.uid)


async def test_post_filter_nomination_is_recorded() -> None:
    h = Harness(("n1",))
    h.cache.update_node(make_node("n1").obj())
    pod = _pod("p", nominate="n1")
    assert await h.schedule(pod) is None
    assert h.conditions.written[0][3] == "n1"
    assert [p.name for p in h.queue.nominator.nominated_pods_for_node("n1")] == ["p"]


async def test_reserve_failure_unreserves_forgets_and_requeues() -> None:
    h = Harness()
    pod = _pod("p", reserve="fail")
    assert await h.schedule(pod) is None
    assert h.gate.unreserved == ["p"]
    assert not h.cache.is_assumed(pod.uid)
    assert h.failed_scheduling() == ["0/1 nodes are available: 1 reserve failed."]
    # schedulingCycle sends no queue event after a Reserve failure (only the binding
    # cycle's handleBindingCycleError does): nothing happened while the pod was in
    # flight, so it waits in the unschedulable pool.
    assert h.queue.where(pod.uid) == "unschedulable"


@pytest.mark.parametrize("fail", [{"reserve": "fail"}, {"permit": "reject"}])
async def test_reserve_or_permit_failure_clears_the_nomination(fail: dict[str, str]) -> None:
    # schedulingCycle returns clearNominatedNode with a Reserve or Permit failure:
    # status (the condition writer's nominated "") and memory (the nominator) both.
    h = Harness()
    pod = dataclasses.replace(_pod("p", **fail), nominated_node_name="n1")
    h.queue.nominator.add_nominated(pod, "n1")
    assert await h.schedule(pod) is None
    assert h.conditions.written[0][3] == ""
    assert h.queue.nominator.nominated_pods_for_node("n1") == []


async def test_permit_rejection_unreserves_and_requeues() -> None:
    h = Harness()
    pod = _pod("p", permit="reject")
    assert await h.schedule(pod) is None
    assert h.gate.unreserved == ["p"]
    assert not h.cache.is_assumed(pod.uid)
    assert h.failed_scheduling() == ["0/1 nodes are available: 1 permit rejected."]
    assert h.conditions.written[0][:2] == ("p", "Unschedulable")
    assert h.queue.where(pod.uid) == "unschedulable"


async def test_nominated_node_is_announced_only_before_waiting_at_permit() -> None:
    # NominatedNodeNameForExpectation: bindingCycle patches nominatedNodeName when
    # WillWaitOnPermit, not for a pod that goes straight to Bind.
    h = Harness()
    direct = await h.schedule(_pod("direct", prefer="n2"))
    assert direct is not None
    await h.binding.run(direct)
    assert h.nominations == []
    waiting = await h.schedule(_pod("p", permit="wait", prefer="n3"))
    assert waiting is not None
    async with anyio.create_task_group() as tg:
        tg.start_soon(h.binding.run, waiting)
        await anyio.wait_all_tasks_blocked()
        assert h.nominations == [("p", "n3")]
        assert h.fwk.waiting_pods.reject(waiting.pod.uid, "Gate", "no")


async def test_status_patches_are_settled_before_the_pod_is_bound() -> None:
    # The nomination is queued (set_nominated); the binding cycle settles the pod's status
    # patches just before Bind, since one that landed after the Binding would undo it.
    h = Harness()
    waiting = await h.schedule(_pod("p", permit="wait", prefer="n3"))
    assert waiting is not None
    async with anyio.create_task_group() as tg:
        tg.start_soon(h.binding.run, waiting)
        await anyio.wait_all_tasks_blocked()
        assert h.withdrawn == []
        wp = h.fwk.waiting_pods.get(waiting.pod.uid)
        assert wp is not None
        wp.allow("Gate")
    assert h.nominations == [("p", "n3")]
    assert h.withdrawn == [(waiting.pod.uid, 0)]
    assert h.binder.bound == [("p", "n3")]


@pytest.mark.parametrize(
    ("prebind", "nominated", "pre_bound"),
    [
        pytest.param("work", [("p", "n2")], ["p"], id="pre-flight-success"),
        pytest.param("none", [], [], id="pre-flight-skip"),
    ],
)
async def test_a_pre_bind_with_work_announces_the_node_and_a_skip_leaves_pre_bind_out(
    prebind: str, nominated: list[tuple[str, str]], pre_bound: list[str]
) -> None:
    # bindingCycle: RunPreBindPreFlights Success -> nominatedNodeName patched before
    # PreBind; Skip -> no patch, and RunPreBindPlugins leaves the plugin out.
    h = Harness(pre_bind=("Volumes",))
    a = await h.schedule(_pod("p", prefer="n2", prebind=prebind))
    assert a is not None
    await h.binding.run(a)
    assert h.nominations == nominated
    volumes = h.fwk.plugins["Volumes"]
    assert isinstance(volumes, Volumes)
    assert volumes.pre_bound == pre_bound
    assert h.binder.bound == [("p", "n2")]


async def test_a_pre_bind_plugin_without_pre_flight_counts_as_having_work() -> None:
    h = Harness(pre_bind=("Volumes", "OldPreBind"))
    a = await h.schedule(_pod("p", prefer="n1"))
    assert a is not None
    await h.binding.run(a)
    old = h.fwk.plugins["OldPreBind"]
    assert isinstance(old, OldPreBind)
    assert old.pre_bound == ["p"]
    assert h.nominations == [("p", "n1")]
    assert h.binder.bound == [("p", "n1")]


@pytest.mark.parametrize(
    ("prebind", "message"),
    [
        pytest.param("error", 'running PreBindPreFlight "Volumes": disk gone', id="error"),
        pytest.param(
            "unschedulable",
            'PreBindPreFlight Volumes returned "Unschedulable", which is unsupported. It is '
            "supposed to return Success, Skip, or Error status",
            id="unsupported-status",
        ),
    ],
)
async def test_a_failed_pre_flight_fails_the_binding_cycle_before_permit_and_pre_bind(
    prebind: str, message: str
) -> None:
    h = Harness(pre_bind=("Volumes",))
    pod = _pod("p", prebind=prebind)
    a = await h.schedule(pod)
    assert a is not None
    await h.binding.run(a)
    assert h.failed_scheduling() == [message]
    assert h.nominations == []
    volumes = h.fwk.plugins["Volumes"]
    assert isinstance(volumes, Volumes)
    assert volumes.pre_bound == []
    assert h.binder.bound == []
    assert h.gate.unreserved == ["p"]
    assert not h.cache.is_assumed(pod.uid)
    assert h.queue.where(pod.uid) == "backoff"


async def test_waiting_pod_rejected_at_permit_is_released_in_the_binding_cycle() -> None:
    h = Harness()
    pod = _pod("p", permit="wait")
    a = await h.schedule(pod)
    assert a is not None
    assert h.cache.is_assumed(pod.uid)  # resources held while it waits
    async with anyio.create_task_group() as tg:
        tg.start_soon(h.binding.run, a)
        await anyio.wait_all_tasks_blocked()
        assert h.fwk.waiting_pods.reject(pod.uid, "Gate", "gang timed out")
    assert h.binder.bound == []
    assert h.gate.unreserved == ["p"]
    assert not h.cache.is_assumed(pod.uid)
    assert h.failed_scheduling() == ["0/1 nodes are available: 1 gang timed out."]
    # handleBindingCycleError defers the AssignedPodDelete move after a rejection and
    # leaves the pod itself out of it: the pod is not retried because of its own release.
    assert h.queue.where(pod.uid) == "unschedulable"


async def test_bind_error_forgets_and_retries_after_backoff() -> None:
    h = Harness()
    pod = _pod("p", bind="error")
    a = await h.schedule(pod)
    assert a is not None
    await h.binding.run(a)
    assert h.gate.unreserved == ["p"]
    assert not h.cache.is_assumed(pod.uid)
    (msg,) = h.failed_scheduling()
    # kube-scheduler's RunBindPlugins wording.
    assert msg == 'running Bind plugin "FlakyBinder": etcd timeout'
    assert h.conditions.written[0][:2] == ("p", "SchedulerError")
    assert h.queue.where(pod.uid) == "backoff"


async def test_a_bind_applied_whose_answer_was_lost_is_bound_not_requeued() -> None:
    # The Binding landed but its answer never came. Forgetting the pod (as Go's
    # handleBindingCycleError does) would free its room until the informer brings the
    # bound pod back; asched asks the API server first.
    h = Harness(check=True)
    pod = _pod("p", bind="lost")
    a = await h.schedule(pod)
    assert a is not None
    await h.binding.run(a)
    assert h.cache.is_assumed(pod.uid)
    cached = h.cache.get_pod(pod.uid)
    assert cached is not None
    assert cached.node_name == a.node
    assert h.gate.unreserved == []
    assert h.queue.where(pod.uid) is None
    assert [(reason, msg) for _, reason, msg in h.events.events] == [
        ("Scheduled", f"Successfully assigned default/p to {a.node}")
    ]


@pytest.mark.parametrize(
    ("bind", "where", "gets"),
    [
        # Cut after sending, not applied: the failure stands, after one read.
        pytest.param("cut", "backoff", ["p"], id="cut-not-applied"),
        # Never sent: nothing to ask.
        pytest.param("refused", "backoff", [], id="refused"),
        # A 500 may have been written; the server says it was not.
        pytest.param("error", "backoff", ["p"], id="server-error"),
        # A 409 says where the truth is: the informer brings it.
        pytest.param("conflict", None, [], id="conflict"),
        # Someone else's Binding won: as a 409.
        pytest.param("elsewhere", None, ["p"], id="bound-elsewhere"),
    ],
)
async def test_a_bind_that_failed_is_checked_only_when_it_may_have_been_applied(
    bind: str, where: str | None, gets: list[str]
) -> None:
    h = Harness(check=True)
    pod = _pod("p", bind=bind)
    a = await h.schedule(pod)
    assert a is not None
    await h.binding.run(a)
    assert [p.rsplit("/", 1)[1] for p in h.server.paths] == gets
    assert not h.cache.is_assumed(pod.uid)
    assert h.gate.unreserved == ["p"]
    assert h.queue.where(pod.uid) == where
    assert not any(reason == "Scheduled" for _, reason, _ in h.events.events)


@pytest.mark.parametrize(
    ("bind", "where", "counts"),
    [
        pytest.param("error", "backoff", (0, 1), id="bind-error"),
        # A Bind (or PreBind) rejection is no FitError: handleSchedulingFailure files
        # it under no plugin, so the queue takes it as an error.
        pytest.param("reject", "backoff", (0, 1), id="bind-rejection"),
    ],
)
async def test_binding_failures_count_as_errors_not_rejections(
    bind: str, where: str, counts: tuple[int, int]
) -> None:
    h = Harness()
    pod = _pod("p", bind=bind)
    a = await h.schedule(pod)
    assert a is not None
    await h.binding.run(a)
    assert h.queue.where(pod.uid) == where
    got = h.queue.get(pod.uid)
    assert got is not None
    assert (got.unschedulable_count, got.consecutive_errors_count) == counts
    assert got.unschedulable_plugins == set()


async def test_rejections_at_reserve_and_permit_count_as_unschedulable() -> None:
    # Reserve and Permit rejections are one-node FitErrors: UnschedulableCount++.
    h = Harness()
    for fail in ({"reserve": "fail"}, {"permit": "reject"}):
        pod = _pod(f"p-{next(iter(fail))}", **fail)
        assert await h.schedule(pod) is None
        got = h.queue.get(pod.uid)
        assert got is not None
        assert (got.unschedulable_count, got.consecutive_errors_count) == (1, 0)
        assert got.unschedulable_plugins == {"Gate"}


async def test_bind_conflict_is_not_retried() -> None:
    h = Harness()
    pod = _pod("p", bind="conflict")
    a = await h.schedule(pod)
    assert a is not None
    await h.binding.run(a)
    assert not h.cache.is_assumed(pod.uid)
    assert h.failed_scheduling() == []
    assert h.queue.where(pod.uid) is None  # the informer brings the truth


@pytest.mark.parametrize("change", ["deleted", "bound_elsewhere"])
async def test_pod_gone_meanwhile_is_not_requeued(change: str) -> None:
    h = Harness()
    pod = _pod("p", bind="reject")
    a = await h.schedule(pod)
    assert a is not None
    if change == "deleted":
        del h.informer[pod.key]
    else:
        h.informer[pod.key] = make_pod("p").uid(pod.uid).node("n9").obj()
    await h.binding.run(a)
    assert h.queue.where(pod.uid) is None
    assert h.failed_scheduling() == []
    assert not h.cache.is_assumed(pod.uid)


async def test_pod_of_no_profile_or_already_assumed_is_dropped() -> None:
    h = Harness()
    other = make_pod("other").scheduler("someone-else").obj()
    h.informer[other.key] = other
    h.queue.add(other)
    qpi = await h.queue.pop()
    await h.scheduling.run(qpi)
    assert h.assumed == []
    assert h.queue.where(other.uid) is None
    assert h.events.events == []


async def test_preemption_cancels_a_pod_in_pre_bind() -> None:
    """podsInPreBind and CancelPod: a pod whose PreBind has work is registered while it
    runs; cancelling it (as preemption does with a victim) stops PreBind and fails the
    binding with the preemption's message, and nothing is bound."""
    h = Harness(pre_bind=("Volumes",))
    volumes = h.fwk.plugins["Volumes"]
    assert isinstance(volumes, Volumes)
    volumes.hold = anyio.Event()
    a = await h.schedule(_pod("p", prefer="n1", prebind="work"))
    assert a is not None
    async with anyio.create_task_group() as tg:
        tg.start_soon(h.binding.run, a)
        for _ in range(100):
            if h.fwk.pods_in_pre_bind.get(a.pod.uid) is not None:
                break
            await anyio.lowlevel.checkpoint()
        entry = h.fwk.pods_in_pre_bind.get(a.pod.uid)
        assert entry is not None
        assert entry.cancel("preempted by DefaultPreemption")
    assert h.fwk.pods_in_pre_bind.get(a.pod.uid) is None
    assert volumes.pre_bound == []
    assert h.binder.bound == []
    assert any("preempted by DefaultPreemption" in m for m in h.failed_scheduling())


async def test_a_pod_past_pre_bind_cannot_be_cancelled() -> None:
    done = PodInPreBind()
    assert done.mark_prebound()
    assert not done.cancel("preempted by DefaultPreemption")
    cancelled = PodInPreBind()
    assert cancelled.cancel("preempted by DefaultPreemption")
    assert cancelled.cancel("again")  # CancelPod again: still cancelled, first message kept
    assert cancelled.message == "preempted by DefaultPreemption"
    assert not cancelled.mark_prebound()


async def test_binder_extender_binds_instead_of_the_bind_plugins() -> None:
    ext, poster = fake_extender(lambda v, r: {"Error": ""}, bind_verb="bind")
    h = Harness(extenders=Extenders([ext]))
    a = await h.schedule(_pod("p", prefer="n2"))
    assert a is not None
    await h.binding.run(a)
    assert poster.calls == [
        ("bind", {"PodName": "p", "PodNamespace": "default", "PodUID": a.pod.uid, "Node": "n2"})
    ]
    assert h.binder.bound == []
    assert ("Normal", "Scheduled", "Successfully assigned default/p to n2") in h.events.events


async def test_binder_extender_failure_fails_the_binding() -> None:
    ext, _ = fake_extender(lambda v, r: {"Error": "no GPU left"}, bind_verb="bind")
    h = Harness(extenders=Extenders([ext]))
    pod = _pod("p")
    a = await h.schedule(pod)
    assert a is not None
    await h.binding.run(a)
    assert h.failed_scheduling() == ["no GPU left"]
    assert not h.cache.is_assumed(pod.uid)
    assert h.binder.bound == []


async def test_ignorable_binder_extender_that_fails_leaves_it_to_the_plugins() -> None:
    down = ExtenderError(
        'Post "http://ext/bind": dial tcp 127.0.0.1:1: connect: connection refused'
    )
    ext, _ = fake_extender(lambda v, r: down, bind_verb="bind", ignorable=True)
    h = Harness(extenders=Extenders([ext]))
    a = await h.schedule(_pod("p", prefer="n3"))
    assert a is not None
    await h.binding.run(a)
    assert h.binder.bound == [("p", "n3")]
