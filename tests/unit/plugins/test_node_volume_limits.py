"""CSI migration of in-tree volumes (csi-translation-lib's handles and topology,
isCSIMigrationOn, VolumeBinding's tryTranslatePVToCSI) and NodeVolumeLimits' counting of
VolumeAttachments (getNodeVolumeAttachmentInfo)."""

from __future__ import annotations

from typing import Any

import pytest

from asched.api import Pod, decode_pod
from asched.api.intree import InTreeSource, parse_in_tree
from asched.api.storage import (
    PersistentVolume,
    VolumeAttachment,
    decode_csi_driver,
    decode_csi_node,
    decode_pv,
    decode_pvc,
    decode_storage_class,
    decode_volume_attachment,
)
from asched.framework.cycle_state import CycleState
from asched.framework.events import QueueingHint
from asched.framework.status import Code
from asched.plugins.volumes import NodeVolumeLimits
from asched.plugins.volumes.csi_migration import (
    MigrationError,
    migrated_on_node,
    translate,
    translated_affinity,
)
from asched.plugins.volumes.informers import (
    CSI_DRIVERS,
    CSI_NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
    VOLUME_ATTACHMENTS,
)
from asched.plugins.volumes.node_volume_limits import _assigned_pod_deleted_hint, _va_hint
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info

GCE = "pd.csi.storage.gke.io"
CSI = "csi.example.com"
MAX = ("node(s) exceed max volume count",)


def _gce(pd: str) -> InTreeSource:
    src = parse_in_tree("gcePersistentDisk", {"pdName": pd})
    assert src is not None
    return src


