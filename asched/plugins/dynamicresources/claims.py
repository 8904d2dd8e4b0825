"""Which ResourceClaims a pod uses, and whom each is reserved for
(k8s.io/dynamic-resource-allocation/resourceclaim).

Go's foreachPodResourceClaim over resourceclaim.Name and resourceclaim.IsForPod, with the
same error wording: each becomes the pod's status message. With DRAWorkloadResourceClaims
(`group_claims`) a claim may also belong to the pod's PodGroup: one generated from the
group's template is accepted as the pod's (IsForPod's acceptPodGroupOwner), a claim the
group's spec.resourceClaims lists the same way as the pod is bound to the group (BindTo),
and a reservation for the group counts as the pod's (IsReservedForPod).
"""

from __future__ import annotations

from collections.abc import Callable

from asched.api.dra import ConsumerRef, ResourceClaim
from asched.api.pod import Pod
from asched.api.workload import GROUP as SCHEDULING_GROUP
from asched.api.workload import POD_GROUP_KIND, NativePodGroup, PodGroupClaim

# resourceclaim.ErrAPIUnsupported
UNSUPPORTED = "none of the supported fields are set"
POD_GROUPS = "podgroups"


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
        f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pc.name}": {UNSUPPORTED}'
    )


def _for_group_by_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """isForPodGroupByPod: the claim's controller is the pod's PodGroup, known by name,
    kind and API group (the pod does not know the group's uid; the version may change)."""
    ref = claim.controller
    return (
        ref is not None
        and ref.name == pod.scheduling_group
        and ref.kind == POD_GROUP_KIND
        and ref.api_version.startswith(f"{SCHEDULING_GROUP}/")
    )


def _check_owner(pod: Pod, claim: ResourceClaim, group_claims: bool) -> None:
    """resourceclaim.IsForPod, acceptPodGroupOwner = `group_claims`."""
    if claim.controller_uid == pod.uid:
        return
    where = f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod {pod.key}"
    if group_claims and pod.scheduling_group:
        if not _for_group_by_pod(pod, claim):
            raise ClaimLookupError(
                f"{where} (neither Pod nor PodGroup {pod.scheduling_group} is the owner)"
            )
        return
    raise ClaimLookupError(f"{where} (Pod is not owner)")


def pod_claims(
    pod: Pod,
    get: Callable[[str, str], ResourceClaim | None],
    *,
    group_claims: bool = False,
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
        if check_owner:
            _check_owner(pod, claim, group_claims)
        out.append((index, claim))
    return out


def group_claim_name(group: NativePodGroup, entry: PodGroupClaim) -> str | None:
    """resourceclaim.NameFromPodGroup: the claim's name (a template's from the group's
    status), None when none was needed; raises ClaimLookupError with Go's wording."""
    if entry.claim_name is not None:
        return entry.claim_name
    if entry.template_name is not None:
        if entry.name in group.resource_claim_statuses:
            return group.resource_claim_statuses[entry.name]
        raise ClaimLookupError(f"PodGroup {group.key}: ResourceClaim not created yet")
    raise ClaimLookupError(f"PodGroup {group.key}, spec.resourceClaim {entry.name}: {UNSUPPORTED}")


def pod_ref(pod: Pod) -> ConsumerRef:
    """The reservation of a claim for the pod itself."""
    return ConsumerRef("pods", pod.name, pod.uid)


def bindings(pod: Pod, group: NativePodGroup | None) -> list[ConsumerRef]:
    """podResourceClaimBindings over resourceclaim.BindTo: per spec.resourceClaims entry,
    the PodGroup when the group lists the same entry (name, claim and template all
    equal), else the pod. Raises ClaimLookupError with Go's wording."""
    out = []
    for pc in pod.resource_claims:
        if pc.claim_name is None and pc.template_name is None:
            raise ClaimLookupError(f"Pod {pod.key} claim {pc.name}: {UNSUPPORTED}")
        out.append(_bind_to(pod, group, (pc.name, pc.claim_name, pc.template_name)))
    return out


def _bind_to(
    pod: Pod, group: NativePodGroup | None, entry: tuple[str, str | None, str | None]
) -> ConsumerRef:
    if group is None:
        return pod_ref(pod)
    for gc in group.resource_claims:
        if gc.claim_name is None and gc.template_name is None:
            raise ClaimLookupError(f"PodGroup {group.key} claim {gc.name}: {UNSUPPORTED}")
        if (gc.name, gc.claim_name, gc.template_name) == entry:
            return ConsumerRef(POD_GROUPS, group.name, group.uid, SCHEDULING_GROUP)
    return pod_ref(pod)


def reserved_for_pod(claim: ResourceClaim, pod: Pod, *, group: bool = False) -> bool:
    """resourceclaim.IsReservedForPod; `group` is acceptPodGroupReservation: a reservation
    for the pod's PodGroup, known by API group, resource and name, counts too."""
    for r in claim.reserved_for:
        if r.resource == "pods" and r.api_group == "" and r.uid == pod.uid:
            return True
        if (
            group
            and pod.scheduling_group
            and r.api_group == SCHEDULING_GROUP
            and r.resource == POD_GROUPS
            and r.name == pod.scheduling_group
        ):
            return True
    return False
