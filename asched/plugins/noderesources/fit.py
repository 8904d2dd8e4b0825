"""NodeResourcesFit: does the node have room for the pod's requests, and how to rank it.

Mirrors kube-scheduler v1.37 plugins/noderesources/fit.go:
- PreFilter stores the pod's requests (`Pod.requests` already aggregates containers,
  init containers, sidecars, pod-level requests and overhead like resource.PodRequests).
- Filter (fitsRequest) collects every insufficient resource: "Too many pods" when the
  node's pod slots are full, then "Insufficient cpu|memory|ephemeral-storage|<name>" for
  each requested (non-zero) resource the node cannot fit. A pod requesting nothing only
  needs a pod slot. ignoredResources / ignoredResourceGroups skip extended resources
  only. The code is Unschedulable, or UnschedulableAndUnresolvable when some request
  exceeds the node's whole allocatable (preemption cannot help there).
- Score uses the configured strategy (LeastAllocated by default, MostAllocated,
  RequestedToCapacityRatio) over the configured resources, with kube-scheduler's
  non-zero defaults for unset cpu/memory requests; no normalization.
- Events: assigned pods deleted or scaled down, nodes added or with more allocatable,
  each with the queueing hint of isSchedulableAfterPodEvent / isSchedulableAfterNodeChange.

DRA-backed extended resources (DRAExtendedResource, GA in 1.37): a requested resource the
node does not advertise (allocatable 0) but a DeviceClass provides is left to
DynamicResources (shouldDelegateResourceToDRA), in Filter and in the node hints; a
DeviceClass added or changed requeues pods that request its resource
(isSchedulableAfterDeviceClassEvent). A scoring strategy that lists such a resource scores
it, on nodes that do not advertise it, by the node's devices of the class
(calculateDRAExtendedResourceAllocatableRequest, dra_totals.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from asched.api import Node, Pod
from asched.api.dra import DEVICE_CLASS_RESOURCE_PREFIX, DeviceClass
from asched.framework.columns import BatchVerdict, Bools, Int64s, NodeColumns, Unbatchable
from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import SignResult
from asched.framework.status import Code, Status, error
from asched.framework.types import PreFilterResult
from asched.plugins.deviceclasses import (
    DEVICE_CLASSES,
    class_provided,
)
from asched.plugins.helpers import as_node, as_pod, is_extended_resource_name
from asched.plugins.noderesources import array_scorers, scorers
from asched.plugins.noderesources.allocation import (
    ScoredResource,
    allocatable_and_requested,
    is_cpu_memory,
    pod_requests,
    scored_resources,
)
from asched.plugins.noderesources.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    FitArgs,
    ScoringStrategy,
)
from asched.plugins.noderesources.dra_totals import DraTotals, dra_totals, for_node
from asched.plugins.noderesources.dra_totals import informers as dra_informers
from asched.plugins.noderesources.rowscores import RowScores
from asched.plugins.noderesources.signing import sign_requests

NAME = "NodeResourcesFit"
Args = FitArgs

REASON_TOO_MANY_PODS = "Too many pods"
REASON_INSUFFICIENT_CPU = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL = "Insufficient ephemeral-storage"

_PRE_FILTER_KEY_NAME = "PreFilter" + NAME
_PRE_SCORE_KEY_NAME = "PreScore" + NAME
# Distinct statuses are few (reason combinations); reuse them instead of allocating one
# per rejected node. Bounded in case pods bring many different extended resources.
_STATUS_CACHE_LIMIT = 256


@dataclass(frozen=True, slots=True)
class _Request:
    """The pod's requests as Filter checks them; extended resources already filtered."""

    milli_cpu: int
    memory: int
    ephemeral_storage: int
    # (name, quantity, reason) for requested scalar resources Filter must check.
    scalars: tuple[tuple[str, int, str], ...]
    # Requested resources a DeviceClass provides: on a node without them, DRA's.
    delegable: frozenset[str] = frozenset()


_PRE_FILTER_KEY: StateKey[_Request] = StateKey(_PRE_FILTER_KEY_NAME)
_PRE_SCORE_KEY: StateKey[tuple[int, ...]] = StateKey(_PRE_SCORE_KEY_NAME)
_DRA_KEY: StateKey[DraTotals] = StateKey("PreScoreDRA" + NAME)


def build_scorer(strategy: ScoringStrategy) -> scorers.Scorer:
    weights = tuple(r.weight for r in strategy.resources)
    if strategy.type == LEAST_ALLOCATED:
        return scorers.LeastAllocated(weights)
    if strategy.type == MOST_ALLOCATED:
        return scorers.MostAllocated(weights)
    return scorers.RequestedToCapacityRatio(weights, strategy.scaled_shape())


