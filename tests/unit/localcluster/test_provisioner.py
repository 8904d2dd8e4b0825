"""The fake provisioner's choice of claims and the PV it builds for one."""

from __future__ import annotations

from typing import Any

import pytest

from asched.localcluster.provisioner import FAKE_PROVISIONER, build_pv, wants_volume

CLASSES = {
    "ours": {"provisioner": FAKE_PROVISIONER, "volumeBindingMode": "WaitForFirstConsumer"},
    "immediate": {"provisioner": FAKE_PROVISIONER, "volumeBindingMode": "Immediate"},
    "theirs": {"provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"},
}


def claim(cls: str = "ours", node: str | None = "n1", volume: str = "") -> dict[str, Any]:
    annotations = {} if node is None else {"volume.kubernetes.io/selected-node": node}
    return {
        "metadata": {"name": "data", "namespace": "ns", "uid": "u1", "annotations": annotations},
        "spec": {
            "storageClassName": cls,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "3Gi"}},
            "volumeName": volume,
        },
    }


@pytest.mark.parametrize(
    ("body", "want"),
    [
        pytest.param(claim(), True, id="selected-node-our-class"),
        pytest.param(claim(node=None), False, id="no-selected-node"),
        pytest.param(claim(volume="pv"), False, id="already-bound"),
        pytest.param(claim(cls="immediate"), False, id="immediate-class"),
        pytest.param(claim(cls="theirs"), False, id="other-provisioner"),
        pytest.param(claim(cls="missing"), False, id="missing-class"),
    ],
)
def test_wants_volume(body: dict[str, Any], want: bool) -> None:
    assert wants_volume(body, CLASSES, FAKE_PROVISIONER) is want


def test_pv_is_pre_bound_and_pinned_to_the_node() -> None:
    pv = build_pv(claim(), "host-1", FAKE_PROVISIONER)
    assert pv["metadata"]["name"] == "pvc-u1"
    spec = pv["spec"]
    assert spec["capacity"] == {"storage": "3Gi"}
    assert spec["storageClassName"] == "ours"
    assert spec["claimRef"] == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": "ns",
        "name": "data",
        "uid": "u1",
    }
    (term,) = spec["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["host-1"]}
    ]
