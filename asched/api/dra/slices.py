"""ResourceSlices (the devices a driver publishes: attributes, capacity, counters, taints)
and DeviceTaintRules, decoded once per version."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from asched.api.dra.decoding import decoding, exact, list_of, obj, strings, text
from asched.api.labels import NodeSelector, parse_node_selector
from asched.api.quantity import parse_quantity

# An attribute value as CEL sees it: int, bool, string, or a semver string (version).
AttributeValue = int | bool | str


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


def _request_policy(raw: Any, path: str) -> CapacityRequestPolicy | None:
    if raw is None:
        return None
    policy = obj(raw, path)
    default = policy.get("default")
    valid_range = policy.get("validRange")
    rng = obj(valid_range, f"{path}.validRange")

    def opt(key: str) -> Fraction | None:
        value = rng.get(key)
        return None if value is None else exact(value, f"{path}.validRange.{key}")

    return CapacityRequestPolicy(
        default=None if default is None else exact(default, f"{path}.default"),
        valid_values=tuple(
            exact(v, f"{path}.validValues[{i}]")
            for i, v in enumerate(list_of(policy.get("validValues"), f"{path}.validValues"))
        ),
        range_min=opt("min"),
        range_max=opt("max"),
        range_step=opt("step"),
        has_range=valid_range is not None,
    )


def _qualified(driver: str, name: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def _attribute(raw: Any, path: str) -> AttributeValue:
    attr = obj(raw, path)
    for kind in ("int", "bool", "string", "version"):
        if kind in attr:
            value = attr[kind]
            if kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"{path}.int: expected an integer, got {value!r}")
            return value if kind in ("int", "bool") else str(value)
    raise ValueError(f"{path}: no value set (int, bool, string or version)")


def _device(raw: Any, driver: str, path: str) -> Device:
    dev = obj(raw, path)
    attrs = obj(dev.get("attributes"), f"{path}.attributes")
    caps = obj(dev.get("capacity"), f"{path}.capacity")
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
                str(obj(v, f"{path}.capacity.{k}").get("value") or "0")
            )
            for k, v in caps.items()
        },
        taints=tuple(
            DeviceTaint(
                key=text(t, "key", f"{path}.taints[{i}]"),
                value=text(t, "value", f"{path}.taints[{i}]"),
                effect=text(t, "effect", f"{path}.taints[{i}]"),
            )
            for i, t in enumerate(list_of(dev.get("taints"), f"{path}.taints"))
        ),
        consumes_counters=tuple(
            CounterConsumption(
                counter_set=text(c, "counterSet", f"{path}.consumesCounters[{i}]"),
                counters=_counters(c, f"{path}.consumesCounters[{i}]"),
            )
            for i, c in enumerate(list_of(dev.get("consumesCounters"), f"{path}.consumesCounters"))
        ),
        node_name=str(dev.get("nodeName") or ""),
        all_nodes=bool(dev.get("allNodes") or False),
        node_selector=parse_node_selector(dev.get("nodeSelector"), f"{path}.nodeSelector"),
        binding_conditions=strings(dev.get("bindingConditions"), f"{path}.bindingConditions"),
        binding_failure_conditions=strings(
            dev.get("bindingFailureConditions"), f"{path}.bindingFailureConditions"
        ),
        binds_to_node=bool(dev.get("bindsToNode") or False),
        allow_multiple_allocations=bool(dev.get("allowMultipleAllocations") or False),
        consumable={
            k: DeviceCapacity(
                value=exact(
                    obj(v, f"{path}.capacity.{k}").get("value") or "0",
                    f"{path}.capacity.{k}.value",
                ),
                policy=_request_policy(
                    v.get("requestPolicy"), f"{path}.capacity.{k}.requestPolicy"
                ),
            )
            for k, v in caps.items()
        },
    )


def _counters(raw: Any, path: str) -> dict[str, Fraction]:
    """`counters: {name: {value: <quantity>}}`, exactly."""
    counters = obj(obj(raw, path).get("counters"), f"{path}.counters")
    return {
        name: exact(
            obj(counter, f"{path}.counters.{name}").get("value") or "0",
            f"{path}.counters.{name}.value",
        )
        for name, counter in counters.items()
    }


def decode_resource_slice(raw: dict[str, Any]) -> ResourceSlice:
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")

    def build() -> ResourceSlice:
        spec = obj(raw.get("spec"), "spec")
        driver = str(spec.get("driver") or "")
        pool = obj(spec.get("pool"), "spec.pool")
        devices = list_of(spec.get("devices"), "spec.devices")
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
                    name=text(c, "name", f"spec.sharedCounters[{i}]"),
                    counters=_counters(c, f"spec.sharedCounters[{i}]"),
                )
                for i, c in enumerate(list_of(spec.get("sharedCounters"), "spec.sharedCounters"))
            ),
        )

    return decoding("ResourceSlice", name, build)


def decode_device_taint_rule(raw: dict[str, Any]) -> DeviceTaintRule:
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")

    def build() -> DeviceTaintRule:
        spec = obj(raw.get("spec"), "spec")
        selector = spec.get("deviceSelector")
        sel = obj(selector, "spec.deviceSelector")
        taint = spec.get("taint")

        def opt(key: str) -> str | None:
            value = sel.get(key)
            return None if value is None else text(sel, key, "spec.deviceSelector")

        return DeviceTaintRule(
            name=name,
            taint=DeviceTaint(
                key=text(taint, "key", "spec.taint"),
                value=text(taint, "value", "spec.taint"),
                effect=text(taint, "effect", "spec.taint"),
            ),
            selects=selector is not None,
            driver=opt("driver"),
            pool=opt("pool"),
            device=opt("device"),
        )

    return decoding("DeviceTaintRule", name, build)
