"""Values passed between the queue, the runtime and the plugins."""

from __future__ import annotations

from collections.abc import Callable, Iterable
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
    # Set by the queue: when the pod may leave backoff (aligned to a 1-second window).
    backoff_expiry: float = 0.0
    # Attempts that plugins rejected (kube-scheduler UnschedulableCount), and errors in a
    # row since the last rejection (ConsecutiveErrorsCount): the backoff's exponent.
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    # Moved by an event while it was being scheduled: retry promptly on failure.
    moved_during_cycle: bool = False
    # When the leftover flush last moved the pod (kube-scheduler FlushTimestamp): a pod
    # the flush sent back gated waits another full period before the next flush.
    flush_timestamp: float = 0.0
    # The queue's scheduling cycle when the pod was popped (SchedulingQueue's
    # SchedulingCycle); a pod group's members taken with it share their cycle.
    cycle: int = 0

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


# Rejected nodes handed over together (NodeToStatus.defer_rejections): their names (an
# object array of str, or a tuple), and per node the 1-based index of its Status in the
# labelled tuple (None: every node holds the first).
RejectedChunk = tuple[
    tuple[str, ...] | npt.NDArray[np.object_], list[int] | None, tuple[Status, ...]
]


class NodeToStatus:
    """Why each node was rejected; unlisted nodes were not evaluated (NodeToStatus).

    `absent` is the status assumed for nodes that are not in the map, which PreFilter
    sets when it rejects every node at once. Write through `set`, `add_rejections` or
    `defer_rejections`: they keep a tally of how many nodes hold each distinct Status
    object, which is what every cycle needs (the rejecting plugins, the evaluation counts)
    without a walk over hundreds of rejected nodes. A direct write to `statuses` that
    changes its size is noticed and the tally recounted; one that only replaces a value is
    not.

    A columnar Filter pass hands its rejections over as arrays (`defer_rejections`); the
    map is built from them only when a node's status is read (`get`, `statuses`), which a
    pod that gets scheduled never does: on a cluster where most nodes reject each pod
    (anti-affinity by hostname) building it was a tenth of the cycle.
    """

    __slots__ = ("_deferred", "_deferred_len", "_statuses", "_tally", "_tally_len", "absent")

    def __init__(
        self, statuses: dict[str, Status] | None = None, absent: Status | None = None
    ) -> None:
        self._statuses: dict[str, Status] = {} if statuses is None else statuses
        self.absent = absent
        # Per deferred chunk: node names, and per node the 1-based index into `labelled`
        # (None: every node holds labelled[0]). Chunks list distinct nodes, none in the map.
        self._deferred: list[RejectedChunk] = []
        self._deferred_len = 0
        self._tally: dict[int, tuple[Status, int]] = {}
        self._tally_len = 0

    @property
    def statuses(self) -> dict[str, Status]:
        """node name -> Status (building the deferred part first)."""
        if self._deferred:
            self._build()
        return self._statuses

    def _build(self) -> None:
        out = self._statuses
        for chunk in self._deferred:
            out.update(_chunk_statuses(chunk))
        self._deferred.clear()
        self._deferred_len = 0

    def get(self, node: str) -> Status | None:
        return self.statuses.get(node, self.absent)

    def set(self, node: str, status: Status) -> None:
        statuses = self.statuses
        tally = self.tally_by_id()
        old = statuses.get(node)
        if old is not None:
            _bump(tally, old, -1)
        statuses[node] = status
        _bump(tally, status, 1)
        self._tally_len = len(statuses)

    def add_rejections(
        self, rejected: dict[str, Status], counts: Iterable[tuple[Status, int]]
    ) -> None:
        """Record a Filter pass's rejections; `counts` says how many of them hold each
        distinct Status (the pass knows, having labelled them)."""
        statuses = self.statuses
        tally = self.tally_by_id()
        before = len(statuses)
        statuses.update(rejected)
        if len(statuses) != before + len(rejected):
            self._tally_len = -1  # some nodes were already listed: recount on next read
            return
        for st, n in counts:
            _bump(tally, st, n)
        self._tally_len = len(statuses)

    def defer_rejections(
        self,
        chunks: Iterable[RejectedChunk],
        counts: Iterable[tuple[Status, int]],
    ) -> None:
        """add_rejections for nodes not listed yet, given as chunks of (names, codes,
        labelled): each name holds labelled[code - 1], or labelled[0] without codes. The
        map is built when first read; `counts` as for add_rejections."""
        if self._statuses or self._deferred:
            # Nodes may be listed already: add_rejections sorts that out.
            rejected: dict[str, Status] = {}
            for chunk in chunks:
                rejected.update(_chunk_statuses(chunk))
            self.add_rejections(rejected, counts)
            return
        tally = self.tally_by_id()
        for chunk in chunks:
            self._deferred.append(chunk)
            self._deferred_len += len(chunk[0])
        for st, n in counts:
            _bump(tally, st, n)
        self._tally_len = len(self)

    def tally_by_id(self) -> dict[int, tuple[Status, int]]:
        """id(status) -> (status, nodes holding it), for every distinct Status held."""
        if self._tally_len != len(self):
            tally: dict[int, tuple[Status, int]] = {}
            for st in self.statuses.values():
                _bump(tally, st, 1)
            self._tally = tally
            self._tally_len = len(self._statuses)
        return self._tally

    def distinct(self) -> list[Status]:
        """Each distinct Status some node holds, in first-seen order."""
        return [st for st, n in self.tally_by_id().values() if n > 0]

    def __len__(self) -> int:
        return len(self._statuses) + self._deferred_len

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeToStatus):
            return NotImplemented
        return (self.statuses, self.absent) == (other.statuses, other.absent)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return f"NodeToStatus(statuses={self.statuses!r}, absent={self.absent!r})"


