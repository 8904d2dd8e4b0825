"""The plugin's writes to a claim's status: PreBind's allocation and reservation (Go's
bindClaim), Unreserve's withdrawal of the pod and PostFilter's deallocation.

A new allocation first gets the delete-protection finalizer on the claim, then one status
write sets `status.allocation` and appends the pod to `status.reservedFor`; a claim that
was already allocated only gets the reservation. Both writes carry the resourceVersion the
decision was made on, so a claim changed meanwhile (allocated elsewhere, deleted) fails
the binding instead of being overwritten, as Go's update with conflict retry ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from asched.api.dra import (
    FINALIZER,
    Allocation,
    ConsumerRef,
    DeviceResult,
    DeviceToleration,
    ResourceClaim,
    decode_resource_claim,
)
from asched.api.labels import node_selector_json
from asched.api.meta import rfc3339
from asched.api.pod import Pod
from asched.api.quantity import format_quantity
from asched.client.protocol import (
    ApiError,
    FailureKind,
    KubeClient,
    RequestError,
    failure_message,
    request_context,
)
from asched.client.readback import ReadBack, Unread

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


def _reserved_for(claim: ResourceClaim, consumer: ConsumerRef) -> list[dict[str, str]]:
    refs = [
        {"resource": r.resource, "name": r.name, "uid": r.uid}
        | ({"apiGroup": r.api_group} if r.api_group else {})
        for r in (*claim.reserved_for, consumer)
    ]
    return refs


class ClaimBindError(Exception):
    """bindClaim failed; the text is Go's error, which becomes PreBind's Error status."""


# retry.DefaultRetry's Steps: how often a write that hit a conflict is tried in all.
CONFLICT_ATTEMPTS = 5


async def bind_claim(
    client: KubeClient,
    claim: ResourceClaim,
    consumer: ConsumerRef,
    allocation: Allocation | None,
    wall_now: float,
) -> ResourceClaim:
    """Go's bindClaim: write the allocation (when new, stamped `wall_now` as Go's
    allocationTimestamp) and reserve the claim for `consumer` (the pod, or its PodGroup);
    the claim as stored. A conflict is retried on the claim as the API server has it now
    (retry.RetryOnConflict), so a benign concurrent change (a sibling's reservation) does
    not fail the pod, while one that took the claim (allocated elsewhere, deleted) does,
    with Go's words. Go sleeps about 10 ms between attempts; the GET in between is our
    only pause, which changes when an attempt happens, not what it decides."""
    current = claim
    for attempt in range(CONFLICT_ATTEMPTS):
        if attempt:
            # A failure propagates, classified by the framework, in Go's words.
            with request_context(f"get updated claim {claim.key} after conflict"):
                raw = await client.request("GET", claim_path(claim))
            current = decode_resource_claim(raw)
        try:
            return await _bind_once(client, current, consumer, allocation, wall_now)
        except _Conflict as exc:
            if attempt == CONFLICT_ATTEMPTS - 1:
                raise ClaimBindError(str(exc)) from None
    raise AssertionError("unreachable")


async def written_after_all(
    reader: ReadBack,
    claim: ResourceClaim,
    consumer: ConsumerRef,
    allocation: Allocation | None,
) -> ResourceClaim | None:
    """After bind_claim failed in a way that may have been applied: the claim as stored
    when its status write landed after all (the consumer reserved and, for a new
    allocation, the same devices allocated), else None and the failure stands.

    Go's bindClaim has no such step: its Unreserve takes the in-flight allocation back
    (MaybeRemoveClaimPendingAllocation) whatever the write's fate, so until the claims
    informer brings the written allocation, its devices look free and a second claim can
    be given them. The status write is one PATCH at one resourceVersion, so a stored claim
    reserved for the consumer with these devices is this write's claim."""
    current = await reader.read(claim_path(claim), decode_resource_claim, subject=claim.key)
    if isinstance(current, Unread) or current.uid != claim.uid:
        return None
    if not any(ref.uid == consumer.uid for ref in current.reserved_for):
        return None
    if allocation is None:
        return current
    if current.allocation is None or _devices(current.allocation) != _devices(allocation):
        return None
    return current


def _devices(allocation: Allocation) -> set[tuple[str, str, str, str, str]]:
    return {(r.request, r.driver, r.pool, r.device, r.share_id) for r in allocation.results}


class _Conflict(Exception):
    """A write of one attempt met a newer resourceVersion."""


async def _bind_once(
    client: KubeClient,
    claim: ResourceClaim,
    consumer: ConsumerRef,
    allocation: Allocation | None,
    wall_now: float,
) -> ResourceClaim:
    """One attempt of bindClaim's RetryOnConflict body; raises _Conflict to go again."""
    if claim.deletion_timestamp:
        raise ClaimBindError(f"claim {claim.key} got deleted in the meantime")
    version = claim.resource_version
    if allocation is not None:
        if claim.allocation is not None:
            raise ClaimBindError(f"claim {claim.key} got allocated elsewhere in the meantime")
        if FINALIZER not in claim.finalizers:
            with _conflict_retried(f"add finalizer to claim {claim.key}"):
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
    elif claim.allocation is None:
        # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (on in 1.37): a
        # reservation needs the allocation it was decided on.
        raise ClaimBindError(f"claim {claim.key} got deallocated elsewhere in the meantime")
    status: dict[str, Any] = {"reservedFor": _reserved_for(claim, consumer)}
    if allocation is not None:
        status["allocation"] = allocation_json(allocation)
        status["allocation"]["allocationTimestamp"] = rfc3339(wall_now)
    what = "add allocation and reservation" if allocation is not None else "add reservation"
    with _conflict_retried(f"{what} to claim {claim.key}"):
        raw = await client.request(
            "PATCH",
            claim_path(claim) + "/status",
            body={"metadata": {"resourceVersion": version}, "status": status},
            content_type=MERGE_PATCH,
        )
    return decode_resource_claim(raw)


@contextlib.contextmanager
def _conflict_retried(what: str) -> Iterator[None]:
    """A write of bindClaim's: a conflict (409) is _Conflict, for RetryOnConflict to try
    again on the claim as stored; any other failure propagates with *what* it was doing
    (Go's fmt.Errorf("...: %w")), for the framework to classify by its kind (counted,
    logged once, an Error status with that text)."""
    try:
        with request_context(what):
            yield
    except RequestError as exc:
        if exc.kind is not FailureKind.CONFLICT:
            raise
        raise _Conflict(failure_message(exc)) from None


async def unreserve_claim(client: KubeClient, claim: ResourceClaim, pod: Pod) -> None:
    """Take the pod out of status.reservedFor (Go's Unreserve)."""
    await unreserve_consumer(client, claim, pod.uid)


async def unreserve_consumer(client: KubeClient, claim: ResourceClaim, uid: str) -> None:
    """Take one consumer (a pod, a PodGroup) out of status.reservedFor: a strategic-merge
    delete of its entry, so no other consumer is lost and no fresh copy of the claim is
    needed; the claim's uid guards against a claim recreated under the same name."""
    await client.request(
        "PATCH",
        claim_path(claim) + "/status",
        body={
            "metadata": {"uid": claim.uid},
            "status": {"reservedFor": [{"$patch": "delete", "uid": uid}]},
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
