"""Volumes end to end: asched's VolumeBinding with kube-controller-manager's PV controller.

A static local PV pins its pod to the PV's node; a StatefulSet's volumeClaimTemplates get
volumes from the fake provisioner on the nodes asched picked, and the PV controller binds
them: pods bound, claims Bound, each PV's node affinity naming its pod's node.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from asched.localcluster import ClusterClient, LocalCluster, NodeSpec
from asched.localcluster.provisioner import FAKE_PROVISIONER, FakeProvisioner
from tests.builders import make_pod
from tests.cluster_fixtures import unique
from tests.integration.asched_proc import running_asched
from tests.integration.conftest import NodeFactory
from tests.integration.helpers import poll

SCHEDULER = "storage-test"
HOSTNAME = "kubernetes.io/hostname"


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"profiles:\n  - schedulerName: {SCHEDULER}\n"
    )
    return path


@pytest.fixture
async def storage_class(admin: ClusterClient) -> AsyncIterator[Callable[[str], Awaitable[str]]]:
    """Makes WaitForFirstConsumer classes of a provisioner; deletes them and their PVs."""
    made: list[str] = []

    async def make(provisioner: str) -> str:
        name = unique("wffc")
        await admin.post(
            "/apis/storage.k8s.io/v1/storageclasses",
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": name},
                "provisioner": provisioner,
                "volumeBindingMode": "WaitForFirstConsumer",
            },
        )
        made.append(name)
        return name

    yield make
    for pv in await admin.list("/api/v1/persistentvolumes"):
        if pv["spec"].get("storageClassName") in made:
            await admin.delete(f"/api/v1/persistentvolumes/{pv['metadata']['name']}")
    for name in made:
        await admin.delete(f"/apis/storage.k8s.io/v1/storageclasses/{name}")


def _local_pv(name: str, cls: str, hostname: str, size: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": cls,
            "local": {"path": f"/mnt/{name}"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": HOSTNAME, "operator": "In", "values": [hostname]}
                            ]
                        }
                    ]
                }
            },
        },
    }


def _claim(name: str, cls: str, size: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": cls,
            "resources": {"requests": {"storage": size}},
        },
    }


async def _bound_pods(admin: ClusterClient, ns: str, want: int) -> dict[str, str] | None:
    pods = await admin.list(f"/api/v1/namespaces/{ns}/pods")
    bound = {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods}
    return bound if len(bound) == want and all(bound.values()) else None


async def _wait_pods(admin: ClusterClient, ns: str, want: int, within: float) -> dict[str, str]:
    """The pods' nodes once all `want` are bound; on timeout, fail with their events."""
    try:
        with anyio.fail_after(within):
            return await poll(lambda: _bound_pods(admin, ns, want), interval=0.3)
    except TimeoutError:
        events = await admin.list(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")
        notes = [f"{e['regarding']['name']}: {e.get('reason')}: {e.get('note')}" for e in events]
        pytest.fail("pods not bound; events:\n" + "\n".join(notes))


async def _bound_claims(admin: ClusterClient, ns: str, want: int) -> dict[str, str] | None:
    claims = await admin.list(f"/api/v1/namespaces/{ns}/persistentvolumeclaims")
    bound = {
        c["metadata"]["name"]: c["spec"].get("volumeName", "")
        for c in claims
        if (c.get("status") or {}).get("phase") == "Bound"
    }
    return bound if len(bound) == want else None


def _pv_hostnames(pv: dict[str, Any]) -> list[str]:
    terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    return [v for t in terms for e in t["matchExpressions"] for v in e["values"]]


async def test_static_local_pv_pins_the_pod_and_smallest_fitting_pv_wins(  # noqa: PLR0917
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    storage_class: Callable[[str], Awaitable[str]],
    tmp_path: Path,
) -> None:
    # No provisioner: only the static PVs can serve the claim.
    cls = await storage_class("kubernetes.io/no-provisioner")
    nodes = await kwok_nodes([NodeSpec("vol-a"), NodeSpec("vol-b"), NodeSpec("vol-c")])
    target = sorted(nodes)[1]
    # Only `target` has PVs of the class; the 5Gi one is the smallest that fits 4Gi.
    small, big = unique("pv-small"), unique("pv-big")
    await admin.post("/api/v1/persistentvolumes", _local_pv(small, cls, target, "5Gi"))
    await admin.post("/api/v1/persistentvolumes", _local_pv(big, cls, target, "50Gi"))
    await admin.post(
        f"/api/v1/namespaces/{namespace}/persistentvolumeclaims",
        _claim("data", cls, "4Gi"),
    )
    pod = make_pod("web", namespace).scheduler(SCHEDULER).pvc("data").manifest()
    async with running_asched(
        _config(tmp_path), cluster.scheduler_kubeconfig, tmp_path / "asched.log"
    ):
        await admin.post(f"/api/v1/namespaces/{namespace}/pods", pod)
        bound = await _wait_pods(admin, namespace, 1, 60)
        with anyio.fail_after(30):
            claims = await poll(lambda: _bound_claims(admin, namespace, 1), interval=0.3)
    assert bound == {"web": target}
    assert claims == {"data": small}


async def test_statefulset_volume_claim_templates_are_provisioned_on_chosen_nodes(  # noqa: PLR0917
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    storage_class: Callable[[str], Awaitable[str]],
    tmp_path: Path,
) -> None:
    cls = await storage_class(FAKE_PROVISIONER)
    await kwok_nodes([NodeSpec(f"sts-{i}") for i in range(3)])
    template = make_pod("x", namespace).scheduler(SCHEDULER).pvc("data").manifest()
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "schedulerName": SCHEDULER,
                    "containers": template["spec"]["containers"],
                },
            },
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": _claim("data", cls, "1Gi")["spec"]}
            ],
        },
    }
    provisioner = FakeProvisioner(admin)
    async with (
        running_asched(_config(tmp_path), cluster.scheduler_kubeconfig, tmp_path / "asched.log"),
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(provisioner.run)
        await admin.post(f"/apis/apps/v1/namespaces/{namespace}/statefulsets", sts)
        pods = await _wait_pods(admin, namespace, 3, 90)
        with anyio.fail_after(30):
            claims = await poll(lambda: _bound_claims(admin, namespace, 3), interval=0.3)
        tg.cancel_scope.cancel()
    assert set(pods) == {"db-0", "db-1", "db-2"}
    assert set(claims) == {"data-db-0", "data-db-1", "data-db-2"}
    for i in range(3):
        pv = await admin.get(f"/api/v1/persistentvolumes/{claims[f'data-db-{i}']}")
        assert _pv_hostnames(pv) == [pods[f"db-{i}"]]
        assert pv["spec"]["claimRef"]["name"] == f"data-db-{i}"
    assert len(provisioner.provisioned) == 3


async def _selected_node(admin: ClusterClient, ns: str) -> str | None:
    claim = await admin.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data")
    node: str | None = (claim["metadata"].get("annotations") or {}).get(
        "volume.kubernetes.io/selected-node"
    )
    return node


async def test_sigkill_between_prebind_write_and_binding_then_restart(  # noqa: PLR0917
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    storage_class: Callable[[str], Awaitable[str]],
    tmp_path: Path,
) -> None:
    """asched is killed while PreBind waits for a volume nobody provisions yet; after a
    restart (and the provisioner starting) the pod is bound on the node its claim names,
    and no PV is bound to two claims."""
    cls = await storage_class(FAKE_PROVISIONER)
    nodes = await kwok_nodes([NodeSpec("kill-a"), NodeSpec("kill-b")])
    await admin.post(
        f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", _claim("data", cls, "1Gi")
    )
    pod = make_pod("web", namespace).scheduler(SCHEDULER).pvc("data").manifest()
    config = _config(tmp_path)
    async with running_asched(config, cluster.scheduler_kubeconfig, tmp_path / "first.log") as p:
        await admin.post(f"/api/v1/namespaces/{namespace}/pods", pod)
        with anyio.fail_after(30):
            selected = await poll(lambda: _selected_node(admin, namespace), interval=0.2)
        p.kill()  # SIGKILL: PreBind wrote the annotation and was waiting
    assert selected in nodes
    assert not (await admin.get(f"/api/v1/namespaces/{namespace}/pods/web"))["spec"].get("nodeName")
    provisioner = FakeProvisioner(admin)
    async with (
        running_asched(config, cluster.scheduler_kubeconfig, tmp_path / "second.log"),
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(provisioner.run)
        bound = await _wait_pods(admin, namespace, 1, 90)
        with anyio.fail_after(30):
            claims = await poll(lambda: _bound_claims(admin, namespace, 1), interval=0.3)
        tg.cancel_scope.cancel()
    assert bound == {"web": selected}
    pvs = [
        pv
        for pv in await admin.list("/api/v1/persistentvolumes")
        if pv["spec"].get("storageClassName") == cls
    ]
    refs = [
        (pv["spec"]["claimRef"]["namespace"], pv["spec"]["claimRef"]["name"])
        for pv in pvs
        if pv["spec"].get("claimRef")
    ]
    assert len(refs) == len(set(refs)) == 1
    assert claims == {"data": pvs[0]["metadata"]["name"]}
    assert _pv_hostnames(pvs[0]) == [selected]
