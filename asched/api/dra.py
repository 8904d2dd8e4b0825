"""Dynamic Resource Allocation objects (resource.k8s.io/v1), decoded once per version.

What the DynamicResources plugin reads: DeviceClasses (CEL selectors every device of the
class must pass), ResourceClaims (device requests, and the allocation once made),
ResourceSlices (the devices a driver publishes for a node: attributes and capacity).
ResourceClaimTemplates are not here: kube-controller-manager's resourceclaim controller
turns them into claims and writes the claim's name into the pod's
status.resourceClaimStatuses, which is all the scheduler reads (as kube-scheduler does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeVar

import orjson

from asched.api.errors import DecodeError
from asched.api.labels import NodeSelector, parse_node_selector
from asched.api.meta import parse_time
from asched.api.quantity import QuantityError, parse_quantity, parse_quantity_exact

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

# An attribute value as CEL sees it: int, bool, string, or a semver string (version).
AttributeValue = int | bool | str


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
class DeviceTaint:
    """`spec.devices[].taints[]` of a ResourceSlice (DeviceTaints, GA in 1.37)."""

    key: str
    value: str = ""
    effect: str = ""


@dataclass(slots=True, frozen=True)
class DeviceTaintRule:
    """A DeviceTaintRule (GA in 1.37): `taint` applies to the devices its selector picks,
    by driver, pool and device name (each None when unset); without a selector it
    applies to none."""

    name: str
    taint: DeviceTaint
    selects: bool = False
    driver: str | None = None
    pool: str | None = None
    device: str | None = None

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


@dataclass(slots=True, frozen=True)
class CounterSet:
    """A slice's `sharedCounters[]` entry (DRAPartitionableDevices, beta in 1.37): named
    counters (exact quantities) the pool's devices draw on."""

    name: str
    counters: dict[str, Fraction] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class CounterConsumption:
    """A device's `consumesCounters[]` entry: what allocating it takes from a counter set."""

    counter_set: str
    counters: dict[str, Fraction] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class CapacityRequestPolicy:
    """How requests consume a capacity (`capacity.<name>.requestPolicy`): the default
    for a request that names no amount, and either the valid values (ascending) or a
    range (min, optional max, optional step)."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    range_min: Fraction | None = None
    range_max: Fraction | None = None
    range_step: Fraction | None = None
    has_range: bool = False


@dataclass(slots=True, frozen=True)
class DeviceCapacity:
    """One `capacity` entry, exactly, under the name the slice gives it."""

    value: Fraction
    policy: CapacityRequestPolicy | None = None


@dataclass(slots=True, frozen=True)
class Device:
    name: str
    # Fully qualified attribute / capacity names ("gpu.example.com/model"): an unqualified
    # name in the slice belongs to the driver's domain.
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    capacity: dict[str, int] = field(default_factory=dict)
    # The attributes whose value is a version (a str above): a matchAttribute constraint
    # never finds a version equal to a string.
    versions: frozenset[str] = frozenset()
    taints: tuple[DeviceTaint, ...] = ()
    consumes_counters: tuple[CounterConsumption, ...] = ()
    # Where the device is usable when its slice sets perDeviceNodeSelection.
    node_name: str = ""
    all_nodes: bool = False
    node_selector: NodeSelector | None = None
    # DRADeviceBindingConditions (beta in 1.37): the conditions the claim's device status
    # must reach before the pod is bound, and those that fail the binding.
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False
    # DRAConsumableCapacity (beta in 1.37): the device may be shared by several
    # allocations, each consuming part of `consumable` (the capacity, by raw name).
    allow_multiple_allocations: bool = False
    consumable: dict[str, DeviceCapacity] = field(default_factory=dict)


@dataclass(slots=True)
class ResourceSlice:
    name: str
    uid: str = ""
    resource_version: str = ""
    driver: str = ""
    pool: str = ""
    pool_generation: int = 0
    pool_slice_count: int = 1
    node_name: str = ""
    all_nodes: bool = False
    node_selector: NodeSelector | None = None
    # Each device says which nodes can use it (its own nodeName/allNodes/nodeSelector).
    per_device_node_selection: bool = False
    devices: tuple[Device, ...] = ()
    # A slice has devices or shared counters, never both (API validation).
    shared_counters: tuple[CounterSet, ...] = ()

    @property
    def key(self) -> str:
        return self.name


T = TypeVar("T")


def _decoding(kind: str, key: str, build: Callable[[], T]) -> T:
    """Run `build`, turning its ValueError("path: detail") into a DecodeError for `kind`."""
    try:
        return build()
    except (ValueError, TypeError, AttributeError) as exc:
        msg = str(exc)
        field_path, _, detail = msg.partition(": ")
        if not detail:
            field_path, detail = "spec", msg
        raise DecodeError(kind, key, field_path, detail) from None


def _obj(raw: Any, path: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    return raw


def _list(raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list")
    return raw


def _selectors(raw: Any, path: str) -> tuple[str, ...]:
    out = []
    for i, sel in enumerate(_list(raw, path)):
        cel = _obj(_obj(sel, f"{path}[{i}]").get("cel"), f"{path}[{i}].cel")
        # An empty expression stays "": the allocator reports it as Go does.
        out.append(str(cel.get("expression") or ""))
    return tuple(out)


def decode_device_class(raw: dict[str, Any]) -> DeviceClass:
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")
    return _decoding(
        "DeviceClass",
        name,
        lambda: DeviceClass(
            name=name,
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            selectors=_selectors(_obj(raw.get("spec"), "spec").get("selectors"), "spec.selectors"),
            extended_resource_name=_text(raw.get("spec"), "extendedResourceName", "spec"),
            creation_timestamp=parse_time(meta.get("creationTimestamp")),
        ),
    )


def _sub_request(raw: Any, name: str, path: str) -> DeviceSubRequest:
    req = _obj(raw, path)
    count = req.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"{path}.count: expected an integer, got {count!r}")
    return DeviceSubRequest(
        name=name,
        device_class_name=str(req.get("deviceClassName") or ""),
        selectors=_selectors(req.get("selectors"), f"{path}.selectors"),
        allocation_mode=str(req.get("allocationMode") or ALLOCATION_MODE_EXACT_COUNT),
        count=count,
        admin_access=bool(req.get("adminAccess") or False),
        tolerations=tuple(
            DeviceToleration(
                key=_text(t, "key", f"{path}.tolerations[{i}]"),
                operator=_text(t, "operator", f"{path}.tolerations[{i}]"),
                value=_text(t, "value", f"{path}.tolerations[{i}]"),
                effect=_text(t, "effect", f"{path}.tolerations[{i}]"),
                seconds=_optional_int(t, "tolerationSeconds", f"{path}.tolerations[{i}]"),
            )
            for i, t in enumerate(_list(req.get("tolerations"), f"{path}.tolerations"))
        ),
        capacity_requests=_capacity_requests(req.get("capacity"), f"{path}.capacity"),
    )


def _exact(raw: Any, path: str) -> Fraction:
    try:
        return parse_quantity_exact(str(raw))
    except QuantityError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _capacity_requests(raw: Any, path: str) -> dict[str, Fraction] | None:
    requests = _obj(raw, path).get("requests")
    if requests is None:
        return None
    return {
        k: _exact(v, f"{path}.requests.{k}") for k, v in _obj(requests, f"{path}.requests").items()
    }


def _request_policy(raw: Any, path: str) -> CapacityRequestPolicy | None:
    if raw is None:
        return None
    policy = _obj(raw, path)
    default = policy.get("default")
    valid_range = policy.get("validRange")
    rng = _obj(valid_range, f"{path}.validRange")

    def opt(key: str) -> Fraction | None:
        value = rng.get(key)
        return None if value is None else _exact(value, f"{path}.validRange.{key}")

    return CapacityRequestPolicy(
        default=None if default is None else _exact(default, f"{path}.default"),
        valid_values=tuple(
            _exact(v, f"{path}.validValues[{i}]")
            for i, v in enumerate(_list(policy.get("validValues"), f"{path}.validValues"))
        ),
        range_min=opt("min"),
        range_max=opt("max"),
        range_step=opt("step"),
        has_range=valid_range is not None,
    )


def _optional_int(raw: Any, key: str, path: str) -> int | None:
    value = _obj(raw, path).get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{path}.{key}: expected an integer, got {value!r}")
    return value


def _text(raw: Any, key: str, path: str) -> str:
    """An optional string field of the object at *path*."""
    value = _obj(raw, path).get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{path}.{key}: expected a string, got {value!r}")
    return value


def _request(raw: Any, path: str) -> DeviceRequest:
    req = _obj(raw, path)
    name = str(req.get("name") or "")
    first = _list(req.get("firstAvailable"), f"{path}.firstAvailable")
    if first:
        return DeviceRequest(
            name,
            first_available=tuple(
                _sub_request(
                    sub,
                    str(_obj(sub, f"{path}.firstAvailable[{i}]").get("name") or ""),
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
    terms = _list(raw.get("nodeSelectorTerms"), "nodeSelectorTerms")
    if len(terms) != 1:
        return ""
    fields = _list(_obj(terms[0], "term").get("matchFields"), "matchFields")
    if len(fields) != 1 or _obj(terms[0], "term").get("matchExpressions"):
        return ""
    f = _obj(fields[0], "matchFields[0]")
    values = _list(f.get("values"), "values")
    if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(values) == 1:
        return str(values[0])
    return ""


def _allocation(raw: Any, path: str) -> Allocation | None:
    if raw is None:
        return None
    alloc = _obj(raw, path)
    results = []
    devices = _obj(alloc.get("devices"), f"{path}.devices")
    for i, r in enumerate(_list(devices.get("results"), f"{path}.devices.results")):
        where = f"{path}.devices.results[{i}]"
        res = _obj(r, where)
        consumed = _obj(res.get("consumedCapacity"), f"{where}.consumedCapacity")
        results.append(
            DeviceResult(
                str(res.get("request") or ""),
                str(res.get("driver") or ""),
                str(res.get("pool") or ""),
                str(res.get("device") or ""),
                admin_access=bool(res.get("adminAccess") or False),
                share_id=str(res.get("shareID") or ""),
                consumed_capacity=tuple(
                    (k, _exact(v, f"{where}.consumedCapacity.{k}")) for k, v in consumed.items()
                ),
                binding_conditions=_strings(
                    res.get("bindingConditions"), f"{where}.bindingConditions"
                ),
                binding_failure_conditions=_strings(
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
    for i, d in enumerate(_list(raw, path)):
        where = f"{path}[{i}]"
        key = (_text(d, "driver", where), _text(d, "pool", where), _text(d, "device", where))
        if key in out:
            continue
        conditions = out[key] = {}
        for j, c in enumerate(_list(_obj(d, where).get("conditions"), f"{where}.conditions")):
            cond = f"{where}.conditions[{j}]"
            conditions.setdefault(
                _text(c, "type", cond),
                DeviceCondition(
                    _text(c, "status", cond), _text(c, "reason", cond), _text(c, "message", cond)
                ),
            )
    return out


def _constraints(raw: Any) -> tuple[MatchAttribute, ...]:
    out = []
    for i, c in enumerate(_list(raw, "spec.devices.constraints")):
        path = f"spec.devices.constraints[{i}]"
        con = _obj(c, path)
        requests = tuple(str(r) for r in _list(con.get("requests"), f"{path}.requests"))
        out.append(MatchAttribute(str(con.get("matchAttribute") or ""), requests))
    return tuple(out)


def _controller_uid(meta: dict[str, Any]) -> str:
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return str(ref.get("uid") or "")
    return ""


def decode_resource_claim(raw: dict[str, Any]) -> ResourceClaim:
    meta = raw.get("metadata") or {}
    ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")

    def build() -> ResourceClaim:
        spec = _obj(raw.get("spec"), "spec")
        devices = _obj(spec.get("devices"), "spec.devices")
        status = _obj(raw.get("status"), "status")
        reqs = _list(devices.get("requests"), "spec.devices.requests")
        reserved = []
        for i, r in enumerate(_list(status.get("reservedFor"), "status.reservedFor")):
            ref = _obj(r, f"status.reservedFor[{i}]")
            reserved.append(
                ConsumerRef(
                    str(ref.get("resource") or ""),
                    str(ref.get("name") or ""),
                    str(ref.get("uid") or ""),
                    str(ref.get("apiGroup") or ""),
                )
            )
        return ResourceClaim(
            namespace=ns,
            name=name,
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            deletion_timestamp=str(meta.get("deletionTimestamp") or ""),
            controller_uid=_controller_uid(meta),
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

    return _decoding("ResourceClaim", f"{ns}/{name}", build)


def _qualified(driver: str, name: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def _attribute(raw: Any, path: str) -> AttributeValue:
    attr = _obj(raw, path)
    for kind in ("int", "bool", "string", "version"):
        if kind in attr:
            value = attr[kind]
            if kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"{path}.int: expected an integer, got {value!r}")
            return value if kind in ("int", "bool") else str(value)
    raise ValueError(f"{path}: no value set (int, bool, string or version)")


def _device(raw: Any, driver: str, path: str) -> Device:
    dev = _obj(raw, path)
    attrs = _obj(dev.get("attributes"), f"{path}.attributes")
    caps = _obj(dev.get("capacity"), f"{path}.capacity")
    return Device(
        name=str(dev.get("name") or ""),
        attributes={
            _qualified(driver, k): _attribute(v, f"{path}.attributes.{k}") for k, v in attrs.items()
        },
        versions=frozenset(
            _qualified(driver, k)
            for k, v in attrs.items()
            if isinstance(v, dict) and "version" in v and not {"int", "bool", "string"} & v.keys()
        ),
        capacity={
            _qualified(driver, k): parse_quantity(
                str(_obj(v, f"{path}.capacity.{k}").get("value") or "0")
            )
            for k, v in caps.items()
        },
        taints=tuple(
            DeviceTaint(
                key=_text(t, "key", f"{path}.taints[{i}]"),
                value=_text(t, "value", f"{path}.taints[{i}]"),
                effect=_text(t, "effect", f"{path}.taints[{i}]"),
            )
            for i, t in enumerate(_list(dev.get("taints"), f"{path}.taints"))
        ),
        consumes_counters=tuple(
            CounterConsumption(
                counter_set=_text(c, "counterSet", f"{path}.consumesCounters[{i}]"),
                counters=_counters(c, f"{path}.consumesCounters[{i}]"),
            )
            for i, c in enumerate(_list(dev.get("consumesCounters"), f"{path}.consumesCounters"))
        ),
        node_name=str(dev.get("nodeName") or ""),
        all_nodes=bool(dev.get("allNodes") or False),
        node_selector=parse_node_selector(dev.get("nodeSelector"), f"{path}.nodeSelector"),
        binding_conditions=_strings(dev.get("bindingConditions"), f"{path}.bindingConditions"),
        binding_failure_conditions=_strings(
            dev.get("bindingFailureConditions"), f"{path}.bindingFailureConditions"
        ),
        binds_to_node=bool(dev.get("bindsToNode") or False),
        allow_multiple_allocations=bool(dev.get("allowMultipleAllocations") or False),
        consumable={
            k: DeviceCapacity(
                value=_exact(
                    _obj(v, f"{path}.capacity.{k}").get("value") or "0",
                    f"{path}.capacity.{k}.value",
                ),
                policy=_request_policy(
                    v.get("requestPolicy"), f"{path}.capacity.{k}.requestPolicy"
                ),
            )
            for k, v in caps.items()
        },
    )


def _strings(raw: Any, path: str) -> tuple[str, ...]:
    items = _list(raw, path)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ValueError(f"{path}[{i}]: expected a string, got {item!r}")
    return tuple(items)


def _counters(raw: Any, path: str) -> dict[str, Fraction]:
    """`counters: {name: {value: <quantity>}}`, exactly."""
    counters = _obj(_obj(raw, path).get("counters"), f"{path}.counters")
    out = {}
    for name, counter in counters.items():
        where = f"{path}.counters.{name}.value"
        try:
            out[name] = parse_quantity_exact(str(_obj(counter, where).get("value") or "0"))
        except QuantityError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return out


def decode_resource_slice(raw: dict[str, Any]) -> ResourceSlice:
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")

    def build() -> ResourceSlice:
        spec = _obj(raw.get("spec"), "spec")
        driver = str(spec.get("driver") or "")
        pool = _obj(spec.get("pool"), "spec.pool")
        devices = _list(spec.get("devices"), "spec.devices")
        return ResourceSlice(
            name=name,
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            driver=driver,
            pool=str(pool.get("name") or ""),
            pool_generation=int(pool.get("generation") or 0),
            pool_slice_count=int(pool.get("resourceSliceCount") or 1),
            node_name=str(spec.get("nodeName") or ""),
            all_nodes=bool(spec.get("allNodes") or False),
            node_selector=parse_node_selector(spec.get("nodeSelector"), "spec.nodeSelector"),
            per_device_node_selection=bool(spec.get("perDeviceNodeSelection") or False),
            devices=tuple(_device(d, driver, f"spec.devices[{i}]") for i, d in enumerate(devices)),
            shared_counters=tuple(
                CounterSet(
                    name=_text(c, "name", f"spec.sharedCounters[{i}]"),
                    counters=_counters(c, f"spec.sharedCounters[{i}]"),
                )
                for i, c in enumerate(_list(spec.get("sharedCounters"), "spec.sharedCounters"))
            ),
        )

    return _decoding("ResourceSlice", name, build)


def decode_device_taint_rule(raw: dict[str, Any]) -> DeviceTaintRule:
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")

    def build() -> DeviceTaintRule:
        spec = _obj(raw.get("spec"), "spec")
        selector = spec.get("deviceSelector")
        sel = _obj(selector, "spec.deviceSelector")
        taint = spec.get("taint")

        def opt(key: str) -> str | None:
            value = sel.get(key)
            return None if value is None else _text(sel, key, "spec.deviceSelector")

        return DeviceTaintRule(
            name=name,
            taint=DeviceTaint(
                key=_text(taint, "key", "spec.taint"),
                value=_text(taint, "value", "spec.taint"),
                effect=_text(taint, "effect", "spec.taint"),
            ),
            selects=selector is not None,
            driver=opt("driver"),
            pool=opt("pool"),
            device=opt("device"),
        )

    return _decoding("DeviceTaintRule", name, build)
