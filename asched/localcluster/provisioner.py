"""A fake dynamic provisioner for the local cluster (tests and the demo only).

kwok nodes have no storage and no CSI driver, so nothing would ever provision the
WaitForFirstConsumer claims that a scheduler hands over with the
`volume.kubernetes.io/selected-node` annotation. This small controller does what an
external provisioner (sig-storage-lib-external-provisioner) does for such a claim: when
the claim's StorageClass names `provisioner` as its provisioner, it creates a PV of the
requested size, pre-bound to the claim (claimRef with its uid) and with node affinity to
the selected node's hostname label. kube-controller-manager's PV controller then binds
claim and volume, which is what the scheduler's PreBind waits for.

It polls rather than watches: it runs only beside tests, where a claim appears a few
times a second at most, and a list every `interval` seconds keeps it to one small loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from typing import Any

import anyio
import structlog

from asched.api.storage import ANN_SELECTED_NODE, WAIT_FOR_FIRST_CONSUMER
from asched.client.protocol import REQUEST_ERRORS, failure_fields
from asched.localcluster.rest import ApiError, ClusterClient, JsonObject

log = structlog.get_logger()

FAKE_PROVISIONER = "fake.asched.io/local"
HOSTNAME_LABEL = "kubernetes.io/hostname"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


def pv_name(claim: JsonObject) -> str:
    """The name an external provisioner gives a claim's volume: pvc-<claim uid>."""
    return f"pvc-{claim['metadata']['uid']}"


def build_pv(claim: JsonObject, hostname: str, provisioner: str) -> JsonObject:
    """The PV for `claim` on the node whose hostname label is `hostname`."""
    meta = claim["metadata"]
    spec = claim.get("spec") or {}
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name(claim), "annotations": {PROVISIONED_BY: provisioner}},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "storageClassName": spec.get("storageClassName") or "",
            "persistentVolumeReclaimPolicy": "Delete",
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": meta["namespace"],
                "name": meta["name"],
                "uid": meta["uid"],
            },
            "local": {"path": f"/mnt/{pv_name(claim)}"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": HOSTNAME_LABEL, "operator": "In", "values": [hostname]}
                            ]
                        }
                    ]
                }
            },
        },
    }


def wants_volume(
    claim: JsonObject,
    classes: dict[str, JsonObject],
    provisioner: str,
    only: Collection[str] | None = None,
) -> bool:
    """An unbound claim with a selected node, of a WaitForFirstConsumer class of ours
    (and, when *only* is given, one of those classes)."""
    meta = claim.get("metadata") or {}
    spec = claim.get("spec") or {}
    if spec.get("volumeName") or meta.get("deletionTimestamp"):
        return False
    if not (meta.get("annotations") or {}).get(ANN_SELECTED_NODE):
        return False
    class_name = str(spec.get("storageClassName") or "")
    if only is not None and class_name not in only:
        return False
    cls = classes.get(class_name)
    return (
        cls is not None
        and cls.get("provisioner") == provisioner
        and cls.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER
    )


class FakeProvisioner:
    """Run `run()` in a task group; cancel the group to stop it (or use `provisioning`).

    `classes`, when given, limits it to claims of those StorageClasses: the differential
    harness serves only the running side's classes, so the other side's claims are never
    touched."""

    def __init__(
        self,
        client: ClusterClient,
        provisioner: str = FAKE_PROVISIONER,
        interval: float = 0.2,
        classes: Collection[str] | None = None,
    ) -> None:
        self._client = client
        self._provisioner = provisioner
        self._interval = interval
        self._classes = None if classes is None else frozenset(classes)
        self.provisioned: list[str] = []

    async def run(self) -> None:
        while True:
            try:
                await self.sync_once()
            except REQUEST_ERRORS as exc:
                # An API server restarting under a test: the next pass provisions what
                # this one could not (each write is idempotent, a 409 counts as done).
                log.warning("provision_pass_failed", **failure_fields(exc))
            await anyio.sleep(self._interval)

    async def sync_once(self) -> None:
        classes = {
            c["metadata"]["name"]: c
            for c in await self._client.list("/apis/storage.k8s.io/v1/storageclasses")
        }
        for claim in await self._client.list("/api/v1/persistentvolumeclaims"):
            if wants_volume(claim, classes, self._provisioner, self._classes):
                await self._provision(claim)

    async def _provision(self, claim: JsonObject) -> None:
        node_name = claim["metadata"]["annotations"][ANN_SELECTED_NODE]
        try:
            node: dict[str, Any] = await self._client.get(f"/api/v1/nodes/{node_name}")
        except ApiError as exc:
            if exc.status == 404:
                log.warning(
                    "provision_node_missing", claim=claim["metadata"]["name"], node=node_name
                )
                return
            raise
        hostname = (node["metadata"].get("labels") or {}).get(HOSTNAME_LABEL, node_name)
        try:
            await self._client.post(
                "/api/v1/persistentvolumes", build_pv(claim, hostname, self._provisioner)
            )
        except ApiError as exc:
            if exc.status != 409:  # already created on an earlier pass
                raise
            return
        self.provisioned.append(pv_name(claim))
        log.info("volume_provisioned", pv=pv_name(claim), node=node_name)


@asynccontextmanager
async def provisioning(
    client: ClusterClient, classes: Collection[str] | None = None
) -> AsyncIterator[FakeProvisioner]:
    """A FakeProvisioner running for the body of the `async with` (stopped on exit)."""
    provisioner = FakeProvisioner(client, classes=classes)
    async with anyio.create_task_group() as tg:
        tg.start_soon(provisioner.run)
        try:
            yield provisioner
        finally:
            tg.cancel_scope.cancel()
