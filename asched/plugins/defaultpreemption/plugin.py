"""DefaultPreemption: when a pod fits nowhere, evict lower-priority pods to make room.

Mirrors kube-scheduler v1.37 plugins/defaultpreemption and the preemption Evaluator:
1. eligibility (PodEligibleToPreemptOthers): preemptionPolicy Never never preempts; a pod
   whose nominated node still holds a terminating lower-priority pod waits for it rather
   than preempting again, unless Filter now finds that node UnschedulableAndUnresolvable;
2. candidates: only nodes whose Filter status was Unschedulable (preemption cannot help
   UnschedulableAndUnresolvable ones), dry-run from a random offset until enough are
   found (minCandidateNodesPercentage / minCandidateNodesAbsolute);
3. the scheduler's extenders with a preempt verb narrow the candidates, and may take
   victims off them (callExtenders); an extender's error ends the attempt as an Error,
   and none left is "no candidate node for preemption";
4. pick one (pickOneNodeForPreemption) and preempt its victims (see executor.py);
5. answer: Success with the node as nominated node and, as 1.37 does, the message "found
   a potential placement for pod on node <node>, preempting <n> victims" (a Success
   Status, not None: upstream's FailedScheduling event of the preemptor carries it); or,
   when no node can be made to fit, Unschedulable with the FitError wording and an empty
   nominated node (which clears a stale nomination). Every message is prefixed
   "preemption: ", as upstream does, and the scheduler appends it to its own
   FailedScheduling message.

Victims are preempted asynchronously (SchedulerAsyncPreemption, beta and on in 1.37):
PostFilter returns the nomination at once and the plugin's background task deletes the
victims (executor.py); meanwhile PreEnqueue holds the preemptor back with "waiting for the
preemption for this pod to be finished", and an assigned pod's deletion is registered with
a hint that always skips (the plugins whose rejection the preemption resolves requeue the
pod). A pod group's preemption (PodGroupPostFilter, grouppreemption.py) is asynchronous
the same way, and holds back every member of the group.
Difference: a "terminating pod" on the nominated node is any pod with a deletion
timestamp (upstream 1.31+ also requires its DisruptionTarget condition to say
PreemptionByScheduler; asched's Pod does not decode that condition).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import structlog

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.extenders import ExtenderError, HasExtenders, PreemptionExtenders
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    EnqueueExtensions,
    PodGroupPostFilterPlugin,
    PodGroupScheduling,
    PostFilterPlugin,
    PreEnqueuePlugin,
)
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.podgroups import PodGroupPostFilterResult
from asched.framework.registry import PluginSpec
from asched.framework.status import Code, Status, code_of, error, unresolvable
from asched.framework.types import NodeToStatus, PostFilterResult
from asched.plugins.defaultpreemption.args import DefaultPreemptionArgs
from asched.plugins.defaultpreemption.candidates import (
    NOT_HELPFUL,
    Candidate,
    dry_run_preemption,
    no_candidate_message,
    pick_one_node_for_preemption,
)
from asched.plugins.defaultpreemption.executor import Executor
from asched.plugins.defaultpreemption.grouppreemption import GroupPreemption
from asched.plugins.defaultpreemption.pdb import PDB_INFORMER, PodDisruptionBudget
from asched.plugins.defaultpreemption.victims import NOT_ELIGIBLE_NEVER, may_preempt

NAME = "DefaultPreemption"

NO_CANDIDATE = "no candidate node for preemption"
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
PLACEMENT_FOUND = "found a potential placement for pod on node {node}, preempting {count} victims"
PREEMPT_NEVER = "Never"
WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"
WAITING_FOR_GROUP_PREEMPTION = "waiting for the preemption for this pod group to be finished"

log = structlog.get_logger(__name__)


@runtime_checkable
class PreemptionMetrics(Protocol):
    """scheduler_preemption_attempts_total and scheduler_preemption_victims."""

    def preemption_attempt(self) -> None: ...

    def preemption_victims(self, count: int) -> None: ...


class DefaultPreemption(
    PreEnqueuePlugin, PostFilterPlugin, PodGroupPostFilterPlugin, EnqueueExtensions
):
    def __init__(self, args: DefaultPreemptionArgs | None, handle: Handle) -> None:
        self.args = args or DefaultPreemptionArgs()
        self._handle = handle
        self._executor = Executor(handle, NAME)
        # Where the dry run starts among the candidate nodes (upstream getOffsetRand);
        # tests replace it to make the start deterministic.
        self.rng = random.Random()
        # The Handle contract has no metrics; use the handle's when it offers them.
        metrics = getattr(handle, "metrics", None)
        self._metrics = metrics if isinstance(metrics, PreemptionMetrics) else None
        self._extenders: PreemptionExtenders | None = (
            handle.extenders if isinstance(handle, HasExtenders) else None
        )
        self._group = GroupPreemption(handle, NAME, self._executor, self.pdbs, self._victims)

    @property
    def name(self) -> str:
        return NAME

    def informers(self) -> Sequence[InformerRequest[Any]]:
        return (PDB_INFORMER,)

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        """The cluster's PodDisruptionBudgets."""
        store: ObjectStore[PodDisruptionBudget] = self._handle.store(PDB_INFORMER)
        return store.list()

    @property
    def executor(self) -> Executor:
        """Evicts victims, of single pods and of pod groups alike."""
        return self._executor

    def _victims(self, count: int) -> None:
        if self._metrics is not None:
            self._metrics.preemption_victims(count)

    async def run(self) -> None:
        """The asynchronous preemptions (started by the scheduler's task group)."""
        await self._executor.run()

    # ---- PreEnqueue / queueing ------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Go's PreEnqueue: a pod whose asynchronous preemption is still running waits; a
        member of a pod group waits for its group's (and only for that)."""
        if pod.scheduling_group:
            if self._executor.group_running(pod.namespace, pod.scheduling_group):
                return unresolvable(WAITING_FOR_GROUP_PREEMPTION, plugin=NAME)
            return None
        if self._executor.is_running(pod.uid):
            return unresolvable(WAITING_FOR_PREEMPTION, plugin=NAME)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Go's EventsToRegister with async preemption: an assigned pod's deletion, whose
        hint always skips (isPodSchedulableAfterAssignedPodDeletion): the plugins the
        preemption is for requeue the pod, not this one."""
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE), _skip_after_pod_deletion
            ),
        )

    # ---- PodGroupPostFilter --------------------------------------------------------
    async def pod_group_post_filter(
        self, group: PodGroupScheduling
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        """PodGroupPostFilter: group preemption (grouppreemption.py)."""
        return await self._group.preempt(group)

    # ---- PostFilter ----------------------------------------------------------------
    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        if self._metrics is not None:
            self._metrics.preemption_attempt()
        result, st = await self._preempt(state, pod, statuses)
        if st is not None and st.reasons:
            st = Status(st.code, (f"preemption: {st.message()}",), NAME, st.error)
        return result, st

    def _latest(self, pod: Pod) -> Pod:
        """The preemptor as the informer has it now (Evaluator.Preempt step 0 reads it
        from the pod lister): its nomination may have changed since it was queued.

        A pod the view no longer has (deleted meanwhile) is taken as queued, where
        kube-scheduler answers `pod "<name>" not found` as an Error: only a deleted pod,
        whose status nobody reads any more, would see the difference.
        """
        for p in self._handle.pods_in_namespace(pod.namespace):
            if p.uid == pod.uid:
                return p
        return pod

    async def _preempt(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        pod = self._latest(pod)
        nominated = statuses.get(pod.nominated_node_name) if pod.nominated_node_name else None
        eligible, why = self.pod_eligible_to_preempt_others(pod, nominated)
        if not eligible:
            log.debug("preemption_not_eligible", pod=pod.key, reason=why)
            return None, Status(Code.UNSCHEDULABLE, (why,), NAME)

        all_nodes = self._handle.snapshot.node_infos()
        if not all_nodes:
            return None, error("no nodes available", NAME)
        potential = [ni for ni in all_nodes if code_of(statuses.get(ni.name)) == Code.UNSCHEDULABLE]
        candidates = []
        failed: dict[str, Status] = {}
        if potential:
            offset = self.rng.randrange(len(potential))
            num = self.args.num_candidates(len(potential))
            run = await dry_run_preemption(
                self._handle,
                state,
                pod,
                potential,
                self.pdbs(),
                offset=offset,
                num_candidates=num,
            )
            candidates, failed = run.candidates, run.statuses
            if run.errors and not candidates:
                msgs = [e.message() for e in run.errors]
                msg = msgs[0] if len(msgs) == 1 else f"[{', '.join(msgs)}]"
                return None, Status(Code.ERROR, (msg,), NAME, run.errors[0].error)
        else:
            log.debug("preemption_not_helpful", pod=pod.key)

        if not candidates:
            log.debug("preemption_no_candidate", pod=pod.key, reason=NOT_HELPFUL)
            msg = no_candidate_message(len(all_nodes), failed)
            # An empty nominated node clears the pod's earlier nomination, if any.
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, (msg,), NAME)
        if self._extenders is not None:
            try:
                candidates = await self._call_extenders(self._extenders, pod, candidates)
            except ExtenderError as exc:
                return None, Status(Code.ERROR, (str(exc),), NAME, exc)
        best = pick_one_node_for_preemption(candidates)
        if best is None:
            return None, Status(Code.UNSCHEDULABLE, (NO_CANDIDATE,), NAME)

        log.info(
            "preemption_target_chosen",
            pod=pod.key,
            node=best.node_name,
            victims=len(best.victims),
            pdb_violations=best.num_pdb_violations,
        )
        if self._metrics is not None:
            self._metrics.preemption_victims(len(best.victims))
        self._executor.prepare_candidate_async(best, pod)
        found = PLACEMENT_FOUND.format(node=best.node_name, count=len(best.victims))
        return PostFilterResult(best.node_name), Status(Code.SUCCESS, (found,), NAME)

    async def _call_extenders(
        self, extenders: PreemptionExtenders, pod: Pod, candidates: list[Candidate]
    ) -> list[Candidate]:
        """callExtenders: the candidates as the extenders leave them (a node's victims
        may change, and the order follows the extenders' answer)."""
        victims = {c.node_name: (c.victims, c.num_pdb_violations) for c in candidates}
        snapshot = self._handle.snapshot

        def node_pods(name: str) -> list[Pod] | None:
            ni = snapshot.get(name)
            return None if ni is None else ni.pods

        kept = await extenders.preempt(pod, victims, node_pods)
        return [Candidate(node, pods, pdb) for node, (pods, pdb) in kept.items()]

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        node = pod.nominated_node_name
        if node:
            # Filter now rejects the nominated node for good: preempting elsewhere is right.
            if code_of(nominated_node_status) == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            ni = self._handle.snapshot.get(node)
            if ni is not None and any(
                may_preempt(p, pod) and p.deletion_timestamp is not None for p in ni.pods
            ):
                return False, NOT_ELIGIBLE_TERMINATING
        return True, ""


def _skip_after_pod_deletion(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


SPEC = PluginSpec(NAME, DefaultPreemption, DefaultPreemptionArgs)
