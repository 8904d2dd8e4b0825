"""The scheduler's view of DRA objects: informer stores plus what is in flight.

Go's DefaultDRAManager: ResourceClaims go through an assume cache (a claim this scheduler
just wrote counts at once, before the watch event arrives) and an in-flight map (an
allocation made at Reserve and not yet written at PreBind), so the next pod never gets a
device the previous one was given. DeviceClasses and ResourceSlices are plain listers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from asched.api.dra import (
    Allocation,
    DeviceTaintRule,
    ResourceClaim,
    ResourceSlice,
    decode_device_taint_rule,
    decode_resource_claim,
    decode_resource_slice,
)
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest, ObjectStore
from asched.plugins.deviceclasses import DEVICE_CLASSES
from asched.plugins.dynamicresources.pools import DeviceID

RESOURCE_CLAIMS: InformerRequest[ResourceClaim] = InformerRequest(
    resource="resourceclaims.resource.k8s.io/v1",
    list_path="/apis/resource.k8s.io/v1/resourceclaims",
    decode=decode_resource_claim,
    event_resource=EventResource.RESOURCE_CLAIM,
    optional=True,
)
RESOURCE_SLICES: InformerRequest[ResourceSlice] = InformerRequest(
    resource="resourceslices.resource.k8s.io/v1",
    list_path="/apis/resource.k8s.io/v1/resourceslices",
    decode=decode_resource_slice,
    event_resource=EventResource.RESOURCE_SLICE,
    optional=True,
)
# DeviceTaintRules (GA in 1.37) taint the devices of slices: kube-scheduler's slice tracker
# turns a rule's change into ResourceSlice updates, so a rule's events are slice events.
DEVICE_TAINT_RULES: InformerRequest[DeviceTaintRule] = InformerRequest(
    resource="devicetaintrules.resource.k8s.io/v1",
    list_path="/apis/resource.k8s.io/v1/devicetaintrules",
    decode=decode_device_taint_rule,
    event_resource=EventResource.RESOURCE_SLICE,
    optional=True,
)
INFORMERS = (RESOURCE_CLAIMS, DEVICE_CLASSES, RESOURCE_SLICES, DEVICE_TAINT_RULES)


def with_taint_rules(
    slices: Sequence[ResourceSlice], rules: Sequence[DeviceTaintRule]
) -> Sequence[ResourceSlice]:
    """The slices as the scheduler sees them (Go's Tracker.applyPatches): each rule's
    taint appended to the devices its selector picks."""
    if not rules:
        return slices
    out = []
    for slice_ in slices:
        applying = [
            r
            for r in rules
            if r.selects
            and (r.driver is None or r.driver == slice_.driver)
            and (r.pool is None or r.pool == slice_.pool)
        ]
        if not applying:
            out.append(slice_)
            continue
        devices = tuple(
            replace(
                d,
                taints=(
                    *d.taints,
                    *(r.taint for r in applying if r.device is None or r.device == d.name),
                ),
            )
            for d in slice_.devices
        )
        out.append(replace(slice_, devices=devices))
    return out


@dataclass(slots=True)
class AllocatedState:
    """Go's structured.AllocatedState: devices allocated whole, devices with at least one
    share (DRAConsumableCapacity), and the capacity the shares of each device consume."""

    devices: set[DeviceID] = field(default_factory=set)
    shared: set[DeviceID] = field(default_factory=set)
    capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def is_allocated(self, device: DeviceID) -> bool:
        """IsDeviceAllocated: whole, or shared."""
        return device in self.devices or device in self.shared or device in self.capacity

    def add(self, allocation: Allocation) -> None:
        """foreachAllocatedDevice: admin-access results take nothing; a result with a share
        id is a share (its consumed capacity aggregated), any other takes the device."""
        for r in allocation.results:
            if r.admin_access:
                continue
            if not r.share_id:
                self.devices.add(r.device_id)
                continue
            self.shared.add(r.device_id)
            if r.consumed_capacity:
                total = self.capacity.setdefault(r.device_id, {})
                for name, value in r.consumed_capacity:
                    total[name] = total.get(name, Fraction(0)) + value


def _rv(version: str) -> int:
    return int(version) if version.isdigit() else 0


class ClaimTracker:
    """Claims as the scheduler must see them (Go's claimTracker)."""

    def __init__(self, stores: Callable[[], ObjectStore[ResourceClaim]]) -> None:
        self._stores = stores
        # uid -> the claim as written by our PreBind, until the informer catches up.
        self._assumed: dict[str, ResourceClaim] = {}
        # uid -> a claim we created, until the informer delivers it.
        self._created: dict[str, ResourceClaim] = {}
        # uid -> allocation decided at Reserve, not yet written (inFlightAllocations),
        # and how many pods' Reserve share it.
        self._in_flight: dict[str, Allocation] = {}
        self._sharers: dict[str, int] = {}

    def get(self, namespace: str, name: str) -> ResourceClaim | None:
        claim = self._stores().get(f"{namespace}/{name}")
        if claim is None:
            for created in self._created.values():
                if (created.namespace, created.name) == (namespace, name):
                    return self._assumed.get(created.uid, created)
            return None
        return self._latest(claim)

    def _latest(self, claim: ResourceClaim) -> ResourceClaim:
        """AssumeCache.Get: our write wins until the informer has a version as new."""
        assumed = self._assumed.get(claim.uid)
        if assumed is None:
            return claim
        if _rv(claim.resource_version) >= _rv(assumed.resource_version):
            del self._assumed[claim.uid]
            return claim
        return assumed

    def claims(self) -> Iterable[ResourceClaim]:
        """Every claim, as assumed; a claim we created counts before the informer has it
        (Go's PreBind waits for the informer there instead)."""
        seen = set()
        for claim in self._stores().list():
            seen.add(claim.uid)
            yield self._latest(claim)
        for uid, claim in list(self._created.items()):
            if uid in seen:
                del self._created[uid]  # the informer has it now
            else:
                yield self._assumed.get(uid, claim)

    def created(self, claim: ResourceClaim) -> None:
        """A claim this scheduler just created (the pod's claim for extended resources)."""
        self._created[claim.uid] = claim

    def forget(self, uid: str) -> None:
        """A claim we deleted: no longer ours to count."""
        self._assumed.pop(uid, None)
        self._created.pop(uid, None)

    def assume(self, claim: ResourceClaim) -> None:
        """AssumeClaimAfterAPICall."""
        self._assumed[claim.uid] = claim

    def pending_allocation(self, uid: str) -> Allocation | None:
        return self._in_flight.get(uid)

    def signal_pending(self, uid: str, allocation: Allocation) -> None:
        """SignalClaimPendingAllocation (Reserve): a claim already in flight gains a
        sharer (a sibling in the same pod-group cycle reused its allocation)."""
        if uid in self._in_flight:
            self._sharers[uid] += 1
            return
        self._in_flight[uid] = allocation
        self._sharers[uid] = 1

    def remove_pending(self, uid: str, *, force: bool = False) -> bool:
        """MaybeRemoveClaimPendingAllocation: Unreserve drops one sharer, and the
        allocation leaves when none is left; PreBind, having written it, forces it out.
        True when it left."""
        if uid not in self._in_flight:
            return False
        if force or self._sharers[uid] == 1:
            del self._in_flight[uid], self._sharers[uid]
            return True
        self._sharers[uid] -= 1
        return False

    def allocated_state(self) -> AllocatedState:
        """GatherAllocatedState: every allocated claim's devices, in-flight ones too."""
        state = AllocatedState()
        for claim in self.claims():
            if claim.allocation is not None:
                state.add(claim.allocation)
        for allocation in self._in_flight.values():
            state.add(allocation)
        return state
