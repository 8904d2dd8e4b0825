"""The group cycle of a CompositePodGroup hierarchy (gate CompositePodGroup): every
PodGroup under one root composite placed together, as kube-scheduler 1.37.2's
schedule_one_podgroup.go does for a root of CompositePodGroupKeyType.

Go queues the root as one entity; asched pops one member and takes the queued members of
every PodGroup in the root's tree with it (GroupCycle.run hands over here). Then:
1. validatePodGroup over the whole tree (one scheduler name, the root composite's
   priority on every pod, queued or already scheduled); a failure is an Error for every
   pod and a SchedulerError condition on every PodGroup;
2. podGroupSchedulingRecursiveAlgorithm: a composite asks PlacementFeasible with its
   children count, then tries each child in turn (a PodGroup through the ordinary
   placement algorithm, its chosen placement then assumed so later children see it; a
   composite recursively) and asks PlacementFeasible after each; Unschedulable stops it,
   Wait at the end is Unschedulable. A composite that fails releases what its subtree
   assumed, and its status is worded as Go's placement wrapper words it ("0/1 placements
   are available, first placement status: ..."); a child's Error is the composite's
   ("composite pod group evaluation failed due to child error: ...");
3. the root succeeds only if some pod was placed; then everything is released (Go's
   deferred revert) and completeCompositePodGroupAlgorithmResultMap gives every child
   that succeeded under a failed parent, and every child never evaluated, the parent's
   status (the very same status object: Go's pointer, so a reason appended later is
   appended once per group that shares it);
4. an Unschedulable root runs the PodGroupPostFilter plugins once for the whole tree
   (with the root composite as the preemptor: its priority and uid), and their answer is
   appended to every group's status;
5. each PodGroup is submitted as the plain group cycle submits one (its members
   committed and bound when it and every ancestor succeeded, otherwise failed with its
   status), and gets its PodGroupInitiallyScheduled condition. No condition is written
   on a CompositePodGroup: 1.37.2 writes none.

Not covered: topology constraints on a composite (the cycle fails with an Error naming
them instead of placing the tree wrongly); the tree's order of children is by name
where Go's is random.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import structlog

from asched.api import Pod, bound_to
from asched.api.composite import CompositePodGroup
from asched.api.workload import REASON_SCHEDULER_ERROR, NativePodGroup
from asched.framework.cycle_state import CycleState
from asched.framework.grouptree import GroupForest, GroupNode
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import PodGroupInfo
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo
from asched.scheduler import placement
from asched.scheduler.groupstate import (
    POD_GROUP_UNSCHEDULABLE,
    Member,
    World,
    as_error,
    group_status,
    with_reason,
)
from asched.scheduler.groupwhatif import GroupWhatIf

log = structlog.get_logger(__name__)

TOPOLOGY_NOT_COVERED = (
    "asched does not place CompositePodGroups with topology constraints yet: "
    "composite pod group {name!r} has topology key {key!r}"
)

#: GroupCycle's placement algorithm for one PodGroup (podGroupSchedulingPlacementAlgorithm):
#: the members end with the chosen placement's outcome, nothing assumed.
Placements = Callable[
    [Framework, NativePodGroup, list[Member], World],
    Awaitable[tuple[Status, placement.Candidate | None]],
]


@dataclass(slots=True)
class Box:
    """A group's status, shared where Go shares one *fwk.Status between results."""

    status: Status


