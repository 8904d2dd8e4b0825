"""In-tree volume sources that CSI migration translates, as read from a PV or a pod.

kube-scheduler's NodeVolumeLimits counts the volumes of in-tree plugins against the CSI
driver they migrated to (k8s.io/csi-translation-lib). Only what that translation reads is
kept: the source's field name, the disk's identity, and for Azure disks whether the kind
is Managed (the only kind that migrates; the API defaults `kind` to Shared).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The in-tree sources csi-translation-lib has a translator for (its inTreePlugins), and
#: the field naming each one's disk. azureFile and vsphereVolume translate, but their
#: migration is never "on" for NodeVolumeLimits (isCSIMigrationOn), so they are kept
#: only so that PreFilter does not skip a pod that has one (IsInlineMigratable).
IN_TREE_IDENTS = {
    "gcePersistentDisk": "pdName",
    "awsElasticBlockStore": "volumeID",
    "azureDisk": "diskURI",
    "cinder": "volumeID",
    "portworxVolume": "volumeID",
    "azureFile": "shareName",
    "vsphereVolume": "volumePath",
}


@dataclass(slots=True, frozen=True)
class InTreeSource:
    kind: str  # the source's field name: gcePersistentDisk, awsElasticBlockStore, ...
    ident: str  # pdName, volumeID, diskURI, ...
    #: azureDisk only: its `kind` (the API's default, Shared, when absent).
    disk_kind: str = ""


def parse_in_tree(kind: str, body: Any) -> InTreeSource | None:
    """The in-tree source of a volume or PV field, None if it is not a migratable one."""
    field_name = IN_TREE_IDENTS.get(kind)
    if field_name is None or not isinstance(body, dict):
        return None
    disk_kind = str(body.get("kind") or "Shared") if kind == "azureDisk" else ""
    return InTreeSource(kind, str(body.get(field_name) or ""), disk_kind)
