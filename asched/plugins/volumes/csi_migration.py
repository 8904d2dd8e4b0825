"""CSI migration of in-tree volumes, as NodeVolumeLimits sees it.

kube-scheduler's CSILimits (nodevolumelimits/csi.go) counts an in-tree volume against
the CSI driver its plugin migrated to, with the volume handle k8s.io/csi-translation-lib
would give the translated PV, so that the same disk named in-tree by one pod and through a
CSI PV by another counts once. Migration is on (utils.go isCSIMigrationOn) for the GA
plugins only - AWS EBS, GCE PD, Azure Disk, OpenStack Cinder, Portworx - and only when the
node has a CSINode object. Azure File and vSphere have translators but are never counted.

A translation that fails (an AWS id that is not `aws://zone/vol-...` or `vol-...`, a
regional GCE PD whose zones name several regions, an Azure disk that is not Managed)
raises MigrationError with csi-translation-lib's words: csi.go skips such a PV, and turns
such an in-line volume into an Error status.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlparse

from asched.api.intree import InTreeSource

#: In-tree plugin name -> the CSI driver it migrated to (csi-translation-lib plugins).
GCE_PD = "kubernetes.io/gce-pd"
AWS_EBS = "kubernetes.io/aws-ebs"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
CINDER = "kubernetes.io/cinder"
PORTWORX = "kubernetes.io/portworx-volume"
VSPHERE = "kubernetes.io/vsphere-volume"
CSI_DRIVERS = {
    GCE_PD: "pd.csi.storage.gke.io",
    AWS_EBS: "ebs.csi.aws.com",
    AZURE_DISK: "disk.csi.azure.com",
    AZURE_FILE: "file.csi.azure.com",
    CINDER: "cinder.csi.openstack.org",
    PORTWORX: "pxd.portworx.com",
    VSPHERE: "csi.vsphere.vmware.com",
}
#: Source field name -> in-tree plugin name (GetInTreePluginNameFromSpec).
PLUGIN_OF_SOURCE = {
    "gcePersistentDisk": GCE_PD,
    "awsElasticBlockStore": AWS_EBS,
    "azureDisk": AZURE_DISK,
    "azureFile": AZURE_FILE,
    "cinder": CINDER,
    "portworxVolume": PORTWORX,
    "vsphereVolume": VSPHERE,
}
#: The plugins isCSIMigrationOn answers true for (the GA migrations).
MIGRATION_ON = frozenset({AWS_EBS, PORTWORX, GCE_PD, AZURE_DISK, CINDER})

ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
ZONE = "topology.kubernetes.io/zone"
_UNSPECIFIED = "UNSPECIFIED"
_MULTI_ZONE = "__"
_AWS_VOLUME = re.compile(r"^vol-[^/]*$")


class MigrationError(ValueError):
    """csi-translation-lib cannot translate the volume."""


def migration_on(plugin: str, has_csi_node: bool) -> bool:
    """utils.go isCSIMigrationOn: a GA plugin, on a node with a CSINode."""
    return has_csi_node and plugin in MIGRATION_ON


def _aws_handle(ident: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: `aws://zone/vol-x` or a bare `vol-x`."""
    if not ident.startswith("aws://"):
        return ident
    aws_id = urlparse(ident).path.strip("/")
    if not _AWS_VOLUME.match(aws_id):
        raise MigrationError(f"Invalid format for AWS volume ({ident})")
    return aws_id


def _gce_handle(pd_name: str, labels: Mapping[str, str] | None) -> str:
    """gcePersistentDiskCSITranslator: zonal or regional id from the PV's zone labels;
    an in-line disk (no labels) is zonal with the zone unspecified."""
    labels = labels or {}
    zones_label = labels.get(ZONE_BETA) or labels.get(ZONE, "")
    zones = zones_label.split(_MULTI_ZONE)
    if len(zones) == 1 and zones[0]:
        return f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        regions = set()
        for zone in zones:
            parts = zone.split("-")
            if len(parts) != 3:
                raise MigrationError(
                    "failed to get region from zones: zone in unexpected format, expected: "
                    f"{{locale}}-{{region}}-{{zone}}, got: {zone}"
                )
            regions.add("-".join(parts[:2]))
        if len(regions) != 1:
            raise MigrationError(
                "failed to get region from zones: multiple or no regions gotten from "
                f"zones, got: {sorted(regions)}"
            )
        return f"projects/{_UNSPECIFIED}/regions/{regions.pop()}/disks/{pd_name}"
    return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd_name}"


def translate(source: InTreeSource, labels: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(CSI driver, volume handle) of the translated volume; *labels* are the PV's (None
    for an in-line volume). Raises MigrationError where csi-translation-lib fails."""
    plugin = PLUGIN_OF_SOURCE[source.kind]
    driver = CSI_DRIVERS[plugin]
    if source.kind == "gcePersistentDisk":
        return driver, _gce_handle(source.ident, labels)
    if source.kind == "awsElasticBlockStore":
        return driver, _aws_handle(source.ident)
    if source.kind == "azureDisk" and source.disk_kind.lower() != "managed":
        raise MigrationError(f"kind({source.disk_kind}) is not supported in csi migration")
    return driver, source.ident
