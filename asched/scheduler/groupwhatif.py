"""What a PodGroupPostFilter plugin gets from the group cycle (the framework's
PodGroupScheduling): the group, the cycle's nodes, and the cycle's own placement algorithm
re-run in a what-if world without some pods.

kube-scheduler hands PodGroupPostFilter a PodGroupSchedulingFunc (runRootSchedulingAlgorithm
on a fresh CycleState) and the MutableSnapshotSharedLister the plugin removes victims from;
asched's what-if world (groupstate.WhatIfWorld) is that mutated snapshot, made per call so
that nothing the plugin tries is left behind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from asched.api import Pod, bound_to
from asched.api.workload import NativePodGroup
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import PodGroupScheduling
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import PodGroupAssignments, PodGroupInfo, whole
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.scheduler import placement
from asched.scheduler.groupstate import Member, WhatIfWorld, World, restore

PlaceFn = Callable[
    [Framework, NativePodGroup, list[Member], World],
    Awaitable[tuple[Status, placement.Candidate | None]],
]


class GroupWhatIf(PodGroupScheduling):
    """One PodGroupPostFilter run's view of the cycle; the members end as they began."""

    def __init__(
        self,
        fwk: Framework,
        info: PodGroupInfo,
        members: list[Member],
        nodes: Sequence[NodeInfo],
        place: PlaceFn,
    ) -> None:
        """`place` is the group cycle's placement algorithm over a world; `nodes` the
        cycle's snapshot with every assumption of the cycle rolled back."""
        self._fwk = fwk
        self._info = info
        self._members = members
        self._nodes = nodes
        self._place = place

    @property
    def info(self) -> PodGroupInfo:
        return self._info

    @property
    def attempted(self) -> bool:
        return any(m.tried for m in self._members)

    @property
    def state(self) -> CycleState:
        return self._members[0].group_cycle

    def nodes(self) -> Sequence[NodeInfo]:
        return self._nodes

    async def place(self, removed: Sequence[Pod]) -> tuple[PodGroupAssignments, Status | None]:
        kept = [m.outcome() for m in self._members]
        try:
            st, chosen = await self._place(
                self._fwk, self._info.pod_group, self._members, WhatIfWorld(self._nodes, removed)
            )
            assignments = {m.qpi.uid: m.node for m in self._members if m.node}
        finally:
            restore(self._members, kept)
        where = chosen.placement if chosen is not None else whole(self._nodes)
        status = None if st.code == Code.SUCCESS else Status(st.code, (st.message(),))
        return PodGroupAssignments(where, assignments), status

    async def fits(self, assignments: Mapping[str, str], removed: Sequence[Pod]) -> bool:
        """selectVictimsOnDomain's reprieveVictim: the members, in cycle order, still pass
        Filter on the nodes they were given, each with the ones before it assumed.

        PreFilter runs afresh on the what-if nodes for each member where Go replays the
        victim through the PreFilter extensions (AddPod) of states computed without it;
        both see the same pods.
        """
        fwk = self._fwk
        world = WhatIfWorld(self._nodes, removed)
        by_name = {ni.name: i for i, ni in enumerate(world.nodes())}
        for m in self._members:
            node = assignments.get(m.qpi.uid)
            if not node:
                continue
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
