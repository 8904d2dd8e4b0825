"""A pod's resource requests as kube-scheduler v1.37.2 counts them.

Follows component-helpers v0.37.2 resource.PodRequests with the options
framework.PodInfo.CalculateResource passes in 1.37 (InPlacePodVerticalScaling GA,
InPlacePodLevelResourcesVerticalScaling and PodLevelResources beta and on):

- AggregateContainerRequests with UseStatusResources: the containers' requests
  (aggregateContainerResourcesByFn: regular containers summed, sidecars added and
  accumulated in start order, each plain init container counted with the sidecars
  started before it, the max of both) are computed three times - from the spec, from what
  the kubelet allocated (`containerStatuses[].allocatedResources`) and from what it
  actuated (`containerStatuses[].resources.requests`) - and the pod counts the max of
  the three. When the pod-level status (`status.allocatedResources` and
  `status.resources.requests`) is present it replaces the two per-container sums. A
  resize the kubelet marked Infeasible (condition PodResizePending, reason Infeasible)
  drops the spec from the max.
- Pod-level `spec.resources.requests` (cpu, memory, hugepages-*) replace the containers'
  value of those resources, themselves maxed with the pod-level status
  (effectivePodLevelResources).
- `spec.overhead` is added.

The scoring variant (`non_zero`) is framework.PodInfo.CalculateResource's second call:
containers that leave cpu or memory unset count 100m / 200Mi (applyNonMissing) - with
pod-level requests set, only for a resource the first result has no entry for at all
(getNonMissingContainerRequests).

Resource lists are dicts here, because Go's rules depend on which names a list has, not
only on their values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from asched.api.quantity import parse_cpu_milli, parse_quantity
from asched.api.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Resource,
)

ResourceList = dict[str, int]

HUGEPAGES_PREFIX = "hugepages-"
_DEFAULTS: ResourceList = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}


def is_supported_pod_level_resource(name: str) -> bool:
    """resource.IsSupportedPodLevelResource: cpu, memory and every hugepages size."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def _parse(raw: Any, path: str) -> ResourceList | None:
    """A ResourceList, None when absent (Go's nil map: an empty one is not nil)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ValueError(f"{path}: expected an object")
    out: ResourceList = {}
    for name, q in raw.items():
        if not isinstance(q, str | int | float):
            raise ValueError(f"{path}.{name}: {q!r} is not a quantity")
        try:
            out[str(name)] = parse_cpu_milli(q) if name == CPU else parse_quantity(q)
        except ValueError as exc:
            raise ValueError(f"{path}.{name}: {exc}") from None
    return out


def _add(into: ResourceList, other: ResourceList | None) -> None:
    for k, v in (other or {}).items():
        into[k] = into.get(k, 0) + v


def _max_into(into: ResourceList, other: ResourceList | None) -> None:
    for k, v in (other or {}).items():
        if k not in into or v > into[k]:
            into[k] = v


def _max(first: ResourceList | None, *rest: ResourceList | None) -> ResourceList:
    out = dict(first or {})
    for other in rest:
        _max_into(out, other)
    return out


def _non_missing(reqs: ResourceList | None, defaults: ResourceList) -> ResourceList:
    """applyNonMissing: a copy with each default added where *reqs* has no entry."""
    out = dict(reqs or {})
    for k, v in defaults.items():
        if reqs is None or k not in reqs:
            out[k] = out.get(k, 0) + v
    return out


def _resize_infeasible(status: Mapping[str, Any]) -> bool:
    """resource.IsPodResizeInfeasible."""
    for c in status.get("conditions") or ():
        if c.get("type") == "PodResizePending":
            return bool(c.get("reason") == "Infeasible")
    return False


class _Container:
    __slots__ = ("actuated", "allocated", "restartable", "spec")

    def __init__(self, raw: Mapping[str, Any], status: Mapping[str, Any] | None, path: str):
        self.restartable = raw.get("restartPolicy") == "Always"
        self.spec = _parse(
            (raw.get("resources") or {}).get("requests"), f"{path}.resources.requests"
        )
        self.allocated: ResourceList | None = None
        self.actuated: ResourceList | None = None
        if status is not None:
            where = f"status.containerStatuses[{raw.get('name')}]"
            self.allocated = _parse(status.get("allocatedResources"), f"{where}.allocatedResources")
            res = status.get("resources")
            if res is not None:
                self.actuated = _parse(res.get("requests"), f"{where}.resources.requests")

    # containerSpecRequests, containerAllocatedRequests, containerActuatedRequests
    def spec_requests(self, infeasible: bool) -> ResourceList | None:
        del infeasible
        return self.spec

    def allocated_requests(self, infeasible: bool) -> ResourceList | None:
        if self.allocated is not None:
            return self.allocated
        return None if infeasible else self.spec

    def actuated_requests(self, infeasible: bool) -> ResourceList | None:
        if self.actuated is not None:
            return self.actuated
        if self.allocated is not None:
            return self.allocated
        return None if infeasible else self.spec


def _aggregate_by(
    containers: Iterable[_Container],
    inits: Iterable[_Container],
    which: str,
    infeasible: bool,
    defaults: ResourceList,
) -> ResourceList:
    """aggregateContainerResourcesByFn."""
    result: ResourceList = {}
    for c in containers:
        r = getattr(c, which)(infeasible)
        _add(result, _non_missing(r, defaults) if defaults else r)
    sidecars: ResourceList = {}
    init_max: ResourceList = {}
    for c in inits:
        r = getattr(c, which)(infeasible)
        if defaults:
            r = _non_missing(r, defaults)
        if c.restartable:
            _add(result, r)
            _add(sidecars, r)
            r = sidecars
        else:
            combined: ResourceList = {}
            _add(combined, r)
            _add(combined, sidecars)
            r = combined
        _max_into(init_max, r)
    _max_into(result, init_max)
    return result


class PodRequests:
    """One pod's spec and status, read once; `requests()` as PodRequests computes them."""

    def __init__(self, spec: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        by_name: dict[str, Mapping[str, Any]] = {}
        # findContainerStatus: containerStatuses first, then initContainerStatuses.
        for key in ("initContainerStatuses", "containerStatuses"):
            for cs in status.get(key) or ():
                by_name[str(cs.get("name") or "")] = cs
        self._containers = [
            _Container(c, by_name.get(str(c.get("name") or "")), f"spec.containers[{i}]")
            for i, c in enumerate(spec.get("containers") or ())
        ]
        self._inits = [
            _Container(c, by_name.get(str(c.get("name") or "")), f"spec.initContainers[{i}]")
            for i, c in enumerate(spec.get("initContainers") or ())
        ]
        self._infeasible = _resize_infeasible(status)
        # Whether every container's allocated and actuated requests are its spec's (no
        # status yet, as on every pending pod, or a kubelet that reports what was asked):
        # then the three aggregations below are one.
        self.status_follows_spec = not self._infeasible and all(
            (c.allocated is None or c.allocated == c.spec)
            and (c.actuated is None or c.actuated == c.spec)
            for c in (*self._containers, *self._inits)
        )
        pod_level = _parse((spec.get("resources") or {}).get("requests"), "spec.resources.requests")
        self._pod_level = pod_level
        self._pod_level_set = bool(pod_level) and any(
            is_supported_pod_level_resource(k) for k in pod_level or {}
        )
        self._overhead = _parse(spec.get("overhead"), "spec.overhead")
        self._status_allocated = _parse(
            status.get("allocatedResources"), "status.allocatedResources"
        )
        status_resources = status.get("resources")
        self._status_resources = status_resources is not None
        self._status_requests = (
            _parse(status_resources.get("requests"), "status.resources.requests")
            if status_resources is not None
            else None
        )

    def _containers_total(self, defaults: ResourceList) -> ResourceList:
        """AggregateContainerRequests with UseStatusResources."""
        inf = self._infeasible
        args = (self._containers, self._inits)
        spec = _aggregate_by(*args, "spec_requests", inf, defaults)
        if self._status_allocated is not None and self._status_requests is not None:
            allocated, actuated = self._status_allocated, self._status_requests
        elif self.status_follows_spec:
            return spec  # max(spec, spec, spec): the same sums, a third of the work
        else:
            allocated = _aggregate_by(*args, "allocated_requests", inf, defaults)
            actuated = _aggregate_by(*args, "actuated_requests", inf, defaults)
        if inf:
            return _max(actuated, allocated)
        return _max(spec, actuated, allocated)

    def resource_list(self, defaults: ResourceList | None = None) -> ResourceList:
        reqs = self._containers_total(defaults or {})
        if self._pod_level_set:
            effective = self._pod_level
            if self._status_resources:
                # effectivePodLevelResources
                spec = None if self._infeasible else self._pod_level
                effective = _max(spec, self._status_requests, self._status_allocated)
            for k, v in (effective or {}).items():
                if is_supported_pod_level_resource(k):
                    reqs[k] = v
        _add(reqs, self._overhead)
        return reqs

    def requests_and_non_zero(self) -> tuple[Resource, Resource]:
        """(requests, scoring requests), framework.PodInfo.CalculateResource."""
        reqs = self.resource_list()
        if not self._pod_level_set:
            defaults = _DEFAULTS
        else:
            defaults = {k: v for k, v in _DEFAULTS.items() if k not in reqs}
        non_zero = self.resource_list(defaults) if defaults else reqs
        return to_resource(reqs), to_resource(non_zero)


def to_resource(reqs: Mapping[str, int]) -> Resource:
    r = Resource()
    for name, v in reqs.items():
        if name == CPU:
            r.milli_cpu = v
        elif name == MEMORY:
            r.memory = v
        elif name == EPHEMERAL_STORAGE:
            r.ephemeral_storage = v
        elif name == PODS:
            r.allowed_pods = v
        else:
            r.scalar[name] = v
    return r


# The requests of pods whose containers' requests are all there is to count, by those
# requests. A workload's pods share them, and each pod is decoded on every watch event
# (added, bound, running): the full computation was the largest part of decoding one.
# Bounded: cleared when full, as the shared tolerations in asched.api.pod.
_SIMPLE: dict[tuple[tuple[tuple[str, str], ...] | None, ...], tuple[Resource, Resource]] = {}
_SIMPLE_MAX = 1024


def pod_requests(spec: Mapping[str, Any], status: Mapping[str, Any]) -> tuple[Resource, Resource]:
    """`PodRequests(spec, status).requests_and_non_zero()`, remembered for pods whose
    result depends on their containers' requests alone (`_simple_key`). Each call gets
    its own Resource objects, since a Pod's may be changed by whoever holds it."""
    key = _simple_key(spec, status)
    if key is None:
        return PodRequests(spec, status).requests_and_non_zero()
    known = _SIMPLE.get(key)
    if known is None:
        # A pod whose requests do not parse raises here, and is never remembered.
        known = PodRequests(spec, status).requests_and_non_zero()
        if len(_SIMPLE) >= _SIMPLE_MAX:
            _SIMPLE.clear()
        _SIMPLE[key] = known
    return known[0].copy(), known[1].copy()


def _simple_key(
    spec: Mapping[str, Any], status: Mapping[str, Any]
) -> tuple[tuple[tuple[str, str], ...] | None, ...] | None:
    """Per regular container, its requests as written (None when it has none), when
    nothing else PodRequests reads is present: no init containers, pod-level resources,
    overhead, resources in the status (pod or container level) or resize condition.
    None otherwise, and for anything unusual (a quantity that is not a string, a field of
    the wrong type), which the full computation judges."""
    try:
        if spec.get("initContainers") or "resources" in spec or "overhead" in spec:
            return None
        if "allocatedResources" in status or "resources" in status:
            return None
        for c in status.get("conditions") or ():
            if c.get("type") == "PodResizePending":
                return None
        for which in ("containerStatuses", "initContainerStatuses"):
            for cs in status.get(which) or ():
                if "allocatedResources" in cs or "resources" in cs:
                    return None
        key: list[tuple[tuple[str, str], ...] | None] = []
        for c in spec.get("containers") or ():
            requests = (c.get("resources") or {}).get("requests")
            if requests is None:
                key.append(None)
                continue
            if type(requests) is not dict:
                return None
            items = tuple(requests.items())
            if not all(type(q) is str for _, q in items):
                return None
            key.append(items)
        return tuple(key)
    except (AttributeError, TypeError):
        return None
