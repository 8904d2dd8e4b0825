"""VolumeZone: a pod's bound PVs carry zone/region labels; the node must be in one of them.

Follows kube-scheduler's volumezone plugin (volume_zone.go): PreFilter collects the
topology labels (failure-domain.beta and topology.kubernetes.io zone and region, values
split on "__" like volumehelpers.LabelZonesToSet) of the PVs the pod's claims are bound
to; unbound WaitForFirstConsumer claims are skipped (VolumeBinding handles them). Filter
rejects a node that has some topology label but not a PV's value, with Go's reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from asched.api import Pod
from asched.api.storage import WAIT_FOR_FIRST_CONSUMER, PersistentVolume, StorageClass
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
)
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import VOLUMES, SignFragment, SignResult, volumes
from asched.framework.status import Code, Status, skip
from asched.framework.types import PreFilterResult
from asched.plugins.volumes.informers import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)

NAME = "VolumeZone"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (_BETA_ZONE, _BETA_REGION, _ZONE, _REGION)
_GA = {_BETA_ZONE: _ZONE, _BETA_REGION: _REGION}


@dataclass(slots=True, frozen=True)
class _Topology:
    key: str
    values: frozenset[str]


_STATE: StateKey[tuple[_Topology, ...]] = StateKey("PreFilter" + NAME)


def pv_topologies(pv: PersistentVolume) -> list[_Topology]:
    """getPVTopologies: the PV's zone/region labels, multi-zone values split on "__"."""
    labels = pv.labels or {}
    return [
        _Topology(key, frozenset(v.strip() for v in labels[key].split("__")))
        for key in TOPOLOGY_LABELS
        if key in labels
    ]


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,), NAME)


def _pv_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterPersistentVolumeChange: a new PV, or its topology labels changed."""
    if not isinstance(old, PersistentVolume) or not isinstance(new, PersistentVolume):
        return QueueingHint.QUEUE
    return (
        QueueingHint.QUEUE if pv_topologies(old) != pv_topologies(new) else QueueingHint.QUEUE_SKIP
    )


def _class_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterStorageClassAdded: only a WaitForFirstConsumer class helps."""
    if isinstance(new, StorageClass) and new.binding_mode == WAIT_FOR_FIRST_CONSUMER:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _pvc_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterPersistentVolumeClaimChange: one of the pod's claims."""
    pvc = new or old
    names = {v.claim_name for v in pod.volumes if v.source == "persistentVolumeClaim"}
    ns, name = getattr(pvc, "namespace", None), getattr(pvc, "name", None)
    return QueueingHint.QUEUE if ns == pod.namespace and name in names else QueueingHint.QUEUE_SKIP


class VolumeZone(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def __init__(self, args: None, handle: Handle) -> None:
        del args
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """VolumeZone.SignPod."""
        return (SignFragment(VOLUMES, volumes(pod)),)

    def informers(self) -> Sequence[InformerRequest[Any]]:
        return (PERSISTENT_VOLUMES, PERSISTENT_VOLUME_CLAIMS, STORAGE_CLASSES)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        names = [v.claim_name for v in pod.volumes if v.source == "persistentVolumeClaim"]
        if not names:
            return None, skip(NAME)
        h = self._handle
        pvcs, pvs, classes = (
            h.store(PERSISTENT_VOLUME_CLAIMS),
            h.store(PERSISTENT_VOLUMES),
            h.store(STORAGE_CLASSES),
        )
        topologies: list[_Topology] = []
        for claim_name in names:
            if not claim_name:
                return None, _unresolvable("PersistentVolumeClaim had no name")
            pvc = pvcs.get(f"{pod.namespace}/{claim_name}")
            if pvc is None:
                return None, _unresolvable(f'persistentvolumeclaim "{claim_name}" not found')
            if not pvc.volume_name:
                if not pvc.storage_class:
                    return None, _unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                cls = classes.get(pvc.storage_class)
                if cls is None:
                    return None, _unresolvable(
                        f'storageclass.storage.k8s.io "{pvc.storage_class}" not found'
                    )
                if cls.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue
                return None, _unresolvable("PersistentVolume had no name")
            pv = pvs.get(pvc.volume_name)
            if pv is None:
                return None, _unresolvable(f'persistentvolume "{pvc.volume_name}" not found')
            topologies.extend(pv_topologies(pv))
        if not topologies:
            return None, skip(NAME)
        state.write(_STATE, tuple(topologies))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        topologies = state.get(_STATE)
        node = node_info.node
        if not topologies or node is None:
            return None
        labels = node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None
        for t in topologies:
            value = labels.get(t.key)
            if value is None:
                value = labels.get(_GA.get(t.key, t.key))
            if value is None or value not in t.values:
                return _unresolvable(ERR_REASON_CONFLICT)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD), _class_hint
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE
                ),
                _pvc_hint,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                _pv_hint,
            ),
        )


SPEC = PluginSpec(NAME, VolumeZone, None)
