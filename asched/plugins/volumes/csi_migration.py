"""CSI migration of in-tree volumes, as NodeVolumeLimits sees it.

kube-scheduler's CSILimits (nodevolumelimits/csi.go) counts an in-tree volume against
the CSI driver its plugin migrated to, with the volume handle k8s.io/csi-translation-lib
would give the translated PV, so that the same disk named in-tree by one pod and through a
CSI PV by another counts once. Migration is on (utils.go isCSIMigrationOn) for the GA
plugins only - AWS EBS, GCE PD, Azure Disk, OpenStack Cinder, Portworx - and only when the
node has a CSINode object. Azure File and vSphere have translators but are never counted.

VolumeBinding uses the translation too (binder.go tryTranslatePVToCSI): on a node whose
CSINode lists the plugin in `storage.alpha.kubernetes.io/migrated-plugins`, a bound
in-tree PV's zone affinity is checked under the CSI driver's topology key
(translated_affinity).

A translation that fails (an AWS id that is not `aws://zone/vol-...` or `vol-...`, a
regional GCE PD whose zones name several regions, an Azure disk that is not Managed)
raises MigrationError with csi-translation-lib's words: csi.go skips such a PV, and turns
such an in-line volume into an Error status.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from urllib.parse import urlparse

from asched.api.intree import InTreeSource
from asched.api.labels import IN, NodeSelector, NodeSelectorTerm, Requirement
from asched.api.storage import PersistentVolume

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


# ---- VolumeBinding: a bound in-tree PV's topology, translated -------------------------

#: The CSI zone key of the plugins whose TranslateInTreePVToCSI translates topology
#: (translateTopologyFromInTreeToCSI); Azure Disk and Portworx keep the PV's affinity.
TOPOLOGY_KEYS = {
    GCE_PD: "topology.gke.io/zone",
    AWS_EBS: "topology.ebs.csi.aws.com/zone",
    CINDER: "topology.cinder.csi.openstack.org/zone",
}
REGION_BETA = "failure-domain.beta.kubernetes.io/region"
REGION = "topology.kubernetes.io/region"
#: CSINode annotation listing the in-tree plugins migrated on that node.
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


def migrated_on_node(plugin: str, annotations: Mapping[str, str] | None) -> bool:
    """volumebinding isCSIMigrationOnForPlugin and isPluginMigratedToCSIOnNode: a GA
    plugin the node's CSINode lists in its migrated-plugins annotation."""
    listed = (annotations or {}).get(MIGRATED_PLUGINS, "")
    return plugin in MIGRATION_ON and plugin in listed.split(",")


def _keys(affinity: NodeSelector | None) -> set[str]:
    if affinity is None:
        return set()
    return {r.key for t in affinity.terms for r in t.match_expressions}


def _values(affinity: NodeSelector | None, key: str) -> set[str]:
    if affinity is None:
        return set()
    return {
        v for t in affinity.terms for r in t.match_expressions if r.key == key for v in r.values
    }


def _rekey(affinity: NodeSelector, old: str, new: str) -> NodeSelector:
    """replaceTopology: every requirement on *old* now on *new*."""
    return NodeSelector(
        tuple(
            replace(
                t,
                match_expressions=tuple(
                    replace(r, key=new) if r.key == old else r for r in t.match_expressions
                ),
            )
            for t in affinity.terms
        )
    )


def _add(affinity: NodeSelector | None, key: str, zones: list[str]) -> NodeSelector | None:
    """addTopology: `key In zones` appended to every term (one term if there is none)."""
    values = frozenset(z.strip() for z in zones if z.strip())
    if not values:
        return affinity  # Go's error here is ignored by its caller
    req = Requirement(key, IN, values)
    terms = affinity.terms if affinity is not None and affinity.terms else (NodeSelectorTerm(),)
    return NodeSelector(
        tuple(replace(t, match_expressions=(*t.match_expressions, req)) for t in terms)
    )


def translated_affinity(pv: PersistentVolume) -> NodeSelector | None:
    """The node affinity of an in-tree PV after TranslateInTreePVToCSI: the zone
    requirement moves to the driver's topology key (or is added from the PV's zone label),
    a beta region requirement becomes the GA one. Raises MigrationError where the
    translation fails (the volume handle is translated too)."""
    assert pv.in_tree is not None
    translate(pv.in_tree, pv.labels)
    key = TOPOLOGY_KEYS.get(PLUGIN_OF_SOURCE[pv.in_tree.kind])
    affinity = pv.node_affinity
    if key is None:
        return affinity
    labels = pv.labels or {}
    # getTopologyLabel: the affinity's keys first, then the PV's labels; GA by default.
    in_affinity = _keys(affinity)
    beta = ZONE not in in_affinity and (
        ZONE_BETA in in_affinity or (ZONE not in labels and ZONE_BETA in labels)
    )
    zone_label, region_label = (ZONE_BETA, REGION_BETA) if beta else (ZONE, REGION)
    if _values(affinity, zone_label):
        assert affinity is not None
        affinity = _rekey(affinity, zone_label, key)
    elif zone_label in labels:
        affinity = _add(affinity, key, labels[zone_label].split(_MULTI_ZONE))
    if region_label == REGION_BETA and affinity is not None and _values(affinity, REGION_BETA):
        affinity = _rekey(affinity, REGION_BETA, REGION)
    return affinity
