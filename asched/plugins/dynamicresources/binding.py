"""The plugin's writes to a claim's status: PreBind's allocation and reservation (Go's
bindClaim), Unreserve's withdrawal of the pod and PostFilter's deallocation.

A new allocation first gets the delete-protection finalizer on the claim, then one status
write sets `status.allocation` and appends the pod to `status.reservedFor`; a claim that
was already allocated only gets the reservation. Both writes carry the resourceVersion the
decision was made on, so a claim changed meanwhile (allocated elsewhere, deleted) fails
the binding instead of being overwritten, as Go's update with conflict retry ends.
"""

from __future__ import annotations

from typing import Any

from asched.api.dra import (
    FINALIZER,
    Allocation,
    DeviceResult,
    DeviceToleration,
    ResourceClaim,
    decode_resource_claim,
)
from asched.api.labels import node_selector_json
from asched.api.meta import rfc3339
from asched.api.pod import Pod
from asched.api.quantity import format_quantity
from asched.client.protocol import ApiError, KubeClient

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"


def claim_path(claim: ResourceClaim) -> str:
    return f"/apis/resource.k8s.io/v1/namespaces/{claim.namespace}/resourceclaims/{claim.name}"


def allocation_json(allocation: Allocation) -> dict[str, Any]:
    """The AllocationResult as the API stores it: the node selector as the allocator made
    it (allocator.create_node_selector), none for an allocation usable everywhere."""
    out: dict[str, Any] = {"devices": {"results": [_result_json(r) for r in allocation.results]}}
    if allocation.node_selector is not None:
        out["nodeSelector"] = node_selector_json(allocation.node_selector)
    return out


def _result_json(r: DeviceResult) -> dict[str, Any]:
    """One DeviceRequestAllocationResult as Go's allocator fills it: adminAccess only when
    set, the request's tolerations, a share's id and consumed capacity, and the device's
    binding conditions."""
    out: dict[str, Any] = {"request": r.request, "driver": r.driver, "pool": r.pool}
    out["device"] = r.device
    if r.admin_access:
        out["adminAccess"] = True
    if r.tolerations:
        out["tolerations"] = [_toleration_json(t) for t in r.tolerations]
    if r.share_id:
        out["shareID"] = r.share_id
    if r.consumed_capacity:
        out["consumedCapacity"] = {k: format_quantity(v) for k, v in r.consumed_capacity}
    if r.binding_conditions:
        out["bindingConditions"] = list(r.binding_conditions)
    if r.binding_failure_conditions:
        out["bindingFailureConditions"] = list(r.binding_failure_conditions)
    return out


def _toleration_json(t: DeviceToleration) -> dict[str, Any]:
    fields = {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
    out: dict[str, Any] = {k: v for k, v in fields.items() if v}
    if t.seconds is not None:
        out["tolerationSeconds"] = t.seconds
    return out


def _reserved_for(claim: ResourceClaim, pod: Pod) -> list[dict[str, str]]:
    refs = [
        {"resource": r.resource, "name": r.name, "uid": r.uid}
        | ({"apiGroup": r.api_group} if r.api_group else {})
        for r in claim.reserved_for
    ]
    refs.append({"resource": "pods", "name": pod.name, "uid": pod.uid})
    return refs


async def bind_claim(
    client: KubeClient,
    claim: ResourceClaim,
    pod: Pod,
    allocation: Allocation | None,
    wall_now: float,
) -> ResourceClaim:
    """Write the allocation (when new, stamped `wall_now` as Go's allocationTimestamp) and
    the pod's reservation; the claim as stored."""
    version = claim.resource_version
    if allocation is not None and FINALIZER not in claim.finalizers:
        raw = await client.request(
            "PATCH",
            claim_path(claim),
            body={
                "metadata": {
                    "resourceVersion": version,
                    "finalizers": [*claim.finalizers, FINALIZER],
                }
            },
            content_type=MERGE_PATCH,
        )
        version = str(raw["metadata"]["resourceVersion"])
    status: dict[str, Any] = {"reservedFor": _reserved_for(claim, pod)}
    if allocation is not None:
        status["allocation"] = allocation_json(allocation)
        status["allocation"]["allocationTimestamp"] = rfc3339(wall_now)
    raw = await client.request(
        "PATCH",
        claim_path(claim) + "/status",
        body={"metadata": {"resourceVersion": version}, "status": status},
        content_type=MERGE_PATCH,
    )
    return decode_resource_claim(raw)


async def unreserve_claim(client: KubeClient, claim: ResourceClaim, pod: Pod) -> None:
    """Take the pod out of status.reservedFor (Go's Unreserve): a strategic-merge delete
    of the pod's entry, so no other consumer is lost and no fresh copy of the claim is
    needed; the claim's uid guards against a claim recreated under the same name."""
    await client.request(
        "PATCH",
        claim_path(claim) + "/status",
        body={
            "metadata": {"uid": claim.uid},
            "status": {"reservedFor": [{"$patch": "delete", "uid": pod.uid}]},
        },
        content_type=STRATEGIC_MERGE_PATCH,
    )


async def deallocate_claim(client: KubeClient, claim: ResourceClaim) -> None:
    """Clear the allocation, reservations and device status (Go's deallocateOrDeletePodClaims
    UpdateStatus): at the resourceVersion the scheduler saw, so a claim someone changed
    meanwhile is left alone (a conflict) rather than deallocated under its new user."""
    await client.request(
        "PATCH",
        claim_path(claim) + "/status",
        body={
            "metadata": {"resourceVersion": claim.resource_version},
            "status": {"reservedFor": None, "allocation": None, "devices": None},
        },
        content_type=MERGE_PATCH,
    )


async def create_claim(client: KubeClient, manifest: dict[str, Any]) -> ResourceClaim:
    """Create a claim (the pod's claim for extended resources); the claim as stored."""
    namespace = manifest["metadata"]["namespace"]
    raw = await client.request(
        "POST", f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims", body=manifest
    )
    return decode_resource_claim(raw)


async def delete_claim(client: KubeClient, claim: ResourceClaim) -> None:
    """Go's deleteClaim: drop the delete-protection finalizer, then delete; both guarded by
    the claim's uid. A claim already gone is fine."""
    try:
        if FINALIZER in claim.finalizers:
            await client.request(
                "PATCH",
                claim_path(claim),
                body={
                    "metadata": {
                        "uid": claim.uid,
                        "finalizers": [f for f in claim.finalizers if f != FINALIZER],
                    }
                },
                content_type=MERGE_PATCH,
            )
        await client.request(
            "DELETE", claim_path(claim), body={"preconditions": {"uid": claim.uid}}
        )
    except ApiError as exc:
        if not exc.not_found:
            raise


async def patch_extended_claim_status(
    client: KubeClient, pod: Pod, claim_name: str, mappings: list[dict[str, str]]
) -> None:
    """patchPodExtendedResourceClaimStatus: the pod's status names the claim and which of
    its requests serves each container's resource."""
    if not mappings:
        raise ValueError(
            "nil or empty request mappings, no update of pod "
            f"{pod.namespace}/{pod.name} ExtendedResourceClaimStatus"
        )
    await client.request(
        "PATCH",
        f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status",
        body={
            "status": {
                "extendedResourceClaimStatus": {
                    "requestMappings": mappings,
                    "resourceClaimName": claim_name,
                }
            }
        },
        content_type=STRATEGIC_MERGE_PATCH,
    )
