"""What `Runner.schedule` found for one pod: typed, keyed by node name, ready to assert on.

The runtime's own values (FilterPass, ScoreTable) are lists parallel to the node list,
which is what the scheduler's hot path wants; a test wants `result.filter["n1"].reasons`
and `result.scores["GPUResource"].raw["n1"]`. This module only reshapes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.status import Code, Status
from asched.framework.types import PluginScores, ScoreTable

FEASIBLE = Status(Code.SUCCESS)


@dataclass(frozen=True, slots=True)
class ScoresByNode:
    """One Score plugin's scores, per node: what Score returned, after NormalizeScore, and
    after the profile's weight (the part that counts in the node's total)."""

    plugin: str
    weight: int
    raw: dict[str, int]
    normalized: dict[str, int]
    weighted: dict[str, int]

    @classmethod
    def of(cls, nodes: list[str], ps: PluginScores) -> ScoresByNode:
        def by_node(values: list[int]) -> dict[str, int]:
            return dict(zip(nodes, values, strict=True))

        return cls(
            ps.plugin, ps.weight, by_node(ps.raw), by_node(ps.normalized), by_node(ps.weighted)
        )

    def ranking(self) -> list[str]:
        """Nodes by weighted score, best first (ties in node order)."""
        return sorted(self.weighted, key=lambda n: -self.weighted[n])


@dataclass(slots=True)
class CycleResult:
    """One scheduling cycle of `pod`, stopped before Reserve.

    `filter` holds a Status for every node evaluated: Success for a feasible node, else the
    rejection that decided it (the first failing plugin in profile order, with its name in
    `Status.plugin`). When PreFilter rejects the pod, every node gets that status, as
    kube-scheduler does. `error` is the first Error status of any point; the cycle stops
    there (the scheduler would retry the pod with backoff), so later points did not run.
    """

    pod: Pod
    # The cycle's state, for running Reserve/Permit after it (Runner.reserve, .permit).
    state: CycleState
    # A PreEnqueue plugin that keeps the pod out of the active queue (the cycle still runs).
    gate: Status | None = None
    pre_filter: Status | None = None
    filter: dict[str, Status] = field(default_factory=dict)
    skipped_filters: frozenset[str] = frozenset()
    skipped_scores: frozenset[str] = frozenset()
    error: Status | None = None
    # The runtime's ScoreTable as it returned it; None when scoring did not run.
    table: ScoreTable | None = None
    scores: dict[str, ScoresByNode] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    # The nodes sharing the best total, in node order.
    best: tuple[str, ...] = ()

    @property
    def feasible(self) -> list[str]:
        return [n for n, st in self.filter.items() if st.is_success()]

    @property
    def rejected(self) -> dict[str, Status]:
        return {n: st for n, st in self.filter.items() if not st.is_success()}

    @property
    def selected(self) -> str | None:
        """The node the scheduler would pick; None when none fits or several tie (the
        scheduler would pick one of `best` at random)."""
        return self.best[0] if len(self.best) == 1 else None

    def ranking(self) -> list[str]:
        """Feasible nodes by total score, best first (ties in node order)."""
        return sorted(self.totals, key=lambda n: -self.totals[n])
