"""Cluster events and queueing hints: what can make a rejected pod schedulable again.

Mirrors kube-scheduler's framework.ClusterEvent / QueueingHint. A plugin that rejects pods
registers the events that may change its verdict; the queue moves a pod out of the
unschedulable pool only on an event registered by a plugin that rejected it, and only if
that plugin's hint (when it has one) says Queue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntFlag, StrEnum

from asched.api import Pod


class EventResource(StrEnum):
    # Changes to pods other than the one being scheduled (assigned or not).
    POD = "Pod"
    # Updates to the unschedulable pod itself.
    UNSCHEDULED_POD = "UnschedulablePod"
    NODE = "Node"
    # scheduler-plugins' scheduling.x-k8s.io PodGroup.
    POD_GROUP = "PodGroup"
    # Kubernetes 1.37's native scheduling.k8s.io/v1beta1 PodGroup (Go's fwk.PodGroup).
    SCHEDULING_POD_GROUP = "PodGroup.scheduling.k8s.io"
    WORKLOAD = "Workload"
    # scheduling.k8s.io/v1alpha3 CompositePodGroup (Go's fwk.CompositePodGroup).
    COMPOSITE_POD_GROUP = "CompositePodGroup"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    VOLUME_ATTACHMENT = "VolumeAttachment"
    NAMESPACE = "Namespace"
    POD_DISRUPTION_BUDGET = "PodDisruptionBudget"
    # Workload objects whose selectors PodTopologySpread's default constraints read.
    SERVICE = "Service"
    REPLICATION_CONTROLLER = "ReplicationController"
    REPLICA_SET = "ReplicaSet"
    STATEFUL_SET = "StatefulSet"
    # resource.k8s.io/v1 (Go's fwk.ResourceClaim, fwk.DeviceClass, fwk.ResourceSlice).
    RESOURCE_CLAIM = "ResourceClaim"
    DEVICE_CLASS = "DeviceClass"
    RESOURCE_SLICE = "ResourceSlice"
    WILDCARD = "*"


class ActionType(IntFlag):
    ADD = 1
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    # A pod's requests went down, or it finished (frees resources like a delete).
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    # 1 << 11 is free: Go reports an uncordon as UpdateNodeTaint
    # (extractNodeSpecUnschedulableChange).
    # Any other update (objects without a finer classification, such as PodGroups).
    UPDATE_OTHER = 1 << 12
    # status.declaredFeatures changed (kube-scheduler UpdateNodeDeclaredFeature).
    UPDATE_NODE_DECLARED_FEATURE = 1 << 13
    # status.resourceClaimStatuses changed (kube-scheduler UpdatePodGeneratedResourceClaim).
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 14

    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_OTHER
        | UPDATE_NODE_DECLARED_FEATURE
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
    )
    ALL = ADD | DELETE | UPDATE


@dataclass(slots=True, frozen=True)
class ClusterEvent:
    resource: EventResource
    action: ActionType
    label: str = ""

    def matches(self, incoming: ClusterEvent) -> bool:
        """Does this registered event cover the incoming one? (kube-scheduler eventMatch)."""
        if self.resource not in (EventResource.WILDCARD, incoming.resource):
            return False
        return bool(self.action & incoming.action)

    def __str__(self) -> str:
        return self.label or f"{self.resource.value}{self.action.name or int(self.action)}"


class QueueingHint(Enum):
    QUEUE_SKIP = 0
    QUEUE = 1


# (pod that was rejected, old object or None, new object or None) -> hint.
QueueingHintFn = Callable[[Pod, object | None, object | None], QueueingHint]

# (old object or None, new object or None) -> the native PodGroups ("namespace/name") whose
# pods the event may help, or None for any pod. See ClusterEventWithHint.scope.
EventScopeFn = Callable[[object | None, object | None], frozenset[str] | None]


@dataclass(slots=True, frozen=True)
class ClusterEventWithHint:
    """One registered event, its queueing hint, and optionally the event's scope.

    `scope` narrows which waiting pods the queue asks at all: only pods of the PodGroups it
    names (spec.schedulingGroup), or none for an empty set. It must never leave out a pod
    whose hint would answer Queue; it only saves asking pods that would answer QueueSkip.
    kube-scheduler needs no such thing because its queue holds a whole PodGroup as one
    entry; asched's queue holds pods, and without a scope one new member of a 5000-pod
    gang would ask every gated pod of every gang (quadratic in the gang's size).
    """

    event: ClusterEvent
    hint: QueueingHintFn | None = None
    scope: EventScopeFn | None = None


# Events the scheduler itself reports to the queue.
ASSIGNED_POD_ADD = ClusterEvent(EventResource.POD, ActionType.ADD, "AssignedPodAdd")
# A new pending pod (framework.EventUnscheduledPodAdd), sent with GenericWorkload on: it
# may complete a gang whose members wait at PreEnqueue.
UNSCHEDULED_POD_ADD = ClusterEvent(
    EventResource.UNSCHEDULED_POD, ActionType.ADD, "UnscheduledPodAdd"
)
ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.POD, ActionType.UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.POD, ActionType.DELETE, "AssignedPodDelete")
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(EventResource.NODE, ActionType.DELETE, "NodeDelete")
# Used by the periodic flush and on errors: every pod is moved regardless of hints.
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")
