"""Group preemption: DefaultPreemption's PodGroupPostFilter for a native PodGroup that
did not fit (kube-scheduler's PodGroupEvaluator.Preempt with the whole cluster as the one
domain). Victims are chosen by groupvictims.select_victims_on_domain and evicted through
DefaultPreemption's executor; the group cycle (groupcycle.py) asks this module after an
Unschedulable group and hands it the one thing it needs from the cycle: how to place the
group in a world (the live one or a what-if copy without the victims).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

import structlog

from asched.api import Pod, bound_to
from asched.api.workload import DISRUPTION_ALL, NativePodGroup
from asched.backend.snapshot import Snapshot
from asched.framework.cycle_state import CycleState
from asched.framework.listers import ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime import Framework
from asched.framework.status import Code
from asched.plugins.defaultpreemption.candidates import Candidate
from asched.plugins.defaultpreemption.groupvictims import (
    NO_VICTIMS_FOR_GROUP,
    select_victims_on_domain,
    victim_units,
)
from asched.plugins.defaultpreemption.plugin import NOT_ELIGIBLE_NEVER, DefaultPreemption
from asched.scheduler import placement
from asched.scheduler.groupstate import GroupStatus, Member, WhatIfWorld, World, restore

log = structlog.get_logger(__name__)

ONGOING_PREEMPTION = "ongoing preemption on nominated nodes"
# The candidate a group's victims are evicted from (Preempt's candidate name "cluster"),
# as the victims' Preempted event names it.
DOMAIN_NAME = "cluster"


@dataclass(slots=True, frozen=True)
class Preemption:
    """DefaultPreemption's PodGroupPostFilter answer (its message already prefixed)."""

    code: Code
    message: str
    nominated: dict[str, str] = field(default_factory=dict)


PlaceFn = Callable[
    [Framework, NativePodGroup, list[Member], World],
    Awaitable[tuple[GroupStatus, placement.Candidate | None]],
]


