"""The plugin contract: one Protocol per extension point and one per optional ability
(kube-scheduler framework/interface.go). A plugin can be written from this file alone.

How a plugin is built and found
- A plugin class names the Protocols it implements (`class Fit(PreFilterPlugin,
  FilterPlugin)`) so mypy checks its signatures; asched builds it once per profile as
  `Cls(args, handle)` (asched.framework.registry.PluginSpec) and gives it a Handle
  (asched.framework.handle), its only view of the scheduler.
- The runtime (asched.framework.runtime.Framework) checks each plugin once, when the
  profile is built, with isinstance against the Protocol of every point it is enabled
  at and of every optional ability below; it never looks a method up by name. An
  ability a plugin does not implement is simply not used for it.

Where and when plugins run
- Everything runs on the scheduler's one event loop; asched starts no threads for
  plugins and holds no locks. A synchronous method runs to completion before anything
  else happens: no informer event, queue move or other pod's cycle can interleave, so the
  snapshot, the cache and the plugin's own fields stay as they were while it runs.
- The *scheduling cycle* takes one pod at a time: PreFilter, Filter, (PostFilter when
  nothing fits), PreScore, Score, then Reserve and Permit. Its points are plain functions
  and must not block or await the network: every other pod waits for them. Filter,
  Score, PreFilter and PreScore may also be `async def` (the runtime detects it once),
  for a plugin that must await something local; an await lets events in between.
- The *binding cycle* of each pod runs concurrently with the scheduling cycle and with
  other pods' binding cycles (binds in flight are capped): WaitOnPermit, PreBindPreFlight,
  PreBind, Bind, PostBind. PreBind, Bind and PostBind are `async` and may await the API
  server; an awaiting plugin must expect other cycles to run meanwhile.
- PreEnqueue and QueueSort run in the scheduling queue, on informer events and pod pops.

Status codes (asched.framework.status.Code; kube-scheduler's Code)
- `None` (or Success): the plugin is content. Return None, not a Success status.
- Unschedulable: this pod does not fit (here, or anywhere); preemption may help.
- UnschedulableAndUnresolvable: it does not fit and preemption cannot change that.
- Pending: the pod is held for an outside reason; it is requeued without backoff.
- Error: something unexpected (a bug, bad input, a failed request); the pod is retried
  with backoff and its rejecting plugins are not recorded. An exception raised by a
  plugin becomes an Error status tagged with the plugin's name (a request failure,
  asched.client.protocol.RequestError, without a crash report; any other exception
  logged with its stack and counted as a bug).
- Skip (PreFilter, PreScore, Bind, PreBindPreFlight): "nothing to do for this pod".
- Wait (Permit, PlacementFeasible): "not yet".
What each code means at a given point is in that point's docstring. A rejection names
its reasons (`Status.reasons`, shown in the FailedScheduling event); the runtime sets
the plugin's name.

What plugins may mutate
- CycleState (asched.framework.cycle_state) is per pod and per cycle. PreFilter,
  PreScore, Reserve, Permit and PreBind may write it; Filter and Score only read it (they
  run for many nodes, possibly on a clone). A value that AddPod/RemovePod change must
  implement `StateData.clone()` (cycle_state.py: it lives there because CycleState
  calls it).
- Pods, Nodes and NodeInfos handed to a plugin are shared with the cache, the snapshot
  and other plugins: never mutate them. The plugin's own fields are its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from asched.api import Pod
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEventWithHint
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import (
    GangSummary,
    Placement,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
)
from asched.framework.signatures import SignResult
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
    """What every plugin has: its name."""

    @property
    def name(self) -> str:
        """The plugin's name: the one the config enables it by, and the one its statuses,
        metrics and events carry. Constant; read often, so a class attribute or a property
        returning a constant."""
        ...


# ---- the queue -----------------------------------------------------------------------


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Whether `pod` may enter the active queue (kube-scheduler PreEnqueue).

        Called by the scheduling queue whenever the pod is added or updated and whenever
        an event may let a gated pod in, on the event loop, synchronously, before the pod
        is queued. None: the pod may go on to the next PreEnqueue plugin and the queue.
        Any rejection (Unschedulable is usual): the pod is gated and waits in the
        unschedulable pool until an event this plugin registered (EnqueueExtensions), or
        a wildcard event, runs PreEnqueue again; no backoff. Error: the same, logged.

        Read-only: the pod, the Handle's listers and the plugin's own state. It runs on
        every informer event for the pod, so it must be cheap (a few lookups, no API call).
        """
        ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether `a` should be scheduled before `b` (kube-scheduler QueueSort Less).

        Exactly one QueueSort plugin per profile. Called by the active queue's heap on
        every push and pop, O(log n) times per pod, on the event loop: a strict weak
        order, pure and very cheap (compare fields already on QueuedPodInfo).
        """
        ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """Optional, for a plugin that can reject pods (PreEnqueue, PreFilter, Filter,
    Reserve, Permit): the cluster events that may make a pod it rejected schedulable."""

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The events (resource and action) that may turn this plugin's rejection into
        a fit, each with an optional queueing hint (asched.framework.events) that says
        for one event and one rejected pod whether to requeue it (Queue) or not
        (QueueSkip).

        Called once, when the profile is built; the answer must not change afterwards.
        A plugin without EnqueueExtensions is asked about every event (correct but it
        requeues its pods on any change). An empty list means its rejections are only
        retried by the periodic flush (5 minutes): almost always a mistake. Hints run on
        the event loop for every matching event and pod: keep them cheap and read-only.
        """
        ...


