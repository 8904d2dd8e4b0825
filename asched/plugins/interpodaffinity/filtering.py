"""InterPodAffinity's PreFilter state and Filter verdict (kube-scheduler filtering.go).

PreFilter counts, per topology pair (key -> value -> count):
- existing_anti: existing pods whose required anti-affinity terms match the incoming pod;
- affinity: existing pods matching all of the incoming pod's required affinity terms;
- anti: existing pods matching each of the incoming pod's required anti-affinity terms
(counting.py computes them, memoized across cycles). Filter then reads a few entries per
node. AddPod/RemovePod move the same counts for preemption's dry runs; entries that drop
to zero are removed, so an empty map means "no matching pod anywhere" (which the
first-pod-of-a-group rule relies on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from asched.api import Node, Pod
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns
from asched.framework.cycle_state import StateKey
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code, Status
from asched.plugins.interpodaffinity.counting import (
    MemoEntry,
    TopologyCounts,
    count_existing_anti_affinity,
    count_incoming,
)
from asched.plugins.interpodaffinity.readkeys import ReadKeys
from asched.plugins.interpodaffinity.terms import (
    ResolvedTerm,
    matches_all,
    required_terms,
    term_matches,
)
from asched.plugins.nodememo import MemoCache

ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
NAME = "InterPodAffinity"
# Built once: Filter runs for thousands of nodes per cycle. Preemption cannot add the
# pods an affinity needs, so that rejection is unresolvable.
AFFINITY_MISMATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_AFFINITY,), NAME)
ANTI_AFFINITY_MISMATCH = Status(Code.UNSCHEDULABLE, (ERR_ANTI_AFFINITY,), NAME)
EXISTING_ANTI_AFFINITY_MISMATCH = Status(Code.UNSCHEDULABLE, (ERR_EXISTING_ANTI_AFFINITY,), NAME)


def add_count(counts: TopologyCounts, labels: Mapping[str, str], key: str, delta: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    values = counts.get(key)
    if values is None:
        values = counts[key] = {}
    n = values.get(value, 0) + delta
    if n != 0:
        values[value] = n
        return
    values.pop(value, None)
    if not values:
        del counts[key]


def _clone(counts: TopologyCounts) -> TopologyCounts:
    return {k: dict(v) for k, v in counts.items()}


@dataclass(slots=True)
class PreFilterState:
    pod: Pod
    affinity_terms: tuple[ResolvedTerm, ...]
    anti_affinity_terms: tuple[ResolvedTerm, ...]
    namespace_labels: Mapping[str, str]
    existing_anti: TopologyCounts
    affinity: TopologyCounts
    anti: TopologyCounts

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.pod,
            self.affinity_terms,
            self.anti_affinity_terms,
            self.namespace_labels,
            _clone(self.existing_anti),
            _clone(self.affinity),
            _clone(self.anti),
        )

    def update_with_pod(self, other: Pod, node: Node | None, delta: int) -> None:
        """AddPod/RemovePod: count `other` (on `node`) in or out."""
        if node is None:
            return
        labels = node.labels
        a = other.affinity
        for t in required_terms(a.pod_anti_affinity if a is not None else None):
            if term_matches(t, other.namespace, self.pod, self.namespace_labels):
                add_count(self.existing_anti, labels, t.topology_key, delta)
        if matches_all(self.affinity_terms, other):
            for rt in self.affinity_terms:
                add_count(self.affinity, labels, rt.topology_key, delta)
        for rt in self.anti_affinity_terms:
            if rt.matches(other):
                add_count(self.anti, labels, rt.topology_key, delta)


def compute_pre_filter_state(
    pod: Pod,
    *,
    affinity_terms: tuple[ResolvedTerm, ...],
    anti_affinity_terms: tuple[ResolvedTerm, ...],
    namespace_labels: Mapping[str, str],
    nodes_with_anti_affinity_pods: Sequence[NodeInfo],
    all_nodes: Sequence[NodeInfo],
    memo: MemoCache[MemoEntry] | None = None,
    read_keys: ReadKeys | None = None,
) -> PreFilterState:
    return PreFilterState(
        pod,
        affinity_terms,
        anti_affinity_terms,
        namespace_labels,
        existing_anti=count_existing_anti_affinity(
            pod, namespace_labels, nodes_with_anti_affinity_pods, memo, read_keys
        ),
        affinity=count_incoming(affinity_terms, False, all_nodes, memo),
        anti=count_incoming(anti_affinity_terms, True, all_nodes, memo),
    )


def _satisfies_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    pods_exist = True
    for t in s.affinity_terms:
        value = labels.get(t.topology_key)
        if value is None:
            return False  # every topology key must be on the node
        if s.affinity.get(t.topology_key, {}).get(value, 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: no pod anywhere matches yet and the
    # pod matches its own terms, so it may go to any node that has the topology keys.
    return not s.affinity and matches_all(s.affinity_terms, s.pod)


def _satisfies_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    if not s.anti:
        return True
    for t in s.anti_affinity_terms:
        value = labels.get(t.topology_key)
        if value is not None and s.anti.get(t.topology_key, {}).get(value, 0) > 0:
            return False
    return True


def _satisfies_existing_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    for key, values in s.existing_anti.items():
        value = labels.get(key)
        if value is not None and values.get(value, 0) > 0:
            return False
    return True


def filter_node(s: PreFilterState, node: Node) -> Status | None:
    labels = node.labels
    if not _satisfies_affinity(s, labels):
        return AFFINITY_MISMATCH
    if not _satisfies_anti_affinity(s, labels):
        return ANTI_AFFINITY_MISMATCH
    if not _satisfies_existing_anti_affinity(s, labels):
        return EXISTING_ANTI_AFFINITY_MISMATCH
    return None


_VERDICTS = (AFFINITY_MISMATCH, ANTI_AFFINITY_MISMATCH, EXISTING_ANTI_AFFINITY_MISMATCH)


def filter_rows(s: PreFilterState, cols: NodeColumns, rows: Int64s) -> BatchVerdict | None:
    """filter_node for many nodes: each check reads per-domain counts through the
    topology key's label column; a node's status is that of the first check it fails."""
    n = len(rows)
    verdict = np.zeros(n, dtype=np.int8)  # 0 passes, else 1 + index into _VERDICTS
    if s.affinity_terms:
        keys_present = np.ones(n, dtype=np.bool_)
        pods_exist = np.ones(n, dtype=np.bool_)
        for t in s.affinity_terms:
            column = cols.label(t.topology_key)
            keys_present &= column.codes[rows] >= 0
            pods_exist &= column.counts_at(s.affinity.get(t.topology_key, {}), rows) > 0
        # The first-pod rule of _satisfies_affinity, which is the same for every node.
        if not s.affinity and matches_all(s.affinity_terms, s.pod):
            pods_exist[:] = True
        verdict[~(keys_present & pods_exist)] = 1
    if s.anti:
        hit = np.zeros(n, dtype=np.bool_)
        for t in s.anti_affinity_terms:
            counts = s.anti.get(t.topology_key)
            if counts:
                hit |= cols.label(t.topology_key).counts_at(counts, rows) > 0
        verdict[hit & (verdict == 0)] = 2
    if s.existing_anti:
        hit = np.zeros(n, dtype=np.bool_)
        for key, counts in s.existing_anti.items():
            hit |= cols.label(key).counts_at(counts, rows) > 0
        verdict[hit & (verdict == 0)] = 3
    if not verdict.any():
        return None
    return BatchVerdict.coded(verdict, _VERDICTS)


PRE_FILTER_KEY: StateKey[PreFilterState] = StateKey("PreFilterInterPodAffinity")
