"""DeviceClasses and ResourceClaims (device requests, and the allocation once made),
decoded once per version."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import orjson

from asched.api.dra.decoding import (
    decoding,
    exact,
    list_of,
    obj,
    optional_int,
    selectors_of,
    strings,
    text,
)
from asched.api.dra.slices import DeviceTaint
from asched.api.labels import NodeSelector, parse_node_selector
from asched.api.meta import parse_time

GROUP = "resource.k8s.io"


VERSION = "v1"


API_VERSION = f"{GROUP}/{VERSION}"


ALLOCATION_MODE_EXACT_COUNT = "ExactCount"


ALLOCATION_MODE_ALL = "All"


# resourceapi.Finalizer: the scheduler adds it before it writes an allocation.
FINALIZER = "resource.kubernetes.io/delete-protection"


# resourceapi.ExtendedResourceClaimAnnotation: the claim the scheduler made for a pod's
# extended resources backed by DRA.
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


# resourceapi.ResourceDeviceClassPrefix: every DeviceClass is also the extended resource
# "deviceclass.resource.kubernetes.io/<class name>".
DEVICE_CLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"


@dataclass(slots=True, frozen=True)
class DeviceClass:
    name: str
    uid: str = ""
    resource_version: str = ""
    selectors: tuple[str, ...] = ()  # CEL expressions, in spec order
    # spec.extendedResourceName (DRAExtendedResource, GA in 1.37): pods may request the
    # class's devices as this extended resource.
    extended_resource_name: str = ""
    creation_timestamp: float = 0.0

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True, frozen=True)
class DeviceToleration:
    """A request's `tolerations[]`."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    # tolerationSeconds: not read by the scheduler, only copied into the allocation.
    seconds: int | None = None

    def tolerates(self, taint: DeviceTaint) -> bool:
        """resourceclaim.ToleratesTaint: an empty effect or key matches any; an empty
        operator is Equal; an unknown operator tolerates nothing."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


@dataclass(slots=True, frozen=True)
class DeviceSubRequest:
    """`exactly`, or one `firstAvailable[]` alternative (DeviceSubRequest)."""

    name: str
    device_class_name: str = ""
    selectors: tuple[str, ...] = ()
    allocation_mode: str = ALLOCATION_MODE_EXACT_COUNT
    count: int = 1
    admin_access: bool = False
    tolerations: tuple[DeviceToleration, ...] = ()
    # `capacity.requests` (DRAConsumableCapacity, beta in 1.37), by the name the
    # device's capacity uses; None when the request says nothing of capacity.
    capacity_requests: dict[str, Fraction] | None = None


@dataclass(slots=True, frozen=True)
class DeviceRequest:
    """One `spec.devices.requests[]` entry: `exactly` or `firstAvailable` (PrioritizedList:
    the first alternative that can be allocated wins; its result names "request/sub")."""

    name: str
    exactly: DeviceSubRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()

    @property
    def admin_access(self) -> bool:
        return self.exactly is not None and self.exactly.admin_access


@dataclass(slots=True, frozen=True)
class DeviceResult:
    """`status.allocation.devices.results[]`."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False
    # One share of a device that allows multiple allocations (DRAConsumableCapacity):
    # its id, and the capacity it consumes (name -> exact quantity).
    share_id: str = ""
    consumed_capacity: tuple[tuple[str, Fraction], ...] = ()
    # What the allocator copies from the request and the device for the API.
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()

    @property
    def device_id(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)


@dataclass(slots=True, frozen=True)
class Allocation:
    results: tuple[DeviceResult, ...] = ()
    node_selector: NodeSelector | None = None
    # The node the allocation was made for, when its selector names one node by
    # metadata.name (what the allocator writes for node-local slices).
    node_name: str = ""
    # allocationTimestamp (epoch seconds), None when unset: binding conditions time out
    # from it.
    timestamp: float | None = None


@dataclass(slots=True, frozen=True)
class DeviceCondition:
    """One condition of `status.devices[].conditions` (a driver's report on a device)."""

    status: str
    reason: str = ""
    message: str = ""


@dataclass(slots=True, frozen=True)
class ConsumerRef:
    """`status.reservedFor[]`."""

    resource: str
    name: str
    uid: str
    api_group: str = ""


@dataclass(slots=True, frozen=True)
class ControllerRef:
    """The controller owner reference's identity, beside its uid: a claim a PodGroup's
    template made is the group's, which a pod (not knowing the group's uid) recognizes
    by these (resourceclaim.isForPodGroupByPod)."""

    api_version: str
    kind: str
    name: str


@dataclass(slots=True, frozen=True)
class MatchAttribute:
    """`spec.devices.constraints[]`: the devices of `requests` (all the claim's requests
    when empty) must share one value of `attribute`, a fully qualified name. An entry
    without matchAttribute (a constraint type asched does not know) has attribute ""."""

    attribute: str
    requests: tuple[str, ...] = ()


