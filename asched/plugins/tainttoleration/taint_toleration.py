"""TaintToleration: nodes' taints against the pod's tolerations.

Mirrors kube-scheduler v1.37 plugins/tainttoleration:
- Filter rejects a node with a NoSchedule or NoExecute taint the pod does not tolerate,
  UnschedulableAndUnresolvable. The reason is the generic "node(s) had untolerated
  taint(s)": since v1.35 (kubernetes#134740) kube-scheduler keeps taint keys and values,
  which may be sensitive, out of pod status; the taint goes to the debug log instead.
- Score counts the PreferNoSchedule taints not tolerated by the pod's tolerations whose
  effect is PreferNoSchedule or empty; NormalizeScore reverses it (fewest wins 100).
- Events: node added or with changed taints (hint: it went from untolerated to
  tolerated), and tolerations added to the pod itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import structlog

from asched.api import Pod, Toleration
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns
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
    PreScorePlugin,
    ScoreNormalizer,
    ScorePlugin,
)
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import TOLERATIONS, SignFragment, SignResult, tolerations
from asched.framework.status import Code, Status, error
from asched.framework.types import MAX_NODE_SCORE, NodeScore
from asched.plugins.helpers import (
    DO_NOT_SCHEDULE_EFFECTS,
    PREFER_NO_SCHEDULE,
    as_node,
    as_pod,
    default_normalize_score,
    default_normalize_scores,
    find_untolerated_taint,
    tolerations_tolerate,
)

NAME = "TaintToleration"

ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

_REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNTOLERATED,), NAME)
_PRE_SCORE_KEY: StateKey[tuple[Toleration, ...]] = StateKey("PreScore" + NAME)

log = structlog.get_logger(__name__)


def prefer_no_schedule_tolerations(pod: Pod) -> tuple[Toleration, ...]:
    """Tolerations that can match PreferNoSchedule taints (an empty effect matches all)."""
    return tuple(t for t in pod.tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


class TaintToleration(
    FilterPlugin, PreScorePlugin, ScorePlugin, ScoreNormalizer, EnqueueExtensions
):
    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """TaintToleration.SignPod."""
        return (SignFragment(TOLERATIONS, tolerations(pod)),)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        if not node.taints:
            return None
        taint = find_untolerated_taint(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
        if taint is None:
            return None
        log.debug(
            "untolerated_taint",
            node=node.name,
            pod=pod.key,
            taint_key=taint.key,
            taint_value=taint.value,
            taint_effect=taint.effect,
        )
        return _REJECT

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        """Only nodes with a NoSchedule/NoExecute taint can fail; those run filter()."""
        tainted = np.flatnonzero(cols.hard_taints[rows])
        if not tainted.size:
            return None
        passed = np.ones(len(rows), dtype=np.bool_)
        infos = cols.infos
        for k in tainted.tolist():
            passed[k] = self.filter(state, pod, infos[int(rows[k])]) is None
        return BatchVerdict.constant(passed, _REJECT)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_PRE_SCORE_KEY, prefer_no_schedule_tolerations(pod))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        if node is None:
            raise LookupError(f"node {node_info.name!r} has no Node object")
        if not node.taints:
            return 0
        tolerations = state.get(_PRE_SCORE_KEY)
        if tolerations is None:
            tolerations = prefer_no_schedule_tolerations(pod)
        return sum(
            1
            for taint in node.taints
            if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate(tolerations, taint)
        )

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        """Only nodes with a PreferNoSchedule taint can score above 0."""
        scores = np.zeros(len(rows), dtype=np.int64)
        infos = cols.infos
        for k in np.flatnonzero(cols.prefer_taints[rows]).tolist():
            scores[k] = self.score(state, pod, infos[int(rows[k])])
        return scores

    def normalize_batch(self, state: CycleState, pod: Pod, scores: Int64s) -> Int64s:
        return default_normalize_scores(MAX_NODE_SCORE, True, scores)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self._after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATION),
                self._after_toleration_change,
            ),
        )

    def _after_node_change(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        modified = as_node(new)
        if modified is None:
            return QueueingHint.QUEUE
        original = as_node(old)
        was_untolerated = (
            original is None
            or find_untolerated_taint(original.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
            is not None
        )
        is_untolerated = (
            find_untolerated_taint(modified.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
            is not None
        )
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_toleration_change(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        modified = as_pod(new)
        if modified is not None and modified.uid == pod.uid:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


SPEC = PluginSpec(NAME, TaintToleration, None)
