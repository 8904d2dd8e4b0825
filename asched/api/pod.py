"""The scheduler's view of a Pod, decoded once per resourceVersion.

Requests are aggregated the way kube-scheduler does it (component-helpers
resource.PodRequests): regular containers summed, restartable init containers (sidecars)
added to that sum and accumulated in start order, each plain init container counted with
the sidecars started before it, the max of both taken, pod-level requests overriding,
then spec.overhead added. `non_zero_requests` is the same with kube-scheduler's scoring
defaults (100m CPU, 200Mi memory) for containers that leave them unset.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asched.api.affinity import (
    Affinity,
    TopologySpreadConstraint,
    parse_affinity,
    parse_topology_spread,
)
from asched.api.errors import DecodeError
from asched.api.meta import OwnerRef, owner_refs, parse_time, str_map
from asched.api.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    Resource,
)

DEFAULT_SCHEDULER_NAME = "default-scheduler"
# Resources that pod-level spec.resources may set (PodLevelResources).
_POD_LEVEL = (CPU, MEMORY)


@dataclass(slots=True, frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # "" matches every effect

    def tolerates(self, key: str, value: str, effect: str) -> bool:
        """core/v1 Toleration.ToleratesTaint."""
        if self.effect and self.effect != effect:
            return False
        if self.key and self.key != key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == value
        # Exists matches any value. Lt/Gt need TaintTolerationComparisonOperators (alpha,
        # off in 1.37) and, like any unknown operator, tolerate nothing.
        return self.operator == "Exists"


@dataclass(slots=True, frozen=True)
class HostPort:
    ip: str
    protocol: str
    port: int


@dataclass(slots=True, frozen=True)
class Volume:
    name: str
    source: str  # the volume source's field name: persistentVolumeClaim, emptyDir, ...
    claim_name: str = ""


@dataclass(slots=True)
class Pod:
    namespace: str
    name: str
    uid: str
    resource_version: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    creation_timestamp: float = 0.0
    deletion_timestamp: float | None = None
    owner_refs: tuple[OwnerRef, ...] = ()
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    node_name: str = ""
    priority: int = 0
    preemption_policy: str = "PreemptLowerPriority"
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    requests: Resource = field(default_factory=Resource)
    non_zero_requests: Resource = field(default_factory=Resource)
    host_ports: tuple[HostPort, ...] = ()
    images: tuple[str, ...] = ()
    volumes: tuple[Volume, ...] = ()
    phase: str = "Pending"
    nominated_node_name: str = ""
    # The PodScheduled condition as last written, so repeated failures do not re-patch it.
    scheduled_condition: tuple[str, str, str] | None = None  # (status, reason, message)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")


def _tolerations(raw: Any) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(
            str(t.get("key") or ""),
            str(t.get("operator") or "Equal"),
            str(t.get("value") or ""),
            str(t.get("effect") or ""),
        )
        for t in raw or ()
    )


def _container_requests(
    containers: list[Any], path: str, non_zero: bool
) -> list[tuple[Resource, bool]]:
    out = []
    for i, c in enumerate(containers):
        reqs = (c.get("resources") or {}).get("requests") or {}
        r = Resource.from_list(reqs, f"{path}[{i}].resources.requests")
        if non_zero:
            if CPU not in reqs:
                r.milli_cpu = DEFAULT_MILLI_CPU_REQUEST
            if MEMORY not in reqs:
                r.memory = DEFAULT_MEMORY_REQUEST
        out.append((r, c.get("restartPolicy") == "Always"))
    return out


def _aggregate(spec: dict[str, Any], non_zero: bool) -> Resource:
    total = Resource()
    for r, _ in _container_requests(spec.get("containers") or [], "spec.containers", non_zero):
        total.add(r)
    sidecars = Resource()
    init_max = Resource()
    inits = _container_requests(spec.get("initContainers") or [], "spec.initContainers", non_zero)
    for r, restartable in inits:
        if restartable:
            total.add(r)
            sidecars.add(r)
            init_max.set_max(sidecars)
        else:
            tmp = r.copy()
            tmp.add(sidecars)
            init_max.set_max(tmp)
    total.set_max(init_max)
    pod_level = (spec.get("resources") or {}).get("requests")
    if pod_level:
        pl = Resource.from_list(pod_level, "spec.resources.requests")
        if CPU in pod_level:
            total.milli_cpu = pl.milli_cpu
        if MEMORY in pod_level:
            total.memory = pl.memory
    overhead = spec.get("overhead")
    if overhead:
        total.add(Resource.from_list(overhead, "spec.overhead"))
    return total


def _host_ports(spec: dict[str, Any]) -> tuple[HostPort, ...]:
    ports = []
    containers = list(spec.get("containers") or [])
    containers += [
        c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"
    ]
    for c in containers:
        for p in c.get("ports") or ():
            hp = p.get("hostPort") or 0
            if hp > 0:
                ports.append(HostPort(p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", hp))
    return tuple(ports)


def _volumes(spec: dict[str, Any]) -> tuple[Volume, ...]:
    out = []
    for v in spec.get("volumes") or ():
        source = next((k for k in v if k != "name"), "")
        claim = ""
        if source == "persistentVolumeClaim":
            claim = str((v.get(source) or {}).get("claimName") or "")
        out.append(Volume(str(v.get("name") or ""), source, claim))
    return tuple(out)


def decode_pod(raw: dict[str, Any]) -> Pod:
    """Decode a core/v1 Pod; raises DecodeError naming the pod and the field."""
    meta = raw.get("metadata") or {}
    key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    try:
        containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
        cond = None
        for c in status.get("conditions") or ():
            if c.get("type") == "PodScheduled":
                cond = (
                    str(c.get("status", "")),
                    str(c.get("reason", "")),
                    str(c.get("message", "")),
                )
        deletion = meta.get("deletionTimestamp")
        return Pod(
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            labels=str_map(meta.get("labels"), "metadata.labels"),
            annotations=str_map(meta.get("annotations"), "metadata.annotations"),
            creation_timestamp=parse_time(meta.get("creationTimestamp")),
            deletion_timestamp=parse_time(deletion) if deletion else None,
            owner_refs=owner_refs(meta.get("ownerReferences")),
            scheduler_name=str(spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME),
            node_name=str(spec.get("nodeName") or ""),
            priority=int(spec.get("priority") or 0),
            preemption_policy=str(spec.get("preemptionPolicy") or "PreemptLowerPriority"),
            node_selector=str_map(spec.get("nodeSelector"), "spec.nodeSelector"),
            affinity=parse_affinity(spec.get("affinity"), "spec.affinity"),
            tolerations=_tolerations(spec.get("tolerations")),
            topology_spread_constraints=parse_topology_spread(
                spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"
            ),
            scheduling_gates=tuple(
                str(g.get("name", "")) for g in spec.get("schedulingGates") or ()
            ),
            requests=_aggregate(spec, non_zero=False),
            non_zero_requests=_aggregate(spec, non_zero=True),
            host_ports=_host_ports(spec),
            images=tuple(str(c.get("image") or "") for c in containers),
            volumes=_volumes(spec),
            phase=str(status.get("phase") or "Pending"),
            nominated_node_name=str(status.get("nominatedNodeName") or ""),
            scheduled_condition=cond,
        )
    except (ValueError, TypeError, AttributeError) as exc:
        msg = str(exc)
        field_path, _, detail = msg.partition(": ")
        if not detail:
            field_path, detail = "spec", msg
        raise DecodeError("Pod", key, field_path, detail) from None