@dataclass(slots=True)
class ResourceClaim:
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    deletion_timestamp: str = ""
    # uids of the controller owner references (a claim made from a template is owned by its pod).
    controller_uid: str = ""
    controller: ControllerRef | None = None
    # Annotated as the claim of a pod's extended resources backed by DRA.
    extended_resource: bool = False
    finalizers: tuple[str, ...] = ()
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[MatchAttribute, ...] = ()
    allocation: Allocation | None = None
    reserved_for: tuple[ConsumerRef, ...] = ()
    # The whole `status` as decoded (canonical JSON): DynamicResources' claim hint skips an
    # update only when the status is unchanged (Go compares it with Semantic.DeepEqual),
    # and `status.devices` (a driver's device conditions) is not decoded otherwise.
    status_fingerprint: bytes = b""
    # status.devices: (driver, pool, device) -> condition type -> condition; the first
    # entry of a device wins, as Go's getAllocatedDeviceStatus finds it.
    device_conditions: dict[tuple[str, str, str], dict[str, DeviceCondition]] = field(
        default_factory=dict
    )

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def decode_device_class(raw: dict[str, Any]) -> DeviceClass:
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")
    return decoding(
        "DeviceClass",
        name,
        lambda: DeviceClass(
            name=name,
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            selectors=selectors_of(obj(raw.get("spec"), "spec").get("selectors"), "spec.selectors"),
            extended_resource_name=text(raw.get("spec"), "extendedResourceName", "spec"),
            creation_timestamp=parse_time(meta.get("creationTimestamp")),
        ),
    )


def _sub_request(raw: Any, name: str, path: str) -> DeviceSubRequest:
    req = obj(raw, path)
    count = req.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"{path}.count: expected an integer, got {count!r}")
    return DeviceSubRequest(
        name=name,
        device_class_name=str(req.get("deviceClassName") or ""),
        selectors=selectors_of(req.get("selectors"), f"{path}.selectors"),
        allocation_mode=str(req.get("allocationMode") or ALLOCATION_MODE_EXACT_COUNT),
        count=count,
        admin_access=bool(req.get("adminAccess") or False),
        tolerations=tuple(
            DeviceToleration(
                key=text(t, "key", f"{path}.tolerations[{i}]"),
                operator=text(t, "operator", f"{path}.tolerations[{i}]"),
                value=text(t, "value", f"{path}.tolerations[{i}]"),
                effect=text(t, "effect", f"{path}.tolerations[{i}]"),
                seconds=optional_int(t, "tolerationSeconds", f"{path}.tolerations[{i}]"),
            )
            for i, t in enumerate(list_of(req.get("tolerations"), f"{path}.tolerations"))
        ),
        capacity_requests=_capacity_requests(req.get("capacity"), f"{path}.capacity"),
    )


def _capacity_requests(raw: Any, path: str) -> dict[str, Fraction] | None:
    requests = obj(raw, path).get("requests")
    if requests is None:
        return None
    return {
        k: exact(v, f"{path}.requests.{k}") for k, v in obj(requests, f"{path}.requests").items()
    }


def _request(raw: Any, path: str) -> DeviceRequest:
    req = obj(raw, path)
    name = str(req.get("name") or "")
    first = list_of(req.get("firstAvailable"), f"{path}.firstAvailable")
    if first:
        return DeviceRequest(
            name,
            first_available=tuple(
                _sub_request(
                    sub,
                    str(obj(sub, f"{path}.firstAvailable[{i}]").get("name") or ""),
                    f"{path}.firstAvailable[{i}]",
                )
                for i, sub in enumerate(first)
            ),
        )
    if req.get("exactly") is None:
        return DeviceRequest(name)
    return DeviceRequest(name, exactly=_sub_request(req["exactly"], name, f"{path}.exactly"))


def _node_of(selector: NodeSelector | None, raw: dict[str, Any]) -> str:
    """The single node a `metadata.name In [node]` selector names, else ""."""
    if selector is None:
        return ""
    terms = list_of(raw.get("nodeSelectorTerms"), "nodeSelectorTerms")
    if len(terms) != 1:
        return ""
    fields = list_of(obj(terms[0], "term").get("matchFields"), "matchFields")
    if len(fields) != 1 or obj(terms[0], "term").get("matchExpressions"):
        return ""
    f = obj(fields[0], "matchFields[0]")
    values = list_of(f.get("values"), "values")
    if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(values) == 1:
        return str(values[0])
    return ""


