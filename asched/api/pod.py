"""The scheduler's view of a Pod, decoded once per resourceVersion.

Requests are aggregated the way kube-scheduler does it (component-helpers
resource.PodRequests, see podrequests.py): sidecars and init containers as the sidecar
KEP says, the max with what the pod's status says the kubelet allocated and actuated
(in-place resize), pod-level requests (cpu, memory, hugepages) overriding, then
spec.overhead added. `non_zero_requests` is the same with kube-scheduler's scoring
defaults (100m CPU, 200Mi memory) for containers that leave them unset.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

import orjson

from asched.api.affinity import (
    Affinity,
    TopologySpreadConstraint,
    parse_affinity,
    parse_topology_spread,
)
from asched.api.errors import DecodeError
from asched.api.intree import InTreeSource, parse_in_tree
from asched.api.meta import OwnerRef, owner_refs, parse_time, str_map
from asched.api.nodefeatures import infer_for_scheduling
from asched.api.podrequests import pod_requests
from asched.api.quantity import parse_quantity_exact
from asched.api.resources import Resource

DEFAULT_SCHEDULER_NAME = "default-scheduler"


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
class DiskRef:
    """An in-line disk VolumeRestrictions compares (GCE PD, AWS EBS, iSCSI, RBD)."""

    ident: str  # pdName, volumeID, iqn, or the RBD image
    read_only: bool = False
    pool: str = ""  # RBD only
    monitors: frozenset[str] = frozenset()  # RBD only


@dataclass(slots=True, frozen=True)
class Volume:
    name: str
    source: str  # the volume source's field name: persistentVolumeClaim, emptyDir, ...
    claim_name: str = ""
    disk: DiskRef | None = None
    # An in-line `csi` volume's driver (VolumeBinding's CSIDriver hint asks for it).
    csi_driver: str = ""
    #: A source CSI migration translates (NodeVolumeLimits counts it as its CSI driver's).
    in_tree: InTreeSource | None = None
    #: The source as JSON with sorted keys (`{"emptyDir": {}}`): pod signatures compare
    #: volumes by their whole source, as kube-scheduler's VolumesSigner does.
    source_json: str = ""


# The in-line disk sources and the field naming each one's disk.
_DISK_IDS = {
    "gcePersistentDisk": "pdName",
    "awsElasticBlockStore": "volumeID",
    "iscsi": "iqn",
    "rbd": "image",
}


def _disk(source: str, body: Any) -> DiskRef | None:
    field_name = _DISK_IDS.get(source)
    if field_name is None or not isinstance(body, dict):
        return None
    return DiskRef(
        str(body.get(field_name) or ""),
        bool(body.get("readOnly", False)),
        str(body.get("pool") or "") if source == "rbd" else "",
        frozenset(str(m) for m in body.get("monitors") or ()) if source == "rbd" else frozenset(),
    )


@dataclass(slots=True, frozen=True)
class PodResourceClaim:
    """spec.resourceClaims[]: exactly one of claim_name / template_name is set."""

    name: str
    claim_name: str | None = None
    template_name: str | None = None


@dataclass(slots=True, frozen=True)
class ContainerExtendedRequest:
    """One container's request for a domain-prefixed resource (`example.com/gpu`), as the
    claim for extended resources backed by DRA maps it (createResourceRequestAndMappings).

    `index` counts init containers first, then containers; `short_lived` is an init
    container that is not a sidecar; `rank` is the resource's position among the
    container's request names sorted; `count` is the quantity as an integer, None when
    it is not one (AsInt64 fails)."""

    container: str
    index: int
    short_lived: bool
    resource: str
    count: int | None
    rank: int


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
    # spec.schedulingGroup.podGroupName: the native (scheduling.k8s.io) PodGroup, or "".
    scheduling_group: str = ""
    requests: Resource = field(default_factory=Resource)
    non_zero_requests: Resource = field(default_factory=Resource)
    host_ports: tuple[HostPort, ...] = ()
    images: tuple[str, ...] = ()
    volumes: tuple[Volume, ...] = ()
    # The node features the pod needs (nodedeclaredfeatures InferForPodScheduling).
    required_features: frozenset[str] = frozenset()
    resource_claims: tuple[PodResourceClaim, ...] = ()
    # Containers' requests for domain-prefixed resources (DRA-backed extended resources).
    extended_requests: tuple[ContainerExtendedRequest, ...] = ()
    # status.resourceClaimStatuses: pod claim name -> generated claim name (None: the
    # controller decided no claim is needed).
    resource_claim_statuses: dict[str, str | None] = field(default_factory=dict)
    phase: str = "Pending"
    nominated_node_name: str = ""
    # The PodScheduled condition as last written, so repeated failures do not re-patch it.
    scheduled_condition: tuple[str, str, str] | None = None  # (status, reason, message)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")


# Every field of Pod is an __init__ parameter, in this order; one C call reads them all.
_POD_FIELDS = attrgetter(*(f.name for f in fields(Pod)))


def bound_to(pod: Pod, node_name: str) -> Pod:
    """A shallow copy of *pod* with spec.nodeName set: the pod the cycle assumes.
    dataclasses.replace gives the same copy but walks the field list on every call,
    1.5 % of asched's CPU in the basic benchmark, where it runs once per pod."""
    copy = Pod(*_POD_FIELDS(pod))
    copy.node_name = node_name
    return copy


