"""Group preemption: DefaultPreemption's PodGroupPostFilter for a native PodGroup that did
not fit (kube-scheduler's PodGroupEvaluator.Preempt with the whole cluster as the one
domain). Victims are chosen by groupvictims.select_victims_on_domain and evicted through
DefaultPreemption's executor. The group cycle hands over, through the framework's
PodGroupScheduling, the one thing this needs from it: its placement algorithm, run in a
what-if world without some pods (`place`), and the reprieve check (`fits`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import replace

import structlog

from asched.api import Pod
from asched.api.workload import DISRUPTION_ALL, NativePodGroup
from asched.base import featuregates
from asched.framework.grouptree import GroupForest
from asched.framework.handle import Handle
from asched.framework.interfaces import PodGroupScheduling
from asched.framework.listers import ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import PodGroupPostFilterResult
from asched.framework.status import Code, Status
from asched.framework.workloads import COMPOSITE_POD_GROUPS, NATIVE_POD_GROUPS
from asched.plugins.defaultpreemption.candidates import Candidate
from asched.plugins.defaultpreemption.executor import Executor
from asched.plugins.defaultpreemption.groupvictims import (
    NO_VICTIMS_FOR_GROUP,
    select_victims_on_domain,
    victim_units,
)
from asched.plugins.defaultpreemption.pdb import PodDisruptionBudget
from asched.plugins.defaultpreemption.victims import NOT_ELIGIBLE_NEVER

log = structlog.get_logger(__name__)

ONGOING_PREEMPTION = "ongoing preemption on nominated nodes"
FOUND = "found a placement for podgroup, preempting {count} victims"
# DefaultPreemption.PodGroupPostFilter prefixes every message with it.
PREFIX = "pod group preemption: "
# The candidate a group's victims are evicted from (Preempt's candidate name "cluster"),
# as the victims' Preempted event names it.
DOMAIN_NAME = "cluster"


class GroupPreemption:
    """PodGroupEvaluator: one per DefaultPreemption plugin."""

    def __init__(
        self,
        handle: Handle,
        plugin: str,
        executor: Executor,
        pdbs: Callable[[], Sequence[PodDisruptionBudget]],
        victims_observed: Callable[[int], None],
    ) -> None:
        """`pdbs()` lists the cluster's PodDisruptionBudgets; `victims_observed(n)` feeds
        scheduler_preemption_victims."""
        self._handle = handle
        self._plugin = plugin
        self._executor = executor
        self._pdbs = pdbs
        self._victims_observed = victims_observed
        # feature.Features.EnableCompositePodGroup: a composite above a victim may take
        # its whole hierarchy with it.
        self._hierarchies = featuregates.enabled("CompositePodGroup")

    async def preempt(
        self, group: PodGroupScheduling
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """PodGroupEvaluator.Preempt, prefixed "pod group preemption: " as
        DefaultPreemption.PodGroupPostFilter does, the domain being the whole cluster:
        - preemptionPolicy Never: Unschedulable "not eligible ...";
        - a member nominated to a node where a lower-priority pod is still terminating
          (isOngoingPreemption): Success "ongoing preemption on nominated nodes", the
          members keep their nominations;
        - selectVictimsOnDomain (groupvictims.py): no lower-priority victim is
          UnschedulableAndUnresolvable; every victim taken away in a what-if copy of the
          nodes and the group placed again; if it still does not fit, that status;
        - otherwise the victims are evicted through the executor (actuatePodGroupPreemption,
          asynchronously) and every member placed in the what-if is nominated to its
          node: Success "found a placement for podgroup, preempting <n> victims". The
          members go back to the queue; the next group cycle places them once the
          victims are gone.
        """
        info = group.info
        pg = info.pod_group
        members = info.unscheduled
        priority = pg.priority if pg.priority is not None else 0
        if members and members[0].preemption_policy == "Never":
            return None, self._status(Code.UNSCHEDULABLE, NOT_ELIGIBLE_NEVER)
        nodes = group.nodes()
        # The PodGroups whose members this is: the group itself, or a composite's.
        groups = sorted({p.scheduling_group for p in members}) if info.composite else [pg.name]
        # The members as the informer has them now: their nominations may be newer than
        # the queued copies (Go reads them from the pod group snapshot).
        latest = {
            p.uid: p
            for name in groups
            for p in self._handle.pods_in_scheduling_group(pg.namespace, name)
        }
        now = [latest.get(p.uid, p) for p in members]
        if _ongoing_preemption(now, nodes, priority):
            current = {p.uid: p.nominated_node_name for p in now}
            return PodGroupPostFilterResult(current), self._status(Code.SUCCESS, ONGOING_PREEMPTION)
        units = victim_units(
            [p for ni in nodes for p in ni.pods],
            priority,
            functools.partial(self.disrupted_with, pg),
        )
        if not units:
            return None, self._status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS_FOR_GROUP)
        everyone = [p for u in units for p in u.pods]
        without, st = await group.place(everyone)
        if st is not None and not st.is_success():
            return None, self._status(st.code, st.message())
        placed = without.assignments

        async def fits(removed: Sequence[Pod]) -> bool:
            return await group.fits(placed, removed)

        chosen = await select_victims_on_domain(units, self._pdbs(), fits)
        victims = chosen.pods
        log.info(
            "pod_group_preemption",
            podgroup=pg.key,
            priority=priority,
            victims=len(victims),
            group_victims=chosen.num_group_disruptions,
            pdb_violations=chosen.num_pdb_violations,
        )
        self._victims_observed(len(victims))
        preemptor = replace(members[0], priority=priority)
        candidate = Candidate(DOMAIN_NAME, victims, chosen.num_pdb_violations)
        self._executor.prepare_candidate_async(
            candidate,
            preemptor,
            group=(pg.key, pg.uid),
            pods=list(members),
            # The victims' event names the root: "Preempted by compositepodgroup <uid>".
            kind="compositepodgroup" if info.composite else "podgroup",
            held=[f"{pg.namespace}/{name}" for name in groups] if info.composite else (),
        )
        found = FOUND.format(count=len(victims))
        return PodGroupPostFilterResult(dict(placed)), self._status(Code.SUCCESS, found)

    def _status(self, code: Code, message: str) -> Status:
        return Status(code, (PREFIX + message,), self._plugin)

    def disrupted_with(self, preemptor: NativePodGroup, pod: Pod) -> str:
        """The key of the group the pod is disrupted with (getHighestAllAncestor): its
        PodGroup's when that says disruptionMode All and, with the CompositePodGroup gate,
        the highest composite above it that says All; "" when the pod goes alone."""
        if not pod.scheduling_group:
            return ""
        key = f"{pod.namespace}/{pod.scheduling_group}"
        groups: ObjectStore[NativePodGroup] = self._handle.store(NATIVE_POD_GROUPS)
        pg = groups.get(key)
        if pg is None or pg.key == preemptor.key:
            return ""
        whole = key if pg.disruption_mode == DISRUPTION_ALL else ""
        if self._hierarchies and pg.parent:
            forest = GroupForest(groups, self._handle.store(COMPOSITE_POD_GROUPS))
            for cpg in forest.ancestors(pg.namespace, pg.parent):
                if cpg.disruption_mode == DISRUPTION_ALL:
                    whole = f"CompositePodGroup/{cpg.key}"
        return whole


def _ongoing_preemption(pods: Sequence[Pod], nodes: Sequence[NodeInfo], priority: int) -> bool:
    """isOngoingPreemption: a lower-priority pod is terminating on a member's nominated
    node (any deletion timestamp, as the single-pod path checks)."""
    nominated = {p.nominated_node_name for p in pods} - {""}
    return any(
        p.priority < priority and p.deletion_timestamp is not None
        for ni in nodes
        if ni.name in nominated
        for p in ni.pods
    )
