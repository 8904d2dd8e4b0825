"""One pod's way through the scheduler: the scheduling cycle, then the binding cycle.

Mirrors kube-scheduler's schedule_one.go:
- scheduling cycle (one pod at a time, never awaits the network): snapshot -> PreFilter
  -> Filter -> PostFilter when nothing fits -> PreScore/Score -> assume in the cache ->
  Reserve -> Permit;
- binding cycle (many pods at once, in the scheduler's binding task group): wait on
  Permit -> PreBind -> Bind -> PostBind. Waiting at Permit happens here, never in the
  scheduling cycle, so gangs cannot deadlock the loop;
- any failure after assume runs Unreserve, forgets the assumed pod and requeues it with
  backoff; a binding rejected with 409 (someone else bound the pod) is not retried.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import structlog

from asched.api import Pod
from asched.client.protocol import ApiError
from asched.framework import events as ev
from asched.framework.cycle_state import CycleState
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo
from asched.scheduler.algorithm import SchedulingError
from asched.scheduler.diagnosis import FitError, NoNodesAvailable

if TYPE_CHECKING:
    from asched.scheduler.scheduler import Scheduler

log = structlog.get_logger(__name__)

SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"


@dataclass(slots=True)
class Assumed:
    """A pod that passed its scheduling cycle and is on its way to being bound."""

    fwk: Framework
    state: CycleState
    qpi: QueuedPodInfo
    pod: Pod  # the assumed copy, node_name set
    node: str
    start: float


async def schedule_one(sched: Scheduler, qpi: QueuedPodInfo) -> None:
    pod = qpi.pod
    fwk = sched.framework_for(pod)
    if fwk is None or sched.skip_pod(pod):
        sched.queue.done(pod.uid)
        return
    start = time.perf_counter()
    state = CycleState()
    fwk.begin_cycle()
    sched.cache.update_snapshot(sched.snapshot)
    try:
        result = await sched.algorithm.schedule_pod(fwk, state, pod, sched.snapshot.node_infos())
    except FitError as fit:
        await _post_filter(sched, fwk, state, pod, fit)
        qpi.unschedulable_plugins = set(fit.diagnosis.unschedulable_plugins)
        qpi.pending_plugins = set(fit.diagnosis.pending_plugins)
        sched.record_attempt(UNSCHEDULABLE, fwk, start)
        sched.handle_failure(
            fwk, qpi, "Unschedulable", fit.message(), error=False, nominated=fit.nominated_node_name
        )
        return
    except NoNodesAvailable as exc:
        sched.record_attempt(UNSCHEDULABLE, fwk, start)
        sched.handle_failure(fwk, qpi, "Unschedulable", str(exc), error=False)
        return
    except SchedulingError as exc:
        sched.record_attempt(ERROR, fwk, start)
        sched.handle_failure(fwk, qpi, "SchedulerError", exc.status.message(), error=True)
        return

    node = result.suggested_host
    assumed = replace(pod, node_name=node)
    sched.cache.assume_pod(assumed)

    st = fwk.run_reserve(state, assumed, node)
    if st is not None:
        fwk.run_unreserve(state, assumed, node)
        sched.cache.forget_pod(assumed)
        _failed_after_assume(sched, fwk, qpi, st, start)
        return

    st = fwk.run_permit(state, assumed, node)
    if st is not None and st.code != Code.WAIT:
        fwk.run_unreserve(state, assumed, node)
        sched.cache.forget_pod(assumed)
        _failed_after_assume(sched, fwk, qpi, st, start)
        return

    log.debug(
        "pod_assumed",
        pod=pod.key,
        node=node,
        evaluated=result.evaluated_nodes,
        feasible=result.feasible_nodes,
        waiting=st is not None,
    )
    sched.start_binding(Assumed(fwk, state, qpi, assumed, node, start))


async def _post_filter(
    sched: Scheduler, fwk: Framework, state: CycleState, pod: Pod, fit: FitError
) -> None:
    if not fwk.post_filter_plugins:
        return
    result, st = await fwk.run_post_filter(state, pod, fit.diagnosis.node_to_status)
    if st is not None and st.code == Code.ERROR:
        log.error("post_filter_failed", pod=pod.key, error=st.message())
    if st is not None:
        fit.diagnosis.post_filter_msg = st.message()
    if result is not None:
        fit.nominated_node_name = result.nominated_node_name


def _failed_after_assume(
    sched: Scheduler, fwk: Framework, qpi: QueuedPodInfo, st: Status, start: float
) -> None:
    if st.is_rejected():
        qpi.unschedulable_plugins = {st.plugin} if st.plugin else set()
        sched.record_attempt(UNSCHEDULABLE, fwk, start)
        sched.handle_failure(fwk, qpi, "Unschedulable", st.message(), error=False)
    else:
        sched.record_attempt(ERROR, fwk, start)
        sched.handle_failure(fwk, qpi, "SchedulerError", st.message(), error=True)
    # Resources the pod had reserved are free again.
    sched.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, qpi.pod, None)


async def binding_cycle(sched: Scheduler, a: Assumed) -> None:
    fwk, state, assumed, node = a.fwk, a.state, a.pod, a.node
    try:
        st = await fwk.wait_on_permit(assumed)
        if st is None:
            async with sched.bind_limiter:
                st = await fwk.run_pre_bind(state, assumed, node)
                if st is None:
                    st = await fwk.run_bind(state, assumed, node)
        if st is None:
            sched.cache.finish_binding(assumed)
            sched.record_attempt(SCHEDULED, fwk, a.start, qpi=a.qpi)
            sched.events.event(
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
            return
        _binding_failed(sched, a, st)
    finally:
        sched.queue.done(assumed.uid)


def _binding_failed(sched: Scheduler, a: Assumed, st: Status) -> None:
    fwk, assumed, node = a.fwk, a.pod, a.node
    fwk.run_unreserve(a.state, assumed, node)
    sched.cache.forget_pod(assumed)
    # Freed resources may let other pods in (kube-scheduler handleBindingCycleError).
    sched.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, assumed, None)
    if isinstance(st.error, ApiError) and st.error.conflict:
        # Someone else bound it (or it changed under us): the informer brings the truth.
        log.info("bind_conflict", pod=assumed.key, node=node, error=st.message())
        sched.record_attempt(ERROR, fwk, a.start)
        return
    if isinstance(st.error, ApiError) and st.error.not_found:
        log.info("pod_gone_before_bind", pod=assumed.key)
        return
    rejected = st.is_rejected()
    if rejected:
        a.qpi.unschedulable_plugins = {st.plugin} if st.plugin else set()
    log.info("binding_cycle_failed", pod=assumed.key, node=node, status=str(st))
    sched.record_attempt(UNSCHEDULABLE if rejected else ERROR, fwk, a.start)
    sched.handle_failure(
        fwk,
        a.qpi,
        "Unschedulable" if rejected else "SchedulerError",
        st.message() if rejected else f"Binding rejected: {st.message()}",
        error=not rejected,
    )
