"""PodTopologySpread's PreFilter state and Filter verdict (kube-scheduler filtering.go).

PreFilter counts, per DoNotSchedule constraint, the matching pods in every topology domain
of the eligible nodes (nodes with all topology keys, passing the constraint's inclusion
policies; see counting.py, which also memoizes the counts across cycles). Filter is then
a few dict lookups per node: it rejects when `matchNum + selfMatch - minMatch > maxSkew`.

The global minimum per constraint is kept exact under preemption's AddPod/RemovePod dry
runs with a histogram of domains per count (upstream's current replacement for the older
two "critical paths"): each update moves one domain by one, so the minimum moves at most
by one and never needs a rescan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from asched.api import Node, Pod
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns
from asched.framework.cycle_state import StateKey
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code, Status
from asched.plugins.nodememo import MemoCache
from asched.plugins.podtopologyspread.constraints import (
    NAME,
    Constraint,
    NodeInclusion,
    node_has_all_keys,
)
from asched.plugins.podtopologyspread.counting import MemoEntry, count_domains

ERR_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_NODE_LABEL_NOT_MATCH = ERR_CONSTRAINTS_NOT_MATCH + " (missing required label)"
# Built once: Filter runs for thousands of nodes per cycle.
REJECTED = Status(Code.UNSCHEDULABLE, (ERR_CONSTRAINTS_NOT_MATCH,), NAME)
MISSING_LABEL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NODE_LABEL_NOT_MATCH,), NAME)

# Sentinel minimum when a constraint has no eligible domain at all (upstream MaxInt32).
_NO_DOMAIN = 2**31 - 1


@dataclass(slots=True)
class PreFilterState:
    constraints: tuple[Constraint, ...]
    # Per constraint: 1 when the incoming pod matches its own selector.
    self_match: tuple[int, ...]
    # Per constraint: topology value -> matching pods in that domain.
    counts: list[dict[str, int]]
    # Per constraint: the smallest count over its domains.
    min_match: list[int]
    # Per constraint: count -> how many domains hold exactly that many matching pods.
    domains_at_count: list[dict[int, int]]

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.constraints,  # immutable, shared
            self.self_match,
            [dict(m) for m in self.counts],
            list(self.min_match),
            [dict(h) for h in self.domains_at_count],
        )

    def move(self, i: int, value: str, delta: int) -> None:
        """Add `delta` (+1 or -1) matching pods to one domain, keeping the minimum exact."""
        counts = self.counts[i]
        old = counts.get(value, 0)
        cur = old + delta
        counts[value] = cur
        hist = self.domains_at_count[i]
        left = hist.get(old, 0) - 1
        if left > 0:
            hist[old] = left
        else:
            hist.pop(old, None)
        hist[cur] = hist.get(cur, 0) + 1
        if cur < self.min_match[i]:
            self.min_match[i] = cur
        elif old == self.min_match[i] and old not in hist:
            # The last domain at the minimum moved up by one; all others were >= old.
            self.min_match[i] = cur


def compute_pre_filter_state(
    constraints: tuple[Constraint, ...],
    pod: Pod,
    nodes: Sequence[NodeInfo],
    memo: MemoCache[MemoEntry] | None = None,
) -> PreFilterState:
    """Count matching pods per domain over all nodes (calPreFilterState)."""
    agg = count_domains(constraints, pod, nodes, True, memo)
    # Copies: AddPod/RemovePod mutate the state, never the (possibly shared) aggregate.
    counts = [dict(m) for m in agg.counts]
    min_match: list[int] = []
    hists: list[dict[int, int]] = []
    for m in counts:
        hist: dict[int, int] = {}
        for n in m.values():
            hist[n] = hist.get(n, 0) + 1
        hists.append(hist)
        min_match.append(min(hist, default=_NO_DOMAIN))
    self_match = tuple(1 if c.matches(pod.labels) else 0 for c in constraints)
    return PreFilterState(constraints, self_match, counts, min_match, hists)


def update_with_pod(
    s: PreFilterState, changed: Pod, preemptor: Pod, node: Node | None, delta: int
) -> None:
    """AddPod/RemovePod: count `changed` in or out of the domains of `node`."""
    if changed.namespace != preemptor.namespace or node is None:
        return
    labels = node.labels
    if not node_has_all_keys(labels, s.constraints):
        return
    inclusion: NodeInclusion | None = None
    for i, c in enumerate(s.constraints):
        if not c.matches(changed.labels):
            continue
        if c.honor_node_affinity or c.honor_node_taints:
            inclusion = inclusion or NodeInclusion(preemptor)
            if not inclusion.includes(c, node):
                continue
        s.move(i, labels[c.topology_key], delta)


def filter_node(s: PreFilterState, node: Node) -> Status | None:
    """`matchNum + selfMatch - minMatch > maxSkew` rejects; a missing key is unresolvable."""
    labels = node.labels
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return MISSING_LABEL
        counts = s.counts[i]
        # Fewer domains than minDomains: the global minimum is taken as 0.
        low = 0 if len(counts) < c.min_domains else s.min_match[i]
        if counts.get(value, 0) + s.self_match[i] - low > c.max_skew:
            return REJECTED
    return None


_PASS, _MISSING, _OVER = 0, 1, 2  # BatchVerdict codes: (MISSING_LABEL, REJECTED)


def filter_rows(s: PreFilterState, cols: NodeColumns, rows: Int64s) -> BatchVerdict | None:
    """filter_node for many nodes: per constraint in order, the first missing label or
    excess skew decides a node's status, as filter_node's loop does."""
    verdict = np.zeros(len(rows), dtype=np.int8)
    for i, c in enumerate(s.constraints):
        column = cols.label(c.topology_key)
        codes = column.codes[rows]
        missing = codes < 0
        counts = s.counts[i]
        # The count of every known value, plus a 0 for rows without the label (masked).
        per_value = np.fromiter(
            (counts.get(v, 0) for v in column.values), np.int64, len(column.values)
        )
        per_value = np.append(per_value, 0)
        low = 0 if len(counts) < c.min_domains else s.min_match[i]
        matched = per_value[np.where(missing, len(column.values), codes)]
        over = ~missing & (matched + s.self_match[i] - low > c.max_skew)
        undecided = verdict == _PASS
        verdict[undecided & missing] = _MISSING
        verdict[undecided & over] = _OVER
    if not verdict.any():
        return None
    return BatchVerdict.coded(verdict, (MISSING_LABEL, REJECTED))


PRE_FILTER_KEY: StateKey[PreFilterState] = StateKey("PreFilterPodTopologySpread")
