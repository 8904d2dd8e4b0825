"""The scheduler's view of DRA objects: informer stores plus what is in flight.

Go's DefaultDRAManager: ResourceClaims go through an assume cache (a claim this scheduler
just wrote counts at once, before the watch event arrives) and an in-flight map (an
allocation made at Reserve and not yet written at PreBind), so the next pod never gets a
device the previous one was given. DeviceClasses and ResourceSlices are plain listers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from asched.api.dra import (
    Allocation,
    DeviceClass,
    ResourceClaim,
    ResourceSlice,
    decode_device_class,
    decode_resource_claim,
    decode_resource_slice,
)
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest, ObjectStore
from asched.plugins.dynamicresources.pools import DeviceID

RESOURCE_CLAIMS: InformerRequest[ResourceClaim] = InformerRequest(
    resource="resourceclaims.resource.k8s.io/v1",
    list_path="/apis/resource.k8s.io/v1/resourceclaims",
    decode=decode_resource_claim,
    event_resource=EventResource.RESOURCE_CLAIM,
    optional=True,
)
DEVICE_CLASSES: InformerRequest[DeviceClass] = InformerRequest(
    resource="deviceclasses.resource.k8s.io/v1",
    list_path="/apis/resource.k8s.io/v1/deviceclasses",
    decode=decode_device_class,
    event_resource=EventResource.DEVICE_CLASS,
    optional=True,
)
RESOURCE_SLICES: InformerRequest[ResourceSlice] = InformerRequest(
    resource="resourceslices.resource.k8s.io/v1",
    list_path="/apis/resource.k8s.io/v1/resourceslices",
    decode=decode_resource_slice,
    event_resource=EventResource.RESOURCE_SLICE,
    optional=True,
)
INFORMERS = (RESOURCE_CLAIMS, DEVICE_CLASSES, RESOURCE_SLICES)


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
        # uid -> allocation decided at Reserve, not yet written (inFlightAllocations).
        self._in_flight: dict[str, Allocation] = {}

    def get(self, namespace: str, name: str) -> ResourceClaim | None:
        claim = self._stores().get(f"{namespace}/{name}")
        return None if claim is None else self._latest(claim)

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
        for claim in self._stores().list():
            yield self._latest(claim)

    def assume(self, claim: ResourceClaim) -> None:
        """AssumeClaimAfterAPICall."""
        self._assumed[claim.uid] = claim

    def pending_allocation(self, uid: str) -> Allocation | None:
        return self._in_flight.get(uid)

    def signal_pending(self, uid: str, allocation: Allocation) -> None:
        """SignalClaimPendingAllocation (Reserve)."""
        self._in_flight[uid] = allocation

    def remove_pending(self, uid: str) -> bool:
        """MaybeRemoveClaimPendingAllocation (Unreserve, or PreBind done)."""
        return self._in_flight.pop(uid, None) is not None

    def allocated_state(self) -> AllocatedState:
        """GatherAllocatedState: every allocated claim's devices, in-flight ones too."""
        state = AllocatedState()
        for claim in self.claims():
            if claim.allocation is not None:
                state.add(claim.allocation)
        for allocation in self._in_flight.values():
            state.add(allocation)
        return state
