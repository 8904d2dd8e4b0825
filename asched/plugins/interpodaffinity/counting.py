"""Topology pair counts over the cluster for InterPodAffinity's PreFilter and PreScore.

Each function here defines what one node contributes (the pairs its pods add); the sums
are computed from scratch, or through a NodeMemo so that only nodes changed since the last
cycle of a pod of the same shape are revisited, and within a revisited node only the pods
not seen there before (PodPairs over podfold.py). Memo keys hold everything a contribution
depends on besides the node: the incoming pod's namespace, and its labels and its
namespace's labels (a namespace relabel moves no node generation) restricted to the keys
existing pods' terms read (readkeys.py), or its resolved terms.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from asched.api import Pod
from asched.api.affinity import PodAffinityTerm
from asched.framework.nodeinfo import NodeInfo
from asched.plugins.interpodaffinity.podfold import PodFold
from asched.plugins.interpodaffinity.readkeys import ReadKeys
from asched.plugins.interpodaffinity.terms import (
    ResolvedTerm,
    WeightedTerm,
    matches_all,
    required_terms,
    term_matches,
)
from asched.plugins.nodememo import MemoCache, NodeMemo

# topology key -> topology value -> count (or summed weight)
TopologyCounts = dict[str, dict[str, int]]
# ((topology key, topology value), amount), once per matching pod and term on a node.
Pairs = tuple[tuple[tuple[str, str], int], ...]


class PairSums:
    """Sums of pairs, with how many contributions touch each pair.

    A pair stays present while some contribution touches it, even when its sum is 0: the
    full computation creates an entry for every matching term, and emptiness is meaningful
    (the first-pod rule, PreScore's Skip).
    """

    __slots__ = ("refs", "sums")

    def __init__(self) -> None:
        self.sums: TopologyCounts = {}
        self.refs: dict[tuple[str, str], int] = {}

    def apply(self, old: Pairs | None, new: Pairs | None) -> None:
        if old is not None:
            self._add(old, -1)
        if new is not None:
            self._add(new, 1)

    def _add(self, pairs: Pairs, sign: int) -> None:
        sums, refs = self.sums, self.refs
        for (key, value), amount in pairs:
            ref = refs.get((key, value), 0) + sign
            values = sums.get(key)
            if values is None:
                values = sums[key] = {}
            if ref:
                refs[(key, value)] = ref
                values[value] = values.get(value, 0) + sign * amount
            else:
                del refs[(key, value)]
                del values[value]
                if not values:
                    del sums[key]

    def copy(self) -> TopologyCounts:
        return {k: dict(v) for k, v in self.sums.items()}


def _sum(
    nodes: Sequence[NodeInfo],
    contribution: NodeContribution,
    memo: MemoCache[MemoEntry] | None,
    key: Hashable,
) -> TopologyCounts:
    if memo is None:
        agg = PairSums()
        for ni in nodes:
            agg.apply(None, contribution(ni))
        return agg.sums
    node_memo, agg, pods = memo.get_or_create(
        key, lambda: (NodeMemo[Pairs](), PairSums(), PodPairs())
    )
    node_memo.refresh(nodes, lambda ni: pods.node(ni, contribution), agg.apply)
    # A copy: AddPod/RemovePod mutate the cycle's counts, never the shared aggregate.
    return agg.copy()


class PodPairs:
    """Each node's pairs, summed per topology pair, folded pod by pod (podfold.py) so that
    a recompute after a bind matches the terms of the new pod only."""

    __slots__ = ("_fold",)

    def __init__(self) -> None:
        self._fold = PodFold[Pairs, dict[tuple[str, str], int]](dict, _add_pairs)

    def node(self, ni: NodeInfo, contribution: NodeContribution) -> Pairs | None:
        """`contribution(ni)`, with amounts summed per topology pair. A pair whose amounts
        cancel stays, at 0: PairSums keeps a pair present while a contribution touches it."""
        node = ni.node
        if node is None:
            self._fold.forget(ni.name)
            return None
        pods = contribution.pods(ni)
        if len(pods) <= 1:
            # Nothing to reuse on a node of one pod (anti-affinity by hostname makes most
            # nodes so): its pairs as they are. The fold checks every pod and its scope
            # whenever it is used, so skipping it here never leaves it wrong.
            return (contribution.pod_pairs(pods[0], node.labels) or None) if pods else None
        sums = self._fold.fold(ni.name, node.labels, pods, contribution.pod_pairs)
        return tuple(sums.items()) or None


def _add_pairs(sums: dict[tuple[str, str], int], pairs: Pairs) -> None:
    for pair, amount in pairs:
        sums[pair] = sums.get(pair, 0) + amount


class NodeContribution:
    """What one node contributes: the pairs of each of its pods (`pods`) in turn.

    `__call__` is the full computation; a memo (PodPairs) calls `pod_pairs` only for the
    pods that changed. A pair's amount may depend on the pod, the node's labels and what
    the memo key holds, never on the node's other pods.
    """

    def pods(self, ni: NodeInfo) -> Sequence[Pod]:
        raise NotImplementedError

    def pod_pairs(self, ep: Pod, labels: Mapping[str, str]) -> Pairs:
        raise NotImplementedError

    def __call__(self, ni: NodeInfo) -> Pairs | None:
        if ni.node is None:
            return None
        labels = ni.node.labels
        out: list[tuple[tuple[str, str], int]] = []
        for ep in self.pods(ni):
            out += self.pod_pairs(ep, labels)
        return tuple(out) or None


MemoEntry = tuple[NodeMemo[Pairs], PairSums, PodPairs]


class _ExistingAntiAffinity(NodeContribution):
    """Existing pods' required anti-affinity terms that the incoming pod matches."""

    def __init__(self, pod: Pod, ns_labels: Mapping[str, str]) -> None:
        self.pod, self.ns_labels = pod, ns_labels

    def pods(self, ni: NodeInfo) -> Sequence[Pod]:
        return ni.pods_with_required_anti_affinity

    def pod_pairs(self, ep: Pod, labels: Mapping[str, str]) -> Pairs:
        a = ep.affinity
        out = []
        for t in required_terms(a.pod_anti_affinity if a is not None else None):
            value = labels.get(t.topology_key)
            if value is not None and term_matches(t, ep.namespace, self.pod, self.ns_labels):
                out.append(((t.topology_key, value), 1))
        return tuple(out)


class _Incoming(NodeContribution):
    """Existing pods matching all the incoming pod's affinity terms, or one anti-affinity term."""

    def __init__(self, terms: tuple[ResolvedTerm, ...], anti: bool) -> None:
        self.terms, self.anti = terms, anti

    def pods(self, ni: NodeInfo) -> Sequence[Pod]:
        return ni.pods if self.terms else ()

    def pod_pairs(self, ep: Pod, labels: Mapping[str, str]) -> Pairs:
        if self.anti:
            matched = [t for t in self.terms if t.matches(ep)]
        else:
            matched = list(self.terms) if matches_all(self.terms, ep) else []
        out = []
        for t in matched:
            value = labels.get(t.topology_key)
            if value is not None:
                out.append(((t.topology_key, value), 1))
        return tuple(out)


def _shape(
    pod: Pod,
    ns_labels: Mapping[str, str],
    nodes: Sequence[NodeInfo],
    memo: MemoCache[MemoEntry] | None,
    read_keys: ReadKeys | None,
) -> Hashable:
    """The incoming pod as existing pods' terms on `nodes` see it: the memo key's pod part."""
    if memo is None:
        return None
    if read_keys is None:
        return (pod.namespace, frozenset(pod.labels.items()), frozenset(ns_labels.items()))
    read_keys.refresh(nodes)
    return read_keys.shape(pod, ns_labels)


def count_existing_anti_affinity(
    pod: Pod,
    ns_labels: Mapping[str, str],
    nodes: Sequence[NodeInfo],
    memo: MemoCache[MemoEntry] | None = None,
    read_keys: ReadKeys | None = None,
) -> TopologyCounts:
    """`read_keys` (reading required anti-affinity terms) narrows the memo key; without it
    the key holds all the pod's labels."""
    key = ("existing-anti", _shape(pod, ns_labels, nodes, memo, read_keys))
    return _sum(nodes, _ExistingAntiAffinity(pod, ns_labels), memo, key)


def count_incoming(
    terms: tuple[ResolvedTerm, ...],
    anti: bool,
    nodes: Sequence[NodeInfo],
    memo: MemoCache[MemoEntry] | None = None,
) -> TopologyCounts:
    if not terms:
        return {}
    return _sum(nodes, _Incoming(terms, anti), memo, (anti, terms))


class _Scores(NodeContribution):
    """Weights of matching terms, both the incoming pod's and the existing pods' (scoring.go)."""

    def __init__(
        self,
        pod: Pod,
        preferred: Sequence[WeightedTerm],
        preferred_anti: Sequence[WeightedTerm],
        *,
        ns_labels: Mapping[str, str],
        all_pods: bool,
        hard_weight: int,
    ) -> None:
        self.pod, self.preferred, self.preferred_anti = pod, preferred, preferred_anti
        self.ns_labels, self.all_pods, self.hard_weight = ns_labels, all_pods, hard_weight

    def pods(self, ni: NodeInfo) -> Sequence[Pod]:
        if ni.node is None or not ni.node.labels:
            return ()  # no topology key to count under
        return ni.pods if self.all_pods else ni.pods_with_affinity

    def pod_pairs(self, ep: Pod, labels: Mapping[str, str]) -> Pairs:
        out: list[tuple[tuple[str, str], int]] = []

        def add(key: str, weight: int) -> None:
            value = labels.get(key)
            if value is not None:
                out.append(((key, value), weight))

        # The incoming pod's preferred terms, matched against the existing pod.
        for wt in self.preferred:
            if wt.term.matches(ep):
                add(wt.term.topology_key, wt.weight)
        for wt in self.preferred_anti:
            if wt.term.matches(ep):
                add(wt.term.topology_key, -wt.weight)
        # The existing pod's terms, matched against the incoming pod.
        a = ep.affinity
        if a is None:
            return tuple(out)
        weighted: list[tuple[int, PodAffinityTerm]] = []
        if a.pod_affinity is not None:
            if self.hard_weight > 0:
                weighted += [(self.hard_weight, t) for t in a.pod_affinity.required]
            weighted += [(w.weight, w.term) for w in a.pod_affinity.preferred]
        if a.pod_anti_affinity is not None:
            weighted += [(-w.weight, w.term) for w in a.pod_anti_affinity.preferred]
        for weight, t in weighted:
            if term_matches(t, ep.namespace, self.pod, self.ns_labels):
                add(t.topology_key, weight)
        return tuple(out)


def sum_scores(
    pod: Pod,
    *,
    preferred: tuple[WeightedTerm, ...],
    preferred_anti: tuple[WeightedTerm, ...],
    ns_labels: Mapping[str, str],
    nodes: Sequence[NodeInfo],
    all_pods: bool,
    hard_weight: int,
    memo: MemoCache[MemoEntry] | None = None,
    read_keys: ReadKeys | None = None,
) -> TopologyCounts:
    """`read_keys` (reading the terms scored_terms gives) narrows the memo key."""
    key = (
        _shape(pod, ns_labels, nodes, memo, read_keys),
        preferred,
        preferred_anti,
        all_pods,
        hard_weight,
    )
    contribution = _Scores(
        pod,
        preferred,
        preferred_anti,
        ns_labels=ns_labels,
        all_pods=all_pods,
        hard_weight=hard_weight,
    )
    return _sum(nodes, contribution, memo, key)
