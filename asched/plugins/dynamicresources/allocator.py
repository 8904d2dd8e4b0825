"""The structured allocator: which devices of one node's ResourceSlices satisfy the claims.

Follows k8s.io/dynamic-resource-allocation/structured. NewAllocator picks the most stable
implementation whose supported features cover the enabled ones; kube-scheduler 1.37's
default gates turn on DeviceBindingConditions, ConsumableCapacity and PartitionableDevices
(beta), so Go runs the "incubating" variant. What asched follows of
it: GatherPools, then allocateOne's depth-first search over claims -> requests -> devices
with backtracking, a request's devices taken in pool/slice/device order after the one its
previous slot took, a device taken at most once and never one already allocated (unless the
request asks for admin access, or the device allows multiple allocations).

Supported: `exactly` requests (deviceClassName, CEL selectors of class and request,
allocationMode ExactCount with count, or All), `firstAvailable` alternatives tried in
order (DRAPrioritizedList, GA in 1.37; the result names "request/subrequest"),
slices for one node (`nodeName`), for all nodes (`allNodes`) or by `nodeSelector`, the
allocation's node selector made from them (create_node_selector), pools
split over several slices (a pool whose slices at its newest generation are not all
present is incomplete: skipped, or an error for All), matchAttribute constraints
(constraints.py), device taints and request tolerations (DeviceTaints, GA), partitionable
devices (DRAPartitionableDevices, beta: a device that consumes counters is taken only while
its pool's counter sets cover everything allocated and being allocated, as
checkAvailableCounters; per-device node selection), consumable capacity
(DRAConsumableCapacity, beta: capacity requests and policies, capacity.py; devices shared
by several allocations), device binding conditions (copied into the results; PreBind
waits for them: readiness.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType

from asched.api.dra import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    Allocation,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourceSlice,
)
from asched.api.labels import IN, METADATA_NAME, NodeSelector, NodeSelectorTerm, Requirement
from asched.plugins.dynamicresources.capacity import (
    CapacityError,
    consumed_by_request,
    fits,
    fits_plain,
)
from asched.plugins.dynamicresources.cel import CelRuntimeError, compile_expression
from asched.plugins.dynamicresources.constraints import ClaimConstraints
from asched.plugins.dynamicresources.devicememo import DeviceMemo
from asched.plugins.dynamicresources.outcomes import Inputs
from asched.plugins.dynamicresources.pools import (
    Candidate,
    DeviceID,
    NodePools,
    Pool,
    PoolKey,
    SliceIndex,
    device_targets_node,
)
from asched.plugins.dynamicresources.tracker import AllocatedState

# How many devices the search tries between two looks at the clock (a try takes
# microseconds).
_CLOCK_EVERY = 256

# No capacity consumed yet (read only).
_NOTHING: Mapping[str, Fraction] = MappingProxyType({})

# resourceapi.AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32


class AllocationError(Exception):
    """Something is wrong with a claim or class (Go returns an error, not "no fit")."""


class AllocationTimeout(Exception):
    """The search for one node ran past the plugin's filterTimeout."""


class NodeAllocationFailure(Exception):
    """The node cannot be used, for a reason worth saying (Go's ErrFailedAllocationOnNode:
    Filter reports it as the node's Unschedulable reason)."""


# What Go's Allocate says when the node failed and some of its pools were invalid.
MSG_INVALID_POOLS = "invalid resource pools were encountered"


@dataclass(slots=True)
class _Request:
    """One way to satisfy a request: `exactly`, or one firstAvailable alternative."""

    claim_index: int
    claim: ResourceClaim
    request: DeviceSubRequest
    cls: DeviceClass
    # What the allocation result names: the request, or "request/subrequest".
    result_name: str
    num_devices: int = 0
    all_devices: list[Candidate] = field(default_factory=list)


