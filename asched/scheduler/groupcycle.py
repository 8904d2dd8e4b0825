"""The pod group cycle: a native PodGroup's queued members placed together, or not at all.

Mirrors kube-scheduler's schedule_one_podgroup.go (podGroupSchedulingDefaultAlgorithm and
submitPodGroupAlgorithmResult); a PodGroup under a CompositePodGroup (gate on) is placed
with its whole hierarchy by compositecycle.py, which this cycle owns:
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
IsPodGroupSchedulingCycle); an Unschedulable group runs the profile's PodGroupPostFilter
plugins instead (groupwhatif.py is what they get from the cycle).
The placements come from the profile's PlacementGenerate plugin and are ranked by its
PlacementScore plugins (placement.py adds asched's tie rule); the cycle names no plugin.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import anyio.lowlevel
import structlog

from asched.api import Pod, bound_to
from asched.api.workload import (
    REASON_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    NativePodGroup,
)
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.framework.cycle_state import CycleState
from asched.framework.grouptree import GroupForest, entity_key
from asched.framework.listers import ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import Placement, PodGroupAssignments, PodGroupInfo
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo
from asched.scheduler import placement
from asched.scheduler.algorithm import Algorithm, SchedulingError
from asched.scheduler.compositecycle import (
    CompositeCycle,
    composite_not_found,
    error_each,
    members_by_group,
    scheduler_error,
    with_reason_each,
)
from asched.scheduler.cycle import Assumed, release_assumption
from asched.scheduler.diagnosis import FitError, NoNodesAvailable, one_node_fit_message
from asched.scheduler.groupstate import (
    POD_GROUP_UNSCHEDULABLE,
    Member,
    Outcome,
    SnapshotWorld,
    World,
    as_error,
    group_status,
    restore,
    validate_pods,
    with_reason,
)
from asched.scheduler.groupwhatif import GroupWhatIf
from asched.scheduler.observe import CycleObserver
from asched.scheduler.outcome import Outcomes
from asched.scheduler.podgroupstatus import PodGroupConditionWriter

log = structlog.get_logger(__name__)

# Members placed (or submitted) between two yields to the event loop.
YIELD_EVERY = 16


def _compare(fwk: Framework, a: QueuedPodInfo, b: QueuedPodInfo) -> int:
    return -1 if fwk.less(a, b) else (1 if fwk.less(b, a) else 0)


class GroupMetrics(Protocol):
    def observe_pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        """scheduler_podgroup_schedule_attempts_total and its duration histogram."""
        ...

    def observe_pod_group_algorithm(self, seconds: float) -> None:
        """scheduler_podgroup_scheduling_algorithm_duration_seconds"""
        ...


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
        metrics: GroupMetrics | None = None,
        observer: CycleObserver | None = None,
        forest: Callable[[], GroupForest] | None = None,
    ) -> None:
        """`members(ns, name)` lists the group's pods (assumed placements included);
        `observer` is told each member placed (the inspector's collector); `forest`,
        given only with the CompositePodGroup gate on, reads PodGroup hierarchies."""
        self.observer = observer
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
        self._composite = (
            None
            if forest is None
            else CompositeCycle(
                forest=forest, placements=self._placements, scheduled=self._scheduled
            )
        )

    @staticmethod
    def applies(fwk: Framework, pod: Pod) -> bool:
        """A pod joins a group cycle when it names a group and the profile gangs."""
        return bool(pod.scheduling_group) and bool(fwk.placement_feasible_plugins)

    async def run(self, first: QueuedPodInfo) -> None:
        pod = first.pod
        fwk = self._frameworks[pod.scheduler_name]
        ns, name = pod.namespace, pod.scheduling_group
        if self._composite is not None:
            pg = self._groups().get(f"{ns}/{name}")
            if pg is not None and pg.parent:
                await self._run_composite(fwk, first, pg, self._composite)
                return
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
        group_cycle = CycleState()
        members = [Member(qpi, CycleState(), start, group_cycle) for qpi in live]
        status, chosen = await self._place(fwk, pg, members, SnapshotWorld(self._snapshot))
        if chosen is not None:
            status = self._commit(fwk, members)
        if self._metrics is not None:
            self._metrics.observe_pod_group_algorithm(time.perf_counter() - start)
        # completePodGroupAlgorithmResult clones the group's status for members never
        # tried before PodGroupPostFilter appends to it, so they report it without.
        untried = status.message()
        nominated: dict[str, str] = {}
        if status.code == Code.UNSCHEDULABLE:
            status, nominated = await self._post_filter(fwk, pg, members, status)
        await self._submit(fwk, pg, members, status, untried, nominated=nominated)
        if self._metrics is not None:
            result = {Code.SUCCESS: "scheduled", Code.ERROR: "error"}.get(
                status.code, "unschedulable"
            )
            self._metrics.observe_pod_group_attempt(
                result, fwk.profile_name, time.perf_counter() - start
            )

    async def _run_composite(
        self, fwk: Framework, first: QueuedPodInfo, pg: NativePodGroup, cc: CompositeCycle
    ) -> None:
        """scheduleOnePodGroup for the root CompositePodGroup above `pg` (compositecycle.py)."""
        start = time.perf_counter()
        pod = first.pod
        root = cc.root_of(pg)
        if root is None:
            # The parent went away after PreEnqueue let the pod in (reconcilePodGroupWith-
            # Snapshot fails): back to the queue, no condition written.
            msg = composite_not_found(pg.parent)
            self._outcomes.failed(first, fwk.profile_name, start, msg, error=True, nominated="")
            return
        tree = cc.tree(root)
        leaves = list(tree.leaves())
        siblings = [
            p.uid
            for leaf in leaves
            for p in self._members(leaf.namespace, leaf.name)
            if p.uid != first.uid and not p.node_name and p.scheduler_name == pod.scheduler_name
        ]
        live: list[QueuedPodInfo] = []
        for qpi in [first, *self._take(siblings)]:
            if self._skip(qpi.pod):
                self._outcomes.dropped(qpi)
            else:
                live.append(qpi)
        if not live:
            return
        in_tree = [p for leaf in leaves for p in self._members(leaf.namespace, leaf.name)]
        problem = cc.validate(root, [q.pod for q in live] + [p for p in in_tree if p.node_name])
        if problem:
            for qpi in live:
                self._outcomes.failed(
                    qpi, fwk.profile_name, start, problem, error=True, nominated=""
                )
            scheduler_error(self._conditions.set, tree, problem)
            return
        fwk.begin_cycle()
        self._cache.update_snapshot(self._snapshot)
        members = members_by_group(tree, live, start, lambda a, b: _compare(fwk, a, b))
        placed_in_tree = {m.qpi.uid for ms in members.values() for m in ms}
        for qpi in live:
            if qpi.uid not in placed_in_tree:
                # Its PodGroup was cut from the tree (a parent loop): it cannot be tried
                # with it; back to the queue like a group whose hierarchy changed.
                msg = composite_not_found(pg.parent)
                self._outcomes.failed(qpi, fwk.profile_name, start, msg, error=True, nominated="")
        results = await cc.schedule(fwk, tree, members, SnapshotWorld(self._snapshot))
        root_status = results[tree.key].status
        if root_status.code == Code.SUCCESS:
            # Commit every PodGroup that, with all its ancestors, succeeded (successful-
            # LeafResults) before any Permit runs: Permit counts the whole tree.
            for leaf in leaves:
                if results[entity_key(leaf)].status.code == Code.SUCCESS:
                    self._commit(fwk, members[leaf.key])
        if self._metrics is not None:
            self._metrics.observe_pod_group_algorithm(time.perf_counter() - start)
        untried = {leaf.key: results[entity_key(leaf)].status.message() for leaf in leaves}
        nominated: dict[str, str] = {}
        if root_status.code == Code.UNSCHEDULABLE:
            view = cc.what_if(fwk, root, tree, members, self._snapshot.node_infos())
            result, answer = await fwk.pod_group_points.run_pod_group_post_filter(view)
            if answer.code == Code.ERROR:
                error_each(results, group_status(Code.ERROR, answer.message()))
            else:
                with_reason_each(results, answer.message())
                if answer.is_success() and result is not None:
                    nominated = dict(result.nominated)
        for leaf in leaves:
            await self._submit(
                fwk,
                leaf,
                members[leaf.key],
                results[entity_key(leaf)].status,
                untried[leaf.key],
                nominated=nominated,
            )
        if self._metrics is not None:
            final = results[tree.key].status
            outcome = {Code.SUCCESS: "scheduled", Code.ERROR: "error"}.get(
                final.code, "unschedulable"
            )
            self._metrics.observe_pod_group_attempt(
                outcome, fwk.profile_name, time.perf_counter() - start
            )

    def _validate(self, live: Sequence[QueuedPodInfo], pg: NativePodGroup) -> str:
        """validatePodGroup: one scheduler name and the group's priority for every member."""
        scheduler = live[0].pod.scheduler_name
        priority = pg.priority if pg.priority is not None else 0
        pods = [q.pod for q in live] + [
            p for p in self._members(pg.namespace, pg.name) if p.node_name
        ]
        return validate_pods(pods, scheduler, priority)

    def _scheduled(self, pg: NativePodGroup, members: Sequence[Member]) -> list[Pod]:
        """Members already bound or assumed outside this cycle (ScheduledPods)."""
        mine = {m.qpi.uid for m in members}
        return [
            p for p in self._members(pg.namespace, pg.name) if p.node_name and p.uid not in mine
        ]

    @staticmethod
    def _info(
        pg: NativePodGroup, members: Sequence[Member], scheduled: Sequence[Pod]
    ) -> PodGroupInfo:
        return PodGroupInfo(pg, tuple(scheduled), tuple(m.qpi.pod for m in members))

    async def _place(
        self, fwk: Framework, pg: NativePodGroup, members: list[Member], world: World
    ) -> tuple[Status, placement.Candidate | None]:
        """podGroupSchedulingPlacementAlgorithm: simulate each placement, keep the best;
        the members end with the chosen placement's outcome, nothing assumed."""
        st, chosen = await self._placements(fwk, pg, members, world)
        if st.code == Code.SUCCESS and chosen is not None and not chosen.placed:
            # runRootSchedulingAlgorithm: "The framework requires at least 1 pod to be
            # scheduled in order to return a success status" (no placements text).
            return group_status(Code.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE), None
        return st, chosen

    async def _placements(
        self, fwk: Framework, pg: NativePodGroup, members: list[Member], world: World
    ) -> tuple[Status, placement.Candidate | None]:
        scheduled = self._scheduled(pg, members)
        info = self._info(pg, members, scheduled)
        placements, gst = fwk.pod_group_points.run_placement_generate(info, world.nodes())
        if gst is not None and gst.code == Code.ERROR:
            return group_status(Code.ERROR, gst.message()), None
        if gst is not None:
            return group_status(gst.code, "", gst.reasons), None
        first: tuple[Status, list[Outcome]] | None = None
        feasible: list[tuple[placement.Candidate, list[Outcome]]] = []
        proposed: list[PodGroupAssignments] = []
        for candidate in placements:
            st = await self._simulate(fwk, pg, members, candidate, len(scheduled), world=world)
            outcomes = [m.outcome() for m in members]
            if st.code == Code.SUCCESS:
                cpu, mem = placement.leftover(candidate, world.nodes())
                placed = {
                    m.qpi.uid: o.node for m, o in zip(members, outcomes, strict=True) if o.node
                }
                feasible.append((placement.Candidate(candidate, len(placed), cpu, mem), outcomes))
                proposed.append(PodGroupAssignments(candidate, placed))
            self._revert(fwk, members, world)
            if st.code == Code.ERROR:
                restore(members, outcomes)
                return st, None
            if first is None:
                first = (st, outcomes)
        if not feasible:
            assert first is not None
            st, outcomes = first
            restore(members, outcomes)
            return group_status(
                Code.UNSCHEDULABLE,
                POD_GROUP_UNSCHEDULABLE,
                (
                    f"0/{len(placements)} placements are available, first placement status: "
                    f"{as_error(st)}",
                ),
            ), None
        chosen, outcomes = feasible[0]
        if len(feasible) > 1:
            # findBestPodGroupPlacement: one feasible placement is taken as it is; more
            # are ranked by the PlacementScore plugins over what the simulations placed.
            totals, sst = fwk.pod_group_points.run_placement_score(info, proposed)
            if sst is not None:
                restore(members, feasible[0][1])
                return group_status(Code.ERROR, sst.message()), None
            chosen = placement.best([c for c, _ in feasible], totals)
            outcomes = next(o for c, o in feasible if c is chosen)
        restore(members, outcomes)
        log.debug(
            "pod_group_placement",
            podgroup=pg.key,
            placement=chosen.placement.name,
            feasible=len(feasible),
            candidates=len(placements),
        )
        return group_status(Code.SUCCESS), chosen

    async def _simulate(
        self,
        fwk: Framework,
        pg: NativePodGroup,
        members: list[Member],
        where: Placement,
        scheduled: int,
        *,
        world: World,
    ) -> Status:
        """podGroupSchedulingDefaultAlgorithm over one placement; members stay assumed."""
        ns, name = pg.namespace, pg.name
        for m in members:
            m.reset()
        remaining = len(members)
        st = fwk.run_placement_feasible(ns, name, scheduled, remaining)
        if st is not None and st.code == Code.ERROR:
            return group_status(
                Code.ERROR, f"failed to evaluate placement feasibility: {st.message()}"
            )
        if st is not None and st.code == Code.UNSCHEDULABLE:
            return group_status(Code.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE, st.reasons)
        for i, m in enumerate(members, 1):
            if i % YIELD_EVERY == 0:
                # A 5000-member gang is thousands of cycles in one: informers, earlier
                # groups' bindings and the API server's connections must not wait for it
                # (a ten-second stall timed out the bindings' connects). The world may
                # change meanwhile exactly as it may during a single pod's filter pass,
                # which yields too.
                await anyio.lowlevel.checkpoint()
            m.tried = True
            failure = await self._place_one(fwk, m, where.nodes(world.nodes()), world)
            if failure is not None:
                return failure
            remaining -= 1
            if m.assumed is not None:
                scheduled += 1
            st = fwk.run_placement_feasible(ns, name, scheduled, remaining)
            if st is not None and st.code == Code.ERROR:
                return group_status(
                    Code.ERROR, f"failed to evaluate placement feasibility: {st.message()}"
                )
            if st is not None and st.code == Code.UNSCHEDULABLE:
                return group_status(Code.UNSCHEDULABLE, "", st.reasons)
        if st is not None and st.code == Code.WAIT:
            return group_status(Code.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE, st.reasons)
        # Success even if no member was placed: runRootSchedulingAlgorithm, not the
        # placement, turns that into Unschedulable.
        return group_status(Code.SUCCESS)

    def _revert(self, fwk: Framework, members: Sequence[Member], world: World) -> None:
        """revertFns.revert: the simulation's assumptions go, last first."""
        for m in reversed(members):
            if m.assumed is not None:
                world.release(fwk, m)
                m.assumed = None

    def _commit(self, fwk: Framework, members: Sequence[Member]) -> Status:
        """prepareForBindingCycle's assumeAndReserve, at the chosen placement's nodes."""
        for m in members:
            if not m.node:
                continue
            assumed = bound_to(m.qpi.pod, m.node)
            # The chosen placement's state (PreFilter's data) goes on, no longer in the
            # group cycle: Go's SetPodGroupSchedulingCycle(nil) before binding.
            m.state.pod_group_cycle = None
            self._cache.assume_pod(assumed)
            st = fwk.run_reserve(m.state, assumed, m.node)
            if st is not None:
                release_assumption(fwk, self._cache, assumed, m.state)
                m.node, m.message, m.error = "", st.message(), not st.is_rejected()
                if st.is_rejected():
                    m.qpi.unschedulable_plugins = {st.plugin} if st.plugin else set()
                    m.message = one_node_fit_message(m.qpi.pod.key, assumed.node_name, st)
                continue
            m.assumed = assumed
        return group_status(Code.SUCCESS)

    async def _place_one(
        self, fwk: Framework, m: Member, nodes: Sequence[NodeInfo], world: World
    ) -> Status | None:
        """podGroupPodSchedulingAlgorithm; an Error status stops the whole group."""
        pod = m.qpi.pod
        try:
            result = await self._algorithm.schedule_pod(fwk, m.state, pod, nodes, cycle=m.qpi.cycle)
        except FitError as fit:
            fit.nominated_node_name = ""
            m.plugins = set(fit.diagnosis.unschedulable_plugins)
            m.pending = set(fit.diagnosis.pending_plugins)
            m.message = fit.message()
            return None
        except NoNodesAvailable as exc:
            m.message = str(exc)
            return None
        except SchedulingError as exc:
            m.message, m.error = exc.status.message(), True
            return group_status(
                Code.ERROR,
                f"failed to schedule other pod from a pod group: {exc.status.message()}",
            )
        node = result.suggested_host
        assumed = bound_to(pod, node)
        st = world.assume(fwk, m, assumed)
        if st is not None:
            if st.is_rejected():
                m.plugins = {st.plugin} if st.plugin else set()
                m.message = one_node_fit_message(pod.key, node, st)
                return None
            m.message, m.error = st.message(), True
            return group_status(
                Code.ERROR, f"failed to schedule other pod from a pod group: {st.message()}"
            )
        m.node, m.assumed = node, assumed
        return None

    async def _post_filter(
        self, fwk: Framework, pg: NativePodGroup, members: list[Member], st: Status
    ) -> tuple[Status, dict[str, str]]:
        """RunPodGroupPostFilterPlugins after an Unschedulable group, then
        applyPodGroupPostFilterResult: an Error replaces the group's status; any other
        answer is appended to it as one reason (empty included, as Go's AppendReason of
        status.String()). Returns that status and, when a plugin succeeded (the group now
        waits on it), the nominated node of each member by uid."""
        view = GroupWhatIf(
            fwk,
            self._info(pg, members, self._scheduled(pg, members)),
            members,
            self._snapshot.node_infos(),
            self._place,
        )
        result, answer = await fwk.pod_group_points.run_pod_group_post_filter(view)
        if answer.code == Code.ERROR:
            return group_status(Code.ERROR, answer.message()), {}
        nominated: dict[str, str] = {}
        if answer.is_success():
            nominated = dict(result.nominated) if result is not None else {}
        return with_reason(st, answer.message()), nominated

    async def _submit(
        self,
        fwk: Framework,
        pg: NativePodGroup,
        members: list[Member],
        status: Status,
        untried: str,
        *,
        nominated: Mapping[str, str],
    ) -> None:
        """submitPodGroupAlgorithmResult; `untried` is the status members never tried
        report (the group's before PodGroupPostFilter); `nominated` the members' nodes
        when the group waits on preemption (each failure carries its nomination)."""
        profile = fwk.profile_name
        group_message = status.message()
        # The members tried together are one queue entity in kube-scheduler, backed off
        # as one (calculateBackoffDuration scales the cap by the square root of its size).
        size = len(members)
        placed = 0
        for i, m in enumerate(members, 1):
            if i % YIELD_EVERY == 0:
                # Bindings already handed over make progress while the rest are submitted.
                await anyio.lowlevel.checkpoint()
            qpi = m.qpi
            qpi.unschedulable_plugins, qpi.pending_plugins = set(m.plugins), set(m.pending)
            if status.code == Code.ERROR:
                msg = m.message if m.error else group_message
                self._outcomes.failed(
                    qpi, profile, m.start, msg, error=True, nominated="", entity_size=size
                )
                continue
            nomination = nominated.get(qpi.uid, "")
            if m.assumed is None and not (m.node and status.code != Code.SUCCESS):
                # Rejected itself (its own FitError), or never tried (the group's status).
                # After a group success Go requeues the rest straight to activeQ
                # (AddAttemptedPodGroupIfNeeded): the queue's group-member path with no
                # sibling queued.
                msg = m.message if m.tried else untried
                self._outcomes.failed(
                    qpi,
                    profile,
                    m.start,
                    msg,
                    error=m.error,
                    nominated=nomination,
                    entity_size=size,
                    group_siblings=[] if status.code == Code.SUCCESS else None,
                )
                continue
            if status.code != Code.SUCCESS or m.assumed is None:
                # Placed in the simulation, but the group as a whole is not; waiting on
                # preemption, it reports the group's status as it is.
                msg = (
                    group_message
                    if nominated
                    else group_status(
                        Code.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE, (group_message,)
                    ).message()
                )
                self._outcomes.failed(
                    qpi,
                    profile,
                    m.start,
                    msg,
                    error=False,
                    nominated=nomination,
                    entity_size=size,
                )
                continue
            st = fwk.run_permit(m.state, m.assumed, m.node)
            if st is not None and st.code != Code.WAIT:
                release_assumption(fwk, self._cache, m.assumed, m.state)
                rejected = st.is_rejected()
                msg = st.message()
                if rejected:
                    qpi.unschedulable_plugins = {st.plugin} if st.plugin else set()
                    msg = one_node_fit_message(qpi.pod.key, m.node, st)
                self._outcomes.failed(
                    qpi,
                    profile,
                    m.start,
                    msg,
                    error=not rejected,
                    nominated="",
                    entity_size=size,
                )
                continue
            placed += 1
            if self.observer is not None:
                seconds = time.perf_counter() - m.start
                self.observer.scheduled(qpi.pod, profile, m.node, seconds, None, group=pg.key)
            self._to_binding(Assumed(fwk, m.state, qpi, m.assumed, m.node, m.start))
        if status.code == Code.SUCCESS:
            self._conditions.set(pg, "True", REASON_SCHEDULED, group_message)
        elif status.code == Code.ERROR:
            self._conditions.set(pg, "False", REASON_SCHEDULER_ERROR, as_error(status))
        else:
            self._conditions.set(pg, "False", REASON_UNSCHEDULABLE, group_message)
        log.info(
            "pod_group_cycle",
            podgroup=pg.key,
            result=status.code.name,
            members=len(members),
            placed=placed,
            message=group_message,
        )
