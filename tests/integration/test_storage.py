"""Volumes end to end: asched's VolumeBinding with kube-controller-manager's PV controller.

A static local PV pins its pod to the PV's node; a StatefulSet's volumeClaimTemplates get
volumes from the fake provisioner on the nodes asched picked, and the PV controller binds
them: pods bound, claims Bound, each PV's node affinity naming its pod's node. A class or
a PV deleted under a pending pod gives Go's reason, and asched goes on binding others.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from asched.localcluster import ClusterClient, NodeSpec
from asched.localcluster.provisioner import FAKE_PROVISIONER, provisioning
from asched.testing.builders import PodBuilder
from tests.builders import make_pod
from tests.cluster_fixtures import unique
from tests.integration.asched_proc import AschedProcess
from tests.integration.conftest import NodeFactory
from tests.integration.harness import AschedHarness, profile_config
from tests.integration.helpers import poll

SCHEDULER = "storage-test"
HOSTNAME = "kubernetes.io/hostname"
PVS = "/api/v1/persistentvolumes"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
CONFIG = profile_config(SCHEDULER)


@dataclass
class Storage:
    """One test's cluster side: namespace, nodes, classes and PVs it made (deleted after),
    and asched started with the `storage-test` profile."""

    harness: AschedHarness
    admin: ClusterClient
    namespace: str
    nodes: NodeFactory
    classes: list[str] = field(default_factory=list)

    def asched(self) -> AbstractAsyncContextManager[AschedProcess]:
        return self.harness.run(CONFIG)

    async def storage_class(self, provisioner: str) -> str:
        """A WaitForFirstConsumer class of *provisioner*."""
        name = unique("wffc")
        body = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name},
            "provisioner": provisioner,
            "volumeBindingMode": "WaitForFirstConsumer",
        }
        await self.admin.post(CLASSES, body)
        self.classes.append(name)
        return name

    async def claim(self, name: str, cls: str, size: str, volume: str = "") -> None:
        """A claim; with *volume*, created bound to it (as the PV controller leaves one)."""
        body = _claim(name, cls, size)
        if volume:
            body["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
            body["spec"]["volumeName"] = volume
        await self.admin.post(f"/api/v1/namespaces/{self.namespace}/persistentvolumeclaims", body)

    async def pod(self, body: dict[str, Any]) -> None:
        await self.harness.create_pod(body)

    def make_pod(self, name: str) -> PodBuilder:
        return make_pod(name, self.namespace).scheduler(SCHEDULER)

    async def wait_pods(self, want: int, within: float) -> dict[str, str]:
        """The pods' nodes once all `want` are bound; on timeout, fail with their events."""
        try:
            with anyio.fail_after(within):
                return await poll(lambda: _bound_pods(self.admin, self.namespace, want), 0.3)
        except TimeoutError:
            notes = [f"{pod}: {note}" for pod, note in await self.notes()]
            pytest.fail("pods not bound; events:\n" + "\n".join(notes))

    async def wait_claims(self, want: int, within: float = 30) -> dict[str, str]:
        """claim -> volume once `want` claims are Bound."""
        with anyio.fail_after(within):
            return await poll(lambda: _bound_claims(self.admin, self.namespace, want), 0.3)

    async def notes(self) -> list[tuple[str, str]]:
        """(pod, note) of every Event of the namespace's pods, reason included."""
        events = await self.admin.list(f"/apis/events.k8s.io/v1/namespaces/{self.namespace}/events")
        return [(e["regarding"]["name"], f"{e.get('reason')}: {e.get('note')}") for e in events]

    async def cleanup(self) -> None:
        for pv in await self.admin.list(PVS):
            if pv["spec"].get("storageClassName") in self.classes:
                await self.admin.delete(f"{PVS}/{pv['metadata']['name']}")
        for name in self.classes:
            if any(c["metadata"]["name"] == name for c in await self.admin.list(CLASSES)):
                await self.admin.delete(f"{CLASSES}/{name}")


@pytest.fixture
async def storage(
    asched: AschedHarness, admin: ClusterClient, namespace: str, kwok_nodes: NodeFactory
) -> AsyncIterator[Storage]:
    s = Storage(asched, admin, namespace, kwok_nodes)
    yield s
    await s.cleanup()


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
    bound = {name: node for name, node in bound.items() if node}
    return bound if len(bound) == want else None


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


