"""The PodTopologySpread plugin: spreads matching pods evenly over topology domains.

Mirrors kube-scheduler's podtopologyspread (plugin.go). DoNotSchedule constraints are
enforced by PreFilter/Filter (with AddPod/RemovePod for preemption), ScheduleAnyway ones
scored by PreScore/Score/NormalizeScore. A pod without constraints of its own gets the
default constraints (System: hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway)
with a selector deduced from the Services and controller selecting it; no such selector
means no default spreading. PreFilter and PreScore answer Skip when nothing applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from asched.api import Node, Pod
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns, NodeRows, Unbatchable
from asched.framework.cycle_state import CycleState
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
    ScoreNormalizer,
    ScorePlugin,
)
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.signatures import SignResult, unsignable
from asched.framework.status import Status, error, skip
from asched.framework.types import NodeScore, PreFilterResult
from asched.plugins.nodememo import MemoCache
from asched.plugins.podtopologyspread import owners
from asched.plugins.podtopologyspread.args import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    Args,
)
from asched.plugins.podtopologyspread.constraints import (
    NAME,
    Constraint,
    build_constraints,
    node_has_all_keys,
)
from asched.plugins.podtopologyspread.counting import MemoEntry
from asched.plugins.podtopologyspread.filtering import (
    PRE_FILTER_KEY,
    PreFilterState,
    compute_pre_filter_state,
    filter_node,
    filter_rows,
    update_with_pod,
)
from asched.plugins.podtopologyspread.scoring import (
    PRE_SCORE_KEY,
    compute_pre_score_rows,
    compute_pre_score_state,
    normalize,
    normalize_rows,
)

_Q = QueueingHint.QUEUE
_SKIP = QueueingHint.QUEUE_SKIP
_UNSIGNABLE_OWN = unsignable("pods with topology constraints are not signable", NAME)
_UNSIGNABLE_DEFAULTS = unsignable("pods with default topology constraints are not signable", NAME)


class PodTopologySpread(
    PreFilterPlugin,
    FilterPlugin,
    PreFilterExtensions,
    PreScorePlugin,
    ScorePlugin,
    ScoreNormalizer,
    EnqueueExtensions,
):
    # Under the system default constraints every pod is refused (sign_pod).
    refuses_signing_often = True

    def __init__(self, args: Args | None, handle: Handle) -> None:
        self._args = args or Args()
        self._handle = handle
        self._defaults = self._args.effective_defaults()
        self._system_defaulted = self._args.defaulting_type == SYSTEM_DEFAULTING
        # Domain counts of recent pod shapes, refreshed per cycle from changed nodes only.
        self._memo: MemoCache[MemoEntry] = MemoCache()

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """PodTopologySpread.SignPod: spreading depends on where the other pods are, so a
        pod with constraints, its own or the profile's defaults, cannot be signed (the
        default profile's system defaults turn batching off for every pod)."""
        if pod.topology_spread_constraints:
            return _UNSIGNABLE_OWN
        if self._defaults:
            return _UNSIGNABLE_DEFAULTS
        return ()

    def informers(self) -> Sequence[InformerRequest[Any]]:
        # Only default spreading reads workloads (upstream sets its listers only then).
        return owners.REQUESTS if self._defaults else ()

    # ---- constraints ----------------------------------------------------------------
    def constraints(self, pod: Pod, action: str) -> tuple[Constraint, ...]:
        """The pod's constraints for `action`, or the defaults when it declares none."""
        if pod.topology_spread_constraints:
            return build_constraints(pod.topology_spread_constraints, pod.labels, action)
        if not any(c.when_unsatisfiable == action for c in self._defaults):
            return ()
        h = self._handle
        selector = owners.default_selector(
            pod,
            h.store(owners.SERVICES),
            h.store(owners.REPLICATION_CONTROLLERS),
            h.store(owners.REPLICA_SETS),
            h.store(owners.STATEFUL_SETS),
        )
        if selector.is_empty():
            return ()
        return build_constraints(self._defaults, pod.labels, action, selector)

    # ---- PreFilter / Filter ---------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, skip(NAME)
        # `nodes` is every node of the snapshot, as in kube-scheduler.
        state.write(PRE_FILTER_KEY, compute_pre_filter_state(constraints, pod, nodes, self._memo))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return error(f"reading {PRE_FILTER_KEY.name}: PreFilter did not run", NAME)
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        return filter_node(s, node)

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            raise Unbatchable  # the per-node path reports the Error
        return filter_rows(s, cols, rows)

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_schedule, pod_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_schedule, pod_to_remove, node_info, -1)

    def _update(
        self, state: CycleState, preemptor: Pod, changed: Pod, node_info: NodeInfo, delta: int
    ) -> Status | None:
        s: PreFilterState | None = state.get(PRE_FILTER_KEY)
        if s is None:
            return error(f"reading {PRE_FILTER_KEY.name}: PreFilter did not run", NAME)
        update_with_pod(s, changed, preemptor, node_info.node, delta)
        return None

    # ---- PreScore / Score -----------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self._handle.snapshot.node_infos()
        if not all_nodes:
            return skip(NAME)
        constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return skip(NAME)
        # System defaults do not require every key, so zoneless nodes still spread by host.
        require_all = bool(pod.topology_spread_constraints) or not self._system_defaulted
        if isinstance(nodes, NodeRows) and all(
            c.topology_key != LABEL_HOSTNAME for c in constraints
        ):
            s = compute_pre_score_rows(
                constraints,
                pod,
                nodes,
                all_nodes,
                require_all_topologies=require_all,
                memo=self._memo,
            )
        else:
            s = compute_pre_score_state(
                constraints,
                pod,
                nodes,
                all_nodes,
                require_all_topologies=require_all,
                memo=self._memo,
            )
        state.write(PRE_SCORE_KEY, s)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return state.read(PRE_SCORE_KEY).score_map().get(node_info.name, 0)

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        s = state.read(PRE_SCORE_KEY)
        if s.rows is not None and s.row_scores is not None and np.array_equal(s.rows, rows):
            return s.row_scores
        names, scores = cols.names, s.score_map()
        return np.fromiter((scores.get(names[r], 0) for r in rows.tolist()), np.int64, len(rows))

    def normalize_batch(self, state: CycleState, pod: Pod, scores: Int64s) -> Int64s:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return scores
        out = normalize_rows(s, scores)
        if out is None:
            raise Unbatchable  # PreScore ran node by node: normalize by name
        return out

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        s = state.get(PRE_SCORE_KEY)
        if s is not None:
            normalize(s, scores)
        return None

    # ---- queueing hints -------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        node_actions = (
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT
        )
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, pod_actions), self._hint_pod_change
            ),
            # The rejected pod itself: a new toleration (matters under nodeTaintsPolicy
            # Honor) or new labels (its own constraints' selectors may count it now).
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.UNSCHEDULED_POD,
                    ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL,
                ),
                self._hint_target_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, node_actions), self._hint_node_change
            ),
        )

    def _hint_target_pod_change(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """isSchedulableAfterTargetPodChange."""
        if not isinstance(old, Pod) or not isinstance(new, Pod):
            return _Q
        if new.uid != pod.uid:
            return _SKIP
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if old.tolerations != new.tolerations and any(c.honor_node_taints for c in constraints):
            return _Q
        return _label_change(old, new, constraints)

    def _hint_pod_change(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """isSchedulableAfterAssignedPodChange: assigned or nominated pods of the namespace."""
        old_pod = old if isinstance(old, Pod) else None
        new_pod = new if isinstance(new, Pod) else None
        if old_pod is None and new_pod is None:
            return _Q
        for p in (old_pod, new_pod):
            if p is not None and not _involved(p, pod):
                return _SKIP
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if old_pod is not None and new_pod is not None:
            return _label_change(old_pod, new_pod, constraints)
        p = new_pod if new_pod is not None else old_pod
        assert p is not None
        return _Q if any(c.matches(p.labels) for c in constraints) else _SKIP

    def _hint_node_change(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """isSchedulableAfterNodeChange: nodes carrying the constraints' topology keys."""
        old_node = old if isinstance(old, Node) else None
        new_node = new if isinstance(new, Node) else None
        if old_node is None and new_node is None:
            return _Q
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        old_match = old_node is not None and node_has_all_keys(old_node.labels, constraints)
        new_match = new_node is not None and node_has_all_keys(new_node.labels, constraints)
        if old_node is not None and new_node is not None:
            if old_match != new_match:
                return _Q
            if new_match and (
                any(
                    old_node.labels.get(c.topology_key) != new_node.labels.get(c.topology_key)
                    for c in constraints
                )
                or old_node.taints != new_node.taints
            ):
                return _Q
            return _SKIP
        return _Q if (new_match if new_node is not None else old_match) else _SKIP


def _involved(other: Pod, pod: Pod) -> bool:
    """involvedInTopologySpreading: assigned or nominated, in the pod's namespace."""
    return bool(other.node_name or other.nominated_node_name) and other.namespace == pod.namespace


def _label_change(old: Pod, new: Pod, constraints: Sequence[Constraint]) -> QueueingHint:
    """isSchedulableAfterPodLabelChange: queue when some constraint's selector matches one
    version of the labels and not the other."""
    if old.labels == new.labels:
        return _SKIP
    if any(c.matches(old.labels) != c.matches(new.labels) for c in constraints):
        return _Q
    return _SKIP