class Allocator:
    """One pod's allocation attempt over one node (Go's Allocator.Allocate for a node).

    Built per pod over the SliceIndex the plugin keeps: a node's pools, the devices'
    selector answers and capacities, and (outcomes.py) a node's outcome for claims that
    ask the same come from earlier pods while their inputs are unchanged."""

    def __init__(
        self,
        classes: Callable[[str], DeviceClass | None],
        allocated: AllocatedState,
        slices: Sequence[ResourceSlice] | SliceIndex,
    ) -> None:
        """`slices` as a SliceIndex the plugin keeps across pods, or a list to index."""
        self._classes = classes
        self._allocated = allocated
        self._slices = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        self._memo = self._slices.memo
        self._outcomes = self._slices.outcomes
        # Claim shapes of this pod's claims by their identities (and the claims, so an
        # identity is not reused while it is a key).
        self._shapes: dict[tuple[int, ...], tuple[tuple[ResourceClaim, ...], int | None]] = {}
        self._node: tuple[str, Mapping[str, str]] = ("", {})

    def allocate(
        self,
        node_name: str,
        labels: Mapping[str, str],
        claims: Sequence[ResourceClaim],
        *,
        deadline: float | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> list[Allocation] | None:
        """One Allocation per claim, or None when the node cannot satisfy them all.

        Raises AllocationError for broken claims/classes (Go: an error, the pod's attempt
        ends with status Error), NodeAllocationFailure when the node fails with a reason
        of its own.
        """
        self._node = (node_name, labels)
        gathered = self._slices.node(node_name, labels)
        pools = gathered.pools
        if not pools:
            return None
        reuse = self._reusable(gathered, claims)
        if reuse is not None:
            found, kept = self._outcomes.get(node_name, *reuse)
            if found:
                return None if kept is None else list(kept)
        allocations = self._allocate(node_name, pools, claims, deadline, now)
        if reuse is not None:
            self._outcomes.put(node_name, *reuse, allocations)
        return allocations

    def _reusable(
        self, gathered: NodePools, claims: Sequence[ResourceClaim]
    ) -> tuple[int, Inputs] | None:
        """The claim shape and inputs under which the node's outcome is kept
        (outcomes.py), None when it must be searched for this pod alone."""
        devices = gathered.plain_devices
        if devices is None:
            return None
        shape = self._shape(claims)
        if shape is None:
            return None
        a = self._allocated
        if (a.shared or a.capacity) and any(d in a.shared or d in a.capacity for d in devices):
            return None  # shares of a device that is no longer shared: search
        classes = tuple(
            self._classes(sub.device_class_name)
            for claim in claims
            for req in claim.requests
            for sub in ((req.exactly,) if req.exactly is not None else req.first_available)
        )
        return shape, Inputs(gathered, classes, tuple(map(a.devices.__contains__, devices)))

    def _shape(self, claims: Sequence[ResourceClaim]) -> int | None:
        """The claims' shape number, worked out once per pod (the claims are the same
        objects on every node, but for a per-node extended-resource claim)."""
        key = tuple(map(id, claims))
        hit = self._shapes.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], claims, strict=True)):
            return hit[1]
        shape = self._outcomes.shape(tuple((c.requests, c.constraints) for c in claims))
        self._shapes[key] = (tuple(claims), shape)
        return shape

    def _allocate(
        self,
        node_name: str,
        pools: list[Pool],
        claims: Sequence[ResourceClaim],
        deadline: float | None,
        now: Callable[[], float],
    ) -> list[Allocation] | None:
        """Go's Allocate for one node: the search over its pools."""
        requests = [
            self._alternatives(i, claim, req, pools)
            for i, claim in enumerate(claims)
            for req in claim.requests
        ]
        constraints = [_constraints(claim) for claim in claims]
        search = _Search(
            requests, pools, self._allocated, self._selectable, constraints, memo=self._memo
        )
        if deadline is not None:
            search.limit(deadline, now)
        if not search.run(0):
            if any(pool.invalid for pool in pools):
                raise NodeAllocationFailure(MSG_INVALID_POOLS)
            return None
        allocations = []
        for claim, results in zip(claims, search.results, strict=True):
            selector, bound = create_node_selector(claim, search.chosen(results), node_name)
            allocations.append(Allocation(tuple(results), selector, bound))
        return allocations

    def _alternatives(
        self, index: int, claim: ResourceClaim, req: DeviceRequest, pools: list[Pool]
    ) -> list[_Request]:
        if req.exactly is not None:
            return [self._request_data(index, claim, req.exactly, req.name, pools)]
        if not req.first_available:
            raise AllocationError(f"claim {claim.key}, request {req.name}: unknown request type")
        return [
            self._request_data(index, claim, sub, f"{req.name}/{sub.name}", pools)
            for sub in req.first_available
        ]

    def _request_data(
        self,
        index: int,
        claim: ResourceClaim,
        req: DeviceSubRequest,
        result_name: str,
        pools: list[Pool],
    ) -> _Request:
        """Go's validateRequest for one request or subrequest."""
        where = f"claim {claim.key}, request {result_name}"
        if not req.device_class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        cls = self._classes(req.device_class_name)
        if cls is None:
            raise AllocationError(
                f"{where}: could not retrieve device class {req.device_class_name}: "
                f'deviceclass.resource.k8s.io "{req.device_class_name}" not found'
            )
        data = _Request(index, claim, req, cls, result_name)
        if req.allocation_mode == ALLOCATION_MODE_EXACT_COUNT:
            data.num_devices = req.count
        elif req.allocation_mode == ALLOCATION_MODE_ALL:
            for pool in pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.pool_id} "
                        "is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.pool_id} "
                        "is currently invalid"
                    )
                data.all_devices.extend(
                    c
                    for c in pool.devices
                    if self._selectable(data, c) and _static_capacity_fits(data, c)
                )
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"{where}: unsupported count mode {req.allocation_mode}")
        return data

    def _selectable(self, data: _Request, cand: Candidate) -> bool:
        """Go's isSelectable / selectorsMatch: the class's selectors, the request's, then
        (perDeviceNodeSelection) whether the device is usable on the node."""
        if not self._selectors_match(data, cand):
            return False
        return not cand.slice.per_device_node_selection or device_targets_node(
            cand.device, *self._node
        )

    def _selectors_match(self, data: _Request, cand: Candidate) -> bool:
        for of_class, selectors in ((True, data.cls.selectors), (False, data.request.selectors)):
            for i, expression in enumerate(selectors):
                if not expression:
                    raise AllocationError(
                        f"claim {data.claim.key}, request {data.result_name}, selector #{i}: "
                        "CEL expression empty (unsupported selector type?)"
                    )
                # The device's answer from an earlier pod or node (devicememo.py): only
                # an expression that compiled and evaluated to a bool is remembered.
                matched = self._memo.selector(expression, cand.device)
                if matched is None:
                    matched = self._evaluate(data, of_class, i, expression, cand)
                if not matched:
                    return False
        return True

    def _evaluate(
        self, data: _Request, of_class: bool, index: int, expression: str, cand: Candidate
    ) -> bool:
        """DeviceMatches for one selector of the class or the request, remembered for the
        device."""
        owner = f"class {data.cls.name}" if of_class else f"claim {data.claim.key}"
        compiled = compile_expression(expression)
        if compiled.error:
            raise AllocationError(
                f"{owner}: selector #{index}: CEL compile error: {compiled.error}"
            )
        try:
            matched = compiled.matches(cand.device, cand.id[0])
        except CelRuntimeError as exc:
            raise AllocationError(
                f"{owner}: selector #{index} on device {'/'.join(cand.id)}: "
                f"CEL runtime error: {exc}"
            ) from None
        self._memo.remember_selector(expression, cand.device, matched)
        return matched