class Fit(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    def __init__(self, args: FitArgs | None, handle: Handle) -> None:
        self._args = args or FitArgs()
        self._handle = handle
        self._ignored = frozenset(self._args.ignored_resources)
        self._ignored_groups = frozenset(self._args.ignored_resource_groups)
        self._resources: tuple[ScoredResource, ...] = scored_resources(
            self._args.scoring_strategy.resources
        )
        self._scorer = build_scorer(self._args.scoring_strategy)
        self._cpu_memory = is_cpu_memory(self._resources)
        self._statuses: dict[tuple[bool, tuple[str, ...]], Status] = {}
        # The columnar score, for the strategies that have one over cpu and memory.
        self._array_pair: array_scorers.PairScorer | None = None
        if self._cpu_memory and self._args.scoring_strategy.type == LEAST_ALLOCATED:
            self._array_pair = array_scorers.least_allocated_pair
        elif self._cpu_memory and self._args.scoring_strategy.type == MOST_ALLOCATED:
            self._array_pair = array_scorers.most_allocated_pair
        elif self._cpu_memory and isinstance(self._scorer, scorers.RequestedToCapacityRatio):
            self._array_pair = array_scorers.requested_to_capacity_pair(self._scorer.raw)
        weights = [r.weight for r in self._args.scoring_strategy.resources]
        self._w0, self._w1 = (*weights, 0, 0)[:2]
        self._row_scores = RowScores()

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """Fit.SignPod."""
        return sign_requests(pod, self._handle, NAME)

    # --- PreFilter / Filter ------------------------------------------------------

    def _ignored_extended(self, name: str) -> bool:
        if not is_extended_resource_name(name):
            return False
        return name in self._ignored or name.split("/", 1)[0] in self._ignored_groups

    def informers(self) -> Sequence[InformerRequest[Any]]:
        scored = dra_informers([r.name for r in self._resources])
        return (DEVICE_CLASSES, *(i for i in scored if i is not DEVICE_CLASSES))

    def _delegable(self, names: Iterable[str]) -> frozenset[str]:
        """The names a DeviceClass provides (read only for pods that request one)."""
        return class_provided(self._handle.store(DEVICE_CLASSES), names)

    def _request(self, pod: Pod, *, ignoring: bool = True) -> _Request:
        """The pod's requests for Filter (ignored extended resources left out) or, with
        `ignoring` off, every requested resource (what the node hints compare)."""
        r = pod.requests
        scalars = tuple(
            (name, q, f"Insufficient {name}")
            for name, q in r.scalar.items()
            if q != 0 and not (ignoring and self._ignored_extended(name))
        )
        if not scalars:
            return _Request(r.milli_cpu, r.memory, r.ephemeral_storage, scalars)
        delegable = self._delegable(name for name, _, _ in scalars)
        return _Request(r.milli_cpu, r.memory, r.ephemeral_storage, scalars, delegable)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(_PRE_FILTER_KEY, self._request(pod))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(_PRE_FILTER_KEY)
        if s is None:
            return error(f'error reading "{_PRE_FILTER_KEY_NAME}" from cycleState', NAME)
        alloc, req = node_info.allocatable, node_info.requested
        if (
            not s.scalars
            and len(node_info.pods) < alloc.allowed_pods
            and s.milli_cpu <= alloc.milli_cpu - req.milli_cpu
            and s.memory <= alloc.memory - req.memory
            and s.ephemeral_storage <= alloc.ephemeral_storage - req.ephemeral_storage
        ):
            # Fits with room to spare: the common case, decided in one expression.
            return None
        short = fits_request(s, node_info)
        if short is None:
            return None
        return self._status(short[1], tuple(short[0]))

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        """filter() for many nodes: the same comparisons as fits_request, over columns."""
        s = state.get(_PRE_FILTER_KEY)
        if s is None or s.scalars:
            # Extended resources are not columns; the per-node path checks them.
            raise Unbatchable
        # A pass over every node (the usual one: its rows are all rows, rotated) computes
        # on the whole columns and gathers the answer once, instead of gathering each
        # of seven columns first.
        every = len(rows) == len(cols)
        short = _short(s, cols, None if every else rows)
        if not short.any():
            return None
        if every:
            short = short[rows]
        infos = cols.infos

        def status_at(k: int) -> Status:
            found = fits_request(s, infos[int(rows[k])])
            assert found is not None, "filter_batch and fits_request disagree"
            return self._status(found[1], tuple(found[0]))

        return BatchVerdict(~short, status_at)

    def _status(self, unresolvable: bool, reasons: tuple[str, ...]) -> Status:
        key = (unresolvable, reasons)
        st = self._statuses.get(key)
        if st is None:
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
            st = Status(code, reasons, NAME)
            if len(self._statuses) >= _STATUS_CACHE_LIMIT:
                self._statuses.clear()
            self._statuses[key] = st
        return st

    # --- PreScore / Score --------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_PRE_SCORE_KEY, pod_requests(pod, self._resources, use_requested=False))
        if not self._cpu_memory:
            totals = dra_totals(self._handle, [r.name for r in self._resources])
            if totals is not None:
                state.write(_DRA_KEY, totals)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        requests = state.get(_PRE_SCORE_KEY)
        totals = state.get(_DRA_KEY)
        if requests is None:
            # PreScore disabled in this profile: compute here, as kube-scheduler does.
            requests = pod_requests(pod, self._resources, use_requested=False)
            totals = dra_totals(self._handle, [r.name for r in self._resources])
        if self._cpu_memory:
            # The default resources: score without building per-resource vectors.
            alloc, base = node_info.allocatable, node_info.non_zero_requested
            return self._scorer.pair(
                base.milli_cpu + requests[0],
                alloc.milli_cpu,
                base.memory + requests[1],
                alloc.memory,
            )
        allocatable, requested = allocatable_and_requested(
            node_info,
            self._resources,
            requests,
            use_requested=False,
            dra=for_node(totals, node_info.node),
        )
        return self._scorer(requested, allocatable)

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        pair = self._array_pair
        if pair is None:
            raise Unbatchable  # resources beyond cpu+memory
        requests = state.get(_PRE_SCORE_KEY)
        if requests is None:
            requests = pod_requests(pod, self._resources, use_requested=False)
        p0, p1 = requests
        w0, w1, positive = self._w0, self._w1, cols.cpu_memory_everywhere

        def compute(at: Int64s) -> Int64s:
            return pair(
                cols.nz_cpu[at] + p0,
                cols.alloc_cpu[at],
                cols.nz_mem[at] + p1,
                cols.alloc_mem[at],
                w0=w0,
                w1=w1,
                positive=positive,
            )

        # Only the rows that changed since a pod with these requests was scored.
        return self._row_scores.scores(
            (p0, p1), cols, rows, per_rows=compute, per_node=lambda ni: self.score(state, pod, ni)
        )

    # --- queueing hints ----------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Fit.EventsToRegister, in its order. InPlacePodVerticalScaling is GA, so an
        # assigned pod scaling down frees room like a delete, and the pod's own
        # scale-down (an UnschedulablePod event in asched, TargetPod in Go) always counts.
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                self._after_assigned_pod_delete,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                ),
                self._after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
                self._after_device_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN),
                self._after_assigned_pod_scale_down,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCALE_DOWN),
                self._after_target_pod_scale_down,
            ),
        )

    def _after_assigned_pod_delete(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """isSchedulableAfterAssignedPodDelete: any scheduled or nominated pod's delete."""
        deleted = as_pod(old)
        if deleted is None:
            return QueueingHint.QUEUE
        if not deleted.node_name and not deleted.nominated_node_name:
            # An unscheduled pod held nothing.
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def _after_assigned_pod_scale_down(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """isSchedulableAfterAssignedPodScaleDown."""
        original, modified = as_pod(old), as_pod(new)
        if original is None or modified is None:
            return QueueingHint.QUEUE
        if scaled_down_for(pod, original, modified):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_target_pod_scale_down(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """isSchedulableAfterTargetPodScaleDown: the pod itself asks for less."""
        return QueueingHint.QUEUE

    def _after_node_change(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """isSchedulableAfterNodeChange."""
        modified = as_node(new)
        if modified is None:
            return QueueingHint.QUEUE
        # isFit and haveAnyRequestedResourcesIncreased take computePodResourceRequest:
        # every requested resource, the ignored ones too (Filter is what ignores them).
        request = self._request(pod, ignoring=False)
        if not fits_empty_node(request, modified):
            return QueueingHint.QUEUE_SKIP
        original = as_node(old)
        if original is None:
            return QueueingHint.QUEUE
        if requested_resources_increased(request, original, modified):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_device_class_change(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """isSchedulableAfterDeviceClassEvent: a class now provides a resource the pod
        requests (its extendedResourceName changed, or, when added, its implicit name)."""
        modified = new if isinstance(new, DeviceClass) else None
        if modified is None:
            return QueueingHint.QUEUE
        requested = pod.requests.scalar
        original = old if isinstance(old, DeviceClass) else None
        if original is not None:
            if original.extended_resource_name == modified.extended_resource_name:
                return QueueingHint.QUEUE_SKIP
        elif DEVICE_CLASS_RESOURCE_PREFIX + modified.name in requested:
            return QueueingHint.QUEUE
        if modified.extended_resource_name and modified.extended_resource_name in requested:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def fits_request(s: _Request, node_info: NodeInfo) -> tuple[list[str], bool] | None:
    """kube-scheduler fitsRequest: None when the pod fits, else (reasons, unresolvable).

    The common outcome (it fits) is decided without allocating anything.
    """
    alloc = node_info.allocatable
    req = node_info.requested
    too_many = len(node_info.pods) + 1 > alloc.allowed_pods
    cpu, mem, eph = s.milli_cpu, s.memory, s.ephemeral_storage
    cpu_short = cpu > 0 and cpu > alloc.milli_cpu - req.milli_cpu
    mem_short = mem > 0 and mem > alloc.memory - req.memory
    eph_short = eph > 0 and eph > alloc.ephemeral_storage - req.ephemeral_storage
    short_scalars = (
        [
            (reason, q > alloc.scalar.get(name, 0))
            for name, q, reason in s.scalars
            if q > alloc.scalar.get(name, 0) - req.scalar.get(name, 0)
            and not _delegated(s, name, alloc.scalar.get(name, 0))
        ]
        if s.scalars
        else None
    )
    if not (too_many or cpu_short or mem_short or eph_short or short_scalars):
        return None
    reasons: list[str] = []
    unresolvable = False
    if too_many:
        reasons.append(REASON_TOO_MANY_PODS)
    if cpu_short:
        reasons.append(REASON_INSUFFICIENT_CPU)
        unresolvable = cpu > alloc.milli_cpu
    if mem_short:
        reasons.append(REASON_INSUFFICIENT_MEMORY)
        unresolvable = unresolvable or mem > alloc.memory
    if eph_short:
        reasons.append(REASON_INSUFFICIENT_EPHEMERAL)
        unresolvable = unresolvable or eph > alloc.ephemeral_storage
    for reason, beyond_node in short_scalars or ():
        reasons.append(reason)
        unresolvable = unresolvable or beyond_node
    return reasons, unresolvable


def _short(s: _Request, cols: NodeColumns, rows: Int64s | None) -> Bools:
    """Where the pod does not fit: fits_request's comparisons over columns (all of them
    when `rows` is None)."""

    def col(a: Int64s) -> Int64s:
        return a if rows is None else a[rows]

    short = col(cols.pod_count) + 1 > col(cols.alloc_pods)
    if s.milli_cpu > 0:
        short |= s.milli_cpu > col(cols.alloc_cpu) - col(cols.req_cpu)
    if s.memory > 0:
        short |= s.memory > col(cols.alloc_mem) - col(cols.req_mem)
    if s.ephemeral_storage > 0:
        short |= s.ephemeral_storage > col(cols.alloc_eph) - col(cols.req_eph)
    return short


def _delegated(s: _Request, name: str, allocatable: int) -> bool:
    """shouldDelegateResourceToDRA: the node has none, and a DeviceClass provides it."""
    return allocatable <= 0 and name in s.delegable


def fits_empty_node(request: _Request, node: Node) -> bool:
    """isFit: would the pod fit this node if nothing ran on it?"""
    alloc = node.allocatable
    if alloc.allowed_pods < 1:
        return False
    if request.milli_cpu > alloc.milli_cpu or request.memory > alloc.memory:
        return False
    if request.ephemeral_storage > alloc.ephemeral_storage:
        return False
    return all(
        q <= alloc.scalar.get(name, 0) or _delegated(request, name, alloc.scalar.get(name, 0))
        for name, q, _ in request.scalars
    )


def requested_resources_increased(request: _Request, old: Node, new: Node) -> bool:
    """haveAnyRequestedResourcesIncreased: more pod slots, or more of something requested."""
    a, b = old.allocatable, new.allocatable
    if b.allowed_pods > a.allowed_pods:
        return True
    if request.milli_cpu > 0 and b.milli_cpu > a.milli_cpu:
        return True
    if request.memory > 0 and b.memory > a.memory:
        return True
    if request.ephemeral_storage > 0 and b.ephemeral_storage > a.ephemeral_storage:
        return True
    return any(b.scalar.get(n, 0) > a.scalar.get(n, 0) for n, _, _ in request.scalars)


def scaled_down_for(target: Pod, original: Pod, modified: Pod) -> bool:
    """haveEnoughRelevantResourcesDecreased: did a resource the target requests go down?"""
    if not modified.node_name:
        # An unscheduled pod frees nothing by shrinking.
        return False
    want, before, after = target.requests, original.requests, modified.requests
    if want.milli_cpu and before.milli_cpu > after.milli_cpu:
        return True
    if want.memory and before.memory > after.memory:
        return True
    if want.ephemeral_storage and before.ephemeral_storage > after.ephemeral_storage:
        return True
    return any(
        q and before.scalar.get(n, 0) > after.scalar.get(n, 0) for n, q in want.scalar.items()
    )


SPEC = PluginSpec(NAME, Fit, FitArgs)
