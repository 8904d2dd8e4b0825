"""GangScheduling (kube-scheduler framework/plugins/gangscheduling).

A pod whose spec.schedulingGroup names a PodGroup with the gang policy is placed only with
at least minCount members of its group:
- PreEnqueue keeps it out of the active queue until its PodGroup exists and minCount
  members exist (AllPodsCount: pending, assumed and bound members);
- PlacementFeasible is asked by the group cycle (asched/scheduler/groupcycle.py) before
  and after each member is tried: met, not yet, or impossible with what is left;
- Permit lets a member through once minCount members are scheduled (assumed or bound),
  allowing every sibling waiting at Permit; otherwise it waits (5 minutes, as Go) and
  activates the unscheduled siblings.
Pods of a basic-policy group, and pods in no group, pass every point untouched.

With the CompositePodGroup gate on, a PodGroup that names a parent CompositePodGroup is
judged with its whole hierarchy (Go's preEnqueueWithHierarchies, permitPodForHierarchy,
getMinCount of a composite): PreEnqueue waits until the root composite's tree meets its
quorum (every composite needs minGroupCount ready children, a basic one 1; a PodGroup is
ready with minCount pods), Permit waits until the tree's scheduled pods meet it and then
allows every waiting pod of the tree, and PlacementFeasible counts a composite's children.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asched.api import Pod
from asched.api.workload import GROUP as API_GROUP
from asched.api.workload import NativePodGroup
from asched.base import featuregates
from asched.framework import events as ev
from asched.framework.cycle_state import CycleState
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.grouptree import GroupForest, GroupNode
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    CompositePlacementFeasiblePlugin,
    EnqueueExtensions,
    GangView,
    PermitPlugin,
    PlacementFeasiblePlugin,
    PreEnqueuePlugin,
)
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.podgroups import GangSummary
from asched.framework.registry import PluginSpec
from asched.framework.status import Status, error, unresolvable, unschedulable, wait
from asched.framework.workloads import COMPOSITE_POD_GROUPS, NATIVE_POD_GROUPS, WORKLOADS

NAME = "GangScheduling"
# gangscheduling.go permitTimeoutDuration.
PERMIT_TIMEOUT_SECONDS = 300.0

WAITING_FOR_QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"


def waiting_for_group(name: str) -> str:
    # Go's wording, "pods's" included.
    return f'waiting for pods\'s pod group "{name}" to appear in scheduling queue'


def waiting_for_tree(root: str) -> str:
    return f'waiting for composite pod group "{root}" tree to meet quorum'


def parent_missing(namespace: str, parent: str) -> str:
    """BuildHierarchySnapshotFromPod's error when a parent composite is not observed."""
    return (
        "failed to build hierarchy snapshot: parent composite pod group state not found "
        f"for CompositePodGroup/{namespace}/{parent}"
    )


def placement_message(min_count: int, scheduled: int, remaining: int) -> tuple[bool, str]:
    """(still possible, message) as PlacementFeasible words it."""
    if remaining + scheduled < min_count:
        return False, (
            f"minCount ({min_count}) cannot be satisfied: "
            f"{scheduled} scheduled, {remaining} remaining"
        )
    return True, (
        f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"
    )


def _feasible(min_count: int, scheduled: int, remaining: int) -> Status | None:
    """GangScheduling.PlacementFeasible once getMinCount has answered."""
    possible, message = placement_message(min_count, scheduled, remaining)
    if not possible:
        return unschedulable(message)
    if scheduled < min_count:
        return wait(message)
    return None


def _pod(obj: object | None) -> Pod | None:
    return obj if isinstance(obj, Pod) else None


def _group(obj: object | None) -> NativePodGroup | None:
    return obj if isinstance(obj, NativePodGroup) else None