def create_node_selector(
    claim: ResourceClaim, devices: Sequence[Candidate], node_name: str
) -> tuple[NodeSelector | None, str]:
    """Go's createNodeSelector (structured/internal/incubating): where a claim allocated
    for `node_name` from `devices` may be used, and the node it is bound to ("" if none).

    - A device from a slice for one node (`nodeName`), with a `nodeName` of its own under
      perDeviceNodeSelection, or that binds to its node (`bindsToNode`) binds the whole
      allocation to `node_name`: `matchFields metadata.name In [node_name]`.
    - Otherwise the requirements of every device's node selector (the slice's, or the
      device's own under perDeviceNodeSelection) are merged into one term, matchFields
      and matchExpressions separately, each requirement added once (equal key, operator
      and set of values: addNewNodeSelectorRequirements), in device order.
    - Devices for all nodes add nothing; with nothing added the allocation is usable
      everywhere (None).
    A node selector of more than one term is Go's error (API validation forbids it)."""
    expressions: list[Requirement] = []
    fields: list[Requirement] = []
    for cand in devices:
        if cand.slice.per_device_node_selection:
            name, selector = cand.device.node_name, cand.device.node_selector
        else:
            name, selector = cand.slice.node_name, cand.slice.node_selector
        if name or cand.device.binds_to_node:
            return _node_name_selector(node_name), node_name
        if selector is None or not selector.terms:
            continue
        if len(selector.terms) > 1:
            raise AllocationError(
                f"create NodeSelector for claim {claim.name}: unsupported "
                f"ResourceSlice.NodeSelector with {len(selector.terms)} terms"
            )
        term = selector.terms[0]
        _add_new_requirements(term.match_fields, fields)
        _add_new_requirements(term.match_expressions, expressions)
    if not fields and not expressions:
        return None, ""
    return NodeSelector((NodeSelectorTerm(tuple(expressions), tuple(fields)),)), ""


