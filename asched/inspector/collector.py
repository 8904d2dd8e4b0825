"""Collects what the scheduling cycles decide, for the inspector, at no cost to the cycle.

The cycles call `scheduled`, `unschedulable` and `bound` (asched.scheduler.observe
CycleObserver) on their hot path. Those calls only append a reference tuple (the cycle's
own ScoreTable or FitError, which the cycle made anyway and never touches again) to a
bounded deque, or bump a counter. Turning them into plain records (node names, per-plugin
scores of the chosen node and the best runners-up, rejections counted per plugin) happens
in `drain()`, which the inspector calls once per snapshot, off the cycle.

Guarantees: memory is bounded whatever the cluster size or the rate of decisions: the
decision ring and the raw queue both hold at most `ring_size` entries (older ones are
dropped), at most `max_rejections` pods keep their last rejection, bind latencies keep a
fixed window. Nothing here awaits or logs.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from asched.api import Pod
from asched.framework.types import QueuedPodInfo, ScoreTable
from asched.scheduler.diagnosis import FitError

DEFAULT_RING_SIZE = 200
DEFAULT_RUNNERS_UP = 3
DEFAULT_MAX_REJECTIONS = 5000
LATENCY_WINDOW = 1024


class Score(NamedTuple):
    """One Score plugin on one node: raw, after NormalizeScore, times its weight.

    A named tuple, not a frozen dataclass: a decision holds one per plugin and listed
    node (28 with the default profile), and a frozen dataclass's __init__ made them a
    third of formatting a decision."""

    raw: int
    normalized: int
    weighted: int


@dataclass(frozen=True, slots=True)
class Scored:
    node: str
    total: int
    plugins: dict[str, Score]


@dataclass(frozen=True, slots=True)
class Decision:
    """One pod placed by a scheduling cycle: the chosen node first in `scored`, then the
    best runners-up (empty when a single node was feasible and nothing was scored, or the
    group cycle placed it)."""

    at: float  # wall-clock seconds
    pod: str
    profile: str
    node: str
    cycle_seconds: float
    weights: dict[str, int]
    scored: tuple[Scored, ...]
    # The native PodGroup (namespace/name) whose group cycle placed the pod, if any: that
    # cycle compares whole placements, so no per-member score table is kept.
    group: str = ""
    # Opportunistic batching placed the pod on the previous alike pod's next-best node:
    # one node filtered, nothing scored.
    hinted: bool = False


@dataclass(frozen=True, slots=True)
class Rejection:
    """A pod's last failed cycle: how many nodes each plugin rejected, and the message."""

    at: float
    profile: str
    nodes: int
    plugins: dict[str, int]
    message: str


@dataclass(slots=True)
class _Throughput:
    binds: int = 0
    latencies: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_WINDOW))


class Collector:
    """Implements CycleObserver; `drain()` formats what the cycles recorded."""

    def __init__(
        self,
        *,
        ring_size: int = DEFAULT_RING_SIZE,
        runners_up: int = DEFAULT_RUNNERS_UP,
        max_rejections: int = DEFAULT_MAX_REJECTIONS,
        wall: Callable[[], float] = time.time,
    ) -> None:
        if ring_size < 1:
            raise ValueError(f"ring_size must be >= 1, got {ring_size}")
        self._wall = wall
        self._runners_up = runners_up
        self._max_rejections = max_rejections
        # Raw references from the cycle, formatted by drain(); maxlen keeps a burst between
        # two drains from growing memory (the oldest are dropped, as the ring would).
        self._raw: deque[_Raw] = deque(maxlen=ring_size)
        self._raw_rejections: deque[tuple[float, str, str, FitError]] = deque(maxlen=max_rejections)
        self.decisions: deque[Decision] = deque(maxlen=ring_size)
        self.rejections: OrderedDict[str, Rejection] = OrderedDict()
        self._throughput = _Throughput()

    # ---- CycleObserver: the hot path, references only ------------------------------
    def scheduled(
        self,
        pod: Pod,
        profile: str,
        node: str,
        seconds: float,
        scores: tuple[ScoreTable, int] | None,
        *,
        group: str = "",
        hinted: bool = False,
    ) -> None:
        self._raw.append((self._wall(), pod, profile, node, seconds, scores, group, hinted))

    def unschedulable(self, qpi: QueuedPodInfo, profile: str, fit: FitError) -> None:
        self._raw_rejections.append((self._wall(), qpi.pod.key, profile, fit))

    def bound(self, pod: Pod, node: str, seconds: float) -> None:
        t = self._throughput
        t.binds += 1
        t.latencies.append(seconds)

    # ---- off the cycle -------------------------------------------------------------
    @property
    def binds(self) -> int:
        """Binds since start (the inspector turns it into a rate)."""
        return self._throughput.binds

    def bind_latency(self, q: float) -> float:
        """The q quantile of the recent bind latencies, seconds (0.0 before any bind)."""
        lat = self._throughput.latencies
        return float(np.quantile(np.fromiter(lat, dtype=float), q)) if lat else 0.0

    def drain(self, budget: int | None = None) -> bool:
        """Format what the cycles recorded since the last drain, at most *budget* records
        (all without one); True when some are left. Formatting one decision takes tens of
        microseconds, so the snapshot task drains in small budgets and yields between
        them: a second of 500 decisions in one go held the event loop for 25-35 ms."""
        left = -1 if budget is None else budget
        while self._raw and left != 0:
            self.decisions.append(_decision(self._raw.popleft(), self._runners_up))
            left -= 1
        while self._raw_rejections and left != 0:
            at, key, profile, fit = self._raw_rejections.popleft()
            self.rejections.pop(key, None)
            self.rejections[key] = _rejection(at, profile, fit)
            left -= 1
        while len(self.rejections) > self._max_rejections:
            self.rejections.popitem(last=False)
        return bool(self._raw or self._raw_rejections)

    def forget_rejections(self, keep: Iterable[str]) -> None:
        """Drop the rejections of pods no longer pending (bound, deleted)."""
        keep = set(keep)
        for key in [k for k in self.rejections if k not in keep]:
            del self.rejections[key]