@pytest.mark.parametrize(
    ("source", "labels", "want"),
    [
        (_gce("d1"), None, (GCE, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d1")),
        (
            _gce("d1"),
            {"topology.kubernetes.io/zone": "us-east1-b"},
            (GCE, "projects/UNSPECIFIED/zones/us-east1-b/disks/d1"),
        ),
        (
            _gce("d1"),
            {"failure-domain.beta.kubernetes.io/zone": "us-east1-b__us-east1-c"},
            (GCE, "projects/UNSPECIFIED/regions/us-east1/disks/d1"),
        ),
        (
            InTreeSource("awsElasticBlockStore", "aws://us-east-1a/vol-0abc"),
            None,
            ("ebs.csi.aws.com", "vol-0abc"),
        ),
        (InTreeSource("awsElasticBlockStore", "vol-0abc"), None, ("ebs.csi.aws.com", "vol-0abc")),
        (
            InTreeSource("azureDisk", "/subs/x/disks/d", "Managed"),
            None,
            ("disk.csi.azure.com", "/subs/x/disks/d"),
        ),
        (InTreeSource("cinder", "c-1"), None, ("cinder.csi.openstack.org", "c-1")),
        (InTreeSource("portworxVolume", "px-1"), None, ("pxd.portworx.com", "px-1")),
    ],
    ids=["gce-inline", "gce-zonal", "gce-regional", "aws-url", "aws-bare", "azure", "cinder", "px"],
)
def test_translate_follows_csi_translation_lib(
    source: InTreeSource, labels: dict[str, str] | None, want: tuple[str, str]
) -> None:
    assert translate(source, labels) == want


@pytest.mark.parametrize(
    ("source", "labels", "message"),
    [
        (InTreeSource("awsElasticBlockStore", "aws://z/disk-1"), None, "Invalid format"),
        (InTreeSource("azureDisk", "uri", "Shared"), None, "kind(Shared) is not supported"),
        (
            _gce("d"),
            {"topology.kubernetes.io/zone": "us-east1-b__europe-west1-c"},
            "multiple or no regions",
        ),
    ],
    ids=["aws-bad-id", "azure-not-managed", "gce-two-regions"],
)
def test_translate_failures(
    source: InTreeSource, labels: dict[str, str] | None, message: str
) -> None:
    with pytest.raises(MigrationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        translate(source, labels)


def test_azure_disk_kind_defaults_to_shared_as_the_api_does() -> None:
    assert parse_in_tree("azureDisk", {"diskURI": "u"}) == InTreeSource("azureDisk", "u", "Shared")
    assert parse_in_tree("emptyDir", {}) is None


def _pod(name: str, *volumes: dict[str, Any], node: str = "") -> Pod:
    raw = make_pod(name).raw()
    raw["spec"]["volumes"] = [{"name": f"v{i}", **v} for i, v in enumerate(volumes)]
    if node:
        raw["spec"]["nodeName"] = node
    return decode_pod(raw)


def _gce_volume(pd: str) -> dict[str, Any]:
    return {"gcePersistentDisk": {"pdName": pd}}


def _csi_node(driver: str, count: int) -> Any:
    return decode_csi_node(
        {
            "metadata": {"name": "n1"},
            "spec": {"drivers": [{"name": driver, "allocatable": {"count": count}}]},
        }
    )


def _pv(name: str, spec: dict[str, Any]) -> PersistentVolume:
    return decode_pv({"metadata": {"name": name}, "spec": {"capacity": {"storage": "1Gi"}, **spec}})


def _claim(name: str, volume: str = "", cls: str = "") -> Any:
    ann = {"pv.kubernetes.io/bind-completed": "yes"} if volume else {}
    return decode_pvc(
        {
            "metadata": {"name": name, "namespace": "default", "annotations": ann},
            "spec": {"volumeName": volume, "storageClassName": cls},
        }
    )


def _va(name: str, pv: str, node: str = "n1", attacher: str = CSI) -> VolumeAttachment:
    return decode_volume_attachment(
        {
            "metadata": {"name": name},
            "spec": {
                "attacher": attacher,
                "nodeName": node,
                "source": {"persistentVolumeName": pv},
            },
        }
    )


def _filter(
    pod: Pod,
    existing: tuple[Pod, ...] = (),
    *,
    csi_nodes: tuple[Any, ...] = (),
    pvs: tuple[PersistentVolume, ...] = (),
    claims: tuple[Any, ...] = (),
    classes: tuple[Any, ...] = (),
    attachments: tuple[VolumeAttachment, ...] = (),
    drivers: tuple[Any, ...] = (),
) -> tuple[Code | None, tuple[str, ...]]:
    n1 = node_info(make_node("n1").obj(), *existing)
    h = FakeHandle(
        [n1],
        stores={
            PERSISTENT_VOLUMES.resource: list(pvs),
            PERSISTENT_VOLUME_CLAIMS.resource: list(claims),
            STORAGE_CLASSES.resource: list(classes),
            CSI_NODES.resource: list(csi_nodes),
            VOLUME_ATTACHMENTS.resource: list(attachments),
            CSI_DRIVERS.resource: list(drivers),
        },
    )
    plugin = NodeVolumeLimits(None, h)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [])
    if pre is not None:
        return pre.code, pre.reasons
    st = plugin.filter(state, pod, n1)
    return (None, ()) if st is None else (st.code, st.reasons)


GCE_LIMIT_1 = (_csi_node(GCE, 1),)


@pytest.mark.parametrize(
    ("pod", "existing", "csi_nodes", "want"),
    [
        (
            _pod("p", _gce_volume("b")),
            (_pod("e", _gce_volume("a"), node="n1"),),
            GCE_LIMIT_1,
            (Code.UNSCHEDULABLE, MAX),
        ),
        (
            _pod("p", _gce_volume("a")),
            (_pod("e", _gce_volume("a"), node="n1"),),
            GCE_LIMIT_1,
            (None, ()),
        ),
        (
            _pod("p", _gce_volume("b")),
            (_pod("e", _gce_volume("a"), node="n1"),),
            (),
            (None, ()),
        ),
        (
            _pod("p", {"azureFile": {"shareName": "s", "secretName": "x"}}),
            (),
            (_csi_node("file.csi.azure.com", 0),),
            (None, ()),
        ),
        (
            _pod("p", {"azureDisk": {"diskName": "d", "diskURI": "u"}}),
            (),
            (_csi_node("disk.csi.azure.com", 4),),
            (
                Code.ERROR,
                (
                    "converting volume(v0) from inline to csi: "
                    "kind(Shared) is not supported in csi migration",
                ),
            ),
        ),
        (_pod("p", {"emptyDir": {}}), (), GCE_LIMIT_1, (Code.SKIP, ())),
    ],
    ids=[
        "inline-gce-over-limit",
        "same-disk-counts-once",
        "no-csinode-no-migration",
        "azure-file-never-counted",
        "azure-disk-not-managed-is-an-error",
        "nothing-migratable-skips",
    ],
)
def test_inline_in_tree_volumes_count_against_the_migrated_driver(
    pod: Pod, existing: tuple[Pod, ...], csi_nodes: tuple[Any, ...], want: tuple[Any, ...]
) -> None:
    assert _filter(pod, existing, csi_nodes=csi_nodes) == want


def test_in_tree_pv_and_in_tree_provisioner_count_as_the_csi_driver() -> None:
    """An in-tree GCE PV used by a pod on the node and an unbound claim of a class whose
    provisioner is kubernetes.io/gce-pd: two volumes of pd.csi.storage.gke.io."""
    pv = _pv("old", {"gcePersistentDisk": {"pdName": "a"}, "storageClassName": ""})
    cls = decode_storage_class(
        {"metadata": {"name": "legacy"}, "provisioner": "kubernetes.io/gce-pd"}
    )
    claims = (_claim("used", volume="old"), _claim("fresh", cls="legacy"))
    holder = make_pod("e").pvc("used").node("n1").obj()
    pod = make_pod("p").pvc("fresh").obj()
    got = _filter(pod, (holder,), csi_nodes=GCE_LIMIT_1, pvs=(pv,), claims=claims, classes=(cls,))
    assert got == (Code.UNSCHEDULABLE, MAX)
    room = (_csi_node(GCE, 2),)
    assert _filter(pod, (holder,), csi_nodes=room, pvs=(pv,), claims=claims, classes=(cls,)) == (
        None,
        (),
    )


CSI_PVS = (
    _pv("v1", {"csi": {"driver": CSI, "volumeHandle": "h1"}}),
    _pv("v2", {"csi": {"driver": CSI, "volumeHandle": "h2"}}),
    _pv("v3", {"csi": {"driver": CSI, "volumeHandle": "h3"}}),
    _pv("intree", {"gcePersistentDisk": {"pdName": "x"}}),
)


@pytest.mark.parametrize(
    ("attachments", "holder_claim", "limit", "want"),
    [
        ((_va("a1", "v1"),), "", 1, (Code.UNSCHEDULABLE, MAX)),
        # The holder's volume and its attachment are one volume: 2 fits v1 and v2.
        ((_va("a1", "v1"),), "used", 2, (None, ())),
        ((_va("a1", "v1"), _va("a2", "v3")), "used", 2, (Code.UNSCHEDULABLE, MAX)),
        ((_va("a1", "v1", node="n2"),), "", 1, (None, ())),
        ((_va("a1", "v1", attacher=""),), "", 1, (None, ())),
        ((_va("a1", "intree"),), "", 1, (None, ())),
        ((_va("a1", "gone"),), "", 1, (None, ())),
        # csi.go takes only the existing pods' volumes out of the new ones, so an
        # attachment of the pod's own volume counts beside it.
        ((_va("a1", "v2"),), "", 1, (Code.UNSCHEDULABLE, MAX)),
    ],
    ids=[
        "attached-without-a-pod",
        "attached-and-used-counts-once",
        "attached-and-used-plus-another",
        "other-node",
        "no-attacher",
        "not-a-csi-pv",
        "pv-missing",
        "the-pods-own-volume-counts-twice",
    ],
)
def test_volume_attachments_count_on_their_node(
    attachments: tuple[VolumeAttachment, ...], holder_claim: str, limit: int, want: Any
) -> None:
    claims = (_claim("used", volume="v1"), _claim("data", volume="v2"))
    existing = (make_pod("e").pvc(holder_claim).node("n1").obj(),) if holder_claim else ()
    got = _filter(
        make_pod("p").pvc("data").obj(),
        existing,
        csi_nodes=(_csi_node(CSI, limit),),
        pvs=CSI_PVS,
        claims=claims,
        attachments=attachments,
    )
    assert got == want


@pytest.mark.parametrize(
    ("pod", "attacher", "want"),
    [
        (make_pod("p").pvc("c").obj(), "any", QueueingHint.QUEUE),
        (_pod("p", _gce_volume("a")), GCE, QueueingHint.QUEUE),
        (_pod("p", _gce_volume("a")), CSI, QueueingHint.QUEUE_SKIP),
        (_pod("p", {"emptyDir": {}}), CSI, QueueingHint.QUEUE_SKIP),
    ],
    ids=["claim", "inline-same-driver", "inline-other-driver", "no-volume"],
)
def test_volume_attachment_delete_hint(pod: Pod, attacher: str, want: QueueingHint) -> None:
    assert _va_hint(pod, _va("a", "v", attacher=attacher), None) == want


# ---- VolumeBinding: tryTranslatePVToCSI's topology ------------------------------------

ZONE = "topology.kubernetes.io/zone"
ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
GKE_ZONE = "topology.gke.io/zone"


def _affinity(*exprs: tuple[str, list[str]]) -> dict[str, Any]:
    reqs = [{"key": k, "operator": "In", "values": v} for k, v in exprs]
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": reqs}]}}


def _gce_pv(affinity: dict[str, Any] | None, labels: dict[str, str] | None = None) -> Any:
    spec: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "gcePersistentDisk": {"pdName": "d"}}
    if affinity is not None:
        spec["nodeAffinity"] = affinity
    return decode_pv({"metadata": {"name": "pv", "labels": labels or {}}, "spec": spec})


@pytest.mark.parametrize(
    ("pv", "node_labels", "fits"),
    [
        (_gce_pv(_affinity((ZONE, ["z1"]))), {GKE_ZONE: "z1"}, True),
        (_gce_pv(_affinity((ZONE, ["z1"]))), {ZONE: "z1"}, False),
        (_gce_pv(_affinity((ZONE_BETA, ["z1"]))), {GKE_ZONE: "z1"}, True),
        (_gce_pv(None, {ZONE: "us-east1-b__us-east1-c"}), {GKE_ZONE: "us-east1-c"}, True),
        (_gce_pv(None, {ZONE: "z1"}), {ZONE: "z1"}, False),
        (
            _gce_pv(
                _affinity((ZONE_BETA, ["z1"]), ("failure-domain.beta.kubernetes.io/region", ["r"]))
            ),
            {GKE_ZONE: "z1", "topology.kubernetes.io/region": "r"},
            True,
        ),
        (_gce_pv(None), {}, True),
    ],
    ids=[
        "zone-moves-to-csi-key",
        "in-tree-zone-no-longer-enough",
        "beta-zone-moves-too",
        "zones-from-labels-added",
        "label-zone-added-as-csi-key",
        "beta-region-becomes-ga",
        "no-topology",
    ],
)
def test_translated_affinity(pv: Any, node_labels: dict[str, str], fits: bool) -> None:
    affinity = translated_affinity(pv)
    assert (affinity is None or affinity.matches(node_labels, "n")) == fits


def test_a_pv_that_does_not_translate_is_an_error() -> None:
    with pytest.raises(MigrationError, match="multiple or no regions"):
        translated_affinity(_gce_pv(None, {ZONE: "us-east1-b__eu-west1-c"}))


def test_migrated_on_node_needs_the_annotation_and_a_ga_plugin() -> None:
    ann = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd,x"}
    assert migrated_on_node("kubernetes.io/gce-pd", ann)
    assert not migrated_on_node("kubernetes.io/aws-ebs", ann)
    assert not migrated_on_node("kubernetes.io/gce-pd", None)
    azure_file = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/azure-file"}
    assert not migrated_on_node("kubernetes.io/azure-file", azure_file)


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        (_pod("d", _gce_volume("a"), node="n1"), QueueingHint.QUEUE),
        (_pod("d", {"emptyDir": {}}, node="n1"), QueueingHint.QUEUE_SKIP),
    ],
    ids=["bound-with-migratable-inline-volume", "nothing-attachable"],
)
def test_assigned_pod_deleted_hint_counts_migratable_inline_volumes(
    deleted: Pod, want: QueueingHint
) -> None:
    """The claim cases are in test_volume_hints.py; this is the in-line migration one."""
    assert _assigned_pod_deleted_hint(make_pod("p").pvc("x").obj(), deleted, None) == want


@pytest.mark.parametrize(
    ("prevent", "node_has_driver", "want"),
    [
        (True, False, (Code.UNSCHEDULABLE, (f"{CSI} CSI driver is not installed on the node",))),
        (True, True, (None, ())),
        (False, False, (None, ())),
    ],
    ids=["opted-in-missing", "opted-in-installed", "not-opted-in"],
)
def test_a_driver_that_must_be_installed(
    prevent: bool, node_has_driver: bool, want: tuple[Any, ...]
) -> None:
    """checkCSIDriverOnNode (VolumeLimitScaling, beta and on in 1.37): a CSIDriver with
    preventPodSchedulingIfMissing keeps its volumes off nodes whose CSINode lacks it."""
    driver = decode_csi_driver(
        {"metadata": {"name": CSI}, "spec": {"preventPodSchedulingIfMissing": prevent}}
    )
    csi_node = _csi_node(CSI if node_has_driver else GCE, 8)
    got = _filter(
        make_pod("p").pvc("data").obj(),
        csi_nodes=(csi_node,),
        pvs=CSI_PVS,
        claims=(_claim("data", volume="v2"),),
        drivers=(driver,),
    )
    assert got == want
