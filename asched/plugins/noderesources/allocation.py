"""What a node has and what it would have requested with the pod, per scored resource.

Mirrors kube-scheduler's resourceAllocationScorer (resource_allocation.go):
- the pod's request per resource is computed once per cycle (PreScore); scorers that
  do not use real requests (NodeResourcesFit) count kube-scheduler's defaults for
  containers that leave cpu or memory unset (`Pod.non_zero_requests`);
- on the node, cpu and memory come from NonZeroRequested, or Requested when
  `use_requested` (BalancedAllocation); ephemeral storage and extended resources always
  come from Requested;
- an extended resource the pod does not request, or that the node does not have, is left
  out (allocatable and requested both 0), so scorers skip it; one the node does not
  advertise but a DeviceClass provides counts the node's devices of the class
  (dra_totals.py), when the caller passes `dra`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from asched.api import Pod
from asched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from asched.framework.nodeinfo import NodeInfo
from asched.plugins.noderesources.args import ResourceSpec

KIND_CPU = 0
KIND_MEMORY = 1
KIND_EPHEMERAL = 2
KIND_SCALAR = 3

_KINDS = {CPU: KIND_CPU, MEMORY: KIND_MEMORY, EPHEMERAL_STORAGE: KIND_EPHEMERAL}


@dataclass(frozen=True, slots=True)
class ScoredResource:
    name: str
    weight: int
    kind: int


def scored_resources(specs: Sequence[ResourceSpec]) -> tuple[ScoredResource, ...]:
    return tuple(ScoredResource(s.name, s.weight, _KINDS.get(s.name, KIND_SCALAR)) for s in specs)


def is_cpu_memory(resources: Sequence[ScoredResource]) -> bool:
    """Exactly cpu then memory, the default: scorers take their two-resource fast path."""
    return tuple(r.kind for r in resources) == (KIND_CPU, KIND_MEMORY)


def pod_requests(
    pod: Pod, resources: Sequence[ScoredResource], use_requested: bool
) -> tuple[int, ...]:
    """calculatePodResourceRequestList: the pod's request of each scored resource."""
    source = pod.requests if use_requested else pod.non_zero_requests
    return tuple(source.get(r.name) for r in resources)


def allocatable_and_requested(
    node_info: NodeInfo,
    resources: Sequence[ScoredResource],
    requests: Sequence[int],
    use_requested: bool,
    dra: Callable[[str], tuple[int, int]] | None = None,
) -> tuple[list[int], list[int]]:
    """(allocatable, node requests + pod request) per resource; (0, 0) for skipped ones.
    `dra(resource)` is the node's (devices, allocated) of a class's resource."""
    alloc = node_info.allocatable
    node_requested = node_info.requested
    base = node_requested if use_requested else node_info.non_zero_requested
    allocatable: list[int] = []
    requested: list[int] = []
    for res, pod_request in zip(resources, requests, strict=True):
        kind = res.kind
        if kind == KIND_CPU:
            a, r = alloc.milli_cpu, base.milli_cpu + pod_request
        elif kind == KIND_MEMORY:
            a, r = alloc.memory, base.memory + pod_request
        elif kind == KIND_EPHEMERAL:
            a, r = alloc.ephemeral_storage, node_requested.ephemeral_storage + pod_request
        elif pod_request == 0:
            a = r = 0
        else:
            have = alloc.scalar.get(res.name)
            devices = dra(res.name) if dra is not None and not have else (0, 0)
            if devices[0] > 0:
                a, r = devices[0], devices[1] + pod_request
            elif have is None:
                a = r = 0
            else:
                a, r = have, node_requested.scalar.get(res.name, 0) + pod_request
        if a == 0:
            r = 0
        allocatable.append(a)
        requested.append(r)
    return allocatable, requested
