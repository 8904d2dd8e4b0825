"""One Protocol per extension point (kube-scheduler framework/interface.go).

A plugin class names the Protocols it implements (`class Fit(PreFilterPlugin, FilterPlugin)`)
so mypy checks its signatures. Optional abilities are their own small Protocols
(`PreFilterExtensions`, `ScoreNormalizer`, `EnqueueExtensions`). Success is `None`.

Points on the scheduling cycle are plain functions: the cycle must not await the network.
Filter, Score, PreFilter and PreScore also accept `async def` implementations (for plugins
that must do I/O); the runtime detects them once at construction. PostFilter and the
binding points (PreBind, Bind, PostBind) are always `async`.

Obligations:
- Unreserve must be idempotent and may be called without a matching Reserve.
- Filter and Score must not write to CycleState; they run for many nodes of one cycle.
- Score returns an int; errors are raised and become an Error status for the pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from asched.api import Pod
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEventWithHint
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import (
    GangSummary,
    Placement,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
)
from asched.framework.status import Status
from asched.framework.types import (
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)


@runtime_checkable
class Plugin(Protocol):
    @property
    def name(self) -> str: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    def events_to_register(self) -> Sequence[ClusterEventWithHint]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Keeps PreFilter state right when preemption's dry run adds or removes pods."""

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class AsyncFilterPlugin(Plugin, Protocol):
    async def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int: ...


@runtime_checkable
class AsyncScorePlugin(Plugin, Protocol):
    async def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int: ...


@runtime_checkable
class BatchFilterPlugin(Protocol):
    """Optional, beside `filter`: the same verdicts for many nodes at once, from columns.

    Called once per pod per scheduling cycle (on the event loop, after PreFilter, with
    the pod's CycleState) with the snapshot's NodeColumns and `rows`, the row numbers of
    the nodes to judge in the order they are tried. Return None when every row passes,
    else a BatchVerdict aligned with `rows` (BatchVerdict.constant when every rejected
    node gets the same Status). Raise Unbatchable when this pod has no batch answer:
    the runtime then calls `filter` node by node for it.

    Must: give exactly `filter`'s verdict and Status for every row (prove it with
    asched.testing.check_fast_forms); read the columns and CycleState only (write
    neither); cost a few array operations, not a Python loop over the rows.
    Batch and per-node Filter plugins mix freely in a profile: batch plugins answer over
    all rows first, per-node ones run only on the nodes that are still open, and each
    rejected node reports the first rejecting plugin in profile order either way.
    """

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None: ...


#: A pod key (NodeStaticPlugin.pod_key): a str, int, bool, None, or a tuple of those, so
#: that it is hashable and serializes the same way every time (it also signs the pod).
PodKey = str | int | bool | tuple[object, ...] | None


@runtime_checkable
class NodeStaticPlugin(Protocol):
    """Optional, beside `filter` and/or `score`: "my answer for a node depends only on the
    node's Node object and on `pod_key(pod)`" - labels, annotations, allocatable, taints;
    never the pods on the node, other objects, the time or a random draw.

    The runtime then memoizes the plugin (asched.framework.memo): for each distinct pod
    key it calls `filter`/`score` once per node and again only for nodes whose Node object
    changed since (an update, or a node added), and reuses the verdicts and raw scores
    for every other pod with that key. NormalizeScore still runs per pod. Filter must
    return None or a rejection (an Error is not memoized: that pod takes the per-node
    path); `filter`/`score` get the pod's own CycleState, so reading what your PreFilter
    or PreScore wrote is fine as long as it too follows from the pod key.

    `pod_key` is called once per pod per cycle, so it must be cheap; pods with equal keys
    must get equal answers on every node. It also signs the pod for opportunistic
    batching (SignPlugin), so a profile of such plugins keeps batching on. Raising from
    it sends that pod down the per-node path. Memory: at most 64 pod keys per plugin
    (asched.framework.memo.MAX_KEYS, the least recently used goes first), each holding
    one small integer per node.
    """

    def pod_key(self, pod: Pod) -> PodKey: ...


@runtime_checkable
class BatchScorePlugin(Protocol):
    """Optional, beside `score`: the raw scores of `rows` at once.

    Called once per pod (after PreScore, with the pod's CycleState) for the feasible
    nodes, as row numbers into the snapshot's NodeColumns. Return an int64 array aligned
    with `rows`, equal to `score` node for node; NormalizeScore and the weight apply
    after, as for `score`. Raise Unbatchable to have `score` called per node instead.
    Read-only, like BatchFilterPlugin.
    """

    def score_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> Int64s: ...


