"""The group cycle's working state: the Go-shaped group status, each member's attempt,
and the worlds a simulation places members in (asched/scheduler/groupcycle.py).

- `group_status` builds a framework Status as Go's group cycle builds fwk.Status (its
  error before its reasons);
- `Member` is one queued member's attempt in the cycle, `Outcome` a frozen copy of it so a
  placement's results can be put back after its simulation is rolled back, the member's
  CycleState included: the chosen placement's states go on to Reserve and binding, as
  Go's podCtx.state does (a plugin's PreFilter data, DynamicResources' allocations);
- `SnapshotWorld` assumes into the cycle's snapshot (with Reserve), never the cache, as
  kube-scheduler's group cycle does; `WhatIfWorld` into copies of the nodes with some pods
  taken away (group preemption's what-if).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from asched.api import Pod
from asched.backend.snapshot import Snapshot
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo

# errPodGroupUnschedulable: Go's Status.Message() puts a status's error first.
POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"


class GroupError(Exception):
    """The error at the head of a group status (Go's Status.err): errPodGroupUnschedulable
    or a wrapped failure."""


def group_status(code: Code, err: str = "", reasons: Sequence[str] = ()) -> Status:
    """A framework Status as the group cycle builds Go's fwk.Status: `err`, when given,
    comes first among the reasons (Go's Reasons(), so Message() prints it first) and is
    kept as the status's error for `as_error`."""
    if not err:
        return Status(code, tuple(reasons))
    return Status(code, (err, *reasons), error=GroupError(err))


def validate_pods(pods: Sequence[Pod], scheduler: str, priority: int) -> str:
    """validatePodGroup's checks of each pod: the root group's scheduler name and
    priority; the first violation's message, "" when every pod passes."""
    for p in pods:
        if p.scheduler_name != scheduler:
            return (
                "all pods in a single pod group should have the same .spec.schedulerName "
                f'set, got: "{p.scheduler_name}" and "{scheduler}"'
            )
        if p.priority != priority:
            return (
                "all pods in a single pod group should have the same priority as the pod "
                f"group's priority, got {p.priority} and {priority}"
            )
    return ""


def as_error(st: Status) -> str:
    """fwk.Status.AsError().Error(): the error a status was made with, else its message."""
    return str(st.error) if st.error is not None else st.message()


def with_reason(st: Status, reason: str) -> Status:
    """fwk.Status.AppendReason, on a frozen Status."""
    return dataclasses.replace(st, reasons=(*st.reasons, reason))


@dataclass(slots=True, frozen=True)
class Outcome:
    node: str
    message: str
    error: bool
    tried: bool
    plugins: frozenset[str]
    pending: frozenset[str]
    state: CycleState


@dataclass(slots=True)
class Member:
    qpi: QueuedPodInfo
    state: CycleState
    start: float
    # The pod-group cycle's own CycleState, shared by every member of the cycle (Go's
    # podGroupCycleState); each attempt's state points at it until the member binds.
    group_cycle: CycleState = field(default_factory=CycleState)
    node: str = ""
    assumed: Pod | None = None
    # Set when the member itself was rejected or failed.
    message: str = ""
    error: bool = False
    tried: bool = False
    plugins: set[str] = field(default_factory=set)
    pending: set[str] = field(default_factory=set)

    def reset(self) -> None:
        self.state = CycleState()
        self.state.pod_group_cycle = self.group_cycle
        self.node, self.assumed, self.message = "", None, ""
        self.error = self.tried = False
        self.plugins, self.pending = set(), set()

    def outcome(self) -> Outcome:
        return Outcome(
            self.node,
            self.message,
            self.error,
            self.tried,
            frozenset(self.plugins),
            frozenset(self.pending),
            self.state,
        )


def restore(members: Sequence[Member], outcomes: Sequence[Outcome]) -> None:
    """Put one placement's results back on the members (their assumptions are gone)."""
    for m, o in zip(members, outcomes, strict=True):
        m.node, m.message, m.error, m.tried = o.node, o.message, o.error, o.tried
        m.plugins, m.pending = set(o.plugins), set(o.pending)
        m.state = o.state
        m.assumed = None


class World(Protocol):
    """Where a simulation places members: the nodes it sees, and how one is assumed."""

    def nodes(self) -> Sequence[NodeInfo]: ...

    def assume(self, fwk: Framework, m: Member, pod: Pod) -> Status | None:
        """Assume *pod* (m's pod on its node); a Reserve failure comes back, undone."""
        ...

    def release(self, fwk: Framework, m: Member) -> None:
        """Undo m's assumption."""
        ...


class SnapshotWorld:
    """The cycle's snapshot: assume, Reserve, and the reverse (assumeAndReserveWithRevert
    in a pod group cycle, whose assume writes nodeInfoSnapshot, not the cache: Go's
    Scheduler.assume and unreserveAndForget when IsPodGroupSchedulingCycle). The cache
    sees only the members the chosen placement commits (GroupCycle._commit); the snapshot
    is not refreshed from it during the cycle, as Go's is not."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def nodes(self) -> Sequence[NodeInfo]:
        return self._snapshot.node_infos()

    def assume(self, fwk: Framework, m: Member, pod: Pod) -> Status | None:
        self._snapshot.assume_pod(pod)
        st = fwk.run_reserve(m.state, pod, pod.node_name)
        if st is not None:
            self._unreserve_and_forget(fwk, m.state, pod)
        return st

    def release(self, fwk: Framework, m: Member) -> None:
        assert m.assumed is not None
        self._unreserve_and_forget(fwk, m.state, m.assumed)

    def _unreserve_and_forget(self, fwk: Framework, state: CycleState, pod: Pod) -> None:
        fwk.run_unreserve(state, pod, pod.node_name)
        self._snapshot.forget_pod(pod)


class WhatIfWorld:
    """Copies of the snapshot's nodes with some pods taken away (the mutable snapshot
    PodGroupEvaluator.selectVictimsOnDomain removes every potential victim from); members
    are added to the copies only, and no Reserve plugin runs."""

    def __init__(self, nodes: Sequence[NodeInfo], removed: Sequence[Pod]) -> None:
        gone: dict[str, list[Pod]] = {}
        for p in removed:
            gone.setdefault(p.node_name, []).append(p)
        self._nodes: list[NodeInfo] = []
        for original in nodes:
            ni = original
            if ni.name in gone:
                ni = original.clone()
                for p in gone[ni.name]:
                    ni.remove_pod(p)
            self._nodes.append(ni)
        self._index = {ni.name: i for i, ni in enumerate(self._nodes)}

    def nodes(self) -> Sequence[NodeInfo]:
        return self._nodes

    def assume(self, fwk: Framework, m: Member, pod: Pod) -> Status | None:
        i = self._index[pod.node_name]
        ni = self._nodes[i].clone()
        ni.add_pod(pod)
        self._nodes[i] = ni
        return None

    def release(self, fwk: Framework, m: Member) -> None:
        assert m.assumed is not None
        i = self._index[m.assumed.node_name]
        ni = self._nodes[i].clone()
        ni.remove_pod(m.assumed)
        self._nodes[i] = ni
