"""NodeUnschedulable: keep pods off cordoned nodes unless they tolerate the cordon.

Mirrors kube-scheduler plugins/nodeunschedulable: a node with spec.unschedulable is
rejected with UnschedulableAndUnresolvable "node(s) were unschedulable" unless the pod
tolerates the `node.kubernetes.io/unschedulable:NoSchedule` taint. Requeued when a node
is added schedulable or uncordoned, or when the pod gains that toleration.
"""

from __future__ import annotations

from collections.abc import Sequence

from asched.api import Pod, Taint
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns
from asched.framework.cycle_state import CycleState
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.handle import Handle
from asched.framework.interfaces import EnqueueExtensions, FilterPlugin
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import TOLERATIONS, SignFragment, SignResult, tolerations
from asched.framework.status import Code, Status, error
from asched.plugins.helpers import NO_SCHEDULE, as_node, as_pod, tolerations_tolerate

NAME = "NodeUnschedulable"

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)
_REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,), NAME)


class NodeUnschedulable(FilterPlugin, EnqueueExtensions):
    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """NodeUnschedulable.SignPod."""
        return (SignFragment(TOLERATIONS, tolerations(pod)),)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        if not node.unschedulable:
            return None
        if tolerations_tolerate(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return _REJECT

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        unschedulable = cols.unschedulable[rows]
        if not unschedulable.any() or tolerations_tolerate(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return BatchVerdict.constant(~unschedulable, _REJECT)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # NodeUnschedulable.EventsToRegister. A node becoming schedulable is reported as
        # UpdateNodeTaint (extractNodeSpecUnschedulableChange), as in Go.
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_TAINT
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, node_actions), self._after_node_change
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
        if modified.unschedulable:
            return QueueingHint.QUEUE_SKIP
        if original is None or original.unschedulable:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_toleration_change(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        modified = as_pod(new)
        if modified is None or modified.uid != pod.uid:
            return QueueingHint.QUEUE_SKIP
        # Tolerations can only be added: if the pod tolerates the cordon now, it did
        # not when this plugin rejected it.
        if tolerations_tolerate(modified.tolerations, _UNSCHEDULABLE_TAINT):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


SPEC = PluginSpec(NAME, NodeUnschedulable, None)