@runtime_checkable
class BatchScoreNormalizer(Protocol):
    """Optional, beside `normalize_score`: the same rescaling of a raw score array (the
    feasible nodes in order). Return a new array; results must be in [0, 100]."""

    def normalize_batch(self, state: CycleState, pod: Pod, scores: Int64s) -> Int64s: ...


@runtime_checkable
class ScoreNormalizer(Protocol):
    """Rescales a Score plugin's raw scores into [0, 100] (kube-scheduler ScoreExtensions)."""

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """(status, timeout seconds); the timeout only matters for Wait."""
        ...


@runtime_checkable
class PlacementFeasiblePlugin(Plugin, Protocol):
    """Can a pod group still meet its constraints? (kube-scheduler PlacementFeasiblePlugin)

    Called by the group cycle before any member is tried and after each one, with how many
    members are already scheduled (bound, assumed, or placed earlier in this cycle) and
    how many are still to be tried. Success: the group is satisfied; Wait: not yet, try
    the next member; Unschedulable: it cannot be, stop. Not a config point: like Go, the
    runtime finds every enabled plugin that implements it.
    """

    def placement_feasible(
        self, namespace: str, group: str, scheduled: int, remaining: int
    ) -> Status | None: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PreBindPreFlightPlugin(Plugin, Protocol):
    """A PreBind plugin that can say, before PreBind, whether it has work for this pod
    (kube-scheduler's PreBindPreFlight): None (Success) when it will act, Skip when not
    (its PreBind is then not called), an Error status to fail the binding cycle.

    Optional in asched: a PreBind plugin without it counts as having work, so an
    out-of-tree plugin written before this point existed keeps running unchanged."""

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Skip to let the next Bind plugin bind the pod."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


# ---- The pod group cycle's extension points ---------------------------------------------
# kube-scheduler 1.37 framework/interface.go: PlacementGeneratePlugin, PlacementScorePlugin
# (with PlacementScoreExtensions) and PodGroupPostFilterPlugin. They are profile points
# (`plugins.placementGenerate`, `plugins.placementScore`, `plugins.podGroupPostFilter`),
# filled from multiPoint with every plugin that implements them, like any other point.
# All run on the event loop, inside one group cycle (asched.scheduler.groupcycle), which
# holds the scheduling cycle: no other pod or group is scheduled meanwhile, but the
# binding cycles of earlier pods go on and the informers keep delivering events.


@runtime_checkable
class PlacementGeneratePlugin(Plugin, Protocol):
    """Proposes the candidate placements of a pod group (Go: PlacementGeneratePlugin).

    At most one per profile (more is a configuration error, as in Go); without one the
    group has a single placement, every node.
    """

    def generate_placements(
        self, group: PodGroupInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[Placement], Status | None]:
        """Called once per group cycle, before any member is tried, with the parent
        placement's nodes (every node of the snapshot, in snapshot order).

        Return the placements, each a set of rows into `nodes` (they may overlap), in the
        order they are to be simulated, and None. Statuses:
        - None (Success) with no placement: the runtime answers Unschedulable "no feasible
          placements found" for the group;
        - Unschedulable: the group cannot be placed this cycle (reasons shown as given);
        - Error: the placements cannot be computed (the group fails with an Error and
          goes to backoff).
        Must not mutate `nodes` or the pods in `group`; one pass over the nodes is the
        expected cost (a 5,000-node cluster asks it once per group cycle).
        """
        ...


@runtime_checkable
class PlacementScoreNormalizer(Protocol):
    """Optional, beside `score_placement` (Go: PlacementScoreExtensions)."""

    def normalize_placement_score(
        self, group: PodGroupInfo, scores: list[PlacementScore]
    ) -> Status | None:
        """Called once per group cycle with this plugin's raw score of every feasible
        placement; rewrite each `score` in place into [0, 100]. None is success; any
        other status fails the group with an Error ("running NormalizePlacementScore on
        PlacementScore plugins: ..."). Must not change the list's length or order."""
        ...