class CompositeCycle:
    """Runs the cycle of one root CompositePodGroup; GroupCycle owns it."""

    def __init__(
        self,
        *,
        forest: Callable[[], GroupForest],
        placements: Placements,
    ) -> None:
        """`forest` reads the hierarchy from the informer stores; `placements` is the
        group cycle's placement algorithm for one PodGroup."""
        self._forest = forest
        self._placements = placements

    def root_of(self, pg: NativePodGroup) -> CompositePodGroup | None:
        return self._forest().root_composite(pg.namespace, pg.parent)

    def tree(self, root: CompositePodGroup) -> GroupNode:
        return self._forest().tree(root)

    @staticmethod
    def uncovered(tree: GroupNode) -> str:
        """Why asched cannot place this tree the way Go would, "" when it can."""

        def walk(node: GroupNode) -> str:
            if node.composite is not None and node.composite.topology_key:
                return TOPOLOGY_NOT_COVERED.format(
                    name=node.composite.name, key=node.composite.topology_key
                )
            return next((w for c in node.children if (w := walk(c))), "")

        return walk(tree)

    @staticmethod
    def validate(root: CompositePodGroup, pods: Sequence[Pod]) -> str:
        """validatePodGroup over the tree: `pods` are its queued pods first, then the
        scheduled ones; the first pod's scheduler name and the root's priority rule."""
        scheduler = pods[0].scheduler_name if pods else ""
        priority = root.priority if root.priority is not None else 0
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

    # ---- the recursive algorithm ------------------------------------------------------
    async def schedule(
        self,
        fwk: Framework,
        tree: GroupNode,
        members: Mapping[str, list[Member]],
        world: World,
    ) -> dict[str, Box]:
        """runRootSchedulingAlgorithm for a composite root, then
        completeCompositePodGroupAlgorithmResultMap: every group's status by
        GroupNode.key. Nothing stays assumed; `members` (by PodGroup key) end with their
        simulated outcomes."""
        results: dict[str, Box] = {}
        for ms in members.values():
            for m in ms:
                m.reset()
        st, any_scheduled = await self._composite(fwk, tree, members, results, world)
        root = results[tree.key]
        if st.code == Code.SUCCESS and not any_scheduled:
            # "The framework requires at least 1 pod to be scheduled in order to return a
            # success status."
            root.status = group_status(Code.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE)
        # The deferred revert: the simulation leaves nothing assumed.
        for ms in members.values():
            for m in reversed(ms):
                if m.assumed is not None:
                    world.release(fwk, m)
                    m.assumed = None
        self._complete(tree, results, Box(group_status(Code.SUCCESS)), members)
        return results

    async def _composite(
        self,
        fwk: Framework,
        node: GroupNode,
        members: Mapping[str, list[Member]],
        results: dict[str, Box],
        world: World,
    ) -> tuple[Status, bool]:
        """compositePodGroupSchedulingPlacementAlgorithm with its one placement (no
        topology key: the parent's nodes) around compositePodGroupSchedulingDefaultAlgorithm.
        On success the subtree's placed members stay assumed; otherwise none does."""
        sub: dict[str, Box] = {}
        st, any_scheduled = await self._composite_default(fwk, node, members, sub, world)
        if st.code != Code.SUCCESS:
            self._release(fwk, node, members, world)
            any_scheduled = False
        if st.code == Code.ERROR:
            # The placement wrapper returns the error alone: the children's results of
            # this placement are not kept.
            results[node.key] = Box(st)
            return st, False
        results.update(sub)
        if st.code != Code.SUCCESS:
            st = group_status(
                Code.UNSCHEDULABLE,
                POD_GROUP_UNSCHEDULABLE,
                (f"0/1 placements are available, first placement status: {as_error(st)}",),
            )
        results[node.key] = Box(st)
        return st, any_scheduled

    async def _composite_default(
        self,
        fwk: Framework,
        node: GroupNode,
        members: Mapping[str, list[Member]],
        results: dict[str, Box],
        world: World,
    ) -> tuple[Status, bool]:
        """compositePodGroupSchedulingDefaultAlgorithm: the children in turn, with
        PlacementFeasible before and after each."""
        ns, name = node.namespace, node.name
        remaining, scheduled = len(node.children), 0
        st = fwk.run_placement_feasible(ns, name, scheduled, remaining, composite=True)
        if st is not None and st.code in (Code.UNSCHEDULABLE, Code.ERROR):
            return st, False
        any_scheduled = False
        for child in node.children:
            if child.pod_group is not None:
                cst, child_any = await self._leaf(fwk, child, members[child.pod_group.key], world)
                results[child.key] = Box(cst)
            else:
                cst, child_any = await self._composite(fwk, child, members, results, world)
            if cst.code == Code.ERROR:
                return group_status(
                    Code.ERROR,
                    f"composite pod group evaluation failed due to child error: {as_error(cst)}",
                ), False
            any_scheduled = any_scheduled or child_any
            remaining -= 1
            if cst.code == Code.SUCCESS:
                scheduled += 1
            st = fwk.run_placement_feasible(ns, name, scheduled, remaining, composite=True)
            if st is not None and st.code in (Code.UNSCHEDULABLE, Code.ERROR):
                break
        if st is None:
            return group_status(Code.SUCCESS), any_scheduled
        if st.code == Code.WAIT:
            return group_status(Code.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE, st.reasons), False
        return st, any_scheduled

    async def _leaf(
        self, fwk: Framework, node: GroupNode, members: list[Member], world: World
    ) -> tuple[Status, bool]:
        """podGroupSchedulingPlacementAlgorithm for a PodGroup of the tree, then
        assumeSubtreeWithRevert: the chosen placement's members are assumed (and
        reserved) so that the next child is placed around them."""
        assert node.pod_group is not None
        st, chosen = await self._placements(fwk, node.pod_group, members, world)
        if st.code != Code.SUCCESS or chosen is None:
            return st, False
        for m in members:
            if not m.node:
                continue
            rst = world.assume(fwk, m, bound_to(m.qpi.pod, m.node))
            if rst is not None:
                self._release_members(fwk, members, world)
                return group_status(
                    Code.ERROR, f"failed to assume the subtree: {rst.message()}"
                ), False
            m.assumed = bound_to(m.qpi.pod, m.node)
        return st, chosen.placed > 0

    def _release(
        self, fwk: Framework, node: GroupNode, members: Mapping[str, list[Member]], world: World
    ) -> None:
        """revertFns.revert over a subtree: its assumed members go, last first."""
        for pg in reversed(list(node.leaves())):
            self._release_members(fwk, members[pg.key], world)

    @staticmethod
    def _release_members(fwk: Framework, members: Sequence[Member], world: World) -> None:
        for m in reversed(members):
            if m.assumed is not None:
                world.release(fwk, m)
                m.assumed = None

    @staticmethod
    def _complete(
        node: GroupNode,
        results: dict[str, Box],
        parent: Box,
        members: Mapping[str, list[Member]],
    ) -> None:
        """completeCompositePodGroupAlgorithmResultMap: a group never evaluated, or one
        that succeeded under a failed parent, takes the parent's status (shared); its
        members then count as never tried."""
        box = results.get(node.key)
        if box is None or (parent.status.code != Code.SUCCESS and box.status.code == Code.SUCCESS):
            box = parent
            results[node.key] = box
            if node.pod_group is not None:
                for m in members[node.pod_group.key]:
                    m.reset()
        for child in node.children:
            CompositeCycle._complete(child, results, box, members)

    # ---- PodGroupPostFilter ----------------------------------------------------------
    def what_if(
        self,
        fwk: Framework,
        root: CompositePodGroup,
        tree: GroupNode,
        members: Mapping[str, list[Member]],
        nodes: Sequence[NodeInfo],
    ) -> GroupWhatIf:
        """The PodGroupPostFilter view of the whole tree: Go's podGroupPreemptor of a
        composite takes the composite's priority and identity and every unscheduled pod
        of the tree; the scheduling function re-runs the whole tree."""
        everyone = [m for ms in members.values() for m in ms]

        async def place(
            f: Framework, _pg: NativePodGroup, _ms: list[Member], world: World
        ) -> tuple[Status, placement.Candidate | None]:
            results = await self.schedule(f, tree, members, world)
            return results[tree.key].status, None

        info = PodGroupInfo(preemptor(root), (), tuple(m.qpi.pod for m in everyone))
        return GroupWhatIf(fwk, info, everyone, nodes, place)


