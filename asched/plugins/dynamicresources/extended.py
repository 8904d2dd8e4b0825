"""Extended resources backed by DRA (DRAExtendedResource, GA and locked on in 1.37).

A pod that requests `example.com/gpu: 2`, where a DeviceClass provides that name
(asched/plugins/deviceclasses.py), gets the devices from DRA on any node that does not
advertise the resource itself. Follows Go's extendeddynamicresources.go:

- PreFilter (preFilterExtendedResources): when the pod requests such a resource, its
  extended-resource claim joins its claims, last: the one already in the API (annotated
  and controlled by the pod), or an in-memory claim named "<extended-resources>" with no
  requests yet.
- Filter (filterExtendedResources): per node, the resources it does not advertise become
  the requests of a copy of that claim (createRequestsAndMappings: one ExactCount request
  per container and resource, "container-<i>-request-<j>", init containers sharing the
  largest of theirs, sidecars and regular containers reused by the init containers before
  them), which the allocator then satisfies like any other claim.
- PreBind creates the claim in the API (generateName "<pod>-extended-resources-"),
  writes its allocation and reservation, and patches the pod's
  status.extendedResourceClaimStatus with the container mappings.
- Unreserve and PostFilter delete a created claim.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from asched.api.dra import (
    ALLOCATION_MODE_EXACT_COUNT,
    API_VERSION,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaim,
)
from asched.api.pod import ContainerExtendedRequest, Pod
from asched.plugins.deviceclasses import is_dra_extended_resource_name

SPECIAL_CLAIM_NAME = "<extended-resources>"
MSG_CLAIM_EXISTS = "cannot schedule extended resource claim"
MSG_CANNOT_FIT = "cannot fit resource"


@dataclass(frozen=True, slots=True)
class RequestMapping:
    """A v1.ContainerExtendedResourceRequest: which request serves a container's resource."""

    container: str
    resource: str
    request: str

    def json(self) -> dict[str, str]:
        return {
            "containerName": self.container,
            "resourceName": self.resource,
            "requestName": self.request,
        }


def mapped_scalars(pod: Pod, classes: Mapping[str, DeviceClass]) -> dict[str, int] | None:
    """hasDeviceClassMappedExtendedResource: the pod's scalar requests when one of them is
    provided by a DeviceClass, else None."""
    scalars = pod.requests.scalar
    if any(q and is_dra_extended_resource_name(n) and n in classes for n, q in scalars.items()):
        return dict(scalars)
    return None


def find_claim(pod: Pod, claims: Iterable[ResourceClaim]) -> ResourceClaim | None:
    """findExtendedResourceClaim: the annotated claim the pod controls."""
    for claim in claims:
        if claim.extended_resource and claim.controller_uid == pod.uid:
            return claim
    return None


def special_claim(pod: Pod) -> ResourceClaim:
    """The in-memory claim that stands for the one PreBind will create."""
    return ResourceClaim(
        namespace=pod.namespace,
        name=SPECIAL_CLAIM_NAME,
        uid=str(uuid.uuid4()),
        controller_uid=pod.uid,
        extended_resource=True,
    )


def node_resources(
    scalars: Mapping[str, int], allocatable: Mapping[str, int], classes: Mapping[str, DeviceClass]
) -> dict[str, int] | None:
    """The part of filterExtendedResources that reads the node: the requested resources it
    leaves to DRA (DRA-provided, allocatable 0), or None when one is neither DRA's nor
    advertised at all ("cannot fit resource")."""
    out = {}
    for name, quantity in scalars.items():
        if not is_dra_extended_resource_name(name) or quantity == 0:
            continue
        have = allocatable.get(name)
        if name in classes and not have:
            out[name] = quantity
        elif have is None:
            return None
    return out


def _container_request(
    entry: ContainerExtendedRequest, class_name: str, reusable: Iterable[DeviceRequest | None]
) -> tuple[DeviceRequest | None, list[RequestMapping]]:
    """createResourceRequestAndMappings for one container and resource."""
    wanted = entry.count
    if not wanted:
        return None, []
    mappings: list[RequestMapping] = []
    covered = 0
    for request in reusable:
        if request is None or request.exactly is None:
            continue
        covered += request.exactly.count
        mappings.append(RequestMapping(entry.container, entry.resource, request.name))
        if covered >= wanted:
            return None, mappings
    name = f"container-{entry.index}-request-{entry.rank}"
    request = DeviceRequest(
        name,
        exactly=DeviceSubRequest(
            name,
            device_class_name=class_name,
            allocation_mode=ALLOCATION_MODE_EXACT_COUNT,
            count=wanted - covered,
        ),
    )
    mappings.append(RequestMapping(entry.container, entry.resource, name))
    return request, mappings


def requests_and_mappings(
    pod: Pod, resources: Mapping[str, int], classes: Mapping[str, DeviceClass]
) -> tuple[tuple[DeviceRequest, ...], tuple[RequestMapping, ...]]:
    """createRequestsAndMappings: the claim's requests, sorted by name, and the container
    mappings (per resource: regular containers and sidecars, then init containers)."""
    requests: list[DeviceRequest] = []
    mappings: list[RequestMapping] = []
    for resource in sorted(resources):
        cls = classes.get(resource)
        if cls is None:
            continue
        entries = [e for e in pod.extended_requests if e.resource == resource]
        long_lived: dict[int, DeviceRequest | None] = {}
        long_mappings: list[RequestMapping] = []
        for e in entries:
            if not e.short_lived:
                request, found = _container_request(e, cls.name, ())
                long_lived[e.index] = request
                long_mappings.extend(found)
        largest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[RequestMapping] = []
        for e in entries:
            if not e.short_lived:
                continue
            later = [r for i, r in sorted(long_lived.items()) if i >= e.index]
            request, found = _container_request(e, cls.name, later)
            if request is not None:
                short_names.add(request.name)
                if largest is None or _count(largest) < _count(request):
                    largest = request
            short_mappings.extend(found)
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest.name)
            short_mappings = [
                RequestMapping(m.container, m.resource, largest.name)
                if m.request in short_names
                else m
                for m in short_mappings
            ]
        if largest is not None:
            requests.append(largest)
        requests.extend(r for _, r in sorted(long_lived.items()) if r is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    requests.sort(key=lambda r: r.name)
    return tuple(requests), tuple(mappings)


def _count(request: DeviceRequest) -> int:
    return request.exactly.count if request.exactly is not None else 0


def claim_manifest(pod: Pod, requests: Iterable[DeviceRequest]) -> dict[str, Any]:
    """The claim createExtendedResourceClaimInAPI creates."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": pod.namespace,
            "generateName": f"{pod.name}-extended-resources-",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.name,
                    "uid": pod.uid,
                    "controller": True,
                }
            ],
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        },
        "spec": {"devices": {"requests": [_request_json(r) for r in requests]}},
    }


def _request_json(request: DeviceRequest) -> dict[str, Any]:
    sub = request.exactly
    assert sub is not None  # every request made here is an ExactCount one
    return {
        "name": request.name,
        "exactly": {
            "deviceClassName": sub.device_class_name,
            "allocationMode": sub.allocation_mode,
            "count": sub.count,
        },
    }