_Raw = tuple[float, Pod, str, str, float, tuple[ScoreTable, int] | None, str, bool]


def _decision(raw: _Raw, runners_up: int) -> Decision:
    at, p, profile, node, seconds, scores, group, hinted = raw
    pod = p.key
    if scores is None or not scores[0].plugins:
        return Decision(at, pod, profile, node, seconds, {}, (), group, hinted)
    table, chosen = scores
    totals = table.totals_array
    if totals is None:
        totals = np.asarray(table.totals, dtype=np.int64)
    # Best first, the chosen node (its index came from the cycle) leading.
    top = _best(totals, runners_up + 1)
    order = [chosen, *(i for i in top if i != chosen)][: runners_up + 1]
    # Per plugin, the rows of the listed nodes at once (PluginScores.rows): reading them
    # one score at a time was most of a decision's formatting.
    listed = np.asarray(order, dtype=np.intp)
    rows = [(ps.plugin, list(map(Score._make, ps.rows(listed)))) for ps in table.plugins]
    node_totals: list[int] = totals[listed].tolist()
    scored = tuple(
        Scored(table.name_at(i), node_totals[j], {plugin: r[j] for plugin, r in rows})
        for j, i in enumerate(order)
    )
    weights = {ps.plugin: ps.weight for ps in table.plugins}
    return Decision(at, pod, profile, node, seconds, weights, scored, group)


def _rejection(at: float, profile: str, fit: FitError) -> Rejection:
    """Nodes rejected per plugin, counted as FitError.message counts reasons."""
    d = fit.diagnosis
    plugins: dict[str, int] = {}
    statuses = d.node_to_status
    # Per distinct Status, as FitError.message counts: no walk over every rejected node.
    for st, n in statuses.tally_by_id().values():
        if n > 0:
            name = st.plugin or "(none)"
            plugins[name] = plugins.get(name, 0) + n
    absent = fit.num_all_nodes - len(statuses)
    if absent > 0 and statuses.absent is not None:
        name = statuses.absent.plugin or " ".join(sorted(d.unschedulable_plugins)) or "(none)"
        plugins[name] = plugins.get(name, 0) + absent
    return Rejection(at, profile, fit.num_all_nodes, plugins, fit.message())


def _best(totals: npt.NDArray[np.int64], k: int) -> list[int]:
    """Indices of the k highest totals, best first, ties in node order: O(N), not a sort."""
    if len(totals) > k:
        kth = totals[np.argpartition(-totals, k - 1)[k - 1]]
        above = np.flatnonzero(totals > kth)
        at = np.flatnonzero(totals == kth)[: k - len(above)]
        picked = [*above.tolist(), *at.tolist()]
    else:
        picked = list(range(len(totals)))
    return sorted(picked, key=lambda i: (-int(totals[i]), i))
