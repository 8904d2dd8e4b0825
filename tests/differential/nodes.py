"""The scenarios' kwok nodes: created once for both runs, completed, deleted at the end.

Things NodeSpec cannot say are written after creation: `spec.unschedulable` (a plain
patch), `status.images` for ImageLocality and `status.declaredFeatures` for
NodeDeclaredFeatures. The status fields go through the status subresource once kwok has
marked the node Ready, because kwok's node-initialize stage rewrites the status of a node
that is not Ready yet; its later heartbeats leave them alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

from asched.localcluster import ApiError, ClusterClient, LocalCluster, delete_nodes
from tests.differential.layout import Placement

#: DRA ResourceSlices, published for the scenario's nodes like a driver would (no driver runs).
SLICES = "/apis/resource.k8s.io/v1/resourceslices"


async def _complete(admin: ClusterClient, placements: Sequence[Placement]) -> None:
    limiter = anyio.Semaphore(16)

    async def patch(path: str, body: Mapping[str, Any]) -> None:
        async with limiter:
            await admin.patch(path, body)

    async with anyio.create_task_group() as tg:
        for p in placements:
            for n in p.scenario.first_nodes:
                path = f"/api/v1/nodes/{p.node_name(n.name)}"
                if n.unschedulable:
                    tg.start_soon(patch, path, {"spec": {"unschedulable": True}})
                status: dict[str, Any] = {}
                if n.images:
                    status["images"] = [dict(i) for i in n.images]
                if n.declared_features:
                    status["declaredFeatures"] = list(n.declared_features)
                if status:
                    tg.start_soon(patch, f"{path}/status", {"status": status})


@asynccontextmanager
async def scenario_nodes(
    cluster: LocalCluster, admin: ClusterClient, placements: Sequence[Placement]
) -> AsyncIterator[list[str]]:
    """Create every scenario's nodes, wait until Ready, complete them; delete them after."""
    specs = [spec for p in placements for spec in p.node_specs()]
    names = [s.name for s in specs]
    slices = [s for p in placements for s in p.resource_slices()]
    try:
        await cluster.create_nodes(specs)
        with anyio.fail_after(60):
            await cluster.wait_nodes_ready(names)
        await _complete(admin, placements)
        for body in slices:
            await admin.post(SLICES, body)
        yield names
    finally:
        with anyio.CancelScope(shield=True):
            for body in slices:
                try:
                    await admin.delete(f"{SLICES}/{body['metadata']['name']}")
                except ApiError as err:
                    if err.status != 404:
                        raise
            await delete_nodes(admin, names)
