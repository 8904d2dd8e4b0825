"""The storage side of a differential run: what the harness waits for before a scheduler
starts, and what it removes after, for scenarios with volumes and workloads.

kube-controller-manager's PV and statefulset controllers act on the objects a side
creates; the scheduler must start only once they have (volumes_settled, replicas_created),
or the reference's first message depends on a race. No protection controller runs, so
the finalizers the API server's admission adds are lifted here (drop_volumes).
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

import anyio

from asched.localcluster import ApiError, ClusterClient
from asched.localcluster.provisioner import PROVISIONED_BY
from tests.differential.layout import Placement
from tests.differential.schedulers import Side
from tests.integration.helpers import poll

POLL = 0.25


async def unless_gone(request: Awaitable[object]) -> None:
    """Cleanup after a failed setup meets objects that were never created."""
    try:
        await request
    except ApiError as err:
        if err.status != 404:
            raise


async def volumes_settled(
    admin: ClusterClient, placements: Sequence[Placement], side: Side
) -> None:
    """Wait until kube-controller-manager's PV controller has caught up with the objects
    just created: every scenario PV Available or Bound, every claim created bound
    (`volumeName`) Bound, or Lost when its PV is not the scenario's. A scheduler that
    starts earlier sees a Pending PV (which FindMatchingVolume skips: `didn't find
    available persistent volumes to bind`), or a
    claim the controller marked Lost because its informer did not have the PV yet
    (syncBoundClaim; VolumeBinding then says `bound to non-existent persistentvolume`,
    and the claim turns Bound again only at the controller's next resync). Either made
    the reference's first message depend on a race."""
    pvs = {
        o["metadata"]["name"]
        for p in placements
        for o in p.cluster_objects(side)
        if o.get("kind") == "PersistentVolume"
    }
    # A claim created bound to a PV the scenario does not declare (one deleted, as far
    # as anyone can tell) settles as Lost; any other claim created bound, as Bound.
    claims = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): (
            "Bound" if o["spec"]["volumeName"] in pvs else "Lost"
        )
        for p in placements
        for o in p.objects(side)
        if o.get("kind") == "PersistentVolumeClaim" and o["spec"].get("volumeName")
    }
    if not pvs and not claims:
        return

    async def settled() -> bool | None:
        for pv in await admin.list("/api/v1/persistentvolumes"):
            phase = (pv.get("status") or {}).get("phase")
            if pv["metadata"]["name"] in pvs and phase not in {"Available", "Bound"}:
                return None
        for c in await admin.list("/api/v1/persistentvolumeclaims"):
            key = (c["metadata"]["namespace"], c["metadata"]["name"])
            if key in claims and (c.get("status") or {}).get("phase") != claims[key]:
                return None
        return True

    with anyio.fail_after(60):
        await poll(settled, interval=POLL)


async def replicas_created(
    admin: ClusterClient, placements: Sequence[Placement], side: Side
) -> None:
    """Wait until the statefulset controller has made every workload's replica pods, so
    the scheduler's first list holds them as it holds the bare pods."""
    wanted = {
        (p.namespace(side), name)
        for p in placements
        for w in p.scenario.workloads
        for name in w.replica_names
    }
    if not wanted:
        return
    namespaces = {ns for ns, _ in wanted}

    async def all_there() -> bool | None:
        have = set()
        for ns in namespaces:
            have |= {
                (ns, pod["metadata"]["name"])
                for pod in await admin.list(f"/api/v1/namespaces/{ns}/pods")
            }
        return True if wanted <= have else None

    with anyio.fail_after(60):
        await poll(all_there, interval=POLL)


async def drop_volumes(admin: ClusterClient, namespace: str) -> None:
    """The claims a workload's controller made (they are no scenario object) lose their
    protection finalizer, and the PVs the fake provisioner made for the namespace go:
    their reclaim policy waits for a provisioner to delete them, and none runs now."""
    claims = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"
    for c in await admin.list(claims):
        path = f"{claims}/{c['metadata']['name']}"
        await unless_gone(admin.patch(path, {"metadata": {"finalizers": None}}))
    for pv in await admin.list("/api/v1/persistentvolumes"):
        ref = pv["spec"].get("claimRef") or {}
        made = PROVISIONED_BY in (pv["metadata"].get("annotations") or {})
        if made and ref.get("namespace") == namespace:
            path = f"/api/v1/persistentvolumes/{pv['metadata']['name']}"
            await unless_gone(admin.patch(path, {"metadata": {"finalizers": None}}))
            await unless_gone(admin.delete(path))
