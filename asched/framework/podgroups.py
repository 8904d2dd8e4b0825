"""What the pod group cycle hands its plugins (kube-scheduler fwk.Placement, PodGroupInfo,
PodGroupAssignments, PlacementScore and PodGroupPostFilterResult).

The group cycle (asched.scheduler.groupcycle) evaluates a native PodGroup once per
Placement, a candidate set of nodes that a PlacementGenerate plugin proposes; the
PlacementScore plugins rank the feasible ones by their PodGroupAssignments; after an
Unschedulable group the PodGroupPostFilter plugins may make room and nominate nodes
(PodGroupPostFilterResult). The Protocols are in asched.framework.interfaces; these are the
plain values passed through them, frozen so that no plugin changes what another reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from asched.api import Pod
from asched.api.workload import NativePodGroup
from asched.framework.columns import Int64s, NodeRows
from asched.framework.nodeinfo import NodeInfo


@dataclass(slots=True, frozen=True)
class Placement:
    """A candidate set of nodes; `rows` index the node list the placements were generated
    from (the snapshot's, for a root group), `name` is the generator's (a domain value)."""

    name: str
    rows: tuple[int, ...]
    # `rows` as an array, made once: the group cycle looks the placement's nodes up again
    # for every member it simulates.
    _positions: Int64s = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_positions", np.asarray(self.rows, dtype=np.int64))

    def nodes(self, all_nodes: Sequence[NodeInfo]) -> Sequence[NodeInfo]:
        """The placement's current NodeInfos (the snapshot replaces them as pods are
        assumed, so they are looked up again for every member). From a NodeRows the
        result is one too, its rows the columns' rows of the picked positions: `rows`
        index `all_nodes`, which for a composite's child is its parent placement's subset,
        not the whole snapshot."""
        if len(self.rows) == len(all_nodes):
            return all_nodes
        if isinstance(all_nodes, NodeRows):
            # The columns keep each row's current NodeInfo (set_row), so one numpy gather
            # picks the same objects as indexing the list, without a Python loop.
            cols = all_nodes.columns
            rows = all_nodes.rows[self._positions]
            return NodeRows(cols.infos_at(rows), cols, rows)
        return [all_nodes[i] for i in self.rows]


def whole(all_nodes: Sequence[NodeInfo]) -> Placement:
    """The parent placement of a root group: every node (RunPlacementGeneratePlugins'
    answer when no PlacementGenerate plugin is enabled)."""
    return Placement("", tuple(range(len(all_nodes))))


@dataclass(slots=True, frozen=True)
class PodGroupInfo:
    """One PodGroup in a group cycle (fwk.PodGroupInfo).

    `scheduled`: its pods already bound or assumed outside this cycle (Go's
    ScheduledPods); `unscheduled`: the members this cycle tries, in the order it tries
    them, as they were queued (Go's GetUnscheduledPods). `composite`: the group is a
    CompositePodGroup (gate CompositePodGroup), shown through `pod_group` with its name,
    uid, priority and topology key; `scheduled` and `unscheduled` are then its whole
    subtree's."""

    pod_group: NativePodGroup
    scheduled: tuple[Pod, ...] = ()
    unscheduled: tuple[Pod, ...] = ()
    composite: bool = False


@dataclass(slots=True, frozen=True)
class PodGroupAssignments:
    """Where one simulation put the members (fwk.PodGroupAssignments): pod uid -> node
    name for each member placed (ProposedAssignments); members left out did not fit."""

    placement: Placement
    assignments: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class PlacementScore:
    """One placement's score from one PlacementScore plugin; NormalizePlacementScore
    rewrites `score` in place (fwk.PlacementScore)."""

    placement: Placement
    score: int


@dataclass(slots=True, frozen=True)
class PodGroupPostFilterResult:
    """A PodGroupPostFilter plugin's answer beside a Success status: the node each
    member (by uid) is nominated to (fwk.PodGroupPostFilterResult.NominatingInfos)."""

    nominated: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class GangSummary:
    """One gang as a gang plugin sees it, for read-only views (the inspector).

    `api_group` names the gang's API ("scheduling.k8s.io" for native PodGroups,
    "scheduling.x-k8s.io" for scheduler-plugins' PodGroups); `members` are its pods as the
    informer has them; `state` is the plugin's word for where the gang is (a phase or
    the last true condition, "Pending" before any); `timeout_seconds` how long a member
    may wait at Permit, None when the plugin has no such timeout."""

    api_group: str
    namespace: str
    name: str
    min_member: int
    members: tuple[Pod, ...]
    state: str
    timeout_seconds: float | None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"
