"""Scheduler-side state the gang manager keeps per group and per cycle (none of it is in
the PodGroup API object), and the census of a group's members."""

from __future__ import annotations

from dataclasses import dataclass, field

from asched.api import Pod, Resource
from asched.framework.cycle_state import StateKey
from asched.framework.types import NodeToStatus
from asched.plugins.coscheduling.status import MemberCounts


@dataclass(slots=True)
class CycleNote:
    """What PreFilter decided for this pod, for PostFilter of the same cycle."""

    group: str
    rejected_in_pre_filter: bool


CYCLE_KEY: StateKey[CycleNote] = StateKey("Coscheduling")


@dataclass(slots=True)
class GroupState:
    """Scheduler-side state of one group (nothing here is in the API object)."""

    backoff_until: float = 0.0
    # Why the group last failed, repeated to its members while it backs off.
    failure: str = ""
    # Wall time of the last failure; QueueSort uses it instead of the creation time.
    failed_at: float | None = None
    # The cluster-capacity checks passed; skip them until then (scheduler-plugins permittedPG).
    capacity_ok_until: float = 0.0
    # A member that fits no node: siblings wait for it to be retried.
    blocked_by: str = ""
    blocked_name: str = ""
    # The current attempt reached its quorum (a later Unreserve is a bind failure).
    quorum: bool = False
    started: bool = False
    members_seen_until: float = 0.0
    last_event: tuple[str, float] = ("", float("-inf"))


@dataclass(slots=True)
class Gate:
    group: str
    token: int
    expires: float


@dataclass(slots=True)
class Census:
    """The group's members in the informer view (assumed pods carry their node)."""

    total: int = 0
    live: dict[str, Pod] = field(default_factory=dict)  # not finished, not being deleted
    assigned: set[str] = field(default_factory=set)  # live members with a node
    assigned_requests: Resource = field(default_factory=Resource)
    gated: int = 0  # live members held by scheduling gates
    scheduled: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0

    def counts(self) -> MemberCounts:
        return MemberCounts(self.total, self.scheduled, self.running, self.succeeded, self.failed)


def summarize_statuses(statuses: NodeToStatus) -> str:
    counts: dict[str, int] = {}
    for st in statuses.statuses.values():
        for reason in st.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    if not counts and statuses.absent is not None:
        return statuses.absent.message()
    return ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))
