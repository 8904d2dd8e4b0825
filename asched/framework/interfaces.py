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

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from asched.api import Pod
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEventWithHint
from asched.framework.nodeinfo import NodeInfo
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
