"""Queueing hints of NodeVolumeLimits and VolumeRestrictions, table by table.

Pins kube-scheduler v1.37.2's CSILimits.EventsToRegister (nodevolumelimits/csi.go),
VolumeRestrictions' and VolumeZone's hints and VolumeBinding's
isSchedulableAfterCSIDriverChange; VolumeBinding's other hints are pinned in
test_volumes.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asched.api import Pod, decode_pod
from asched.api.storage import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    decode_csi_driver,
    decode_csi_node,
    decode_pv,
    decode_pvc,
    decode_storage_class,
)
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.events import QueueingHintFn as HintFn
from asched.plugins.volumes import (
    NodeVolumeLimits,
    VolumeBinding,
    VolumeRestrictions,
    VolumeZone,
)
from tests.builders import make_pod
from tests.unit.plugins.fakes import FakeHandle

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _csi_node(**counts: int | None) -> CSINode:
    drivers: list[dict[str, Any]] = []
    for name, count in counts.items():
        d: dict[str, Any] = {"name": name.replace("_", "."), "nodeID": "n1"}
        if count is not None:
            d["allocatable"] = {"count": count}
        drivers.append(d)
    return decode_csi_node({"metadata": {"name": "n1"}, "spec": {"drivers": drivers}})


def _claim(name: str, namespace: str = "default") -> PersistentVolumeClaim:
    return decode_pvc(
        {
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": {"accessModes": ["ReadWriteOnce"]},
        }
    )


def _ephemeral(name: str, volume: str) -> Pod:
    raw = make_pod(name).raw()
    raw["spec"]["volumes"] = [{"name": volume, "ephemeral": {"volumeClaimTemplate": {}}}]
    return decode_pod(raw)


def _empty_dir_pod(name: str, node: str) -> Pod:
    raw = make_pod(name).node(node).raw()
    raw["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return decode_pod(raw)


def _limits_hint(resource: EventResource, action: ActionType) -> HintFn:
    for reg in NodeVolumeLimits(None, FakeHandle()).events_to_register():
        if reg.event.resource == resource and reg.event.action == action:
            assert reg.hint is not None
            return reg.hint
    raise AssertionError(f"no hint registered for {resource} {action!r}")


def test_node_volume_limits_registers_csilimits_events() -> None:
    # CSILimits.EventsToRegister (v1.37.2). A CSINode add has no hint (always Queue), as
    # in Go.
    got = [
        (r.event.resource, r.event.action, r.hint is not None)
        for r in NodeVolumeLimits(None, FakeHandle()).events_to_register()
    ]
    assert got == [
        (EventResource.CSI_NODE, ActionType.ADD, False),
        (EventResource.CSI_NODE, ActionType.UPDATE, True),
        (EventResource.POD, ActionType.DELETE, True),
        (EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD, True),
        (EventResource.VOLUME_ATTACHMENT, ActionType.DELETE, True),
    ]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(_csi_node(d_io=1), _csi_node(d_io=2), Q, id="count-grew"),
        pytest.param(_csi_node(d_io=2), _csi_node(d_io=2), SKIP, id="count-same"),
        pytest.param(_csi_node(d_io=2), _csi_node(d_io=1), SKIP, id="count-shrank"),
        pytest.param(_csi_node(d_io=1), _csi_node(d_io=1, e_io=1), Q, id="driver-added"),
        pytest.param(_csi_node(d_io=1), _csi_node(d_io=1, e_io=None), SKIP, id="no-count-is-0"),
        pytest.param(_csi_node(d_io=None), _csi_node(d_io=3), Q, id="count-appeared"),
    ],
)
def test_csi_node_update_hint_follows_is_schedulable_after_csi_node_updated(
    old: CSINode, new: CSINode, want: QueueingHint
) -> None:
    hint = _limits_hint(EventResource.CSI_NODE, ActionType.UPDATE)
    assert hint(make_pod("p").pvc("data").obj(), old, new) == want


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(make_pod("d").pvc("x").node("n1").obj(), Q, id="scheduled-with-claim"),
        pytest.param(make_pod("d").pvc("x").nominated("n1").obj(), Q, id="nominated-with-claim"),
        pytest.param(make_pod("d").pvc("x").obj(), SKIP, id="unscheduled"),
        pytest.param(make_pod("d").node("n1").obj(), SKIP, id="no-volumes"),
        pytest.param(_empty_dir_pod("d", "n1"), SKIP, id="no-claim-backed-volume"),
        # Any namespace: a deleted pod frees its node's attachments for everyone.
        pytest.param(make_pod("d", "other").pvc("x").node("n1").obj(), Q, id="other-namespace"),
    ],
)
def test_assigned_pod_delete_hint_follows_is_schedulable_after_assigned_pod_deleted(
    deleted: Pod, want: QueueingHint
) -> None:
    hint = _limits_hint(EventResource.POD, ActionType.DELETE)
    assert hint(make_pod("p").pvc("data").obj(), deleted, None) == want


def _gce(name: str, namespace: str, pd: str, node: str = "") -> Pod:
    b = make_pod(name, namespace)
    if node:
        b = b.node(node)
    raw = b.raw()
    raw["spec"]["volumes"] = [{"name": "disk", "gcePersistentDisk": {"pdName": pd}}]
    return decode_pod(raw)


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(_gce("d", "default", "pd-1", "n1"), Q, id="same-disk"),
        pytest.param(_gce("d", "default", "pd-2", "n1"), SKIP, id="other-disk"),
        # isSchedulableAfterAssignedPodDeleted returns QueueSkip for another namespace
        # before it looks at volumes, in-line disks included.
        pytest.param(_gce("d", "other", "pd-1", "n1"), SKIP, id="same-disk-other-namespace"),
    ],
)
def test_volume_restrictions_delete_hint_checks_the_namespace_first(
    deleted: Pod, want: QueueingHint
) -> None:
    hint = _hint_of(VolumeRestrictions(None, FakeHandle()), EventResource.POD)
    assert hint(_gce("p", "default", "pd-1"), deleted, None) == want


def _driver(capacity: bool, name: str = "csi.example.com") -> CSIDriver:
    return decode_csi_driver({"metadata": {"name": name}, "spec": {"storageCapacity": capacity}})


def _inline_csi(driver: str) -> Pod:
    raw = make_pod("p").pvc("data").raw()
    raw["spec"]["volumes"].append({"name": "inline", "csi": {"driver": driver}})
    return decode_pod(raw)


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            _inline_csi("csi.example.com"), _driver(True), _driver(False), Q, id="capacity-off"
        ),
        pytest.param(
            _inline_csi("csi.example.com"), _driver(False), _driver(True), SKIP, id="capacity-on"
        ),
        pytest.param(
            _inline_csi("other.example.com"), _driver(True), _driver(False), SKIP, id="other"
        ),
        pytest.param(
            make_pod("p").pvc("data").obj(), _driver(True), _driver(False), SKIP, id="no-inline"
        ),
    ],
)
def test_csi_driver_hint_follows_is_schedulable_after_csi_driver_change(
    pod: Pod, old: CSIDriver, new: CSIDriver, want: QueueingHint
) -> None:
    hint = _hint_of(VolumeBinding(None, FakeHandle()), EventResource.CSI_DRIVER)
    assert hint(pod, old, new) == want


def _hint_of(plugin: Any, resource: EventResource) -> HintFn:
    (reg,) = [r for r in plugin.events_to_register() if r.event.resource == resource]
    assert reg.hint is not None
    return reg.hint


def _class(mode: str | None) -> StorageClass:
    raw: dict[str, Any] = {"metadata": {"name": "sc"}, "provisioner": "csi.example.com"}
    if mode is not None:
        raw["volumeBindingMode"] = mode
    return decode_storage_class(raw)


@pytest.mark.parametrize(
    ("added", "want"),
    [
        pytest.param(_class("WaitForFirstConsumer"), Q, id="wait-for-first-consumer"),
        pytest.param(_class("Immediate"), SKIP, id="immediate"),
        pytest.param(_class(None), SKIP, id="default-mode"),
    ],
)
def test_volume_zone_storage_class_add_hint(added: StorageClass, want: QueueingHint) -> None:
    hint = _hint_of(VolumeZone(None, FakeHandle()), EventResource.STORAGE_CLASS)
    assert hint(make_pod("p").pvc("data").obj(), None, added) == want


def _zoned(labels: dict[str, str]) -> PersistentVolume:
    return decode_pv(
        {
            "metadata": {"name": "pv", "labels": {"team": "a", **labels}},
            "spec": {"capacity": {"storage": "1Gi"}, "hostPath": {"path": "/d"}},
        }
    )


ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, _zoned({ZONE: "z1"}), Q, id="created"),
        pytest.param(_zoned({ZONE: "z1"}), _zoned({ZONE: "z2"}), Q, id="zone-changed"),
        pytest.param(_zoned({}), _zoned({ZONE: "z1"}), Q, id="zone-added"),
        pytest.param(_zoned({ZONE: "z1"}), _zoned({BETA_ZONE: "z1"}), Q, id="key-changed"),
        pytest.param(_zoned({ZONE: "z1__z2"}), _zoned({ZONE: "z2__z1"}), SKIP, id="same-zone-set"),
        pytest.param(
            _zoned({ZONE: "z1"}),
            _zoned({ZONE: "z1", "other": "x"}),
            SKIP,
            id="other-label-changed",
        ),
    ],
)
def test_volume_zone_pv_hint_follows_topology_labels(
    old: PersistentVolume | None, new: PersistentVolume, want: QueueingHint
) -> None:
    hint = _hint_of(VolumeZone(None, FakeHandle()), EventResource.PERSISTENT_VOLUME)
    assert hint(make_pod("p").pvc("data").obj(), old, new) == want


# The PVC hints of three plugins share their cases; only a generic ephemeral volume's
# claim (ephemeral.VolumeClaimName: <pod>-<volume>) tells them apart: CSILimits'
# isSchedulableAfterPVCAdded counts it, VolumeRestrictions' and VolumeZone's hints look
# at persistentVolumeClaim volumes only.
_PVC_HINTS: dict[str, tuple[Callable[[], HintFn], QueueingHint]] = {
    "NodeVolumeLimits": (
        lambda: _limits_hint(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
        Q,
    ),
    "VolumeRestrictions": (
        lambda: _hint_of(
            VolumeRestrictions(None, FakeHandle()), EventResource.PERSISTENT_VOLUME_CLAIM
        ),
        SKIP,
    ),
    "VolumeZone": (
        lambda: _hint_of(VolumeZone(None, FakeHandle()), EventResource.PERSISTENT_VOLUME_CLAIM),
        SKIP,
    ),
}


@pytest.mark.parametrize("plugin", sorted(_PVC_HINTS))
@pytest.mark.parametrize(
    ("pod", "claim", "want"),
    [
        pytest.param(make_pod("p").pvc("data").obj(), _claim("data"), Q, id="own-claim"),
        pytest.param(make_pod("p").pvc("data").obj(), _claim("other"), SKIP, id="other-claim"),
        pytest.param(
            make_pod("p").pvc("data").obj(), _claim("data", "ns2"), SKIP, id="other-namespace"
        ),
        pytest.param(_ephemeral("p", "scratch"), _claim("p-scratch"), None, id="ephemeral"),
    ],
)
def test_pvc_hints_queue_for_the_pods_own_claims(
    plugin: str, pod: Pod, claim: PersistentVolumeClaim, want: QueueingHint | None
) -> None:
    get, ephemeral = _PVC_HINTS[plugin]
    hint = get()
    assert hint(pod, None, claim) == (ephemeral if want is None else want)
    if plugin == "VolumeZone":  # it registers PVC updates too
        assert hint(pod, claim, claim) == (ephemeral if want is None else want)