# Decoded tolerations by their fields, shared between pods. Nearly every pod carries the
# same few (the DefaultTolerationSeconds admission plugin adds not-ready and unreachable to
# all of them), and Toleration is frozen: sharing saves three objects per decoded pod
# version that the garbage collector would otherwise track and walk (docs/benchmarks.md,
# round twelve). Bounded: cleared when full.
_TOLERATIONS: dict[tuple[tuple[str, str, str, str], ...], tuple[Toleration, ...]] = {}
_TOLERATIONS_MAX = 1024


def _tolerations(raw: Any) -> tuple[Toleration, ...]:
    if not raw:
        return ()
    key = tuple(
        (
            str(t.get("key") or ""),
            str(t.get("operator") or "Equal"),
            str(t.get("value") or ""),
            str(t.get("effect") or ""),
        )
        for t in raw
    )
    shared = _TOLERATIONS.get(key)
    if shared is None:
        if len(_TOLERATIONS) >= _TOLERATIONS_MAX:
            _TOLERATIONS.clear()
        shared = _TOLERATIONS[key] = tuple(Toleration(*fields) for fields in key)
    return shared


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
        body = v.get(source)
        driver = str(body.get("driver") or "") if source == "csi" and isinstance(body, dict) else ""
        out.append(
            Volume(
                str(v.get("name") or ""),
                source,
                claim,
                _disk(source, body),
                driver,
                parse_in_tree(source, body),
                _source_json(source, body),
            )
        )
    return tuple(out)


def _source_json(source: str, body: Any) -> str:
    """What VolumesSigner compares; "" for ConfigMaps and Secrets, which it skips (and
    which most pods carry, so decoding does not serialize them)."""
    if source in ("configMap", "secret"):
        return ""
    return orjson.dumps({source: body}, option=orjson.OPT_SORT_KEYS).decode()


def _images(spec: dict[str, Any], containers: list[Any]) -> tuple[str, ...]:
    """Every image the pod pulls, duplicates kept: containers, init containers, then
    image volumes' `image.reference` (ImageLocality's sumImageScores counts all three,
    in its sum and in its image count)."""
    images = [str(c.get("image") or "") for c in containers]
    for v in spec.get("volumes") or ():
        image = v.get("image")
        if image is not None:
            images.append(str(image.get("reference") or ""))
    return tuple(images)


def _scheduling_group(spec: dict[str, Any]) -> str:
    group = spec.get("schedulingGroup")
    if group is None:
        return ""
    if not isinstance(group, dict):
        raise ValueError("spec.schedulingGroup: expected an object")
    name = group.get("podGroupName")
    if not isinstance(name, str) or not name:
        raise ValueError("spec.schedulingGroup.podGroupName: a PodGroup name is required")
    return name


def _extended_requests(spec: dict[str, Any]) -> tuple[ContainerExtendedRequest, ...]:
    init = list(spec.get("initContainers") or ())
    out = []
    for index, c in enumerate([*init, *(spec.get("containers") or ())]):
        requests = (c.get("resources") or {}).get("requests") or {}
        names = sorted(requests)
        short_lived = index < len(init) and c.get("restartPolicy") != "Always"
        for rank, name in enumerate(names):
            if "/" not in name:
                continue
            exact = parse_quantity_exact(requests[name])
            count = exact.numerator if exact.denominator == 1 else None
            out.append(
                ContainerExtendedRequest(
                    str(c.get("name") or ""), index, short_lived, name, count, rank
                )
            )
    return tuple(out)


def _resource_claims(spec: dict[str, Any]) -> tuple[PodResourceClaim, ...]:
    out = []
    for c in spec.get("resourceClaims") or ():
        claim, template = c.get("resourceClaimName"), c.get("resourceClaimTemplateName")
        out.append(
            PodResourceClaim(
                str(c.get("name") or ""),
                None if claim is None else str(claim),
                None if template is None else str(template),
            )
        )
    return tuple(out)


def _resource_claim_statuses(status: dict[str, Any]) -> dict[str, str | None]:
    return {
        str(s.get("name") or ""): (
            None if s.get("resourceClaimName") is None else str(s["resourceClaimName"])
        )
        for s in status.get("resourceClaimStatuses") or ()
    }


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
        requests, non_zero = pod_requests(spec, status)
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
            scheduling_group=_scheduling_group(spec),
            requests=requests,
            non_zero_requests=non_zero,
            host_ports=_host_ports(spec),
            images=_images(spec, containers),
            volumes=_volumes(spec),
            required_features=infer_for_scheduling(spec),
            resource_claims=_resource_claims(spec),
            extended_requests=_extended_requests(spec),
            resource_claim_statuses=_resource_claim_statuses(status),
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
