"""Extended resources backed by DRA in the resource scorers (DRAExtendedResource, GA in
1.37): a scored extended resource that a node does not advertise but a DeviceClass
provides counts, on that node, the devices of the class as allocatable and the allocated
ones among them as requested.

Follows resource_allocation.go: getDRAPreScoredParams (read once per cycle, only when a
scored resource is provided by a class), calculateDRAExtendedResourceAllocatableRequest
and calculateDRAResourceTotals (every slice for the node, or with per-device node
selection every device for the node, counted without pool checks; a class's CEL
selectors must all match; a selector error counts the resource as absent on the node).
The allocated devices are those of the allocated claims the informer holds; Go's DRA
manager also counts allocations still in flight (between another pod's Reserve and its
PreBind), so the two may differ in that window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from asched.api import Node
from asched.api.dra import Device, DeviceClass, ResourceClaim, ResourceSlice
from asched.framework.handle import Handle
from asched.framework.listers import InformerRequest, ObjectStore
from asched.plugins.deviceclasses import DEVICE_CLASSES, is_dra_extended_resource_name, resolver
from asched.plugins.dynamicresources.cel import CelRuntimeError, compile_expression
from asched.plugins.dynamicresources.pools import device_targets_node, node_matches
from asched.plugins.dynamicresources.tracker import (
    DEVICE_TAINT_RULES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    AllocatedState,
    with_taint_rules,
)

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class DraTotals:
    """One cycle's view (draPreScoreState): per (node, resource), (devices, allocated)."""

    classes: Mapping[str, DeviceClass]
    slices: Sequence[ResourceSlice]
    allocated: AllocatedState
    _memo: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)

    def totals(self, node: Node, resource: str) -> tuple[int, int]:
        """(capacity, allocated) of `resource` on `node`; (0, 0) without a class."""
        key = (node.name, resource)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._count(node, resource)
        return found

    def _count(self, node: Node, resource: str) -> tuple[int, int]:
        cls = self.classes.get(resource)
        if cls is None:
            return 0, 0
        capacity = allocated = 0
        for s in self.slices:
            for device in _devices_for(s, node):
                try:
                    if not all(_matches(e, device, s.driver) for e in cls.selectors):
                        continue
                except CelRuntimeError as exc:
                    # calculateDRAResourceTotals' error: the resource counts as absent.
                    log.debug("dra_totals_selector_error", node=node.name, error=str(exc))
                    return 0, 0
                capacity += 1
                if self.allocated.is_allocated((s.driver, s.pool, device.name)):
                    allocated += 1
        return capacity, allocated


def _matches(expression: str, device: Device, driver: str) -> bool:
    """deviceMatchesClass for one selector; a compile error is an error too."""
    compiled = compile_expression(expression)
    if compiled.error:
        raise CelRuntimeError(compiled.error)
    return compiled.matches(device, driver)


def _devices_for(s: ResourceSlice, node: Node) -> Sequence[Device]:
    """calculateDRAResourceTotals' choice of a slice's devices for the node."""
    labels, name = node.labels, node.name
    if s.per_device_node_selection:
        return [
            d
            for d in s.devices
            if d.all_nodes
            or (d.node_name and d.node_name == name)
            or (d.node_selector is not None and device_targets_node(d, name, labels))
        ]
    if not s.all_nodes and s.node_name != name and s.node_selector is not None:
        if not node_matches(name, labels, s.node_name, s.all_nodes, s.node_selector):
            return []
    elif not s.all_nodes and s.node_name and s.node_name != name:
        return []
    return s.devices


def dra_totals(handle: Handle, resources: Sequence[str]) -> DraTotals | None:
    """getDRAPreScoredParams: the view, when some scored resource is a class's."""
    if not any(is_dra_extended_resource_name(r) for r in resources):
        return None
    class_store: ObjectStore[DeviceClass] = handle.store(DEVICE_CLASSES)
    classes = resolver(class_store.list())
    if not any(r in classes for r in resources):
        return None
    claims: ObjectStore[ResourceClaim] = handle.store(RESOURCE_CLAIMS)
    state = AllocatedState()
    for claim in claims.list():
        if claim.allocation is not None:
            state.add(claim.allocation)
    slices: ObjectStore[ResourceSlice] = handle.store(RESOURCE_SLICES)
    rules = handle.store(DEVICE_TAINT_RULES)
    return DraTotals(classes, with_taint_rules(slices.list(), rules.list()), state)


def informers(resources: Sequence[str]) -> tuple[InformerRequest[Any], ...]:
    """What dra_totals reads, for a scorer configured with an extended resource."""
    if not any(is_dra_extended_resource_name(r) for r in resources):
        return ()
    return (DEVICE_CLASSES, RESOURCE_CLAIMS, RESOURCE_SLICES, DEVICE_TAINT_RULES)


def for_node(
    totals: DraTotals | None, node: Node | None
) -> Callable[[str], tuple[int, int]] | None:
    """The `dra` argument of allocatable_and_requested for one node."""
    if totals is None or node is None:
        return None
    return lambda resource: totals.totals(node, resource)
