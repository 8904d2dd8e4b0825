"""NodeName: a pod that names its node (spec.nodeName) fits only that node.

Mirrors kube-scheduler plugins/nodename: Filter rejects other nodes with
UnschedulableAndUnresolvable "node(s) didn't match the requested node name"; the pod
is requeued when the node it names is added.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from asched.api import Pod
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns
from asched.framework.cycle_state import CycleState
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
)
from asched.framework.handle import Handle
from asched.framework.interfaces import EnqueueExtensions, FilterPlugin
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import NODE_NAME, SignFragment, SignResult
from asched.framework.status import Code, Status, error

NAME = "NodeName"

ERR_REASON = "node(s) didn't match the requested node name"

_REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,), NAME)


def fits(pod: Pod, node_name: str) -> bool:
    return not pod.node_name or pod.node_name == node_name


class NodeName(FilterPlugin, EnqueueExtensions):
    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """NodeName.SignPod."""
        return (SignFragment(NODE_NAME, pod.node_name),)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        wanted = pod.node_name
        return None if not wanted or wanted == node.name else _REJECT

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        wanted = pod.node_name
        if not wanted:
            return None
        infos = cols.infos
        passed = np.fromiter((infos[i].name == wanted for i in rows.tolist()), np.bool_, len(rows))
        return BatchVerdict.constant(passed, _REJECT)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # NodeName.EventsToRegister: a node add, without a hint (always Queue).
        return (ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),)


SPEC = PluginSpec(NAME, NodeName, None)