async def test_static_local_pv_pins_the_pod_and_smallest_fitting_pv_wins(
    storage: Storage,
) -> None:
    # No provisioner: only the static PVs can serve the claim.
    cls = await storage.storage_class("kubernetes.io/no-provisioner")
    nodes = await storage.nodes([NodeSpec("vol-a"), NodeSpec("vol-b"), NodeSpec("vol-c")])
    target = sorted(nodes)[1]
    # Only `target` has PVs of the class; the 5Gi one is the smallest that fits 4Gi.
    small, big = unique("pv-small"), unique("pv-big")
    await storage.admin.post(PVS, _local_pv(small, cls, target, "5Gi"))
    await storage.admin.post(PVS, _local_pv(big, cls, target, "50Gi"))
    await storage.claim("data", cls, "4Gi")
    async with storage.asched():
        await storage.pod(storage.make_pod("web").pvc("data").manifest())
        bound = await storage.wait_pods(1, 60)
        claims = await storage.wait_claims(1)
    assert bound == {"web": target}
    assert claims == {"data": small}


async def test_a_pod_whose_volumes_bind_in_pre_bind_is_nominated_before_it_is_bound(
    storage: Storage,
) -> None:
    # NominatedNodeNameForExpectation: VolumeBinding's PreBindPreFlight has work (an
    # unbound claim), so the binding cycle patches nominatedNodeName to the chosen node
    # before PreBind; the API server clears it again at binding
    # (ClearingNominatedNodeNameAfterBinding), so only the watch sees it.
    cls = await storage.storage_class("kubernetes.io/no-provisioner")
    (node,) = await storage.nodes([NodeSpec("nnn-a")])
    await storage.admin.post(PVS, _local_pv(unique("pv"), cls, node, "5Gi"))
    await storage.claim("data", cls, "1Gi")
    seen: list[tuple[str, str]] = []  # (nominatedNodeName, nodeName) of each version

    async def watch_pod() -> None:
        path = f"/api/v1/namespaces/{storage.namespace}/pods"
        params = {"fieldSelector": "metadata.name=web", "timeoutSeconds": "60"}
        async with storage.admin.watch(path, params=params) as events:
            async for event in events:
                pod = event["object"]
                nominated = (pod.get("status") or {}).get("nominatedNodeName", "")
                seen.append((nominated, pod["spec"].get("nodeName", "")))
                if seen[-1][1]:
                    return

    async with storage.asched(), anyio.create_task_group() as tg:
        tg.start_soon(watch_pod)
        await anyio.sleep(0.5)  # the watch is open before the pod exists
        await storage.pod(storage.make_pod("web").pvc("data").manifest())
        assert await storage.wait_pods(1, 60) == {"web": node}
    assert (node, "") in seen  # nominated while still unbound
    assert seen[-1][1] == node


async def test_statefulset_volume_claim_templates_are_provisioned_on_chosen_nodes(
    storage: Storage,
) -> None:
    cls = await storage.storage_class(FAKE_PROVISIONER)
    await storage.nodes([NodeSpec(f"sts-{i}") for i in range(3)])
    template = storage.make_pod("x").pvc("data").manifest()
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
    async with storage.asched(), provisioning(storage.admin, {cls}) as provisioner:
        await storage.admin.post(f"/apis/apps/v1/namespaces/{storage.namespace}/statefulsets", sts)
        pods = await storage.wait_pods(3, 90)
        claims = await storage.wait_claims(3)
    assert set(pods) == {"db-0", "db-1", "db-2"}
    assert set(claims) == {"data-db-0", "data-db-1", "data-db-2"}
    for i in range(3):
        pv = await storage.admin.get(f"{PVS}/{claims[f'data-db-{i}']}")
        assert _pv_hostnames(pv) == [pods[f"db-{i}"]]
        assert pv["spec"]["claimRef"]["name"] == f"data-db-{i}"
    assert len(provisioner.provisioned) == 3


async def _selected_node(admin: ClusterClient, ns: str) -> str | None:
    claim = await admin.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data")
    node: str | None = (claim["metadata"].get("annotations") or {}).get(
        "volume.kubernetes.io/selected-node"
    )
    return node


async def test_sigkill_between_prebind_write_and_binding_then_restart(storage: Storage) -> None:
    """asched is killed while PreBind waits for a volume nobody provisions yet; after a
    restart (and the provisioner starting) the pod is bound on the node its claim names,
    and no PV is bound to two claims."""
    cls = await storage.storage_class(FAKE_PROVISIONER)
    nodes = await storage.nodes([NodeSpec("kill-a"), NodeSpec("kill-b")])
    await storage.claim("data", cls, "1Gi")
    ns = storage.namespace
    async with storage.asched() as p:
        await storage.pod(storage.make_pod("web").pvc("data").manifest())
        with anyio.fail_after(30):
            selected = await poll(lambda: _selected_node(storage.admin, ns), interval=0.2)
        p.kill()  # SIGKILL: PreBind wrote the annotation and was waiting
    assert selected in nodes
    web = await storage.admin.get(f"/api/v1/namespaces/{ns}/pods/web")
    assert not web["spec"].get("nodeName")
    async with storage.asched(), provisioning(storage.admin, {cls}):
        bound = await storage.wait_pods(1, 90)
        claims = await storage.wait_claims(1)
    assert bound == {"web": selected}
    pvs = [pv for pv in await storage.admin.list(PVS) if pv["spec"].get("storageClassName") == cls]
    refs = [
        (pv["spec"]["claimRef"]["namespace"], pv["spec"]["claimRef"]["name"])
        for pv in pvs
        if pv["spec"].get("claimRef")
    ]
    assert len(refs) == len(set(refs)) == 1
    assert claims == {"data": pvs[0]["metadata"]["name"]}
    assert _pv_hostnames(pvs[0]) == [selected]


