"""One pod's way through the scheduler: the scheduling cycle, then the binding cycle.

Mirrors kube-scheduler's schedule_one.go:
- `SchedulingCycle` (one pod at a time, never awaits the network): snapshot ->
  PreFilter -> Filter -> PostFilter when nothing fits -> PreScore/Score -> assume in the
  cache -> Reserve -> Permit, then hands the assumed pod to the binding cycle;
- `BindingCycle` (many pods at once, in the scheduler's binding task group): wait on
  Permit -> PreBind -> Bind (by a binder extender interested in the pod, else the Bind
  plugins) -> PostBind. Waiting at Permit happens here, never in the
  scheduling cycle, so gangs cannot deadlock the loop;
- any failure after assume runs Unreserve, forgets the assumed pod, tells the queue
  resources were freed, and ends the attempt through Outcomes; a binding rejected with
  409 (someone else bound the pod) is not retried.
Each cycle is built from exactly the collaborators it uses, so tests drive it with fakes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import structlog

from asched.api import Pod, bound_to
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.client.protocol import ApiError, may_have_been_applied
from asched.extender import Extenders
from asched.framework import events as ev
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.handle import EventRecorder
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo
from asched.scheduler.algorithm import Algorithm, SchedulingError
from asched.scheduler.bindcheck import BindCheck, Landed
from asched.scheduler.diagnosis import FitError, NoNodesAvailable, one_node_fit_message
from asched.scheduler.observe import CycleObserver
from asched.scheduler.outcome import ERROR, UNSCHEDULABLE, Outcomes

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class Assumed:
    """A pod that passed its scheduling cycle and is on its way to being bound."""

    fwk: Framework
    state: CycleState
    qpi: QueuedPodInfo
    pod: Pod  # the assumed copy, node_name set
    node: str
    start: float


# kube-scheduler's Goroutines label for binding cycles (metrics.Binding).
BINDING = "binding"


class CycleMetrics(Protocol):
    def observe_algorithm(self, seconds: float) -> None:
        """scheduler_scheduling_algorithm_duration_seconds"""
        ...

    def goroutines(self, operation: str, delta: int) -> None:
        """scheduler_goroutines{operation}: asyncio tasks here, goroutines there."""
        ...


class MoveRequests(Protocol):
    """Tell the queue that something changed (here: resources were freed)."""

    def move_all_to_active_or_backoff(
        self, event: ClusterEvent, old: object | None, new: object | None, *, keep: str = ""
    ) -> int: ...


def release_assumption(fwk: Framework, cache: Cache, a_pod: Pod, state: CycleState) -> None:
    """Undo an assumption (kube-scheduler unreserveAndForget)."""
    fwk.run_unreserve(state, a_pod, a_pod.node_name)
    cache.forget_pod(a_pod)


class SchedulingCycle:
    def __init__(
        self,
        *,
        frameworks: Mapping[str, Framework],
        cache: Cache,
        snapshot: Snapshot,
        algorithm: Algorithm,
        queue: MoveRequests,
        outcomes: Outcomes,
        skip: Callable[[Pod], bool],
        to_binding: Callable[[Assumed], None],
        metrics: CycleMetrics | None = None,
        observer: CycleObserver | None = None,
    ) -> None:
        """`skip(pod)` is kube-scheduler's skipPodSchedule; `to_binding` starts a binding;
        `observer` is told each decision (the inspector's collector)."""
        self._metrics = metrics
        self.observer = observer
        self._frameworks = frameworks
        self._cache = cache
        self._snapshot = snapshot
        self._algorithm = algorithm
        self.algorithm = algorithm
        self._queue = queue
        self._outcomes = outcomes
        self._skip = skip
        self._to_binding = to_binding

    async def run(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod
        fwk = self._frameworks.get(pod.scheduler_name)
        if fwk is None or self._skip(pod):
            self._outcomes.dropped(qpi)
            return
        start = time.perf_counter()
        state = CycleState()
        fwk.begin_cycle()
        self._cache.update_snapshot(self._snapshot)
        name = fwk.profile_name
        try:
            result = await self._algorithm.schedule_pod(
                fwk, state, pod, self._snapshot.node_infos(), cycle=qpi.cycle
            )
        except FitError as fit:
            await self._post_filter(fwk, state, pod, fit)
            # schedulingAlgorithm's deferred observation covers PostFilter too.
            self._observe_algorithm(start)
            qpi.unschedulable_plugins = set(fit.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit.diagnosis.pending_plugins)
            if self.observer is not None:
                self.observer.unschedulable(qpi, name, fit)
            self._outcomes.failed(
                qpi, name, start, fit.message(), error=False, nominated=fit.nominated_node_name
            )
            return
        except NoNodesAvailable as exc:
            # schedulingAlgorithm clears the nomination here (clearNominatedNode), as it
            # does on an error, on a fit error without PostFilter plugins, after a Reserve
            # or Permit failure and in handleBindingCycleError.
            self._observe_algorithm(start)
            self._outcomes.failed(qpi, name, start, str(exc), error=False, nominated="")
            return
        except SchedulingError as exc:
            self._observe_algorithm(start)
            self._outcomes.failed(qpi, name, start, exc.status.message(), error=True, nominated="")
            return
        self._observe_algorithm(start)

        node = result.suggested_host
        assumed = bound_to(pod, node)
        self._cache.assume_pod(assumed)

        st = fwk.run_reserve(state, assumed, node)
        if st is None:
            st = fwk.run_permit(state, assumed, node)
        if st is not None and st.code != Code.WAIT:
            release_assumption(fwk, self._cache, assumed, state)
            self._rejected_after_assume(fwk, qpi, st, start, node)
            # No queue event: schedulingCycle only unreserves and forgets after a Reserve
            # or Permit failure (handleBindingCycleError is the one that sends
            # AssignedPodDelete).
            return

        if self.observer is not None:
            scores = None if result.table is None else (result.table, result.index)
            self.observer.scheduled(
                pod, name, node, time.perf_counter() - start, scores, hinted=result.hinted
            )
        log.debug(
            "pod_assumed",
            pod=pod.key,
            node=node,
            evaluated=result.evaluated_nodes,
            feasible=result.feasible_nodes,
            waiting=st is not None,
        )
        self._to_binding(Assumed(fwk, state, qpi, assumed, node, start))

    def _observe_algorithm(self, start: float) -> None:
        if self._metrics is not None:
            self._metrics.observe_algorithm(time.perf_counter() - start)

    async def _post_filter(
        self, fwk: Framework, state: CycleState, pod: Pod, fit: FitError
    ) -> None:
        if not fwk.post_filter_plugins:
            fit.nominated_node_name = ""  # no preemption: the nomination is cleared
            return
        result, st = await fwk.run_post_filter(state, pod, fit.diagnosis.node_to_status)
        if st is not None and st.code == Code.ERROR:
            log.error("post_filter_failed", pod=pod.key, error=st.message())
        if st is not None:
            fit.diagnosis.post_filter_msg = st.message()
        if result is not None:
            fit.nominated_node_name = result.nominated_node_name

    def _rejected_after_assume(
        self, fwk: Framework, qpi: QueuedPodInfo, st: Status, start: float, node: str
    ) -> None:
        rejected = st.is_rejected()
        message = st.message()
        if rejected:
            qpi.unschedulable_plugins = {st.plugin} if st.plugin else set()
            # schedulingCycle wraps a Reserve or Permit rejection in a one-node FitError.
            message = one_node_fit_message(qpi.pod.key, node, st)
        self._outcomes.failed(
            qpi, fwk.profile_name, start, message, error=not rejected, nominated=""
        )


class BindingCycle:
    def __init__(
        self,
        *,
        cache: Cache,
        queue: MoveRequests,
        outcomes: Outcomes,
        events: Callable[[str], EventRecorder],
        limiter: asyncio.Semaphore,
        metrics: CycleMetrics | None = None,
        nominate: Callable[[Pod, str], None] | None = None,
        observer: CycleObserver | None = None,
        before_binding: Callable[[str], Awaitable[None]] | None = None,
        extenders: Extenders | None = None,
        group_members: Callable[[str, str], Sequence[Pod]] | None = None,
        check: BindCheck | None = None,
    ) -> None:
        """`check` asks the API server whether a Bind that failed without a clear answer
        bound the pod all the same, before its assumption is released (BindCheck);
        without it such a failure is taken as it comes, as kube-scheduler does.
        `group_members(ns, name)` lists a native PodGroup's pods (a failed member is
        requeued beside its siblings); `events(profile)` is the profile's recorder;
        `limiter` caps binds in flight (an asyncio.Semaphore: anyio's CapacityLimiter
        yields to the loop twice per acquire, one of them in a shielded cancel scope,
        1.2 % of asched's CPU in the basic benchmark's profile; asyncio's takes a free
        slot without yielding);
        `nominate(pod, node)` patches the pod's nominatedNodeName and
        `before_binding(uid)` drops or waits out the pod's status patches when Bind
        starts, so none lands after the Binding; `observer` is
        told each bind's latency; a binder among `extenders` binds the pods it is
        interested in."""
        self.observer = observer
        self._extenders = extenders
        self._group_members = group_members
        self._check = check
        self._nominate = nominate
        self._before_binding = before_binding
        self._metrics = metrics
        self._cache = cache
        self._queue = queue
        self._outcomes = outcomes
        self._events = events
        self._limiter = limiter

    async def run(self, a: Assumed) -> None:
        # Counted from the wait at Permit to PostBind, as kube-scheduler counts its
        # binding goroutine.
        m = self._metrics
        if m is not None:
            m.goroutines(BINDING, +1)
        try:
            await self._run(a)
        finally:
            if m is not None:
                m.goroutines(BINDING, -1)

    async def _run(self, a: Assumed) -> None:
        fwk, state, assumed, node = a.fwk, a.state, a.pod, a.node
        # NominatedNodeNameForExpectation (beta, on): bindingCycle asks the PreBind plugins
        # whether they have work (RunPreBindPreFlights) and, when one has or WaitOnPermit
        # will wait (WillWaitOnPermit), patches the chosen node as nominatedNodeName so
        # other components see where the pod is going before it is bound. A pod that goes
        # straight to Bind gets no patch: it is bound at once anyway.
        pre_flight = fwk.run_pre_bind_pre_flights(state, assumed, node)
        if pre_flight is not None and (pre_flight.code == Code.ERROR or pre_flight.is_rejected()):
            self._failed(a, pre_flight)
            return
        will_wait = fwk.waiting_pods.get(assumed.uid) is not None
        if self._nominate is not None and (pre_flight is None or will_wait):
            self._nominate(assumed, node)
        st = await fwk.wait_on_permit(assumed)
        at_permit = st is not None
        landed: Landed | None = None
        if st is None:
            unclear = False
            async with self._limiter:
                began = time.perf_counter()
                st = await self._pre_bind(fwk, state, assumed, node, has_work=pre_flight is None)
                if st is None:
                    # A status patch not yet sent or still in flight would land after
                    # the Binding and undo it (PodStatusWriter.before_binding).
                    if self._before_binding is not None:
                        await self._before_binding(assumed.uid)
                    st = await self._bind(fwk, state, assumed, node)
                    unclear = st is not None and self._unclear(st)
                bind_seconds = time.perf_counter() - began
            if unclear and self._check is not None:
                # Outside the limiter: the check may wait out an outage, and it sends no
                # Binding.
                landed = await self._check.landed(assumed, node)
                log.info("bind_checked", pod=assumed.key, node=node, landed=landed.value)
                if landed is Landed.HERE:
                    st = None
        if st is not None:
            self._failed(a, st, at_permit=at_permit, landed=landed)
            return
        if self.observer is not None:
            self.observer.bound(assumed, node, bind_seconds)
        self._outcomes.bound(a.qpi, fwk.profile_name, a.start)
        self._events(fwk.profile_name).event(
            assumed,
            "Normal",
            "Scheduled",
            "Binding",
            f"Successfully assigned {assumed.namespace}/{assumed.name} to {node}",
        )
        log.info(
            "pod_bound",
            pod=assumed.key,
            node=node,
            profile=fwk.profile_name,
            attempts=a.qpi.attempts,
        )
        await fwk.run_post_bind(state, assumed, node)

    def _unclear(self, st: Status) -> bool:
        """Whether a failed Bind may have bound the pod all the same: its request failed
        after it may have reached the server (BindCheck asks the server then)."""
        return st.error is not None and may_have_been_applied(st.error)

    async def _bind(self, fwk: Framework, state: CycleState, pod: Pod, node: str) -> Status | None:
        """bind: extenders first (extendersBinding), then the Bind plugins. An extender's
        failure is an Error status with its message (fwk.AsStatus)."""
        if self._extenders:
            bound, err = await self._extenders.bind(pod, node)
            if bound:
                return None if err is None else Status(Code.ERROR, (str(err),), error=err)
        return await fwk.run_bind(state, pod, node)

    async def _pre_bind(
        self, fwk: Framework, state: CycleState, pod: Pod, node: str, *, has_work: bool
    ) -> Status | None:
        """PreBind; with work to do, the pod is registered so a preemption may cancel it
        (podsInPreBind). Cancelled while PreBind runs, or before MarkPrebound, the binding
        fails with the preemption's message as an Error (Go: fwk.AsStatus of the cause;
        where Go's plugin may return its own error wrapping the cancelled context first,
        asched's PreBind is simply stopped)."""
        if not has_work:
            return await fwk.run_pre_bind(state, pod, node)
        entry = fwk.pods_in_pre_bind.add(pod.uid)
        try:
            st: Status | None = None
            with entry.scope:
                st = await fwk.run_pre_bind(state, pod, node)
            if (st is None and not entry.mark_prebound()) or entry.scope.cancelled_caught:
                return Status(Code.ERROR, (entry.message,))
            return st
        finally:
            fwk.pods_in_pre_bind.remove(pod.uid)

    def cancelled(self, a: Assumed) -> None:
        """The binding task was cancelled (shutdown past its grace period).

        The attempt ends without Unreserve: a bind request may have reached the API
        server, and the process is exiting, so its caches go with it.
        """
        self._outcomes.dropped(a.qpi)

    def _failed(
        self, a: Assumed, st: Status, *, at_permit: bool = False, landed: Landed | None = None
    ) -> None:
        fwk, assumed = a.fwk, a.pod
        release_assumption(fwk, self._cache, assumed, a.state)
        # Forgetting an assumed pod frees its room: a pod delete for the queue
        # (handleBindingCycleError). After a rejection the move comes once the pod is
        # back in the queue and leaves that pod alone, so the event does not count as
        # having happened during its flight; after an error it comes at once.
        rejected = st.is_rejected()
        if not rejected:
            self._queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, assumed, None)
        try:
            self._report_failure(a, st, at_permit=at_permit, landed=landed)
        finally:
            if rejected:
                self._queue.move_all_to_active_or_backoff(
                    ev.ASSIGNED_POD_DELETE, assumed, None, keep=assumed.uid
                )

    def _report_failure(
        self, a: Assumed, st: Status, *, at_permit: bool, landed: Landed | None
    ) -> None:
        fwk, assumed, node = a.fwk, a.pod, a.node
        name = fwk.profile_name
        if (isinstance(st.error, ApiError) and st.error.conflict) or landed is Landed.ELSEWHERE:
            # Someone else bound it (or it changed under us): the informer brings the truth.
            log.info("bind_conflict", pod=assumed.key, node=node, error=st.message())
            self._outcomes.attempted(ERROR, name, a.start)
            self._outcomes.dropped(a.qpi)
            return
        if (isinstance(st.error, ApiError) and st.error.not_found) or landed is Landed.GONE:
            log.info("pod_gone_before_bind", pod=assumed.key)
            self._outcomes.dropped(a.qpi)
            return
        rejected = st.is_rejected()
        message = st.message()
        if rejected and at_permit:
            # bindingCycle wraps a WaitOnPermit rejection in a one-node FitError, whose
            # plugin the queue files the pod under. PreBind and Bind statuses go on
            # unchanged and name no plugin (handleSchedulingFailure takes plugins from a
            # FitError only), so the queue backs the pod off as an error: its
            # consecutive-error count grows, not its unschedulable count.
            a.qpi.unschedulable_plugins = {st.plugin} if st.plugin else set()
            message = one_node_fit_message(assumed.key, node, st)
        log.info("binding_cycle_failed", pod=assumed.key, node=node, status=str(st))
        # The runtime already worded an Error as kube-scheduler does ("running Bind
        # plugin ...: ..."); handleBindingCycleError passes the status on unchanged.
        self._outcomes.failed(
            a.qpi,
            name,
            a.start,
            message,
            error=not rejected,
            nominated="",
            group_siblings=self._siblings(a.fwk, assumed),
        )

    def _siblings(self, fwk: Framework, pod: Pod) -> list[str] | None:
        """The other members of a pod's native PodGroup when its profile places groups in
        group cycles (isPodGroupMember); None for any other pod."""
        if self._group_members is None or not pod.scheduling_group:
            return None
        if not fwk.placement_feasible_plugins:
            return None
        return [
            p.uid
            for p in self._group_members(pod.namespace, pod.scheduling_group)
            if p.uid != pod.uid
        ]


__all__ = ["UNSCHEDULABLE", "Assumed", "BindingCycle", "SchedulingCycle"]
