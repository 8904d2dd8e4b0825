"""What `asched explain` found: one dry scheduling cycle of one pod, as plain data.

Produced by dryrun.py, rendered by render.py (text or JSON). Kept free of framework
objects (Status, NodeInfo) so the JSON form is a stable contract: codes are kube-scheduler's
status code names ("Success", "Unschedulable", "UnschedulableAndUnresolvable", "Error",
"Pending", "Skip"), plugin names are the configured ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asched.framework.status import Code, Status


@dataclass(frozen=True, slots=True)
class Verdict:
    """One plugin's answer at one point: its code, reasons and the plugin's name."""

    plugin: str
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()

    @classmethod
    def of(cls, plugin: str, status: Status | None) -> Verdict:
        if status is None:
            return cls(plugin)
        return cls(status.plugin or plugin, status.code, status.reasons)

    @property
    def ok(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def code_name(self) -> str:
        return Status(self.code).code_name()

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def status(self) -> Status:
        return Status(self.code, self.reasons, self.plugin)

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "code": self.code_name, "reasons": list(self.reasons)}


@dataclass(slots=True)
class NodeVerdict:
    """A node's fate at Filter: the first rejection decides (kube-scheduler RunFilterPlugins).

    `checks` holds every Filter plugin's own answer for this node, including those after
    the first rejection, which asched would not have run.
    """

    node: str
    verdict: Verdict
    checks: list[Verdict] = field(default_factory=list)

    @property
    def feasible(self) -> bool:
        return self.verdict.ok

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "feasible": self.feasible,
            "verdict": self.verdict.to_dict(),
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass(frozen=True, slots=True)
class PluginScore:
    """One Score plugin on one node: raw -> NormalizeScore -> times the weight."""

    raw: int
    normalized: int
    weighted: int


@dataclass(slots=True)
class NodeScores:
    node: str
    plugins: dict[str, PluginScore] = field(default_factory=dict)
    total: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "total": self.total,
            "plugins": {
                name: {"raw": s.raw, "normalized": s.normalized, "weighted": s.weighted}
                for name, s in self.plugins.items()
            },
        }


@dataclass(slots=True)
class Explanation:
    pod: str  # namespace/name
    profile: str
    bound_to: str = ""  # the pod's node when it is already bound (explained as if pending)
    # A PreEnqueue plugin that keeps the pod out of the active queue, if any.
    gate: Verdict | None = None
    # PreFilter's rejection (or Error) of the pod as a whole, if any.
    pre_filter: Verdict | None = None
    # PreFilter plugins that narrowed the node set (nodes left out fail "by" them).
    narrowed_by: tuple[str, ...] = ()
    skipped_filters: tuple[str, ...] = ()
    nodes: list[NodeVerdict] = field(default_factory=list)
    # The FailedScheduling message asched would post when no node is feasible.
    fit_error: str = ""
    # Score plugins run, in profile order, with their weights.
    score_weights: dict[str, int] = field(default_factory=dict)
    skipped_scores: tuple[str, ...] = ()
    # PreScore or Score failure (an Error: asched would retry the pod with backoff).
    score_error: Verdict | None = None
    scores: list[NodeScores] = field(default_factory=list)  # best first
    # The node asched would pick; "" when none fits or when several tie.
    selected: str = ""
    # The nodes sharing the best total (asched picks one of them at random).
    best: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    @property
    def feasible(self) -> list[str]:
        return [n.node for n in self.nodes if n.feasible]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "profile": self.profile,
            "boundTo": self.bound_to or None,
            "gate": self.gate.to_dict() if self.gate else None,
            "preFilter": self.pre_filter.to_dict() if self.pre_filter else None,
            "narrowedBy": list(self.narrowed_by),
            "skippedFilters": list(self.skipped_filters),
            "nodes": [n.to_dict() for n in self.nodes],
            "feasible": self.feasible,
            "fitError": self.fit_error or None,
            "scoreWeights": dict(self.score_weights),
            "skippedScores": list(self.skipped_scores),
            "scoreError": self.score_error.to_dict() if self.score_error else None,
            "scores": [s.to_dict() for s in self.scores],
            "selected": self.selected or None,
            "best": list(self.best),
            "notes": list(self.notes),
        }


def code_label(code: Code) -> str:
    """A short word for a verdict column."""
    return _LABELS[code]


_LABELS = {
    Code.SUCCESS: "feasible",
    Code.ERROR: "error",
    Code.UNSCHEDULABLE: "unschedulable",
    # Preemption cannot help on this node.
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "unresolvable",
    Code.WAIT: "wait",
    Code.SKIP: "skipped",
    Code.PENDING: "pending",
}