def composite_not_found(name: str) -> str:
    """The snapshot lister's not-found error for a CompositePodGroup."""
    return f'compositepodgroups.scheduling.k8s.io "{name}" not found'


def preemptor(root: CompositePodGroup) -> NativePodGroup:
    """The composite as a group preemptor sees it (newPodGroupPreemptor of a
    CompositePodGroup): its namespace, name, uid, priority and disruption mode."""
    return NativePodGroup(
        namespace=root.namespace,
        name=root.name,
        uid=root.uid,
        generation=root.generation,
        min_count=root.min_group_count,
        disruption_mode=root.disruption_mode,
        priority=root.priority,
    )


def members_by_group(
    tree: GroupNode,
    queued: Sequence[QueuedPodInfo],
    start: float,
    less: Callable[[QueuedPodInfo, QueuedPodInfo], int],
) -> dict[str, list[Member]]:
    """Each PodGroup's queued members, in QueueSort order, sharing one group CycleState."""
    group_cycle = CycleState()
    out: dict[str, list[Member]] = {pg.key: [] for pg in tree.leaves()}
    for qpi in sorted(queued, key=functools.cmp_to_key(less)):
        key = f"{qpi.pod.namespace}/{qpi.pod.scheduling_group}"
        if key in out:
            out[key].append(Member(qpi, CycleState(), start, group_cycle))
    return out


def with_reason_each(results: Mapping[str, Box], reason: str) -> None:
    """applyPodGroupPostFilterResult's AppendReason, once per result (a shared status
    gets it once per group that shares it, as in Go)."""
    for box in results.values():
        box.status = with_reason(box.status, reason)


def error_each(results: Mapping[str, Box], st: Status) -> None:
    for box in results.values():
        box.status = st


def scheduler_error(conditions_set: Callable[..., None], tree: GroupNode, message: str) -> None:
    """updatePodGroupConditionWithError: every PodGroup of the tree."""
    for pg in tree.leaves():
        conditions_set(pg, "False", REASON_SCHEDULER_ERROR, message)
