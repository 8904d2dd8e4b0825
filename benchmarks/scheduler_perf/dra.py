"""allocResourceClaims: allocate a namespace's claims before the measured pods, offline.

Upstream's op (dra.go allocResourceClaimsOp.run) fills the cluster with allocated claims
so that the measured pods find part of the devices in use: for each unallocated claim it
builds a structured allocator over the current ResourceSlices, DeviceClasses and the
devices already allocated, tries the nodes in random order, and writes the first
allocation that fits into the claim's status. Out of process there is no Go allocator to
call, so this uses asched's port of it (asched.plugins.dynamicresources.allocator, which
follows the same structured allocator); the result only sets up the cluster state, the
same for both schedulers, and is not part of what is measured.
"""

from __future__ import annotations

import random

from asched.api.dra import decode_device_class, decode_resource_claim, decode_resource_slice
from asched.api.node import decode_node
from asched.localcluster import ClusterClient
from asched.plugins.dynamicresources.allocator import Allocator
from asched.plugins.dynamicresources.binding import allocation_json, claim_path
from asched.plugins.dynamicresources.tracker import AllocatedState

RESOURCE_V1 = "/apis/resource.k8s.io/v1"


class ClaimAllocationError(RuntimeError):
    """A claim no node can satisfy (upstream: "Could not allocate claim i out of n")."""


async def allocate_claims(client: ClusterClient, namespace: str, rng: random.Random) -> int:
    """Allocate every unallocated claim of *namespace*; return how many were allocated."""
    raw_claims = await client.list(f"{RESOURCE_V1}/namespaces/{namespace}/resourceclaims")
    pending = [raw for raw in raw_claims if not (raw.get("status") or {}).get("allocation")]
    if not pending:
        return 0
    slices = [decode_resource_slice(s) for s in await client.list(f"{RESOURCE_V1}/resourceslices")]
    classes = {
        c.name: c
        for c in (decode_device_class(d) for d in await client.list(f"{RESOURCE_V1}/deviceclasses"))
    }
    nodes = [decode_node(n) for n in await client.list("/api/v1/nodes")]
    state = AllocatedState()
    for raw in await client.list(f"{RESOURCE_V1}/resourceclaims"):
        existing = decode_resource_claim(raw)
        if existing.allocation is not None:
            state.add(existing.allocation)
    for index, raw in enumerate(pending):
        claim = decode_resource_claim(raw)
        # A fresh allocator per claim over the devices allocated so far, as dra.go does.
        allocator = Allocator(classes.get, state, slices)
        rng.shuffle(nodes)
        for node in nodes:
            result = allocator.allocate(node.name, node.labels, [claim])
            if result:
                status = {**(raw.get("status") or {}), "allocation": allocation_json(result[0])}
                await client.put(f"{claim_path(claim)}/status", {**raw, "status": status})
                state.add(result[0])
                break
        else:
            raise ClaimAllocationError(
                f"could not allocate claim {index} out of {len(pending)} ({claim.key})"
            )
    return len(pending)