def _allocation(raw: Any, path: str) -> Allocation | None:
    if raw is None:
        return None
    alloc = obj(raw, path)
    results = []
    devices = obj(alloc.get("devices"), f"{path}.devices")
    for i, r in enumerate(list_of(devices.get("results"), f"{path}.devices.results")):
        where = f"{path}.devices.results[{i}]"
        res = obj(r, where)
        consumed = obj(res.get("consumedCapacity"), f"{where}.consumedCapacity")
        results.append(
            DeviceResult(
                str(res.get("request") or ""),
                str(res.get("driver") or ""),
                str(res.get("pool") or ""),
                str(res.get("device") or ""),
                admin_access=bool(res.get("adminAccess") or False),
                share_id=str(res.get("shareID") or ""),
                consumed_capacity=tuple(
                    (k, exact(v, f"{where}.consumedCapacity.{k}")) for k, v in consumed.items()
                ),
                binding_conditions=strings(
                    res.get("bindingConditions"), f"{where}.bindingConditions"
                ),
                binding_failure_conditions=strings(
                    res.get("bindingFailureConditions"), f"{where}.bindingFailureConditions"
                ),
            )
        )
    raw_sel = alloc.get("nodeSelector")
    selector = parse_node_selector(raw_sel, f"{path}.nodeSelector")
    node = _node_of(selector, raw_sel) if isinstance(raw_sel, dict) else ""
    stamp = alloc.get("allocationTimestamp")
    try:
        timestamp = None if not stamp else parse_time(stamp)
    except ValueError:
        raise ValueError(f"{path}.allocationTimestamp: not an RFC 3339 time: {stamp!r}") from None
    return Allocation(tuple(results), selector, node, timestamp)


def _device_conditions(
    raw: Any, path: str
) -> dict[tuple[str, str, str], dict[str, DeviceCondition]]:
    out: dict[tuple[str, str, str], dict[str, DeviceCondition]] = {}
    for i, d in enumerate(list_of(raw, path)):
        where = f"{path}[{i}]"
        key = (text(d, "driver", where), text(d, "pool", where), text(d, "device", where))
        if key in out:
            continue
        conditions = out[key] = {}
        for j, c in enumerate(list_of(obj(d, where).get("conditions"), f"{where}.conditions")):
            cond = f"{where}.conditions[{j}]"
            conditions.setdefault(
                text(c, "type", cond),
                DeviceCondition(
                    text(c, "status", cond), text(c, "reason", cond), text(c, "message", cond)
                ),
            )
    return out


def _constraints(raw: Any) -> tuple[MatchAttribute, ...]:
    out = []
    for i, c in enumerate(list_of(raw, "spec.devices.constraints")):
        path = f"spec.devices.constraints[{i}]"
        con = obj(c, path)
        requests = tuple(str(r) for r in list_of(con.get("requests"), f"{path}.requests"))
        out.append(MatchAttribute(str(con.get("matchAttribute") or ""), requests))
    return tuple(out)


def _controller(meta: dict[str, Any]) -> tuple[str, ControllerRef | None]:
    """The controller owner reference (metav1.GetControllerOf): its uid and identity."""
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return str(ref.get("uid") or ""), ControllerRef(
                str(ref.get("apiVersion") or ""),
                str(ref.get("kind") or ""),
                str(ref.get("name") or ""),
            )
    return "", None


def decode_resource_claim(raw: dict[str, Any]) -> ResourceClaim:
    meta = raw.get("metadata") or {}
    ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")

    def build() -> ResourceClaim:
        spec = obj(raw.get("spec"), "spec")
        devices = obj(spec.get("devices"), "spec.devices")
        status = obj(raw.get("status"), "status")
        reqs = list_of(devices.get("requests"), "spec.devices.requests")
        reserved = []
        for i, r in enumerate(list_of(status.get("reservedFor"), "status.reservedFor")):
            ref = obj(r, f"status.reservedFor[{i}]")
            reserved.append(
                ConsumerRef(
                    str(ref.get("resource") or ""),
                    str(ref.get("name") or ""),
                    str(ref.get("uid") or ""),
                    str(ref.get("apiGroup") or ""),
                )
            )
        controller_uid, controller = _controller(meta)
        return ResourceClaim(
            namespace=ns,
            name=name,
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            deletion_timestamp=str(meta.get("deletionTimestamp") or ""),
            controller_uid=controller_uid,
            controller=controller,
            extended_resource=(meta.get("annotations") or {}).get(
                EXTENDED_RESOURCE_CLAIM_ANNOTATION
            )
            == "true",
            finalizers=tuple(str(f) for f in meta.get("finalizers") or ()),
            requests=tuple(_request(r, f"spec.devices.requests[{i}]") for i, r in enumerate(reqs)),
            constraints=_constraints(devices.get("constraints")),
            allocation=_allocation(status.get("allocation"), "status.allocation"),
            reserved_for=tuple(reserved),
            status_fingerprint=orjson.dumps(status, option=orjson.OPT_SORT_KEYS),
            device_conditions=_device_conditions(status.get("devices"), "status.devices"),
        )

    return decoding("ResourceClaim", f"{ns}/{name}", build)