def _chunk_statuses(chunk: RejectedChunk) -> dict[str, Status]:
    names, codes, labelled = chunk
    listed: Iterable[str] = names.tolist() if isinstance(names, np.ndarray) else names
    if codes is None:
        return dict.fromkeys(listed, labelled[0])
    return dict(zip(listed, [labelled[c - 1] for c in codes], strict=True))


def _bump(tally: dict[int, tuple[Status, int]], st: Status, n: int) -> None:
    held = tally.get(id(st))
    tally[id(st)] = (st, n if held is None else held[1] + n)


MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


Int64Array = npt.NDArray[np.int64]


class PluginScores:
    """One Score plugin's scores for the scored nodes, at each of the three stages.

    Lists are parallel to `ScoreTable.nodes`: `raw` is what Score returned, `normalized`
    what NormalizeScore made of it (equal to raw without a normalizer), `weighted` is
    normalized times the profile's weight for the plugin. The runtime stores int64
    arrays; the lists are made on first read, since only `asched explain`, the testing
    Runner and tests read them, while every cycle writes them.
    """

    __slots__ = ("_normalized", "_raw", "_weighted", "plugin", "weight")

    def __init__(
        self,
        plugin: str,
        weight: int,
        raw: Int64Array | list[int],
        normalized: Int64Array | list[int],
        weighted: Int64Array | list[int],
    ) -> None:
        self.plugin, self.weight = plugin, weight
        self._raw, self._normalized, self._weighted = raw, normalized, weighted

    @property
    def raw_array(self) -> Int64Array:
        """The raw scores as an int64 array (without making the list)."""
        if isinstance(self._raw, list):
            return np.asarray(self._raw, dtype=np.int64)
        return self._raw

    @property
    def raw(self) -> list[int]:
        self._raw = _as_list(self._raw)
        return self._raw

    @property
    def normalized(self) -> list[int]:
        self._normalized = _as_list(self._normalized)
        return self._normalized

    @property
    def weighted(self) -> list[int]:
        self._weighted = _as_list(self._weighted)
        return self._weighted

    def at(self, i: int) -> tuple[int, int, int]:
        """Raw, normalized and weighted score of node i, without making the lists."""
        return int(self._raw[i]), int(self._normalized[i]), int(self._weighted[i])

    def rows(self, nodes: npt.NDArray[np.intp]) -> list[tuple[int, int, int]]:
        """`at(i)` for each i of *nodes*: one gather per stage instead of three scalar
        reads (and int conversions) per node; the inspector reads a few rows per pod."""
        return list(
            zip(
                _gather(self._raw, nodes),
                _gather(self._normalized, nodes),
                _gather(self._weighted, nodes),
                strict=True,
            )
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PluginScores):
            return NotImplemented
        return (self.plugin, self.weight, self.raw, self.normalized, self.weighted) == (
            other.plugin,
            other.weight,
            other.raw,
            other.normalized,
            other.weighted,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return (
            f"PluginScores({self.plugin!r}, {self.weight}, raw={self.raw}, "
            f"normalized={self.normalized}, weighted={self.weighted})"
        )


def _as_list(values: Int64Array | list[int]) -> list[int]:
    return values if isinstance(values, list) else values.tolist()


def _gather(values: Int64Array | list[int], nodes: npt.NDArray[np.intp]) -> list[int]:
    if isinstance(values, list):
        return [values[i] for i in nodes.tolist()]
    return values[nodes].tolist()  # type: ignore[no-any-return]  # int64 -> list[int]


class ScoreTable:
    """Every Score plugin's scores for a pod, and each node's total (RunScorePlugins).

    `nodes` and `totals` may be given as callables/arrays and are materialised on first
    read: a cycle needs only the best total's index and that one node's name.
    """

    __slots__ = ("_name_at", "_nodes", "_totals", "plugins", "totals_array")

    def __init__(
        self,
        nodes: list[str] | Callable[[], list[str]],
        plugins: list[PluginScores] | None = None,
        totals: list[int] | None = None,
        totals_array: Int64Array | None = None,
        *,
        name_at: Callable[[int], str] | None = None,
    ) -> None:
        self._nodes = nodes
        self._name_at = name_at
        self.plugins: list[PluginScores] = [] if plugins is None else plugins
        self._totals: list[int] | None = totals
        # The totals as an int64 array, when the runtime computed them.
        self.totals_array = totals_array

    @property
    def nodes(self) -> list[str]:
        if not isinstance(self._nodes, list):
            self._nodes = self._nodes()
        return self._nodes

    def name_at(self, i: int) -> str:
        """The name of node i, without making the whole name list."""
        if self._name_at is not None and not isinstance(self._nodes, list):
            return self._name_at(i)
        return self.nodes[i]

    @property
    def size(self) -> int:
        """How many nodes were scored."""
        return len(self.totals_array) if self.totals_array is not None else len(self.totals)

    @property
    def totals(self) -> list[int]:
        if self._totals is None:
            self._totals = [] if self.totals_array is None else self.totals_array.tolist()
        return self._totals

    @totals.setter
    def totals(self, values: list[int]) -> None:
        self._totals = values


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
