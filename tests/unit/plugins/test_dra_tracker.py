"""ClaimTracker's allocated devices, kept as claims change, against gathering them again.

Go's DRA manager keeps the allocated devices from the claim informer's events
(allocatedDevices) and adds the in-flight allocations in GatherAllocatedState; asched's
tracker does the same, and must answer exactly what reading every claim as `claims()`
yields, plus every allocation in flight, answers at that moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from asched.api.dra import Allocation, DeviceResult, ResourceClaim
from asched.informers import Store
from asched.plugins.dynamicresources.tracker import AllocatedState, ClaimTracker

DRIVER = "gpu.example.com"


def _result(device: str, *, share: str = "", mem: int = 0, admin: bool = False) -> DeviceResult:
    return DeviceResult(
        "r",
        DRIVER,
        "pool",
        device,
        admin_access=admin,
        share_id=share,
        consumed_capacity=(("memory", Fraction(mem, 2)),) if mem else (),
    )


# Allocations over four devices: whole, overlapping, admin access, shares with and without
# consumed capacity (two shares of g2 consume different amounts), and empty.
ALLOCATIONS = (
    Allocation((_result("g0"),)),
    Allocation((_result("g1"), _result("g0"))),
    Allocation((_result("g1", admin=True),)),
    Allocation((_result("g2", share="s1", mem=3),)),
    Allocation((_result("g2", share="s2", mem=5), _result("g3"))),
    Allocation((_result("g3", share="s3"),)),
    Allocation(()),
)
# Claim names: the store's key is default/<name>; a name's claim may be deleted and made
# again with another uid (generation).
NAMES = ("c0", "c1", "c2", "e0")


@dataclass(frozen=True)
class Op:
    verb: str
    name: str
    allocation: int | None = None
    rv: int = 0
    generation: int = 0
    force: bool = False


def _uid(name: str, generation: int) -> str:
    return f"{name}-{generation}"


def _claim(op: Op) -> ResourceClaim:
    return ResourceClaim(
        "default",
        op.name,
        uid=_uid(op.name, op.generation),
        resource_version=str(op.rv),
        allocation=None if op.allocation is None else ALLOCATIONS[op.allocation],
    )


_ops = st.builds(
    Op,
    verb=st.sampled_from(
        ("upsert", "remove", "assume", "created", "forget", "signal", "unreserve", "prebind")
    ),
    name=st.sampled_from(NAMES),
    allocation=st.one_of(st.none(), st.integers(0, len(ALLOCATIONS) - 1)),
    rv=st.integers(0, 6),
    generation=st.integers(0, 1),
    force=st.booleans(),
)


def _apply(op: Op, store: Store[ResourceClaim], tracker: ClaimTracker) -> None:
    key, uid = f"default/{op.name}", _uid(op.name, op.generation)
    match op.verb:
        case "upsert":  # the informer: an add, an update, or a recreation under the key
            store.upsert(key, _claim(op), str(op.rv))
        case "remove":
            store.remove(key)
        case "assume":  # PreBind wrote the claim (allocated, or with the pod reserved)
            tracker.assume(_claim(op))
        case "created":  # PreBind created the claim for extended resources
            tracker.created(_claim(op))
        case "forget":  # the claim we created was deleted again
            tracker.forget(uid)
        case "signal":  # Reserve; a second signal for the same uid adds a sharer
            tracker.signal_pending(uid, ALLOCATIONS[op.allocation or 0])
        case "unreserve":
            tracker.remove_pending(uid, force=op.force)
        case "prebind":  # written: out of flight, and the claim as written assumed
            tracker.remove_pending(uid, force=True)
            tracker.assume(_claim(op))


def _gathered(tracker: ClaimTracker) -> AllocatedState:
    """GatherAllocatedState done the slow way: every claim, then every in-flight one."""
    state = AllocatedState()
    for claim in tracker.claims():
        if claim.allocation is not None:
            state.add(claim.allocation)
    for name in NAMES:
        for generation in (0, 1):
            pending = tracker.pending_allocation(_uid(name, generation))
            if pending is not None:
                state.add(pending)
    return state


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(_ops.filter(lambda op: op.verb == "upsert"), max_size=4),
    ops=st.lists(_ops, max_size=40),
)
def test_tracker_counts_what_gathering_every_claim_finds(before: list[Op], ops: list[Op]) -> None:
    store: Store[ResourceClaim] = Store()
    for op in before:  # what the informer held before the tracker's first read
        _apply(op, store, ClaimTracker(lambda: store))
    tracker = ClaimTracker(lambda: store)
    handed_out: list[tuple[AllocatedState, AllocatedState]] = []
    for op in ops:
        _apply(op, store, tracker)
        kept = tracker.allocated_state()
        want = _gathered(tracker)
        assert kept == want, op
        handed_out.append((kept, want))
    # A state handed to a pod never changes under it (its Filter may yield to the
    # informers): each still equals what was gathered when it was handed out.
    assert all(kept == want for kept, want in handed_out)


def test_unchanged_state_is_handed_out_again_and_a_change_makes_a_new_one() -> None:
    store: Store[ResourceClaim] = Store()
    tracker = ClaimTracker(lambda: store)
    claim = _claim(Op("upsert", "c0", allocation=0, rv=1))
    store.upsert(claim.key, claim, "1")
    first = tracker.allocated_state()
    assert first.devices == {(DRIVER, "pool", "g0")}
    assert tracker.allocated_state() is first

    # An update with an equal allocation (reservedFor written) changes nothing counted.
    again = _claim(Op("upsert", "c0", allocation=0, rv=2))
    store.upsert(again.key, again, "2")
    assert tracker.allocated_state() is first

    tracker.signal_pending("x", ALLOCATIONS[3])
    second = tracker.allocated_state()
    assert second is not first
    assert (second.shared, second.capacity) == (
        {(DRIVER, "pool", "g2")},
        {(DRIVER, "pool", "g2"): {"memory": Fraction(3, 2)}},
    )
    assert tracker.remove_pending("x")
    store.remove(claim.key)
    assert tracker.allocated_state() == AllocatedState()
    assert first.devices == {(DRIVER, "pool", "g0")}
