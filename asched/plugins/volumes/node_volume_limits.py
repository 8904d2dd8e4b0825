"""NodeVolumeLimits: a node attaches at most CSINode's allocatable count per CSI driver.

Follows kube-scheduler's nodevolumelimits CSILimits (csi.go): the pod's claims name a
CSI driver and a volume handle (the bound PV's csi source, or, for an unbound claim, its
StorageClass's provisioner and a per-claim handle, getCSIDriverInfoFromSC); the volumes
the node's pods already use are counted per driver, shared volumes once, and so are the
node's VolumeAttachments of CSI PVs that no pod there uses (getNodeVolumeAttachmentInfo:
a volume still attached after its pod went); a driver whose count would exceed the
CSINode's `allocatable.count` rejects the node (Unschedulable).

In-tree volumes count through CSI migration (csi_migration.py): an in-tree PV, an
in-line volume, or a class whose provisioner is an in-tree plugin counts against the CSI
driver that plugin migrated to, on a node that has a CSINode (isCSIMigrationOn). An
in-line volume whose translation fails is an Error, as in checkAttachableInlineVolume.

Requeued like CSILimits: a new CSINode, a CSINode whose allocatable count grew, a
scheduled pod with claims or migratable in-line volumes deleted, one of the pod's claims
created, or a VolumeAttachment of a matching driver deleted.

Not built: the VolumeLimitScaling "driver is not installed" check (alpha).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asched.api import Pod
from asched.api.pod import Volume
from asched.api.storage import CSIDriver, CSINode, PersistentVolumeClaim, VolumeAttachment
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
from asched.framework.signatures import VOLUMES, SignFragment, SignResult, volumes
from asched.framework.status import Code, Status, skip
from asched.framework.types import PreFilterResult
from asched.plugins.volumes.binder import claim_names
from asched.plugins.volumes.csi_migration import (
    CSI_DRIVERS,
    PLUGIN_OF_SOURCE,
    MigrationError,
    migration_on,
    translate,
)
from asched.plugins.volumes.informers import (
    CSI_DRIVERS as CSI_DRIVER_OBJECTS,
)
from asched.plugins.volumes.informers import (
    CSI_NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
    VOLUME_ATTACHMENTS,
)

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
# Stands in for Go's random volume-id prefix of claims not bound yet: any value unique to
# the claim serves, since it is only compared with other such handles.
_UNBOUND_PREFIX = "unbound"


class _MissingClaim(Exception):
    pass


class _InlineError(Exception):
    """An in-line volume csi-translation-lib cannot translate (an Error status in Go)."""


def _inline(vol: Volume, has_csi_node: bool) -> tuple[str, str] | None:
    """checkAttachableInlineVolume: (driver, handle) of a migrated in-line volume."""
    if vol.in_tree is None or not migration_on(PLUGIN_OF_SOURCE[vol.in_tree.kind], has_csi_node):
        return None
    try:
        return translate(vol.in_tree)
    except MigrationError as exc:
        raise _InlineError(f"converting volume({vol.name}) from inline to csi: {exc}") from exc


def _va_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterVolumeAttachmentDeleted: the pod has a claim, or an in-line
    volume that migrates to the attachment's driver."""
    va = old if isinstance(old, VolumeAttachment) else new
    for vol in pod.volumes:
        if vol.source == "persistentVolumeClaim":
            return QueueingHint.QUEUE
        if vol.in_tree is None:
            continue
        try:
            driver, _ = translate(vol.in_tree)
        except MigrationError:
            return QueueingHint.QUEUE  # Go returns Queue with the error
        if isinstance(va, VolumeAttachment) and va.attacher == driver:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


class NodeVolumeLimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def __init__(self, args: None, handle: Handle) -> None:
        del args
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """CSILimits.SignPod."""
        return (SignFragment(VOLUMES, volumes(pod)),)

    def informers(self) -> Sequence[InformerRequest[Any]]:
        return (
            PERSISTENT_VOLUMES,
            PERSISTENT_VOLUME_CLAIMS,
            STORAGE_CLASSES,
            CSI_NODES,
            VOLUME_ATTACHMENTS,
            CSI_DRIVER_OBJECTS,
        )

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        # A claim, or an in-line volume CSI migration knows (IsInlineMigratable).
        if claim_names(pod) or any(v.in_tree is not None for v in pod.volumes):
            return None, None
        return None, skip(NAME)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _volumes(self, pod: Pod, new_pod: bool, has_csi_node: bool) -> dict[str, str]:
        """filterAttachableVolumes: unique volume name -> CSI driver, for the pod's claims
        and its migrated in-line volumes."""
        h = self._handle
        pvcs, pvs, classes = (
            h.store(PERSISTENT_VOLUME_CLAIMS),
            h.store(PERSISTENT_VOLUMES),
            h.store(STORAGE_CLASSES),
        )
        out: dict[str, str] = {}
        for vol in pod.volumes:
            found = _inline(vol, has_csi_node)
            if found is not None:
                out[f"{found[0]}/{found[1]}"] = found[0]
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
                if not driver and pv.in_tree is not None:
                    # getCSIDriverInfo: a PV of a migrated in-tree plugin.
                    if not migration_on(PLUGIN_OF_SOURCE[pv.in_tree.kind], has_csi_node):
                        continue
                    try:
                        driver, handle = translate(pv.in_tree, pv.labels)
                    except MigrationError:
                        continue
            else:
                cls = classes.get(pvc.storage_class) if pvc.storage_class else None
                if cls is None:
                    continue
                driver = cls.provisioner
                if driver in CSI_DRIVERS:
                    # getCSIDriverInfoFromSC: an in-tree provisioner's migrated driver.
                    if not migration_on(driver, has_csi_node):
                        continue
                    driver = CSI_DRIVERS[driver]
                handle = f"{_UNBOUND_PREFIX}-{pvc.namespace}/{pvc.name}"
            if driver and handle:
                out[f"{driver}/{handle}"] = driver
        return out

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        csi_node: CSINode | None = self._handle.store(CSI_NODES).get(node_info.name)
        has_csi_node = csi_node is not None
        try:
            new = self._volumes(pod, new_pod=True, has_csi_node=has_csi_node)
        except _MissingClaim as exc:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(exc),), NAME)
        except _InlineError as exc:
            return Status(Code.ERROR, (str(exc),), NAME)
        if not new:
            return None
        for driver in new.values():
            if not self._driver_installed(driver, csi_node):
                return Status(
                    Code.UNSCHEDULABLE, (f"{driver} CSI driver is not installed on the node",), NAME
                )
        if csi_node is None:
            return None
        limits = {
            d.name: d.allocatable for d in csi_node.drivers.values() if d.allocatable is not None
        }
        if not limits:
            return None
        attached: dict[str, str] = {}
        try:
            for other in node_info.pods:
                attached.update(self._volumes(other, new_pod=False, has_csi_node=True))
        except _InlineError as exc:
            return Status(Code.ERROR, (str(exc),), NAME)
        used: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)
            used[driver] = used.get(driver, 0) + 1
        for unique, driver in self._attachments(node_info.name).items():
            if unique not in attached:  # a pod's volume is counted once
                used[driver] = used.get(driver, 0) + 1
        wanted: dict[str, int] = {}
        for driver in new.values():
            wanted[driver] = wanted.get(driver, 0) + 1
        for driver, count in wanted.items():
            limit = limits.get(driver)
            if limit is not None and used.get(driver, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT,), NAME)
        return None

    def _driver_installed(self, driver: str, csi_node: CSINode | None) -> bool:
        """checkCSIDriverOnNode (VolumeLimitScaling, beta and on in 1.37): a driver that
        opts in with preventPodSchedulingIfMissing must be on the node's CSINode; an
        unknown driver, or one that does not opt in, counts as installed."""
        known: CSIDriver | None = self._handle.store(CSI_DRIVER_OBJECTS).get(driver)
        if known is None or not known.prevent_scheduling_if_missing:
            return True
        return csi_node is not None and driver in csi_node.drivers

    def _attachments(self, node_name: str) -> dict[str, str]:
        """getNodeVolumeAttachmentInfo: `driver/handle` -> driver of the node's
        VolumeAttachments of CSI PVs (others, and those without attacher, are skipped)."""
        pvs = self._handle.store(PERSISTENT_VOLUMES)
        out: dict[str, str] = {}
        for va in self._handle.store(VOLUME_ATTACHMENTS).list():
            if va.node_name != node_name or not va.attacher or not va.pv_name:
                continue
            pv = pvs.get(va.pv_name)
            if pv is None or pv.source != "csi":
                continue
            out[f"{va.attacher}/{pv.volume_handle}"] = va.attacher
        return out

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # CSILimits.EventsToRegister, in its order.
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
            ClusterEventWithHint(
                ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE), _va_hint
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
    """isSchedulableAfterAssignedPodDeleted: a scheduled (or nominated) pod with claims
    or an in-line volume CSI migration translates (IsInlineMigratable)."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if not old.volumes or (not old.node_name and not old.nominated_node_name):
        return QueueingHint.QUEUE_SKIP
    if claim_names(old) or any(v.in_tree is not None for v in old.volumes):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


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
