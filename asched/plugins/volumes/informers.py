"""The storage objects the volume plugins need watched (kube-scheduler's PV, PVC,
StorageClass, CSINode, CSIDriver, CSIStorageCapacity and VolumeAttachment informers).

Each plugin names the requests it reads in `informers()`; the scheduler starts one
informer per resource, shared by every plugin that asks, and reports its changes to the
queue as cluster events of the matching EventResource.
"""

from __future__ import annotations

from asched.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
    decode_csi_driver,
    decode_csi_node,
    decode_csi_storage_capacity,
    decode_pv,
    decode_pvc,
    decode_storage_class,
    decode_volume_attachment,
)
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest

PERSISTENT_VOLUMES: InformerRequest[PersistentVolume] = InformerRequest(
    resource="persistentvolumes/v1",
    list_path="/api/v1/persistentvolumes",
    decode=decode_pv,
    event_resource=EventResource.PERSISTENT_VOLUME,
)
PERSISTENT_VOLUME_CLAIMS: InformerRequest[PersistentVolumeClaim] = InformerRequest(
    resource="persistentvolumeclaims/v1",
    list_path="/api/v1/persistentvolumeclaims",
    decode=decode_pvc,
    event_resource=EventResource.PERSISTENT_VOLUME_CLAIM,
)
STORAGE_CLASSES: InformerRequest[StorageClass] = InformerRequest(
    resource="storageclasses.storage.k8s.io/v1",
    list_path="/apis/storage.k8s.io/v1/storageclasses",
    decode=decode_storage_class,
    event_resource=EventResource.STORAGE_CLASS,
)
CSI_NODES: InformerRequest[CSINode] = InformerRequest(
    resource="csinodes.storage.k8s.io/v1",
    list_path="/apis/storage.k8s.io/v1/csinodes",
    decode=decode_csi_node,
    event_resource=EventResource.CSI_NODE,
)
CSI_DRIVERS: InformerRequest[CSIDriver] = InformerRequest(
    resource="csidrivers.storage.k8s.io/v1",
    list_path="/apis/storage.k8s.io/v1/csidrivers",
    decode=decode_csi_driver,
    event_resource=EventResource.CSI_DRIVER,
)
CSI_STORAGE_CAPACITIES: InformerRequest[CSIStorageCapacity] = InformerRequest(
    resource="csistoragecapacities.storage.k8s.io/v1",
    list_path="/apis/storage.k8s.io/v1/csistoragecapacities",
    decode=decode_csi_storage_capacity,
    event_resource=EventResource.CSI_STORAGE_CAPACITY,
)
VOLUME_ATTACHMENTS: InformerRequest[VolumeAttachment] = InformerRequest(
    resource="volumeattachments.storage.k8s.io/v1",
    list_path="/apis/storage.k8s.io/v1/volumeattachments",
    decode=decode_volume_attachment,
    event_resource=EventResource.VOLUME_ATTACHMENT,
)

# Everything VolumeBinding reads (volumebinding.New's informers).
VOLUME_BINDING_INFORMERS = (
    PERSISTENT_VOLUMES,
    PERSISTENT_VOLUME_CLAIMS,
    STORAGE_CLASSES,
    CSI_NODES,
    CSI_DRIVERS,
    CSI_STORAGE_CAPACITIES,
)