def _node_name_selector(node_name: str) -> NodeSelector:
    """The selector of an allocation bound to one node (`metadata.name In [node]`)."""
    field = Requirement(METADATA_NAME, IN, frozenset((node_name,)), (node_name,))
    return NodeSelector((NodeSelectorTerm(match_fields=(field,)),))


def _add_new_requirements(source: Sequence[Requirement], into: list[Requirement]) -> None:
    """addNewNodeSelectorRequirements: Requirement equality is by key, operator and set
    of values, as containsNodeSelectorRequirement compares them."""
    for requirement in source:
        if requirement not in into:
            into.append(requirement)


def _static_capacity_fits(data: _Request, cand: Candidate) -> bool:
    """validateDeviceRequest for All: a device whose capacity could never hold the request
    is not one of "all" (what is already consumed is checked when it is allocated)."""
    try:
        return fits(data.request.capacity_requests, cand.device, {}, {})
    except CapacityError as exc:
        raise AllocationError(
            f"claim {data.claim.key}, request {data.request.name}: checking capacity for "
            f"device {cand.device.name}: {exc}"
        ) from None


def _constraints(claim: ResourceClaim) -> ClaimConstraints:
    for i, c in enumerate(claim.constraints):
        if not c.attribute:
            raise AllocationError(
                f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint "
                "type?)"
            )
    return ClaimConstraints(claim.constraints)


