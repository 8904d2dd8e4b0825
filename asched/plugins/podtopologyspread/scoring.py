"""PodTopologySpread's PreScore state and scores (kube-scheduler scoring.go).

For ScheduleAnyway constraints a node's raw score is, summed over the constraints whose
key it has, `count * log(domains + 2) + maxSkew - 1`, where `count` is the matching pods
in the node's domain (over all nodes that pass the inclusion policies) and `domains` is
the number of domains among the feasible nodes (for the hostname key: the feasible nodes
themselves, counted per node). Fewer matching pods is better: NormalizeScore maps the raw
scores to `100 * (max + min - score) / max`, and ignored nodes (missing a topology key
while the constraints are the pod's own or listed defaults) get 0.

PreScore computes every feasible node's raw score, so Score is one dict lookup; the domain
counts over all nodes come from counting.py (memoized across cycles).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from asched.api import Pod
from asched.framework.columns import Bools, Int64s, NodeRows
from asched.framework.cycle_state import StateKey
from asched.framework.nodeinfo import NodeInfo
from asched.framework.types import MAX_NODE_SCORE, NodeScore
from asched.plugins.nodememo import MemoCache
from asched.plugins.podtopologyspread.args import LABEL_HOSTNAME
from asched.plugins.podtopologyspread.constraints import (
    Constraint,
    count_matching,
    node_has_all_keys,
)
from asched.plugins.podtopologyspread.counting import MemoEntry, count_domains


@dataclass(slots=True)
class PreScoreState:
    constraints: tuple[Constraint, ...]
    # Feasible nodes missing a topology key; they score 0.
    ignored_nodes: set[str] = field(default_factory=set)
    # Per constraint: topology value -> matching pods (hostname constraints stay empty).
    counts: list[dict[str, int]] = field(default_factory=list)
    # Per constraint: log(number of domains + 2), so small topologies are not watered down.
    weights: list[float] = field(default_factory=list)
    # Feasible node -> raw score: filled by the per-node PreScore; the columnar one leaves
    # it None and `score_map` builds it from the rows only if a per-node Score asks.
    scores: dict[str, int] | None = field(default_factory=dict)
    # Set by the columnar PreScore: the feasible rows, their raw scores and ignored flags,
    # and the columns' node names the rows index.
    rows: Int64s | None = None
    row_scores: Int64s | None = None
    row_ignored: Bools | None = None
    row_names: Sequence[str] = ()

    def score_map(self) -> dict[str, int]:
        """Feasible node -> raw score. Built lazily for the columnar PreScore because the
        state lives as long as the pod's binding cycle: a dict of every feasible node
        (500 at 5000 nodes) per pod in flight was most of asched's memory at the peak of
        a preferred-spread run."""
        if self.scores is None:
            assert self.rows is not None
            assert self.row_scores is not None
            assert self.row_ignored is not None
            kept = ~self.row_ignored
            names = self.row_names
            self.scores = dict(
                zip(
                    map(names.__getitem__, self.rows[kept].tolist()),
                    self.row_scores[kept].tolist(),
                    strict=True,
                )
            )
        return self.scores


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    # maxSkew-1 waters down differences between domains: the tolerance for skew.
    return count * weight + (max_skew - 1)


def go_round(x: float) -> int:
    """Go's math.Round for the non-negative raw scores (Python's round() is banker's)."""
    return math.floor(x + 0.5)


