"""Which ResourceClaims a pod uses (k8s.io/dynamic-resource-allocation/resourceclaim).

Go's foreachPodResourceClaim over resourceclaim.Name and resourceclaim.IsForPod, with the
same error wording: each becomes the pod's status message.
"""

from __future__ import annotations

from collections.abc import Callable

from asched.api.dra import ResourceClaim
from asched.api.pod import Pod


class ClaimLookupError(Exception):
    """A claim of the pod is missing, being deleted or not the pod's own."""


def claim_name(pod: Pod, index: int) -> tuple[str | None, bool]:
    """resourceclaim.Name: (claim name or None when none is needed, must check owner)."""
    pc = pod.resource_claims[index]
    if pc.claim_name is not None:
        return pc.claim_name, False
    if pc.template_name is not None:
        if pc.name in pod.resource_claim_statuses:
            return pod.resource_claim_statuses[pc.name], True
        raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
    raise ClaimLookupError(
        f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pc.name}": '
        "none of the supported fields are set"
    )


def pod_claims(
    pod: Pod, get: Callable[[str, str], ResourceClaim | None]
) -> list[tuple[int, ResourceClaim]]:
    """The pod's claims with their spec.resourceClaims index; raises ClaimLookupError."""
    out = []
    for index in range(len(pod.resource_claims)):
        name, check_owner = claim_name(pod, index)
        if name is None:
            continue
        claim = get(pod.namespace, name)
        if claim is None:
            # The assume cache's NotFoundError ("ResourceClaim" is its description).
            raise ClaimLookupError(f'could not find ResourceClaim "{pod.namespace}/{name}"')
        if claim.deletion_timestamp:
            raise ClaimLookupError(f'resourceclaim "{claim.name}" is being deleted')
        if check_owner and claim.controller_uid != pod.uid:
            raise ClaimLookupError(
                f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod "
                f"{pod.namespace}/{pod.name} (Pod is not owner)"
            )
        out.append((index, claim))
    return out


def reserved_for_pod(claim: ResourceClaim, pod: Pod) -> bool:
    """resourceclaim.IsReservedForPod."""
    return any(
        r.resource == "pods" and r.api_group == "" and r.uid == pod.uid for r in claim.reserved_for
    )
