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

A composite's placements come from the profile's PlacementGenerate plugin (Go's
TopologyPlacementGenerator: one per domain of its topology key, pinned to the domain of
the subtree's scheduled pods), its children are placed inside the placement, and the
PlacementScore plugins rank the feasible ones by every successful PodGroup's
assignments; asched's tie rule (placement.py) replaces Go's random draw. The tree's
order of children is by name where Go's is random.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import structlog

from asched.api import Pod, bound_to
from asched.api.composite import CompositePodGroup
from asched.api.workload import REASON_SCHEDULER_ERROR, NativePodGroup
from asched.framework.cycle_state import CycleState
from asched.framework.grouptree import GroupForest, GroupNode
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import Placement, PodGroupAssignments, PodGroupInfo
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo
from asched.scheduler import placement
from asched.scheduler.groupstate import (
    POD_GROUP_UNSCHEDULABLE,
    Member,
    Outcome,
    World,
    as_error,
    group_status,
    restore,
    validate_pods,
    with_reason,
)
from asched.scheduler.groupwhatif import GroupWhatIf

log = structlog.get_logger(__name__)

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
        scheduled: Callable[[NativePodGroup, Sequence[Member]], list[Pod]],
    ) -> None:
        """`forest` reads the hierarchy from the informer stores; `placements` is the
        group cycle's placement algorithm for one PodGroup; `scheduled` a PodGroup's pods
        bound or assumed outside the cycle."""
        self._forest = forest
        self._placements = placements
        self._scheduled = scheduled

    def root_of(self, pg: NativePodGroup) -> CompositePodGroup | None:
        return self._forest().root_composite(pg.namespace, pg.parent)

    def tree(self, root: CompositePodGroup) -> GroupNode:
        return self._forest().tree(root)

    @staticmethod
    def validate(root: CompositePodGroup, pods: Sequence[Pod]) -> str:
        """validatePodGroup over the tree: `pods` are its queued pods first, then the
        scheduled ones; the first pod's scheduler name and the root's priority rule."""
        priority = root.priority if root.priority is not None else 0
        return validate_pods(pods, pods[0].scheduler_name if pods else "", priority)

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
        self._release(fwk, tree, members, world)
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
        """compositePodGroupSchedulingPlacementAlgorithm: the composite's placements (the
        profile's PlacementGenerate plugin; one, the parent's nodes, without a topology
        key), compositePodGroupSchedulingDefaultAlgorithm in each, everything released
        after each, and the best feasible one (PlacementScore, when more than one) assumed
        again. On success the chosen subtree's placed members stay assumed; otherwise
        none does."""
        info = self._info(node, members)
        placements, gst = fwk.pod_group_points.run_placement_generate(info, world.nodes())
        if gst is not None:
            # Go returns the plugins' status as it is ("no feasible placements found").
            st = group_status(Code.ERROR, gst.message()) if gst.code == Code.ERROR else gst
            results[node.key] = Box(st)
            return st, False
        subtree = [m for pg in node.leaves() for m in members[pg.key]]
        first: tuple[Status, dict[str, Box], list[Outcome]] | None = None
        feasible: list[tuple[placement.Candidate, dict[str, Box], list[Outcome], bool]] = []
        for where in placements:
            inside = PlacementWorld(world, where)
            sub: dict[str, Box] = {}
            st, any_scheduled = await self._composite_default(fwk, node, members, sub, inside)
            outcomes = [m.outcome() for m in subtree]
            if st.code == Code.SUCCESS:
                cpu, mem = placement.leftover(where, world.nodes())
                placed = sum(1 for m in subtree if m.assumed is not None)
                candidate = placement.Candidate(where, placed, cpu, mem)
                feasible.append((candidate, sub, outcomes, any_scheduled))
            # placementRevertFns.revert(): the next placement starts from the same world.
            self._release(fwk, node, members, world)
            if st.code == Code.ERROR:
                restore(subtree, outcomes)
                results[node.key] = Box(st)
                return st, False
            if first is None:
                first = (st, sub, outcomes)
        if not feasible:
            assert first is not None
            st, sub, outcomes = first
            restore(subtree, outcomes)
            # "It is critical to copy the entire anyResultSubtree into results": the
            # children keep their own statuses (and the members their FitErrors).
            results.update(sub)
            wrapped = group_status(
                Code.UNSCHEDULABLE,
                POD_GROUP_UNSCHEDULABLE,
                (
                    f"0/{len(placements)} placements are available, first placement "
                    f"status: {as_error(st)}",
                ),
            )
            results[node.key] = Box(wrapped)
            return wrapped, False
        chosen = feasible[0]
        if len(feasible) > 1:
            # findBestCompositePodGroupPlacement: the proposed assignments of every
            # successful PodGroup of each placement.
            proposed = [
                PodGroupAssignments(c.placement, self._assignments(node, sub, members, o))
                for c, sub, o, _ in feasible
            ]
            totals, sst = fwk.pod_group_points.run_placement_score(info, proposed)
            if sst is not None:
                restore(subtree, feasible[0][2])
                st = group_status(Code.ERROR, sst.message())
                results[node.key] = Box(st)
                return st, False
            best = placement.best([c for c, _, _, _ in feasible], totals)
            chosen = next(f for f in feasible if f[0] is best)
        candidate, sub, outcomes, any_scheduled = chosen
        restore(subtree, outcomes)
        # assumeSubtreeWithRevert: the chosen placement's successful PodGroups again.
        chosen_members = [m for pg in successful_leaves(node, sub) for m in members[pg.key]]
        failed = self._assume(fwk, chosen_members, world)
        if failed is not None:
            self._release(fwk, node, members, world)
            results[node.key] = Box(failed)
            return failed, False
        results.update(sub)
        log.debug(
            "composite_pod_group_placement",
            composite=node.name,
            placement=candidate.placement.name,
            feasible=len(feasible),
            candidates=len(placements),
        )
        st = group_status(Code.SUCCESS)
        results[node.key] = Box(st)
        return st, any_scheduled

    def _info(self, node: GroupNode, members: Mapping[str, list[Member]]) -> PodGroupInfo:
        """The composite as the group-level plugins see it (Go's PodGroupInfo of a
        CompositePodGroup): its topology key, the subtree's scheduled pods
        (GetPodGroupStates' ScheduledPods) and the subtree's queued pods."""
        assert node.composite is not None
        scheduled: list[Pod] = []
        unscheduled: list[Pod] = []
        for pg in node.leaves():
            scheduled += self._scheduled(pg, members[pg.key])
            unscheduled += [m.qpi.pod for m in members[pg.key]]
        return PodGroupInfo(
            as_group(node.composite), tuple(scheduled), tuple(unscheduled), composite=True
        )

    @staticmethod
    def _assignments(
        node: GroupNode,
        sub: Mapping[str, Box],
        members: Mapping[str, list[Member]],
        outcomes: Sequence[Outcome],
    ) -> dict[str, str]:
        """makeCompositePodGroupAssignments: pod uid -> node of the successful leaves."""
        subtree = [m for pg in node.leaves() for m in members[pg.key]]
        by_uid = {m.qpi.uid: o.node for m, o in zip(subtree, outcomes, strict=True)}
        return {
            m.qpi.uid: by_uid[m.qpi.uid]
            for pg in successful_leaves(node, sub)
            for m in members[pg.key]
            if by_uid[m.qpi.uid]
        }

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
        failed = self._assume(fwk, members, world)
        if failed is not None:
            self._release_members(fwk, members, world)
            return failed, False
        return st, chosen.placed > 0

    @staticmethod
    def _assume(fwk: Framework, members: Sequence[Member], world: World) -> Status | None:
        """assumeAndReserveWithRevert of each member that has a node; the first Reserve
        failure comes back as the subtree's Error (the caller releases the rest)."""
        for m in members:
            if not m.node:
                continue
            pod = bound_to(m.qpi.pod, m.node)
            rst = world.assume(fwk, m, pod)
            if rst is not None:
                return group_status(Code.ERROR, f"failed to assume the subtree: {rst.message()}")
            m.assumed = pod
        return None

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

        info = PodGroupInfo(as_group(root), (), tuple(m.qpi.pod for m in everyone), composite=True)
        return GroupWhatIf(fwk, info, everyone, nodes, place)