def compute_pre_score_state(
    constraints: tuple[Constraint, ...],
    pod: Pod,
    feasible: Sequence[NodeInfo],
    all_nodes: Sequence[NodeInfo],
    *,
    require_all_topologies: bool,
    memo: MemoCache[MemoEntry] | None = None,
) -> PreScoreState:
    s = PreScoreState(constraints)
    s.counts = [{} for _ in constraints]
    for ni in feasible:
        node = ni.node
        if node is None:
            continue
        if require_all_topologies and not node_has_all_keys(node.labels, constraints):
            s.ignored_nodes.add(node.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != LABEL_HOSTNAME:  # hostname ones are counted per node below
                s.counts[i].setdefault(node.labels.get(c.topology_key, ""), 0)
    for i, c in enumerate(constraints):
        size = len(s.counts[i])
        if c.topology_key == LABEL_HOSTNAME:
            size = len(feasible) - len(s.ignored_nodes)
        s.weights.append(topology_normalizing_weight(size))

    # Domain counts over all nodes, for the domains of the feasible nodes only. Which nodes
    # count depends on all keys being present, so every constraint takes part in that test.
    shared = [i for i, c in enumerate(constraints) if c.topology_key != LABEL_HOSTNAME]
    if shared:
        agg = count_domains(constraints, pod, all_nodes, require_all_topologies, memo)
        for i in shared:
            totals = agg.counts[i]
            m = s.counts[i]
            for value in m:
                m[value] = totals.get(value, 0)

    ns = pod.namespace
    for ni in feasible:
        node = ni.node
        if node is None or node.name in s.ignored_nodes:
            continue
        total = 0.0
        for i, c in enumerate(constraints):
            tp_value = node.labels.get(c.topology_key)
            if tp_value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                # Per node, and regardless of the inclusion policies (as upstream's Score).
                count = count_matching(ni.pods, c, ns)
            else:
                count = s.counts[i][tp_value]
            total += score_for_count(count, c.max_skew, s.weights[i])
        s.score_map()[node.name] = go_round(total)
    return s


def compute_pre_score_rows(
    constraints: tuple[Constraint, ...],
    pod: Pod,
    feasible: NodeRows,
    all_nodes: Sequence[NodeInfo],
    *,
    require_all_topologies: bool,
    memo: MemoCache[MemoEntry] | None = None,
) -> PreScoreState:
    """compute_pre_score_state from the label columns, for constraints without the
    hostname key (whose per-node pod counts have no column). The same domains, weights and
    float arithmetic, in the same order: `total` adds each constraint's term in turn,
    and 0.0 where the node lacks the key (adding 0.0 leaves a float unchanged)."""
    cols, rows = feasible.columns, feasible.rows
    s = PreScoreState(constraints)
    codes = [cols.label(c.topology_key).codes[rows] for c in constraints]
    ignored = np.zeros(len(rows), dtype=np.bool_)
    if require_all_topologies:
        for key_codes in codes:
            ignored |= key_codes < 0
    kept = ~ignored
    names = cols.names
    s.ignored_nodes = {names[r] for r in rows[ignored].tolist()}
    for i, c in enumerate(constraints):
        column = cols.label(c.topology_key)
        # The codes present, sorted as np.unique gives them, by a count instead of a sort
        # (-1, no label, first).
        present = np.flatnonzero(np.bincount(codes[i][kept] + 1, minlength=1)) - 1
        domains = {"" if k < 0 else column.values[k]: 0 for k in present.tolist()}
        s.counts.append(domains)
        s.weights.append(topology_normalizing_weight(len(domains)))
    agg = count_domains(constraints, pod, all_nodes, require_all_topologies, memo)
    total = np.zeros(len(rows), dtype=np.float64)
    for i, c in enumerate(constraints):
        m, totals = s.counts[i], agg.counts[i]
        for value in m:
            m[value] = totals.get(value, 0)
        count = cols.label(c.topology_key).counts_at(m, rows)
        term = count * s.weights[i] + (c.max_skew - 1)
        total += np.where(codes[i] >= 0, term, 0.0)
    raw = np.floor(total + 0.5).astype(np.int64)  # go_round
    raw[ignored] = 0
    s.rows, s.row_scores, s.row_ignored, s.row_names = rows, raw, ignored, names
    s.scores = None  # score_map() builds it if a per-node Score needs it
    return s


def normalize_rows(s: PreScoreState, scores: Int64s) -> Int64s | None:
    """normalize over the rows the columnar PreScore saw; None when `scores` are not those."""
    ignored = s.row_ignored
    if ignored is None or len(ignored) != len(scores):
        return None
    kept = scores[~ignored]
    if not kept.size:
        return np.zeros(len(scores), dtype=np.int64)
    lo, hi = int(kept.min()), max(0, int(kept.max()))
    if hi == 0:
        out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
    else:
        out = MAX_NODE_SCORE * (hi + lo - scores) // hi
    out[ignored] = 0
    return out


def normalize(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Fewer matching pods scores higher; ignored nodes score 0."""
    lo: int | None = None
    hi = 0
    for ns in scores:
        if ns.name in s.ignored_nodes:
            continue
        if lo is None or ns.score < lo:
            lo = ns.score
        hi = max(hi, ns.score)
    for ns in scores:
        if ns.name in s.ignored_nodes:
            ns.score = 0
        elif hi == 0:
            ns.score = MAX_NODE_SCORE
        else:
            ns.score = MAX_NODE_SCORE * (hi + (lo or 0) - ns.score) // hi


PRE_SCORE_KEY: StateKey[PreScoreState] = StateKey("PreScorePodTopologySpread")