# ---- the scheduling cycle: filtering ---------------------------------------------------


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Keeps PreFilter's CycleState right when preemption's dry run adds or removes pods
    on a node (kube-scheduler PreFilterExtensions), and when Filter counts a node's
    nominated pods."""

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Update `state` as if `pod_to_add` ran on `node_info`'s node.

        Called only after this plugin's PreFilter succeeded for `pod_to_schedule`, on a
        clone of the cycle's state, possibly several times before Filter runs again on
        that node: by the nominated pass of Filter (once per nominated pod of equal or
        higher priority on the node) and by preemption's dry runs. On the event loop, in
        the scheduling cycle. None: done; any other status: the node is rejected with it
        (an Error stops the pod's cycle).

        May mutate only `state`'s values this plugin wrote (which must then implement
        StateData.clone); `node_info` may be shared and must not be changed. Cost: O(1)
        or O(pods on the node), never a scan of the cluster.
        """
        ...

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Update `state` as if `pod_to_remove` no longer ran on `node_info`'s node
        (preemption's dry run removing a victim). Same rules as add_pod."""
        ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Prepare for Filter and say whether the pod can fit at all (kube-scheduler
        PreFilter). Called once per pod per scheduling cycle, first, with every node of
        the snapshot, on the event loop.

        Returns (result, status). A PreFilterResult with `node_names` narrows the nodes
        Filter looks at (the runtime intersects the results of all plugins); the nodes
        left out get UnschedulableAndUnresolvable "node(s) didn't satisfy plugin(s)"
        and preemption ignores them. Status:
        - None: go on.
        - Skip: this plugin has nothing to check for this pod; its Filter (and its
          PreFilterExtensions) are not called in this cycle. The result is ignored.
        - Unschedulable: the pod fits nowhere now but preemption may help; the other
          PreFilter plugins still run (preemption needs their state).
        - UnschedulableAndUnresolvable or Pending: the pod fits nowhere; the cycle stops
          here and every node gets this status.
        - Error: the cycle stops and the pod is retried with backoff.

        May write CycleState (what Filter and Score will read) and its own fields; must
        not change the nodes. Cost: once per pod, so O(nodes) is acceptable, but work that
        does not depend on the pod belongs in an informer handler or a memo. May be
        `async def`.
        """
        ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """This plugin's AddPod/RemovePod, or None if its state does not depend on the
        pods on a node. Called when the runtime needs them (per node with nominated pods,
        per preemption dry run); return a constant."""
        ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Whether `pod` can run on `node_info`'s node (kube-scheduler Filter).

        Called after PreFilter (unless this plugin's PreFilter said Skip) for the nodes
        the scheduler tries, until enough fit (percentageOfNodesToScore), on the event
        loop in chunks; also by preemption's dry runs on a NodeInfo with victims removed,
        and twice on a node with nominated pods (with them, on a cloned state and node,
        then without). Look at `node_info` (its pods, its resources), never the snapshot:
        they may differ.

        None: the node fits. Unschedulable: it does not now, preemption may help.
        UnschedulableAndUnresolvable: it does not and removing pods would not change it.
        Error: the whole cycle stops and the pod is retried with backoff. The first
        plugin (in profile order) that rejects a node decides its status.

        Read-only: CycleState (written by PreFilter; if PreFilter is not enabled the key
        is missing and Filter must cope), `node_info`, the pod. Cost: it runs up to once
        per node per pod, the hot path; give it a batch form (BatchFilterPlugin) or
        declare it node-static (NodeStaticPlugin) to answer for many nodes at once.
        """
        ...


@runtime_checkable
class AsyncFilterPlugin(Plugin, Protocol):
    """FilterPlugin written as `async def`: the same contract, awaited per node (slower;
    an await lets other events run in the middle of the cycle)."""

    async def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """As FilterPlugin.filter."""
        ...


@runtime_checkable
class BatchFilterPlugin(Protocol):
    """Optional, beside `filter`: the same verdicts for many nodes at once, from columns.

    Batch and per-node Filter plugins mix freely in a profile: batch plugins answer over
    all rows first, per-node ones run only on the nodes that are still open, and each
    rejected node reports the first rejecting plugin in profile order either way.
    """

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        """Called once per pod per scheduling cycle (on the event loop, after PreFilter,
        with the pod's CycleState) with the snapshot's NodeColumns and `rows`, the row
        numbers of the nodes to judge in the order they are tried. Return None when every
        row passes, else a BatchVerdict aligned with `rows` (BatchVerdict.constant when
        every rejected node gets the same Status). Raise Unbatchable when this pod has no
        batch answer: the runtime then calls `filter` node by node for it.

        Must: give exactly `filter`'s verdict and Status for every row (prove it with
        asched.testing.check_fast_forms); read the columns and CycleState only (write
        neither); cost a few array operations, not a Python loop over the rows.
        """
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Try to make an unschedulable pod schedulable, typically by preemption
        (kube-scheduler PostFilter).

        Called in the scheduling cycle, on the event loop, when PreFilter or Filter left
        no feasible node, with every node's status (`statuses.get(node)`: nodes not
        listed hold the absent status, e.g. PreFilter's). Nodes marked
        UnschedulableAndUnresolvable are still in `statuses`: skipping them is this
        plugin's job. Plugins run in profile order until one returns Success or Error.

        Status: None (Success): the pod can be made schedulable; a PostFilterResult
        may nominate a node (the pod's status.nominatedNodeName), and the pod is retried.
        Unschedulable: nothing this plugin can do (its reasons join the event's message).
        Skip: not applicable. Error: stop; the pod is retried with backoff.

        The scheduling cycle waits for it: choosing victims must not await the network;
        evictions go to the plugin's own background task (BackgroundTask), as
        DefaultPreemption does. May use the Handle's runner calls (Filter with nominated
        pods, AddPod/RemovePod on a cloned state) on cloned NodeInfos; must not mutate
        the snapshot's NodeInfos or `statuses`.
        """
        ...


# ---- the scheduling cycle: scoring ---------------------------------------------------


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Prepare for Score with the feasible nodes (kube-scheduler PreScore).

        Called once per pod, after filtering, only when more than one node is feasible
        (the scheduler takes a lone feasible node without scoring), on the event loop.
        None: go on. Skip: this plugin's Score is not called for this pod. Any other
        status: the cycle stops with an Error and the pod is retried with backoff.

        May write CycleState and its own fields; must not change the nodes. Cost: once
        per pod, O(feasible nodes) at most. May be `async def`.
        """
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """How well `pod` suits `node_info`'s node (kube-scheduler Score): an int.

        Called after PreScore (unless this plugin's PreScore said Skip) for every
        feasible node, on the event loop. Without a ScoreNormalizer the result must be in
        [0, 100] (MIN_NODE_SCORE, MAX_NODE_SCORE); with one it is raw and
        normalize_score rescales it. It is then multiplied by the plugin's weight and
        summed with the other plugins' scores; the highest total wins. There is no
        Status: raise to fail (an Error; the pod is retried with backoff).

        Read-only, like Filter. Cost: once per feasible node per pod, the hot path; a
        batch form (BatchScorePlugin) or NodeStaticPlugin answers for all nodes at once.
        """
        ...


@runtime_checkable
class AsyncScorePlugin(Plugin, Protocol):
    """ScorePlugin written as `async def`: the same contract, awaited per node."""

    async def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """As ScorePlugin.score."""
        ...


@runtime_checkable
class ScoreNormalizer(Protocol):
    """Optional, beside `score`: rescales the plugin's raw scores into [0, 100]
    (kube-scheduler ScoreExtensions.NormalizeScore)."""

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Called once per pod after this plugin scored every feasible node, with those
        scores, on the event loop. Rewrite each `NodeScore.score` in place (the list is
        this call's own); every result must be in [0, 100] or the cycle fails with an
        Error. None: done. Any other status: the pod's cycle fails with an Error.

        Read-only apart from `scores`. Cost: O(feasible nodes)."""
        ...


@runtime_checkable
class BatchScorePlugin(Protocol):
    """Optional, beside `score`: the raw scores of many nodes at once."""

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        """Called once per pod (after PreScore, with the pod's CycleState) for the
        feasible nodes, as row numbers into the snapshot's NodeColumns, on the event loop.
        Return an int64 array aligned with `rows`, equal to `score` node for node;
        NormalizeScore and the weight apply after, as for `score`. Raise Unbatchable to
        have `score` called per node instead. Read-only, like BatchFilterPlugin; a few
        array operations."""
        ...


@runtime_checkable
class BatchScoreNormalizer(Protocol):
    """Optional, beside `normalize_score`: the same rescaling over an array."""

    def normalize_batch(self, state: CycleState, pod: Pod, scores: Int64s) -> Int64s:
        """Called instead of normalize_score when the scores were computed as an array
        (the feasible nodes in order), on the event loop. Return a new array equal to
        what normalize_score would write; results must be in [0, 100]. Must not change
        `scores`."""
        ...


# ---- fast forms and batching of the scheduling cycle ------------------------------------

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
    or PreScore wrote is fine as long as it too follows from the pod key. Memory: at most
    64 pod keys per plugin (asched.framework.memo.MAX_KEYS, the least recently used goes
    first), each holding one small integer per node.
    """

    def pod_key(self, pod: Pod) -> PodKey:
        """What this plugin's answers for `pod` depend on. Called once per pod per cycle
        (and to sign the pod), on the event loop: it must be cheap and pure; pods with
        equal keys must get equal answers on every node. It also signs the pod for
        opportunistic batching (SignPlugin), so a profile of such plugins keeps batching
        on. Raising from it sends that pod down the per-node path."""
        ...


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    """Optional, for PreFilter, Filter, PreScore and Score plugins: the pod fields this
    plugin's answers depend on (kube-scheduler fwk.SignPlugin).

    Opportunistic batching (asched.framework.opportunistic) gives the next pod with an
    equal signature the best node left in the previous pod's ranking. A profile signs
    pods only if every one of its PreFilter, Filter, PreScore and Score plugins signs (a
    NodeStaticPlugin signs with its pod key); without it, batching is off for the
    profile: always correct, only slower.
    """

    def sign_pod(self, pod: Pod) -> SignResult:
        """The fragments naming every pod field this plugin's verdicts and scores read
        (asched.framework.signatures: use its shared keys, such as LABELS, for fields
        in-tree plugins sign too), or the Status from `unsignable(reason, name)` for a pod
        whose answers depend on other pods or objects that change.

        Called once per pod per scheduling cycle before PreFilter, on the event loop,
        when the profile batches. Pure and cheap (no lookups): two pods with equal
        fragments must get equal Filter verdicts and scores on nodes in equal states."""
        ...


@runtime_checkable
class RefusingSignPlugin(SignPlugin, Protocol):
    """A SignPlugin that declares it refuses to sign many pods (`refuses_signing_often =
    True`), as PodTopologySpread does for every pod under the default profile's system
    defaults. The runtime asks such plugins first, in profile order, so the profile's
    SignPod stops at the first refusal before the other plugins build their fragments.
    Only the order of the calls changes: the signature is the same in any order, and None
    whenever any plugin refuses. Read once, when the profile is built."""

    refuses_signing_often: bool


# ---- the scheduling cycle: after a node is chosen ---------------------------------------


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Claim what the pod will use on `node_name` before binding (kube-scheduler
        Reserve), so the next pods' cycles see it taken.

        Called in the scheduling cycle right after the pod is assumed in the cache on
        that node, on the event loop. None: go on. Any rejection: the pod is not
        scheduled this time (Unreserve runs on every Reserve plugin, the pod is requeued
        with its reasons); Error: the same, with backoff.

        May update the plugin's own state and CycleState. No network: the binding cycle
        does the API work (PreBind).
        """
        ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undo `reserve` (kube-scheduler Unreserve): called, in reverse profile order on
        every Reserve plugin, when a later Reserve, Permit, WaitOnPermit, PreBind or Bind
        fails, in the scheduling or the binding cycle, on the event loop.

        Must be idempotent and must cope with being called without a matching Reserve
        (or after a failed one). It cannot fail: an exception is logged and the others
        still run. No network."""
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """Allow, reject or delay binding the pod to `node_name` (kube-scheduler Permit).

        Called in the scheduling cycle after Reserve, on the event loop. Returns
        (status, timeout in seconds); the timeout only matters for Wait.
        - None: allowed by this plugin.
        - Wait: the pod is parked in the profile's waiting pods (Handle.waiting_pods)
          until every waiting plugin allows it (WaitingPod.allow) or one rejects it, or
          the shortest timeout passes (capped at 15 minutes), which rejects it. Its
          binding cycle waits; the scheduling cycle goes on with the next pod.
        - any rejection: the pod is unreserved and requeued as Unschedulable.
        - Error: the same, with backoff.
        The first rejection wins over any Wait.

        May update its own state and CycleState; no network.
        """
        ...


@runtime_checkable
class PlacementFeasiblePlugin(Plugin, Protocol):
    """Can a pod group still meet its constraints? (kube-scheduler PlacementFeasiblePlugin)

    Not a config point: like Go, the runtime finds every enabled plugin that implements
    it (isinstance), whichever points it is enabled at.
    """

    def placement_feasible(
        self, namespace: str, group: str, scheduled: int, remaining: int
    ) -> Status | None:
        """Called by the group cycle, on the event loop, before any member of the pod
        group `namespace/group` is tried and after each one, with how many members are
        already scheduled (bound, assumed, or placed earlier in this cycle) and how many
        are still to be tried.

        None (Success): the group is satisfied. Wait: not yet, try the next member.
        Unschedulable: it cannot be, stop trying this placement. Error (or any other
        code): the group cycle fails with an Error. Read-only and cheap (counts only).
        """
        ...


# ---- the binding cycle ---------------------------------------------------------------


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Do the API work the pod needs before it is bound (kube-scheduler PreBind):
        bind volumes, allocate claims.

        Called in the pod's binding cycle, after Permit allowed it, in profile order,
        unless this plugin's PreBindPreFlight said Skip. Awaits freely: other pods'
        scheduling and binding cycles run meanwhile. None or Skip: go on. Any other
        status: binding fails, every Reserve plugin's Unreserve runs and the pod is
        requeued (an Error with backoff). A raised request failure is such an Error.

        May write the API server and its own state; must leave the cluster unchanged,
        or undo it in Unreserve, when it fails. A write that failed in a way that may
        have been applied (asched.client.protocol.may_have_been_applied: a connection
        cut after sending, a timeout, a 5xx) may have landed: before failing, and so
        before Unreserve frees what the write holds, read the object back
        (asched.client.readback.ReadBack) and go on if it is there, as DynamicResources
        does for its claim allocations.
        """
        ...


@runtime_checkable
class PreBindPreFlightPlugin(Plugin, Protocol):
    """A PreBind plugin that can say, before PreBind, whether it has work for this pod
    (kube-scheduler PreBindPreFlight).

    Optional in asched: a PreBind plugin without it counts as having work, so an
    out-of-tree plugin written before this point existed keeps running unchanged."""

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Called at the start of the pod's binding cycle, on the event loop, before
        WaitOnPermit. None (Success): this plugin's PreBind will act for this pod. Skip:
        it has nothing to do (its PreBind is not called). Error: binding fails (Unreserve,
        requeue with backoff). Any other code is an Error. When every PreBind plugin says
        Skip, the pod is not shown as waiting on PreBind. Lightweight and read-only: no
        API call, no change of state."""
        ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Bind the pod to `node_name` (kube-scheduler Bind), through the API server.

        Called in the binding cycle after PreBind; Bind plugins are asked in profile
        order until one does not return Skip. None: bound. Skip: let the next Bind plugin
        bind it (if all skip, binding fails). Any other status, or a raised request
        failure: binding fails, Unreserve runs and the pod is requeued (an Error with
        backoff). A raised failure that may have been applied (a connection broken after
        sending, a timeout, a 5xx) is checked first: the scheduler reads the pod, and if
        it is bound to `node_name` the bind counts as done. So let such failures
        propagate rather than turning them into a status. Awaits freely; concurrent with
        other pods' cycles.
        """
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Informational, after the pod was bound (kube-scheduler PostBind): clean up
        what the plugin kept for it. Called in the binding cycle; cannot fail (an
        exception is logged and the pod stays bound). May await."""
        ...


# ---- abilities outside the cycles -------------------------------------------------------


@runtime_checkable
class NeedsInformers(Protocol):
    """Optional: a plugin that needs more resources watched than nodes and pods."""

    def informers(self) -> Sequence[InformerRequest[Any]]:
        """The resources to watch, and how to decode them. Called once when the profile
        is built, before the informers start; the scheduler waits for them to sync before
        scheduling, and the stores are then reachable through `Handle.store`. Their
        changes reach the queue as events (EnqueueExtensions)."""
        ...


@runtime_checkable
class BackgroundTask(Protocol):
    """Optional: a plugin with work of its own outside the cycles (evictions of
    asynchronous preemption, gang timers, releasing DRA reservations)."""

    async def run(self) -> None:
        """Started once, when this scheduler starts leading, in the scheduler's task
        group on the event loop; runs until cancelled (when leadership is lost or the
        scheduler stops), so it must handle cancellation and return promptly. It is the
        place for API calls a point decided on (the scheduling cycle must not await
        them). An exception it raises stops the scheduler: handle expected failures."""
        ...


# ---- The pod group cycle's extension points ---------------------------------------------
# kube-scheduler 1.37 framework/interface.go: PlacementGeneratePlugin, PlacementScorePlugin
# (with PlacementScoreExtensions) and PodGroupPostFilterPlugin. They are profile points
# (`plugins.placementGenerate`, `plugins.placementScore`, `plugins.podGroupPostFilter`),
# filled from multiPoint with every plugin that implements them, like any other point.
# All run on the event loop, inside one group cycle (asched.scheduler.groupcycle), which
# holds the scheduling cycle: no other pod or group is scheduled meanwhile, but the
# binding cycles of earlier pods go on and the informers keep delivering events.


@runtime_checkable
class CompositePlacementFeasiblePlugin(Protocol):
    """Optional, beside `placement_feasible`: judges a CompositePodGroup too (Go passes
    one PodGroupInfo of either kind to PlacementFeasible)."""

    def composite_placement_feasible(
        self, namespace: str, composite: str, scheduled: int, remaining: int
    ) -> Status | None:
        """Called by the group cycle (gate CompositePodGroup) before any child of the
        composite `namespace/composite` is tried and after each one, with how many children
        were placed (their own constraints met) and how many are still to be tried. The
        codes mean what they mean for `placement_feasible`. Read-only and cheap."""
        ...


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

    @property
    def state(self) -> CycleState:
        """The group cycle's own CycleState (Go's PodGroupCycleState), which every
        member's CycleState pointed at (`pod_group_cycle`) during the cycle: what plugins
        kept there for the group (DynamicResources' claims in flight, members' states)."""
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
