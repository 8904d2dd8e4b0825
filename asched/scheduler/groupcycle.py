"""The pod group cycle: a native PodGroup's queued members placed together, or not at all.

Mirrors kube-scheduler's schedule_one_podgroup.go (podGroupSchedulingDefaultAlgorithm and
submitPodGroupAlgorithmResult, CompositePodGroup off, no topology placement yet):
1. the popped member's queued siblings are taken from the queue (SchedulingQueue.take);
2. one snapshot; PlacementFeasible is asked first (minCount already out of reach ends the
   cycle), then each member in queue order is filtered and scored with the members before
   it assumed and reserved, and PlacementFeasible is asked again after each: Unschedulable
   ends the cycle early, Wait goes on;
3. success (at least one member placed and the group's constraints met): every placed
   member runs Permit (which now sees the quorum) and goes to binding; members that fit
   nowhere fail with their own FitError;
4. otherwise every assumption is rolled back, in reverse (unreserve, forget), and nothing
   is held: a member that fit nowhere reports its FitError, a member that did fit reports
   the group's status, a member never tried reports the group's status too;
5. the PodGroup's PodGroupInitiallyScheduled condition records the outcome.
Per-pod PostFilter does not run inside the cycle (Go: schedulingAlgorithm skips it when
IsPodGroupSchedulingCycle); gang-aware preemption (PodGroupPostFilter) is not built yet.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import structlog

from asched.api import Pod
from asched.api.workload import (
    REASON_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    NativePodGroup,
)
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.framework.cycle_state import CycleState
from asched.framework.listers import ObjectStore
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo
from asched.scheduler.algorithm import Algorithm, SchedulingError
from asched.scheduler.cycle import Assumed, CycleMetrics, release_assumption
from asched.scheduler.diagnosis import FitError, NoNodesAvailable, one_node_fit_message
from asched.scheduler.outcome import Outcomes
from asched.scheduler.podgroupstatus import PodGroupConditionWriter

log = structlog.get_logger(__name__)

# errPodGroupUnschedulable: Go's Status.Message() puts a status's error first.
POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"


def _compare(fwk: Framework, a: QueuedPodInfo, b: QueuedPodInfo) -> int:
    return -1 if fwk.less(a, b) else (1 if fwk.less(b, a) else 0)


def _go_message(err: str, reasons: Sequence[str]) -> str:
    """fwk.Status.Message(): the error (if any) then the reasons, joined by ", "."""
    return ", ".join([err, *reasons] if err else reasons)


@dataclass(slots=True)
class _Member:
    qpi: QueuedPodInfo
    state: CycleState
    start: float
    node: str = ""
    assumed: Pod | None = None
    # Set when the member itself was rejected or failed.
    message: str = ""
    error: bool = False
    tried: bool = False


class GroupCycle:
    def __init__(
        self,
        *,
        frameworks: Mapping[str, Framework],
        cache: Cache,
        snapshot: Snapshot,
        algorithm: Algorithm,
        take: Callable[[Sequence[str]], list[QueuedPodInfo]],
        members: Callable[[str, str], Sequence[Pod]],
        groups: Callable[[], ObjectStore[NativePodGroup]],
        conditions: PodGroupConditionWriter,
        outcomes: Outcomes,
        skip: Callable[[Pod], bool],
        to_binding: Callable[[Assumed], None],
        metrics: CycleMetrics | None = None,
    ) -> None:
        """`members(ns, name)` lists the group's pods (assumed placements included)."""
        self._frameworks = frameworks
        self._cache = cache
        self._snapshot = snapshot
        self._algorithm = algorithm
        self._take = take
        self._members = members
        self._groups = groups
        self._conditions = conditions
        self._outcomes = outcomes
        self._skip = skip
        self._to_binding = to_binding
        self._metrics = metrics

    @staticmethod
    def applies(fwk: Framework, pod: Pod) -> bool:
        """A pod joins a group cycle when it names a group and the profile gangs."""
        return bool(pod.scheduling_group) and bool(fwk.placement_feasible_plugins)

    async def run(self, first: QueuedPodInfo) -> None:
        pod = first.pod
        fwk = self._frameworks[pod.scheduler_name]
        ns, name = pod.namespace, pod.scheduling_group
        siblings = [
            p.uid
            for p in self._members(ns, name)
            if p.uid != first.uid and not p.node_name and p.scheduler_name == pod.scheduler_name
        ]
        queued = [first, *self._take(siblings)]
        # Members are tried in QueueSort order, the popped one among them.
        queued.sort(key=functools.cmp_to_key(lambda a, b: _compare(fwk, a, b)))
        start = time.perf_counter()
        # skipPodGroupPodSchedule: deleting or already-assumed members drop out.
        live: list[QueuedPodInfo] = []
        for qpi in queued:
            if self._skip(qpi.pod):
                self._outcomes.dropped(qpi)
            else:
                live.append(qpi)
        if not live:
            return
        pg = self._groups().get(f"{ns}/{name}")
        if pg is None:
            # reconcilePodGroupWithSnapshot failed: handlePodGroupFailureBeforeScheduling.
            msg = f'podgroups.scheduling.k8s.io "{name}" not found'
            for qpi in live:
                self._outcomes.failed(qpi, fwk.profile_name, start, msg, error=True, nominated="")
            return
        problem = self._validate(live, pg)
        if problem:
            for qpi in live:
                self._outcomes.failed(
                    qpi, fwk.profile_name, start, problem, error=True, nominated=""
                )
            self._conditions.set(pg, "False", REASON_SCHEDULER_ERROR, problem)
            return
        fwk.begin_cycle()
        self._cache.update_snapshot(self._snapshot)
        members = [_Member(qpi, CycleState(), start) for qpi in live]
        status = await self._place(fwk, pg, members)
        self._observe(start)
        self._submit(fwk, pg, members, status)

    def _validate(self, live: Sequence[QueuedPodInfo], pg: NativePodGroup) -> str:
        """validatePodGroup: one scheduler name and the group's priority for every member."""
        scheduler = live[0].pod.scheduler_name
        priority = pg.priority if pg.priority is not None else 0
        pods = [q.pod for q in live] + [
            p for p in self._members(pg.namespace, pg.name) if p.node_name
        ]
        for p in pods:
            if p.scheduler_name != scheduler:
                return (
                    "all pods in a single pod group should have the same .spec.schedulerName "
                    f'set, got: "{p.scheduler_name}" and "{scheduler}"'
                )
            if p.priority != priority:
                return (
                    "all pods in a single pod group should have the same priority as the pod "
                    f"group's priority, got {p.priority} and {priority}"
                )
        return ""

    def _scheduled_before(self, pg: NativePodGroup, members: Sequence[_Member]) -> int:
        mine = {m.qpi.uid for m in members}
        return sum(
            1 for p in self._members(pg.namespace, pg.name) if p.node_name and p.uid not in mine
        )

    async def _place(self, fwk: Framework, pg: NativePodGroup, members: list[_Member]) -> Status:
        """podGroupSchedulingDefaultAlgorithm; returns the group's status (Success = None
        is returned as a SUCCESS Status)."""
        ns, name = pg.namespace, pg.name
        remaining = len(members)
        scheduled = self._scheduled_before(pg, members)
        st = fwk.run_placement_feasible(ns, name, scheduled, remaining)
        if st is not None and st.code == Code.ERROR:
            return Status(
                Code.ERROR, (f"failed to evaluate placement feasibility: {st.message()}",)
            )
        if st is not None and st.code == Code.UNSCHEDULABLE:
            return Status(Code.UNSCHEDULABLE, (_go_message(POD_GROUP_UNSCHEDULABLE, st.reasons),))
        any_scheduled = False
        for m in members:
            m.tried = True
            failure = await self._place_one(fwk, m)
            if failure is not None:
                return failure
            remaining -= 1
            if m.assumed is not None:
                scheduled += 1
            st = fwk.run_placement_feasible(ns, name, scheduled, remaining)
            if st is not None and st.code == Code.ERROR:
                return Status(
                    Code.ERROR, (f"failed to evaluate placement feasibility: {st.message()}",)
                )
            if st is not None and st.code == Code.UNSCHEDULABLE:
                return Status(Code.UNSCHEDULABLE, (st.message(),))
            any_scheduled = any_scheduled or m.assumed is not None
        if st is not None and st.code == Code.WAIT:
            return Status(Code.UNSCHEDULABLE, (_go_message(POD_GROUP_UNSCHEDULABLE, st.reasons),))
        if not any_scheduled:
            # "The framework requires at least 1 pod to be scheduled".
            return Status(Code.UNSCHEDULABLE, (POD_GROUP_UNSCHEDULABLE,))
        return Status(Code.SUCCESS)

    async def _place_one(self, fwk: Framework, m: _Member) -> Status | None:
        """podGroupPodSchedulingAlgorithm; an Error status stops the whole group."""
        pod = m.qpi.pod
        try:
            result = await self._algorithm.schedule_pod(
                fwk, m.state, pod, self._snapshot.node_infos()
            )
        except FitError as fit:
            fit.nominated_node_name = ""
            m.qpi.unschedulable_plugins = set(fit.diagnosis.unschedulable_plugins)
            m.qpi.pending_plugins = set(fit.diagnosis.pending_plugins)
            m.message = fit.message()
            return None
        except NoNodesAvailable as exc:
            m.message = str(exc)
            return None
        except SchedulingError as exc:
            m.message, m.error = exc.status.message(), True
            return Status(
                Code.ERROR,
                (f"failed to schedule other pod from a pod group: {exc.status.message()}",),
            )
        node = result.suggested_host
        assumed = replace(pod, node_name=node)
        self._cache.assume_pod(assumed)
        st = fwk.run_reserve(m.state, assumed, node)
        if st is not None:
            release_assumption(fwk, self._cache, assumed, m.state)
            if st.is_rejected():
                m.qpi.unschedulable_plugins = {st.plugin} if st.plugin else set()
                m.message = one_node_fit_message(pod.key, node, st)
                return None
            m.message, m.error = st.message(), True
            return Status(
                Code.ERROR, (f"failed to schedule other pod from a pod group: {st.message()}",)
            )
        m.node, m.assumed = node, assumed
        # The next member sees this one on its node.
        self._cache.update_snapshot(self._snapshot)
        return None

    def _submit(
        self, fwk: Framework, pg: NativePodGroup, members: list[_Member], status: Status
    ) -> None:
        """submitPodGroupAlgorithmResult."""
        profile = fwk.profile_name
        if status.code != Code.SUCCESS:
            # The simulation's assumptions go, last first (revertFns.revert).
            for m in reversed(members):
                if m.assumed is not None:
                    release_assumption(fwk, self._cache, m.assumed, m.state)
        group_message = status.message()
        placed = 0
        for m in members:
            qpi = m.qpi
            if status.code == Code.ERROR:
                msg = m.message if m.error else group_message
                self._outcomes.failed(qpi, profile, m.start, msg, error=True, nominated="")
                continue
            if m.assumed is None:
                # Rejected itself (its own FitError), or never tried (the group's status).
                msg = m.message if m.tried else group_message
                self._outcomes.failed(qpi, profile, m.start, msg, error=False, nominated="")
                continue
            if status.code != Code.SUCCESS:
                msg = _go_message(POD_GROUP_UNSCHEDULABLE, (group_message,))
                qpi.unschedulable_plugins = set()
                self._outcomes.failed(qpi, profile, m.start, msg, error=False, nominated="")
                continue
            st = fwk.run_permit(m.state, m.assumed, m.node)
            if st is not None and st.code != Code.WAIT:
                release_assumption(fwk, self._cache, m.assumed, m.state)
                rejected = st.is_rejected()
                msg = st.message()
                if rejected:
                    qpi.unschedulable_plugins = {st.plugin} if st.plugin else set()
                    msg = one_node_fit_message(qpi.pod.key, m.node, st)
                self._outcomes.failed(qpi, profile, m.start, msg, error=not rejected, nominated="")
                continue
            placed += 1
            self._to_binding(Assumed(fwk, m.state, qpi, m.assumed, m.node, m.start))
        if status.code == Code.SUCCESS:
            self._conditions.set(pg, "True", REASON_SCHEDULED, "")
        elif status.code == Code.ERROR:
            self._conditions.set(pg, "False", REASON_SCHEDULER_ERROR, group_message)
        else:
            self._conditions.set(pg, "False", REASON_UNSCHEDULABLE, group_message)
        log.info(
            "pod_group_cycle",
            podgroup=pg.key,
            result=status.code_name(),
            members=len(members),
            placed=placed,
            message=group_message,
        )

    def _observe(self, start: float) -> None:
        if self._metrics is not None:
            self._metrics.observe_algorithm(time.perf_counter() - start)
