"""Values passed between the queue, the runtime and the plugins."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from asched.api import Pod
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Status


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """A pod in the scheduling queue, with its attempt history (kube-scheduler QueuedPodInfo)."""

    pod: Pod
    # When the pod was added to the queue (QueueSort's tie-breaker).
    timestamp: float
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    # Plugins that rejected the pod in its last attempt (Unschedulable*).
    unschedulable_plugins: set[str] = field(default_factory=set)
    # Plugins that answered Pending in its last attempt.
    pending_plugins: set[str] = field(default_factory=set)
    # The PreEnqueue plugin that gates the pod, if any.
    gating_plugin: str = ""
    # Set by the queue: when the pod may leave backoff.
    backoff_expiry: float = 0.0
    # Moved by an event while it was being scheduled: retry promptly on failure.
    moved_during_cycle: bool = False

    @property
    def uid(self) -> str:
        return self.pod.uid


@dataclass(slots=True, frozen=True)
class PreFilterResult:
    """Nodes a PreFilter plugin allows; None means all (kube-scheduler PreFilterResult)."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True, frozen=True)
class PostFilterResult:
    nominated_node_name: str = ""


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


@dataclass(slots=True)
class NodeToStatus:
    """Why each node was rejected; unlisted nodes were not evaluated (NodeToStatus).

    `absent` is the status assumed for nodes that are not in the map, which PreFilter
    sets when it rejects every node at once.
    """

    statuses: dict[str, Status] = field(default_factory=dict)
    absent: Status | None = None

    def get(self, node: str) -> Status | None:
        return self.statuses.get(node, self.absent)

    def set(self, node: str, status: Status) -> None:
        self.statuses[node] = status

    def __len__(self) -> int:
        return len(self.statuses)


MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


@dataclass(slots=True)
class PluginScores:
    """One Score plugin's scores for the scored nodes, at each of the three stages.

    Lists are parallel to `ScoreTable.nodes`: `raw` is what Score returned, `normalized`
    what NormalizeScore made of it (equal to raw without a normalizer), `weighted` is
    normalized times the profile's weight for the plugin.
    """

    plugin: str
    weight: int
    raw: list[int]
    normalized: list[int]
    weighted: list[int]


@dataclass(slots=True)
class ScoreTable:
    """Every Score plugin's scores for a pod, and each node's total (RunScorePlugins)."""

    nodes: list[str]
    plugins: list[PluginScores] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    # The same totals as an int64 array, when the columnar path computed them.
    totals_array: npt.NDArray[np.int64] | None = None


@dataclass(slots=True)
class FilterPass:
    """What filtering a run of nodes found (findNodesThatPassFilters).

    `processed` counts the nodes evaluated (feasible or not) before the pass stopped,
    which is where the next cycle's round robin starts; `error` is the first Error
    status, which ends the pass.
    """

    feasible: list[NodeInfo]
    processed: int
    error: Status | None = None
