"""What DynamicResources keeps for one pod's attempt between its extension points."""

from __future__ import annotations

from dataclasses import dataclass, field

from asched.api.dra import Allocation, ConsumerRef, DeviceClass, ResourceClaim
from asched.framework.cycle_state import StateKey
from asched.plugins.dynamicresources.allocator import Allocator
from asched.plugins.dynamicresources.extended import RequestMapping


@dataclass(slots=True)
class State:
    """Go's stateData for one pod's attempt. PreFilter writes it empty before anything
    else and fills in the claims only when it succeeds, as Go does: PostFilter tells
    "PreFilter never ran" (no state) from "nothing to deallocate" (no claims)."""

    claims: list[ResourceClaim] = field(default_factory=list)
    # Per claim: whether it was allocated when PreFilter read it.
    allocated: list[bool] = field(default_factory=list)
    allocator: Allocator | None = None
    # Indices of allocated claims whose node selector some node did not match
    # (Go's unavailableClaims): PostFilter may deallocate one of them.
    unavailable: set[int] = field(default_factory=set)
    # node -> the allocations (one per claim to allocate, in order) Filter found there.
    node_allocations: dict[str, list[Allocation]] = field(default_factory=dict)
    # claim uid -> allocation put in flight by Reserve.
    reserved: dict[str, Allocation] = field(default_factory=dict)
    # Extended resources backed by DRA: how many of `claims` are the pod's own (the
    # extended-resource claim, when there is one, comes after them), the pod's scalar
    # requests, the DeviceClass of each such resource, and per node the claim Filter made
    # with its container mappings.
    n_user: int = 0
    scalars: dict[str, int] = field(default_factory=dict)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    node_extended: dict[str, tuple[ResourceClaim, tuple[RequestMapping, ...]]] = field(
        default_factory=dict
    )
    # DRAWorkloadResourceClaims: whom each of the pod's own claims is reserved for (the
    # pod, or its PodGroup); empty with the gate off (every claim is the pod's).
    bindings: list[ConsumerRef] = field(default_factory=list)
    # Index of an unallocated claim -> the allocation a sibling's Reserve put in flight in
    # this pod-group cycle, which this pod shares instead of allocating (Go's
    # informationForClaim.allocation set in PreFilter).
    shared_pending: dict[int, Allocation] = field(default_factory=dict)

    def to_allocate(self) -> list[ResourceClaim]:
        return [c for c, done in zip(self.claims, self.allocated, strict=True) if not done]

    @property
    def extended(self) -> ResourceClaim | None:
        return self.claims[self.n_user] if len(self.claims) > self.n_user else None


@dataclass(slots=True)
class GroupState:
    """Go's podGroupStateData, kept in the pod-group cycle's own CycleState: the claims
    whose allocation a member's Reserve put in flight in this cycle, with the members
    sharing it. Gone with the cycle: a later cycle does not share what this one left in
    flight (binding may still be writing it)."""

    pending: dict[str, set[str]] = field(default_factory=dict)
    # Each member's own state as its last PreFilter in this cycle left it, by pod key
    # (podsStateData): PodGroupPostFilter frees what those members could not use.
    pods: dict[str, State] = field(default_factory=dict)


STATE_KEY: StateKey[State] = StateKey("DynamicResources")
GROUP_STATE_KEY: StateKey[GroupState] = StateKey("DynamicResources")