class GangScheduling(
    PreEnqueuePlugin,
    PermitPlugin,
    PlacementFeasiblePlugin,
    CompositePlacementFeasiblePlugin,
    EnqueueExtensions,
    GangView,
):
    def __init__(self, args: None, handle: Handle) -> None:
        self._handle = handle
        self._store: ObjectStore[NativePodGroup] | None = None
        # feature.Features.EnableCompositePodGroup, read once as Go's plugins do.
        self._hierarchies = featuregates.enabled("CompositePodGroup")
        self._forest_: GroupForest | None = None

    @property
    def name(self) -> str:
        return NAME

    def informers(self) -> Sequence[InformerRequest[Any]]:
        if self._hierarchies:
            return [NATIVE_POD_GROUPS, WORKLOADS, COMPOSITE_POD_GROUPS]
        return [NATIVE_POD_GROUPS, WORKLOADS]

    def _forest(self) -> GroupForest:
        if self._forest_ is None:
            self._forest_ = GroupForest(self._groups(), self._handle.store(COMPOSITE_POD_GROUPS))
        return self._forest_

    def _parent(self, pg: NativePodGroup) -> str:
        """The group's parent composite when hierarchies are on, else "" (a root)."""
        return pg.parent if self._hierarchies else ""

    def _tree_ready(self, root_name: str, namespace: str, *, scheduled: bool) -> bool:
        """isCPGTreeReady: counting each PodGroup's pods (all of them, or only the
        scheduled ones), every composite of the tree has its minGroupCount ready children."""
        forest = self._forest()
        root = forest.composite(namespace, root_name)
        if root is None:
            return False
        count = (
            self._handle.scheduled_in_scheduling_group
            if scheduled
            else self._handle.scheduling_group_size
        )

        def ready(node: GroupNode) -> bool:
            if node.pod_group is not None:
                pg = node.pod_group
                need = 1 if pg.min_count is None else pg.min_count
                return count(pg.namespace, pg.name) >= need
            assert node.composite is not None
            need = node.composite.min_group_count or 1
            return sum(1 for c in node.children if ready(c)) >= need

        return ready(forest.tree(root))

    def _hierarchy_status(self, pg: NativePodGroup, *, scheduled: bool) -> Status | None:
        """checkCPGHierarchyReadiness from the group's parent, as PreEnqueue words it."""
        root = self._forest().root_composite(pg.namespace, pg.parent)
        if root is None:
            return unresolvable(parent_missing(pg.namespace, pg.parent))
        if not self._tree_ready(root.name, pg.namespace, scheduled=scheduled):
            return unresolvable(waiting_for_tree(root.name))
        return None

    def hierarchy_keys(self, namespace: str, group: str) -> frozenset[str] | None:
        """`namespace/name` of every PodGroup in the group's hierarchy, None when the group
        is a root (its own gang) or its root is not observed."""
        pg = self.pod_group(namespace, group)
        if pg is None or not self._parent(pg):
            return None
        forest = self._forest()
        root = forest.root_composite(namespace, pg.parent)
        if root is None:
            return None
        return frozenset(g.key for g in forest.tree(root).leaves())

    def gangs(self) -> Sequence[GangSummary]:
        """GangView: every native PodGroup, its state the last condition that is True."""
        out = []
        for pg in self._groups().list():
            done = [c for c in pg.conditions if c.status == "True"]
            members = self._handle.pods_in_scheduling_group(pg.namespace, pg.name)
            out.append(
                GangSummary(
                    api_group=API_GROUP,
                    namespace=pg.namespace,
                    name=pg.name,
                    min_member=pg.min_count or 0,
                    members=tuple(members),
                    state=done[-1].type if done else "Pending",
                    timeout_seconds=None,
                )
            )
        return out

    def _groups(self) -> ObjectStore[NativePodGroup]:
        if self._store is None:
            self._store = self._handle.store(NATIVE_POD_GROUPS)
        return self._store

    def pod_group(self, namespace: str, name: str) -> NativePodGroup | None:
        return self._groups().get(f"{namespace}/{name}")

    def _members(self, namespace: str, name: str) -> Sequence[Pod]:
        return self._handle.pods_in_scheduling_group(namespace, name)

    # ---- PreEnqueue ---------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """preEnqueueHierarchiesDisabled, or preEnqueueWithHierarchies for a group with a
        parent composite (a root group is judged the same either way)."""
        name = pod.scheduling_group
        if not name:
            return None
        pg = self.pod_group(pod.namespace, name)
        if pg is None:
            return unresolvable(waiting_for_group(name))
        if self._parent(pg):
            return self._hierarchy_status(pg, scheduled=False)
        if pg.min_count is None:
            return None
        if self._handle.scheduling_group_size(pod.namespace, name) < pg.min_count:
            return unresolvable(WAITING_FOR_QUORUM)
        return None

    # ---- PlacementFeasible ----------------------------------------------------------
    def placement_feasible(
        self, namespace: str, group: str, scheduled: int, remaining: int
    ) -> Status | None:
        pg = self.pod_group(namespace, group)
        # getMinCount: a basic group needs one member.
        return _feasible(
            1 if pg is None or pg.min_count is None else pg.min_count, scheduled, remaining
        )

    def composite_placement_feasible(
        self, namespace: str, composite: str, scheduled: int, remaining: int
    ) -> Status | None:
        """PlacementFeasible for a CompositePodGroup: getMinCount is its minGroupCount
        (1 for basic), counted in children; the wording is the same as for pods."""
        cpg = self._forest().composite(namespace, composite)
        need = 1 if cpg is None or cpg.min_group_count is None else cpg.min_group_count
        return _feasible(need, scheduled, remaining)

    # ---- Permit ---------------------------------------------------------------------
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        name = pod.scheduling_group
        if not name:
            return None, 0.0
        pg = self.pod_group(pod.namespace, name)
        if pg is None:
            return error(f"failed to get podGroup {pod.namespace}/{name}: not found"), 0.0
        if self._parent(pg):
            return self._permit_hierarchy(pg)
        if pg.min_count is None:
            return None, 0.0
        # permitPodGroup. Counted, not listed: a group cycle permits each of its n members
        # in turn, and listing the gang each time made committing it quadratic.
        if self._handle.scheduled_in_scheduling_group(pod.namespace, name) < pg.min_count:
            # Activate the unscheduled siblings in case they wait for this one.
            members = self._members(pod.namespace, name)
            self._handle.activate([p for p in members if not p.node_name])
            return wait(WAITING_AT_PERMIT), PERMIT_TIMEOUT_SECONDS
        # Go allows every assumed member that waits at Permit; a waiting pod is assumed,
        # so the gang's waiting pods are exactly those (and usually far fewer).
        for wp in list(self._handle.waiting_pods):
            if wp.pod.scheduling_group == name and wp.pod.namespace == pod.namespace:
                wp.allow(NAME)
        return None, 0.0

    def _permit_hierarchy(self, pg: NativePodGroup) -> tuple[Status | None, float]:
        """permitPodForHierarchy: wait until the root's tree is ready counting scheduled
        pods (activating the tree's unscheduled pods), then allow the tree's waiting pods."""
        forest = self._forest()
        root = forest.root_composite(pg.namespace, pg.parent)
        if root is None:
            missing = parent_missing(pg.namespace, pg.parent)
            return error(missing), 0.0
        leaves = {g.name for g in forest.tree(root).leaves()}
        if not self._tree_ready(root.name, pg.namespace, scheduled=True):
            pending = [
                p
                for name in sorted(leaves)
                for p in self._members(pg.namespace, name)
                if not p.node_name
            ]
            self._handle.activate(pending)
            return wait(waiting_for_tree(root.name)), PERMIT_TIMEOUT_SECONDS
        for wp in list(self._handle.waiting_pods):
            if wp.pod.namespace == pg.namespace and wp.pod.scheduling_group in leaves:
                wp.allow(NAME)
        return None, 0.0

    # ---- queueing hints ------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # GangScheduling.EventsToRegister. spec.schedulingGroup is immutable, so pod
        # updates are not registered. A new pending or pre-bound pod may complete a gang.
        return (
            ClusterEventWithHint(ev.UNSCHEDULED_POD_ADD, self._after_pod_add, self._pod_add_scope),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.ADD, "AssignedPodAdd"),
                self._after_pod_add,
                self._pod_add_scope,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.SCHEDULING_POD_GROUP, ActionType.ADD, "PodGroupAdd"),
                self._after_group_add,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.SCHEDULING_POD_GROUP, ActionType.UPDATE, "PodGroupUpdate"
                ),
                self._after_group_update,
            ),
            *(
                (
                    ClusterEventWithHint(
                        ClusterEvent(
                            EventResource.COMPOSITE_POD_GROUP,
                            ActionType.ADD,
                            "CompositePodGroupAdd",
                        ),
                        self._after_composite_add,
                    ),
                )
                if self._hierarchies
                else ()
            ),
        )

    def _same_hierarchy(self, pod: Pod, namespace: str, group: str) -> bool:
        """areSameHierarchy for two PodGroups: the same group, or the same root."""
        if (namespace, group) == (pod.namespace, pod.scheduling_group):
            return True
        if not self._hierarchies or namespace != pod.namespace:
            return False
        mine = self.hierarchy_keys(pod.namespace, pod.scheduling_group)
        return mine is not None and f"{namespace}/{group}" in mine

    def _after_pod_add(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """isSchedulableAfterPodAdded: a new member of the same group (or, with
        hierarchies, of the same root) may complete it."""
        added = _pod(new)
        if added is None:
            return QueueingHint.QUEUE
        if not pod.scheduling_group or not added.scheduling_group:
            return QueueingHint.QUEUE_SKIP
        same = self._same_hierarchy(pod, added.namespace, added.scheduling_group)
        return QueueingHint.QUEUE if same else QueueingHint.QUEUE_SKIP

    def _after_composite_add(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """isSchedulableAfterCompositePodGroupAdded: a composite of the pod's hierarchy
        (its root may just have appeared) may make it ready."""
        if not pod.scheduling_group:
            return QueueingHint.QUEUE_SKIP
        mine = self.hierarchy_keys(pod.namespace, pod.scheduling_group)
        return QueueingHint.QUEUE if mine is not None else QueueingHint.QUEUE_SKIP

    def _pod_add_scope(self, old: object | None, new: object | None) -> frozenset[str] | None:
        """The gang a new pod may complete: its own, once the gang has minCount pods.

        `_after_pod_add` answers Queue for every waiting pod of the new pod's gang, but
        PreEnqueue turns each of them away again while the gang is short of minCount (or
        its PodGroup is missing), so asking them before then changes nothing but the
        cost: without this, gathering a gang of n pods asks n²/2 pods.
        """
        added = _pod(new)
        if added is None:
            return None
        if not added.scheduling_group:
            return frozenset()
        pg = self.pod_group(added.namespace, added.scheduling_group)
        if pg is None:
            return frozenset()
        if self._parent(pg):
            # Another gang of the same tree may be the one waiting for this pod: ask the
            # tree's gangs once the tree is ready (PreEnqueue turns them away before).
            if self._hierarchy_status(pg, scheduled=False) is not None:
                return frozenset()
            return self.hierarchy_keys(added.namespace, added.scheduling_group)
        size = self._handle.scheduling_group_size(added.namespace, added.scheduling_group)
        if pg.min_count is not None and size < pg.min_count:
            return frozenset()
        return frozenset((f"{added.namespace}/{added.scheduling_group}",))

    def _after_group_add(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """isSchedulableAfterPodGroupAdded."""
        pg = _group(new)
        if pg is None:
            return QueueingHint.QUEUE
        if not pod.scheduling_group:
            return QueueingHint.QUEUE_SKIP
        same = self._same_hierarchy(pod, pg.namespace, pg.name)
        return QueueingHint.QUEUE if same else QueueingHint.QUEUE_SKIP

    def _after_group_update(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """isSchedulableAfterPodGroupUpdated: only a lowered gang minCount helps."""
        before, after = _group(old), _group(new)
        if before is None or after is None:
            return QueueingHint.QUEUE
        if not pod.scheduling_group:
            return QueueingHint.QUEUE_SKIP
        if (after.namespace, after.name) != (pod.namespace, pod.scheduling_group):
            return QueueingHint.QUEUE_SKIP
        if before.min_count is None or after.min_count is None:
            return QueueingHint.QUEUE_SKIP
        if after.min_count >= before.min_count:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


SPEC = PluginSpec(NAME, GangScheduling, None)