class _Search:
    """allocateOne: depth first over (request, device slot), backtracking on failure.
    A request's next device is looked for after the one its previous slot took (Go's
    startLocation), so a request never takes one device twice, shared or not."""

    def __init__(
        self,
        requests: list[list[_Request]],
        pools: list[Pool],
        allocated: AllocatedState,
        selectable: Callable[[_Request, Candidate], bool],
        constraints: list[ClaimConstraints],
        *,
        memo: DeviceMemo,
    ) -> None:
        self._requests = requests
        self._memo = memo
        self._devices = [c for p in pools if p.usable for c in p.devices]
        self._allocated = allocated
        self._selectable = selectable
        # Devices this attempt took whole (allocatingDevices).
        self._taken: set[DeviceID] = set()
        self._checked: dict[tuple[int, DeviceID], bool] = {}
        self._chosen: dict[DeviceID, Candidate] = {}
        self._constraints = constraints
        self.results: list[list[DeviceResult]] = [[] for _ in constraints]
        self._pool_of = {(p.driver, p.name): p for p in pools}
        # checkAvailableCounters: per pool, counter set -> counter -> what is left after
        # the allocated devices (computed once), and what this attempt has taken.
        self._available: dict[PoolKey, dict[str, dict[str, Fraction]]] = {}
        self._consumed: dict[PoolKey, dict[str, dict[str, Fraction]]] = {}
        # Shares this attempt made of devices that allow multiple allocations, and the
        # capacity they consume (allocatingCapacity).
        self._shares: dict[DeviceID, int] = {}
        self._sharing: dict[DeviceID, dict[str, Fraction]] = {}
        # The filter timeout: the clock is read every _CLOCK_EVERY search steps.
        self._steps = 0
        self._deadline = float("inf")
        self._now: Callable[[], float] = time.monotonic

    def chosen(self, results: Sequence[DeviceResult]) -> list[Candidate]:
        """The candidates behind a claim's results, in result order."""
        return [self._chosen[r.device_id] for r in results]

    def _available_counters(self, key: PoolKey) -> dict[str, dict[str, Fraction]]:
        available = self._available.get(key)
        if available is None:
            pool = self._pool_of[key]
            available = {name: dict(c) for name, c in pool.counter_sets.items()}
            for cand in (*pool.devices, *pool.other_devices):
                if not self._allocated.is_allocated(cand.id):
                    continue
                for consumption in cand.device.consumes_counters:
                    counters = available.get(consumption.counter_set, {})
                    for name, value in consumption.counters.items():
                        if name in counters:
                            # May go negative: that counter then has nothing left.
                            counters[name] -= value
            self._available[key] = available
        return available

    def _take_counters(self, cand: Candidate, sign: int) -> None:
        consumed = self._consumed.setdefault(cand.id[:2], {})
        for consumption in cand.device.consumes_counters:
            counters = consumed.setdefault(consumption.counter_set, {})
            for name, value in consumption.counters.items():
                counters[name] = counters.get(name, Fraction(0)) + sign * value

    def _reserve_counters(self, cand: Candidate) -> bool:
        """checkAvailableCounters: take the device's counters, and give them back unless
        every counter of the pool still covers what is taken. Like Go, a counter already
        overdrawn by allocated devices blocks every device of the pool that consumes
        counters, whichever set it draws on."""
        key = cand.id[:2]
        available = self._available_counters(key)
        self._take_counters(cand, 1)
        consumed = self._consumed[key]
        for set_name, counters in available.items():
            taken = consumed.get(set_name, {})
            if any(value < taken.get(name, 0) for name, value in counters.items()):
                self._take_counters(cand, -1)
                return False
        return True

    def _in_use(self, device: DeviceID) -> bool:
        """deviceInUse: allocated whole, or taken whole by this attempt."""
        return device in self._taken or device in self._allocated.devices

    def _capacity_in_use(self, device: DeviceID) -> bool:
        """deviceCapacityInUse: the device already has a share, allocated or in this
        attempt (its counters are then already charged)."""
        a = self._allocated
        return device in a.capacity or device in a.shared or self._shares.get(device, 0) > 0

    def _capacity_fits(self, data: _Request, cand: Candidate, doing: str) -> bool:
        """CmpRequestOverCapacity against what allocated claims and this attempt consume;
        in integers for a device without request policies (capacity.fits_plain)."""
        requests = data.request.capacity_requests
        allocated = self._allocated.capacity.get(cand.id, _NOTHING)
        allocating = self._sharing.get(cand.id, _NOTHING)
        try:
            plain = self._memo.capacity(cand.device)
            if plain is not None:
                return fits_plain(requests, cand.device, plain, allocated, allocating)
            return fits(requests, cand.device, allocated, allocating)
        except CapacityError as exc:
            raise AllocationError(
                f"claim {data.claim.key}, request {data.request.name}: {doing} capacity for "
                f"device {'/'.join(cand.id)}: {exc}"
            ) from None

    def _matches(self, data: _Request, cand: Candidate) -> bool:
        key = (id(data), cand.id)
        hit = self._checked.get(key)
        if hit is None:
            hit = self._checked[key] = self._selectable(data, cand)
        return hit

    def run(self, r: int) -> bool:
        """Requests r.. satisfied, each by its first alternative that leads to a full
        allocation (Go's allocateOne over subrequests)."""
        if r >= len(self._requests):
            return True
        return any(self._fill(r, alt, 0, 0) for alt in self._requests[r])

    def limit(self, deadline: float, now: Callable[[], float]) -> None:
        self._deadline, self._now = deadline, now

    def _fill(self, r: int, data: _Request, slot: int, start: int) -> bool:
        if data.request.allocation_mode == ALLOCATION_MODE_ALL and not data.all_devices:
            return False
        if slot >= data.num_devices:
            return self.run(r + 1)
        results = self.results[data.claim_index]
        if data.num_devices - slot > ALLOCATION_RESULTS_MAX_SIZE - len(results):
            return False
        if data.request.allocation_mode == ALLOCATION_MODE_ALL:
            cand = data.all_devices[slot]
            if not data.request.admin_access and self._in_use(cand.id):
                return False
            return self._try(r, data, slot, 0, cand, must=True)
        for i in range(start, len(self._devices)):
            cand = self._devices[i]
            if data.request.admin_access:
                if any(d.device_id == cand.id for d in results):
                    continue
            elif self._in_use(cand.id):
                continue
            if not self._matches(data, cand):
                continue
            if not self._capacity_fits(data, cand, "checking"):
                continue
            if self._try(r, data, slot, i + 1, cand, must=False):
                return True
        return False

    def _try(
        self, r: int, data: _Request, slot: int, start: int, cand: Candidate, *, must: bool
    ) -> bool:
        """Take the candidate if its counters, taints, the claim's constraints and its
        capacity allow it (Go's allocateDevice), then fill the rest; a device All mode
        needs that a constraint refuses is Go's error (such a claim can never be
        satisfied)."""
        self._steps += 1
        if not self._steps % _CLOCK_EVERY and self._now() > self._deadline:
            raise AllocationTimeout
        shared = cand.device.allow_multiple_allocations
        counted = bool(cand.device.consumes_counters) and not (
            shared and self._capacity_in_use(cand.id)
        )
        if counted and not self._reserve_counters(cand):
            return False
        undo: list[Callable[[], None]] = []
        if counted:
            undo.append(lambda: self._take_counters(cand, -1))
        if self._place(data, cand, undo, must=must) and self._fill(r, data, slot + 1, start):
            return True
        for step in reversed(undo):
            step()
        return False

    def _place(
        self, data: _Request, cand: Candidate, undo: list[Callable[[], None]], *, must: bool
    ) -> bool:
        """The rest of allocateDevice once counters are reserved; every change it makes is
        pushed on `undo` (rollbackDevice)."""
        if _taint_prevents_allocation(cand.device, data.request):
            # Checked before the constraints, as Go's allocateDevice: a tainted device an
            # All request needs makes it fail, but without the constraint's error.
            return False
        request, _, sub_request = data.result_name.partition("/")
        constraints = self._constraints[data.claim_index]
        if not constraints.add(request, sub_request, cand.device):
            if must:
                raise AllocationError(
                    f"claim {data.claim.key}, request {data.request.name}: cannot add device "
                    f"{'/'.join(cand.id)} because a claim constraint would not be satisfied"
                )
            return False
        undo.append(lambda: constraints.remove(request, sub_request))
        shared = cand.device.allow_multiple_allocations
        if not shared and not data.request.admin_access:
            self._taken.add(cand.id)
            undo.append(lambda: self._taken.discard(cand.id))
        if not self._capacity_fits(data, cand, "rechecking"):
            return False
        share_id, consumed = "", tuple[tuple[str, Fraction], ...]()
        if shared:
            try:
                amounts = consumed_by_request(data.request.capacity_requests, cand.device)
            except CapacityError as exc:
                raise AllocationError(
                    f"claim {data.claim.key}, request {data.request.name}: computing consumed "
                    f"capacity for device {'/'.join(cand.id)}: {exc}"
                ) from None
            self._share(cand.id, amounts, 1)
            undo.append(lambda: self._share(cand.id, amounts, -1))
            share_id, consumed = str(uuid.uuid4()), tuple(amounts.items())
        results = self.results[data.claim_index]
        results.append(
            DeviceResult(
                data.result_name,
                *cand.id,
                admin_access=data.request.admin_access,
                share_id=share_id,
                consumed_capacity=consumed,
                tolerations=data.request.tolerations,
                binding_conditions=cand.device.binding_conditions,
                binding_failure_conditions=cand.device.binding_failure_conditions,
            )
        )
        undo.append(lambda: _drop_last(results))
        self._chosen[cand.id] = cand
        return True

    def _share(self, device: DeviceID, amounts: Mapping[str, Fraction], sign: int) -> None:
        self._shares[device] = self._shares.get(device, 0) + sign
        total = self._sharing.setdefault(device, {})
        for name, value in amounts.items():
            total[name] = total.get(name, Fraction(0)) + sign * value


def _drop_last(results: list[DeviceResult]) -> None:
    results.pop()


# Taint effects that keep a device from being allocated; None and unknown ones do not.
_BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def _taint_prevents_allocation(device: Device, request: DeviceSubRequest) -> bool:
    """taintPreventsAllocation (DeviceTaints, GA in 1.37): a NoSchedule or NoExecute taint
    that none of the request's tolerations tolerates; the taints of DeviceTaintRules are
    already on the device (tracker.with_taint_rules)."""
    return any(
        taint.effect in _BLOCKING_EFFECTS
        and not any(t.tolerates(taint) for t in request.tolerations)
        for taint in device.taints
    )