async def _notes_for(storage: Storage, pod: str, *needles: str) -> list[str] | None:
    notes = [note for who, note in await storage.notes() if who == pod]
    return notes if any(all(n in note for n in needles) for note in notes) else None


async def _claim_phase(storage: Storage, name: str, phase: str) -> bool | None:
    claim = await storage.admin.get(
        f"/api/v1/namespaces/{storage.namespace}/persistentvolumeclaims/{name}"
    )
    return True if (claim.get("status") or {}).get("phase") == phase else None


async def test_deleted_class_and_pv_give_gos_reasons_and_later_pods_still_bind(
    storage: Storage,
) -> None:
    """A StorageClass and a PV deleted under two pending pods: when the pods are tried
    again each FailedScheduling names what is missing in kube-scheduler's words (a claim
    of a missing class is Immediate, IsDelayBindingMode; a Lost claim is refused by
    podHasPVCs), asched stays up, and a pod created afterwards is bound."""
    cls = await storage.storage_class("kubernetes.io/no-provisioner")
    (node,) = await storage.nodes([NodeSpec("gone-a")])
    await storage.admin.post(PVS, _local_pv(unique("pv-small"), cls, node, "1Gi"))
    await storage.claim("big", cls, "5Gi")  # no PV of the class fits: p1 waits
    held = unique("pv-held")
    await storage.admin.post(
        PVS,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": held},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "",
                "hostPath": {"path": f"/mnt/{held}"},
            },
        },
    )
    await storage.claim("held", "", "1Gi", volume=held)
    with anyio.fail_after(30):
        await poll(lambda: _claim_phase(storage, "held", "Bound"), interval=0.3)
    later = {"storage-test/later": "yes"}
    async with storage.asched() as proc:
        await storage.pod(storage.make_pod("p1").pvc("big").manifest())
        p2 = storage.make_pod("p2").pvc("held").manifest()
        p2["spec"]["nodeSelector"] = later  # waits for a node that comes later
        await storage.pod(p2)
        with anyio.fail_after(30):
            await poll(lambda: _notes_for(storage, "p1", "FailedScheduling"), interval=0.3)
            await poll(lambda: _notes_for(storage, "p2", "FailedScheduling"), interval=0.3)
        # No protection controller runs: lift the PV's finalizer, or it only terminates.
        await storage.admin.patch(f"{PVS}/{held}", {"metadata": {"finalizers": None}})
        await storage.admin.delete(f"{PVS}/{held}")
        await storage.admin.delete(f"{CLASSES}/{cls}")
        with anyio.fail_after(60):  # the PV controller marks the claim Lost
            await poll(lambda: _claim_phase(storage, "held", "Lost"), interval=0.3)
        # Try both again: a claim update (p1's VolumeBinding hint), a node p2 may use.
        path = f"/api/v1/namespaces/{storage.namespace}/persistentvolumeclaims/big"
        await storage.admin.patch(path, {"metadata": {"labels": {"touched": "yes"}}})
        await storage.nodes([NodeSpec("gone-b", labels=later)])
        with anyio.fail_after(30):
            p1_notes = await poll(
                lambda: _notes_for(
                    storage, "p1", "pod has unbound immediate PersistentVolumeClaims"
                ),
                interval=0.3,
            )
            p2_notes = await poll(
                lambda: _notes_for(
                    storage,
                    "p2",
                    f'persistentvolumeclaim "held" bound to non-existent persistentvolume "{held}"',
                ),
                interval=0.3,
            )
        await storage.pod(storage.make_pod("p3").manifest())
        bound = await storage.wait_pods(1, 30)
        assert proc.proc is not None
        assert proc.proc.poll() is None, "asched exited"
    assert set(bound) == {"p3"}  # p1 and p2 still wait
    assert any("didn't find available persistent volumes to bind" in n for n in p1_notes)
    assert all(n.startswith("FailedScheduling: 0/") for n in p1_notes + p2_notes)