class GroupPreemption:
    def __init__(
        self,
        snapshot: Snapshot,
        members: Callable[[str, str], Sequence[Pod]],
        groups: Callable[[], ObjectStore[NativePodGroup]],
        place: PlaceFn,
    ) -> None:
        """`members(ns, name)` lists a group's pods as the informer has them; `place`
        is the group cycle's placement algorithm over a world."""
        self._snapshot = snapshot
        self._members = members
        self._groups = groups
        self._place = place

    async def preempt(
        self, fwk: Framework, plugin: DefaultPreemption, pg: NativePodGroup, members: list[Member]
    ) -> Preemption:
        """PodGroupEvaluator.Preempt (DefaultPreemption.PodGroupPostFilter prefixes
        "pod group preemption: "), the domain being the whole cluster:
        - preemptionPolicy Never: Unschedulable "not eligible ...";
        - a member nominated to a node where a lower-priority pod is still terminating
          (isOngoingPreemption): Success "ongoing preemption on nominated nodes", the
          members keep their nominations;
        - selectVictimsOnDomain (groupvictims.py): no lower-priority victim is
          UnschedulableAndUnresolvable; every victim taken away in a what-if copy of the
          nodes and the group placed again; if it still does not fit, that status;
        - otherwise the victims are evicted through DefaultPreemption's executor
          (actuatePodGroupPreemption, asynchronously) and every member placed in the
          what-if is nominated to its node: Success "found a placement for podgroup,
          preempting <n> victims". The members go back to the queue; the next group
          cycle places them once the victims are gone.
        """
        prefix = "pod group preemption: "
        priority = pg.priority if pg.priority is not None else 0
        if members and members[0].qpi.pod.preemption_policy == "Never":
            return Preemption(Code.UNSCHEDULABLE, prefix + NOT_ELIGIBLE_NEVER)
        nodes = self._snapshot.node_infos()
        # The members as the informer has them now: their nominations may be newer than
        # the queued copies (Go reads them from the pod group snapshot).
        latest = {p.uid: p for p in self._members(pg.namespace, pg.name)}
        now = [latest.get(m.qpi.uid, m.qpi.pod) for m in members]
        if self._ongoing_preemption(now, nodes, priority):
            current = {p.uid: p.nominated_node_name for p in now}
            return Preemption(Code.SUCCESS, prefix + ONGOING_PREEMPTION, current)
        units = victim_units(
            [p for ni in nodes for p in ni.pods], priority, functools.partial(self._whole, pg)
        )
        if not units:
            return Preemption(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, prefix + NO_VICTIMS_FOR_GROUP)
        kept = [m.outcome() for m in members]
        try:
            everyone = [p for u in units for p in u.pods]
            without, _ = await self._place(fwk, pg, members, WhatIfWorld(nodes, everyone))
            if without.code != Code.SUCCESS:
                return Preemption(without.code, prefix + without.message())
            placed = [(m, m.node) for m in members if m.node]

            async def fits(removed: Sequence[Pod]) -> bool:
                return await self._assignments_fit(fwk, placed, WhatIfWorld(nodes, removed))

            chosen = await select_victims_on_domain(units, plugin.pdbs(), fits)
        finally:
            restore(members, kept)
        victims = chosen.pods
        log.info(
            "pod_group_preemption",
            podgroup=pg.key,
            priority=priority,
            victims=len(victims),
            group_victims=chosen.num_group_disruptions,
            pdb_violations=chosen.num_pdb_violations,
        )
        metrics = plugin.metrics
        if metrics is not None:
            metrics.preemption_victims(len(victims))
        preemptor = replace(members[0].qpi.pod, priority=priority)
        candidate = Candidate(DOMAIN_NAME, victims, chosen.num_pdb_violations)
        plugin.executor.prepare_candidate_async(
            candidate,
            preemptor,
            group=(pg.key, pg.uid),
            pods=[m.qpi.pod for m in members],
        )
        nominated = {m.qpi.uid: node for m, node in placed}
        found = f"found a placement for podgroup, preempting {len(victims)} victims"
        return Preemption(Code.SUCCESS, prefix + found, nominated)

    async def _assignments_fit(
        self, fwk: Framework, placed: Sequence[tuple[Member, str]], world: WhatIfWorld
    ) -> bool:
        """selectVictimsOnDomain's reprieveVictim: the members, in cycle order, still pass
        Filter on the nodes they were given, each with the ones before it assumed.

        PreFilter runs afresh on the what-if nodes for each member where Go replays the
        victim through the PreFilter extensions (AddPod) of states computed without it;
        both see the same pods.
        """
        by_name = {ni.name: i for i, ni in enumerate(world.nodes())}
        for m, node in placed:
            pod = m.qpi.pod
            state = CycleState()
            _, st, _ = await fwk.run_pre_filter(state, pod, world.nodes())
            if st is not None and not st.is_success():
                return False
            node_info = world.nodes()[by_name[node]]
            st = await fwk.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            if st is not None and not st.is_success():
                return False
            world.assume(fwk, m, bound_to(pod, node))
        return True

    def _whole(self, preemptor: NativePodGroup, pod: Pod) -> str:
        """The key of the pod's group when it is disrupted whole (disruptionMode All)."""
        if not pod.scheduling_group:
            return ""
        key = f"{pod.namespace}/{pod.scheduling_group}"
        pg = self._groups().get(key)
        if pg is None or pg.key == preemptor.key or pg.disruption_mode != DISRUPTION_ALL:
            return ""
        return key

    @staticmethod
    def _ongoing_preemption(pods: Sequence[Pod], nodes: Sequence[NodeInfo], priority: int) -> bool:
        """isOngoingPreemption: a lower-priority pod is terminating on a member's
        nominated node (any deletion timestamp, as the single-pod path checks)."""
        nominated = {p.nominated_node_name for p in pods} - {""}
        return any(
            p.priority < priority and p.deletion_timestamp is not None
            for ni in nodes
            if ni.name in nominated
            for p in ni.pods
        )
