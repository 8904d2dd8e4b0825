"""NodeDeclaredFeatures: keep a pod off nodes that do not declare the features it needs.

Mirrors kube-scheduler v1.37.2 plugins/nodedeclaredfeatures (GA and locked on in 1.37,
appended to the default plugins after DefaultBinder by applyFeatureGates):
- PreFilter infers the pod's requirements (component-helpers nodedeclaredfeatures
  InferForPodScheduling, asched.api.nodefeatures) and answers Skip when there are none;
- Filter rejects, UnschedulableAndUnresolvable "node(s) didn't match Pod's required
  features", a node whose `status.declaredFeatures` (known names only) lack one;
- Events: a node added or its declared features changed (isSchedulableAfterNodeChange:
  skip when the list is unchanged), and updates of the pod itself
  (isSchedulableAfterTargetPodUpdate: queue only when its requirements changed).
The InPlacePodVerticalScalingSchedulerPreemption branch (skip for a Deferred resize) is
behind an alpha gate, off in 1.37, and not mirrored.
"""

from __future__ import annotations

from collections.abc import Sequence

from asched.api import Pod
from asched.api.nodefeatures import known_features
from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.handle import Handle
from asched.framework.interfaces import EnqueueExtensions, FilterPlugin, PreFilterPlugin
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import FEATURES, SignFragment, SignResult
from asched.framework.status import Code, Status, error, skip
from asched.framework.types import PreFilterResult
from asched.plugins.helpers import as_node, as_pod

NAME = "NodeDeclaredFeatures"

ERR_REASON_UNSATISFIED = "node(s) didn't match Pod's required features"

_PRE_FILTER_KEY: StateKey[frozenset[str]] = StateKey("PreFilter" + NAME)
_REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSATISFIED,), NAME)
_SKIP = skip(NAME)


class NodeDeclaredFeatures(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """NodeDeclaredFeatures.SignPod: the features the pod requires."""
        return (SignFragment(FEATURES, sorted(pod.required_features)),)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.required_features:
            return None, _SKIP
        state.write(_PRE_FILTER_KEY, pod.required_features)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        required = state.get(_PRE_FILTER_KEY)
        if required is None:
            return error(f'error reading "PreFilter{NAME}" from cycle-state: not found', NAME)
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        if required <= known_features(node.declared_features):
            return None
        return _REJECT

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE
                ),
                self._after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE),
                self._after_pod_update,
            ),
        )

    def _after_node_change(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        modified = as_node(new)
        if modified is None:
            return QueueingHint.QUEUE
        original = as_node(old)
        if original is not None and original.declared_features == modified.declared_features:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def _after_pod_update(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        original, modified = as_pod(old), as_pod(new)
        if original is None or modified is None:
            return QueueingHint.QUEUE
        if original.required_features == modified.required_features:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


SPEC = PluginSpec(NAME, NodeDeclaredFeatures, None)