@runtime_checkable
class PlacementScorePlugin(Plugin, Protocol):
    """Ranks the feasible placements of a pod group (Go: PlacementScorePlugin).

    Each plugin's score (normalized when it is also a PlacementScoreNormalizer) is
    multiplied by its weight (`plugins.placementScore` or multiPoint weight, 0 or unset
    meaning 1) and summed; the highest total wins. asched breaks a tie itself (Go draws at
    random): see asched.scheduler.placement.
    """

    def score_placement(self, group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
        """Called once per feasible placement, after all of them were simulated, with
        where the simulation put the members (`assignments`; the simulation is already
        rolled back, so read `assignments`, not the snapshot, for what it placed).

        Return the raw score; after normalization (if any) it must be in [0, 100].
        Raising fails the group with an Error status naming the plugin. Read-only: no
        CycleState, no snapshot mutation. Cheap: a few operations per placement.
        """
        ...


@runtime_checkable
class PodGroupScheduling(Protocol):
    """What the group cycle hands a PodGroupPostFilter plugin: the group, the nodes, and
    the cycle's own placement algorithm to re-run in a world without some pods (Go's
    PodGroupInfo, MutableSnapshotSharedLister and PodGroupSchedulingFunc together).

    Valid only during the pod_group_post_filter call it is given to.
    """

    @property
    def info(self) -> PodGroupInfo:
        """The group, its scheduled pods and the members this cycle tried."""
        ...

    @property
    def attempted(self) -> bool:
        """Whether any member got as far as PreFilter in this cycle (a group stopped
        before that, by PlacementFeasible or a placement error, ran no plugin)."""
        ...

    def nodes(self) -> Sequence[NodeInfo]:
        """The cycle's snapshot of the nodes, with no member assumed. Do not mutate."""
        ...

    async def place(self, removed: Sequence[Pod]) -> tuple[PodGroupAssignments, Status | None]:
        """PodGroupSchedulingFunc: run the group's whole placement algorithm again on
        copies of the nodes without `removed` (each on the node its `node_name` names),
        with no Reserve plugin and no change to the cache or the snapshot. Returns where
        the members went and the group's status (None when the group fits). Costs as
        much as the group cycle itself."""
        ...

    async def fits(self, assignments: Mapping[str, str], removed: Sequence[Pod]) -> bool:
        """Whether the members (uid -> node), tried in cycle order with the ones before
        each assumed, still pass PreFilter and Filter on those nodes once `removed` are
        gone (preemption's reprieve check). Nothing is changed. About one Filter pass
        per member, on one node each."""
        ...


@runtime_checkable
class PodGroupPostFilterPlugin(Plugin, Protocol):
    """Called after a pod group could not be placed (Go: PodGroupPostFilterPlugin), in
    profile order, to make room for it (preemption) or free what held it back (DRA)."""

    async def pod_group_post_filter(
        self, group: PodGroupScheduling
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        """Called once per group cycle whose group status is Unschedulable (never after an
        Error or a success), on the event loop; per-pod PostFilter does not run for the
        members. Status:
        - Unschedulable: done, the group still cannot fit; its reasons are collected and
          the next plugin runs;
        - UnschedulableAndUnresolvable: no plugin can make the group fit; the rest are
          skipped and its message is appended to the group's status;
        - Success (a Status with code Success, or None): the group can fit once this
          plugin's action completes; the rest are skipped, every member goes back to the
          queue waiting on it, nominated to `result.nominated[uid]` when given;
        - Error: the group fails with 'error in "<plugin>" PodGroupPostFilter plugins:
          <message>'.
        May start asynchronous work (evictions) through the plugin's own task, never a
        fire-and-forget one; must not change the snapshot, the cache or the members. May
        await (`group.place` does), but holds the scheduling cycle while it does.
        """
        ...


@runtime_checkable
class GangView(Protocol):
    """Optional, for gang plugins: a read-only account of the gangs the plugin knows, so
    that tools (the inspector) show gangs without knowing any gang plugin.

    Found with isinstance among a profile's plugins. When two profiles share a gang
    plugin's informer, both report the same gangs; readers keep one per (api_group, key).
    """

    def gangs(self) -> Sequence[GangSummary]:
        """Called on the event loop between cycles (about once a second while someone
        watches), never inside a cycle. Must not change anything: no queue moves, no API
        calls, no writes to the plugin's own state. Cost: one pass over the plugin's gangs
        and their members' index entries."""
        ...