def composite_not_found(name: str) -> str:
    """The snapshot lister's not-found error for a CompositePodGroup."""
    return f'compositepodgroups.scheduling.k8s.io "{name}" not found'


def as_group(cpg: CompositePodGroup) -> NativePodGroup:
    """The composite as the group-level plugins read a group: for PlacementGenerate and
    PlacementScore its topology key, for a group preemptor (newPodGroupPreemptor of a
    CompositePodGroup) its namespace, name, uid, priority and disruption mode."""
    return NativePodGroup(
        namespace=cpg.namespace,
        name=cpg.name,
        uid=cpg.uid,
        generation=cpg.generation,
        min_count=cpg.min_group_count,
        topology_key=cpg.topology_key,
        disruption_mode=cpg.disruption_mode,
        priority=cpg.priority,
    )


def successful_leaves(node: GroupNode, results: Mapping[str, Box]) -> Iterator[NativePodGroup]:
    """successfulLeafResults: the PodGroups that succeeded with every ancestor up to
    `node`; a subtree without a result, or not successful, is skipped."""
    box = results.get(node.key)
    if box is None or box.status.code != Code.SUCCESS:
        return
    if node.pod_group is not None:
        yield node.pod_group
        return
    for child in node.children:
        yield from successful_leaves(child, results)


class PlacementWorld:
    """A world seen through one placement of a composite: its children are placed on the
    placement's nodes only (Go's snapshot.AssumePlacement); assumptions go to the parent."""

    def __init__(self, parent: World, where: Placement) -> None:
        self._parent = parent
        self._where = where

    def nodes(self) -> Sequence[NodeInfo]:
        return self._where.nodes(self._parent.nodes())

    def assume(self, fwk: Framework, m: Member, pod: Pod) -> Status | None:
        return self._parent.assume(fwk, m, pod)

    def release(self, fwk: Framework, m: Member) -> None:
        self._parent.release(fwk, m)


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
