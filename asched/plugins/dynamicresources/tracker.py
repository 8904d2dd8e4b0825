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
    share (DRAConsumableCapacity), and the capacity the shares of each device consume.
    One the ClaimTracker hands out is read only: it may be handed to the next pod too."""

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


class _Tally:
    """Go's allocatedDevices, counted: how many counted allocations take each device
    whole, hold a share of it, and consume each capacity of it (with the total).

    Go keeps sets, so a device two claims name (which a correct cluster never has)
    leaves with the first of them; counting keeps it until the last one goes, which is
    what gathering every claim again gives, so the two never differ."""

    __slots__ = ("capacity", "devices", "shared")

    def __init__(self) -> None:
        self.devices: dict[DeviceID, int] = {}
        self.shared: dict[DeviceID, int] = {}
        # device -> capacity name -> (how many shares name it, their total)
        self.capacity: dict[DeviceID, dict[str, tuple[int, Fraction]]] = {}

    def change(self, allocation: Allocation, sign: int) -> None:
        """Count `allocation` in (sign 1) or out (sign -1), as AllocatedState.add reads
        it: admin access takes nothing, a share id makes a share."""
        for r in allocation.results:
            if r.admin_access:
                continue
            device = r.device_id
            if not r.share_id:
                _bump(self.devices, device, sign)
                continue
            _bump(self.shared, device, sign)
            if not r.consumed_capacity:
                continue
            names = self.capacity.setdefault(device, {})
            for name, value in r.consumed_capacity:
                count, total = names.get(name, (0, Fraction(0)))
                if count + sign:
                    names[name] = (count + sign, total + sign * value)
                else:
                    del names[name]
            if not names:
                del self.capacity[device]

    def state(self) -> AllocatedState:
        """The counts as a fresh AllocatedState (copies: the tally goes on changing)."""
        return AllocatedState(
            set(self.devices),
            set(self.shared),
            {d: {n: t for n, (_, t) in names.items()} for d, names in self.capacity.items()},
        )


def _bump(counts: dict[DeviceID, int], device: DeviceID, sign: int) -> None:
    left = counts.get(device, 0) + sign
    if left:
        counts[device] = left
    else:
        del counts[device]


def _rv(version: str) -> int:
    return int(version) if version.isdigit() else 0


class ClaimTracker:
    """Claims as the scheduler must see them (Go's claimTracker), and the devices they
    and the in-flight allocations take, kept as they change (Go's allocatedDevices).

    Every claim counts as `claims()` yields it: the informer's version, or ours from
    PreBind while the informer has an older one, or one we created before the informer
    has it. Whatever changes that view of a claim (the informer's store, assume,
    created, forget) or the in-flight allocations (signal_pending, remove_pending)
    updates the tally at once, so `allocated_state` costs O(changes), not O(claims)."""

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
        # The informer's store this tracker listens to, and its claims by uid.
        self._store: ObjectStore[ResourceClaim] | None = None
        self._stored: dict[str, ResourceClaim] = {}
        # uid -> the allocation of the claim as seen, counted in the tally.
        self._counted: dict[str, Allocation] = {}
        self._tally = _Tally()
        # Bumped on every change of the tally (Go's allocatedDevices revision): the
        # AllocatedState last handed out is handed out again while it is unchanged.
        self._revision = 0
        self._state: tuple[int, AllocatedState] | None = None

    def _claim_store(self) -> ObjectStore[ResourceClaim]:
        """The informer's store, listened to from its first use on (what it held
        then is counted once, the changes after that as they come)."""
        store = self._stores()
        if store is not self._store:
            self._attach(store)
        return store

    def _attach(self, store: ObjectStore[ResourceClaim]) -> None:
        # A store never seen before (the plugin is built before the informers start,
        # so the first read attaches): whatever an earlier store held stops counting.
        self._store = store
        stale = list(self._stored)
        self._stored = {}
        for uid in stale:
            self._refresh(uid)
        store.add_listener(lambda old, new: self._on_change(store, old, new))
        for claim in store.list():
            self._stored[claim.uid] = claim
            self._forget_created(claim.uid)
            self._refresh(claim.uid)

    def _on_change(
        self,
        store: ObjectStore[ResourceClaim],
        old: ResourceClaim | None,
        new: ResourceClaim | None,
    ) -> None:
        """The informer's store changed (Go's allocatedDevices handlers)."""
        if store is not self._store:
            return  # a store this tracker has left
        if old is not None and (new is None or new.uid != old.uid):
            if self._stored.get(old.uid) is old:
                del self._stored[old.uid]
            self._refresh(old.uid)
        if new is not None:
            self._stored[new.uid] = new
            self._forget_created(new.uid)
            self._refresh(new.uid)

    def _forget_created(self, uid: str) -> None:
        """The informer has a claim we created: it counts from the store now."""
        self._created.pop(uid, None)

    def _seen(self, uid: str) -> ResourceClaim | None:
        """The claim with `uid` as `claims()` yields it, None when it yields none."""
        claim = self._stored.get(uid)
        if claim is None:
            created = self._created.get(uid)
            return None if created is None else self._assumed.get(uid, created)
        assumed = self._assumed.get(uid)
        if assumed is not None and _rv(claim.resource_version) < _rv(assumed.resource_version):
            return assumed
        return claim

    def _refresh(self, uid: str) -> None:
        """Count the claim's allocation as now seen instead of the one counted."""
        seen = self._seen(uid)
        allocation = None if seen is None else seen.allocation
        counted = self._counted.get(uid)
        # An update decodes a new, equal allocation (reservedFor or a condition changed):
        # the one counted stands for it, and the state handed out stays valid.
        if allocation is counted or allocation == counted:
            return
        if counted is not None:
            self._tally.change(counted, -1)
            del self._counted[uid]
        if allocation is not None:
            self._tally.change(allocation, 1)
            self._counted[uid] = allocation
        self._revision += 1

    def get(self, namespace: str, name: str) -> ResourceClaim | None:
        claim = self._claim_store().get(f"{namespace}/{name}")
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
            # The informer's version is counted already (_seen compares the same way).
            del self._assumed[claim.uid]
            return claim
        return assumed

    def claims(self) -> Iterable[ResourceClaim]:
        """Every claim, as assumed; a claim we created counts before the informer has it
        (Go's PreBind waits for the informer there instead)."""
        for claim in self._claim_store().list():
            yield self._latest(claim)
        for uid, claim in list(self._created.items()):
            yield self._assumed.get(uid, claim)

    def created(self, claim: ResourceClaim) -> None:
        """A claim this scheduler just created (the pod's claim for extended resources)."""
        self._claim_store()
        if claim.uid not in self._stored:
            self._created[claim.uid] = claim
            self._refresh(claim.uid)

    def forget(self, uid: str) -> None:
        """A claim we deleted: no longer ours to count."""
        self._assumed.pop(uid, None)
        self._created.pop(uid, None)
        self._refresh(uid)

    def assume(self, claim: ResourceClaim) -> None:
        """AssumeClaimAfterAPICall."""
        self._claim_store()
        self._assumed[claim.uid] = claim
        self._refresh(claim.uid)

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
        self._tally.change(allocation, 1)
        self._revision += 1

    def remove_pending(self, uid: str, *, force: bool = False) -> bool:
        """MaybeRemoveClaimPendingAllocation: Unreserve drops one sharer, and the
        allocation leaves when none is left; PreBind, having written it, forces it out.
        True when it left."""
        if uid not in self._in_flight:
            return False
        if force or self._sharers[uid] == 1:
            self._tally.change(self._in_flight.pop(uid), -1)
            del self._sharers[uid]
            self._revision += 1
            return True
        self._sharers[uid] -= 1
        return False

    def allocated_state(self) -> AllocatedState:
        """GatherAllocatedState: every allocated claim's devices, in-flight ones too;
        read only (the same object again while nothing changed)."""
        self._claim_store()
        kept = self._state
        if kept is not None and kept[0] == self._revision:
            return kept[1]
        state = self._tally.state()
        self._state = (self._revision, state)
        return state
