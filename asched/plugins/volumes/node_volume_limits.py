"""NodeVolumeLimits: a node attaches at most CSINode's allocatable count per CSI driver.

Follows kube-scheduler's nodevolumelimits CSILimits (csi.go): the pod's claims name a
CSI driver and a volume handle (the bound PV's csi source, or, for an unbound claim, its
StorageClass's provisioner and a per-claim handle, getCSIDriverInfoFromSC); the volumes
the node's pods already use are counted per driver, shared volumes once; a driver whose
count would exceed the CSINode's `allocatable.count` rejects the node (Unschedulable).

Requeued like CSILimits: a new CSINode, a CSINode whose allocatable count grew, a
scheduled pod with claims deleted, or one of the pod's claims created.

Not built: CSI migration of in-tree volumes (PVs and in-line volumes of in-tree plugins
are not counted), VolumeAttachment-based counting of attachments no pod holds, and the
VolumeLimitScaling "driver is not installed" check (alpha).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asched.api import Pod
from asched.api.storage import CSINode, PersistentVolumeClaim
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
)
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.status import Code, Status, skip
from asched.framework.types import PreFilterResult
from asched.plugins.volumes.binder import claim_names
from asched.plugins.volumes.informers import (
    CSI_NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
# Stands in for Go's random volume-id prefix of claims not bound yet: any value unique to
# the claim serves, since it is only compared with other such handles.
_UNBOUND_PREFIX = "unbound"


class _MissingClaim(Exception):
    pass


class NodeVolumeLimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def __init__(self, args: None, handle: Handle) -> None:
        del args
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def informers(self) -> Sequence[InformerRequest[Any]]:
        return (PERSISTENT_VOLUMES, PERSISTENT_VOLUME_CLAIMS, STORAGE_CLASSES, CSI_NODES)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return (None, None) if claim_names(pod) else (None, skip(NAME))

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _volumes(self, pod: Pod, new_pod: bool) -> dict[str, str]:
        """filterAttachableVolumes: unique volume name -> CSI driver, for the pod's claims."""
        h = self._handle
        pvcs, pvs, classes = (
            h.store(PERSISTENT_VOLUME_CLAIMS),
            h.store(PERSISTENT_VOLUMES),
            h.store(STORAGE_CLASSES),
        )
        out: dict[str, str] = {}
        for claim_name, _ in claim_names(pod):
            pvc = pvcs.get(f"{pod.namespace}/{claim_name}")
            if pvc is None:
                if new_pod:
                    raise _MissingClaim(
                        f"looking up PVC {pod.namespace}/{claim_name}: "
                        f'persistentvolumeclaim "{claim_name}" not found'
                    )
                continue
            pv = pvs.get(pvc.volume_name) if pvc.volume_name else None
            if pv is not None:
                driver, handle = pv.csi_driver, pv.volume_handle
            else:
                cls = classes.get(pvc.storage_class) if pvc.storage_class else None
                if cls is None:
                    continue
                driver = cls.provisioner
                handle = f"{_UNBOUND_PREFIX}-{pvc.namespace}/{pvc.name}"
            if driver and handle:
                out[f"{driver}/{handle}"] = driver
        return out

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            new = self._volumes(pod, new_pod=True)
        except _MissingClaim as exc:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(exc),), NAME)
        if not new:
            return None
        csi_node: CSINode | None = self._handle.store(CSI_NODES).get(node_info.name)
        if csi_node is None:
            return None
        limits = {
            d.name: d.allocatable for d in csi_node.drivers.values() if d.allocatable is not None
        }
        if not limits:
            return None
        attached: dict[str, str] = {}
        for other in node_info.pods:
            attached.update(self._volumes(other, new_pod=False))
        used: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)
            used[driver] = used.get(driver, 0) + 1
        wanted: dict[str, int] = {}
        for driver in new.values():
            wanted[driver] = wanted.get(driver, 0) + 1
        for driver, count in wanted.items():
            limit = limits.get(driver)
            if limit is not None and used.get(driver, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT,), NAME)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # CSILimits.EventsToRegister, in its order, without the VolumeAttachment delete
        # (asched neither watches nor counts VolumeAttachments).
        return (
            # Any new CSINode may make room: registered without a hint, as in Go.
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE), _csi_node_updated_hint
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE), _assigned_pod_deleted_hint
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                _pvc_added_hint,
            ),
        )


def _limits(node: CSINode) -> dict[str, int]:
    # A driver without allocatable.count counts as 0, as in Go's comparison.
    return {d.name: d.allocatable or 0 for d in node.drivers.values()}


def _csi_node_updated_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterCSINodeUpdated: some driver's allocatable count went up."""
    if not isinstance(old, CSINode) or not isinstance(new, CSINode):
        return QueueingHint.QUEUE
    before = _limits(old)
    for driver, limit in _limits(new).items():
        if limit > before.get(driver, 0):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _assigned_pod_deleted_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterAssignedPodDeleted: a scheduled (or nominated) pod with claims.

    Go also queues for an in-line volume CSI migration would translate; asched does not
    migrate in-line volumes, so only claim-backed ones (PVC, generic ephemeral) count.
    """
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if not old.volumes or (not old.node_name and not old.nominated_node_name):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if claim_names(old) else QueueingHint.QUEUE_SKIP


def _pvc_added_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterPVCAdded: a claim of the pod's own (PVC or generic ephemeral)."""
    if not isinstance(new, PersistentVolumeClaim):
        return QueueingHint.QUEUE
    if new.namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    if any(name == new.name for name, _ in claim_names(pod)):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


NODE_VOLUME_LIMITS_SPEC = PluginSpec(NAME, NodeVolumeLimits, None)
