"""The label keys existing pods' terms can read, so that memo keys hold only those.

What an existing pod's term says about the incoming pod depends on the incoming pod's
namespace, on the values (or absence) of the label keys the term's label selector names,
and on the values of the namespace label keys its namespaceSelector names; an
Exists/DoesNotExist/NotIn requirement reads its key as much as In does. Keying
InterPodAffinity's memos by the incoming pod's whole label set missed on every pod that
carries a label of its own (scheduler_perf's `signature` label, a pod-template-hash): the
memo is keyed instead by the projection of the labels onto the keys some term reads.

Why that is exact: a memoized node's contribution was computed with an earlier pod whose
projection onto the keys read at that time equals the current pod's projection onto the
keys read now. The node did not change since (or it would be recomputed), so its terms'
keys belong to both sets, and both pods agree on them. The key sets must therefore cover
every node the memo is refreshed over, which `refresh` guarantees by being a NodeMemo over
the same node list.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence

from asched.api import Pod
from asched.api.affinity import PodAffinityTerm
from asched.framework.nodeinfo import NodeInfo
from asched.plugins.interpodaffinity.podfold import PodFold
from asched.plugins.nodememo import NodeMemo

# (label keys, namespace label keys) read by the terms of one node's pods.
_Keys = tuple[frozenset[str], frozenset[str]]


class ReadKeys:
    """Label keys read by the terms `terms_of` gives for a node's pods, over a node list.

    Each key is counted once per node that reads it, so it leaves when the last node whose
    pods read it changes or goes.
    """

    __slots__ = ("_fold", "_memo", "_ns_refs", "_refs", "_terms_of")

    def __init__(self, terms_of: Callable[[Pod], Iterable[PodAffinityTerm]]) -> None:
        self._terms_of = terms_of
        self._memo = NodeMemo[_Keys]()
        self._refs: dict[str, int] = {}
        self._ns_refs: dict[str, int] = {}
        # Per node, the union of the keys its pods' terms read.
        self._fold = PodFold[_Keys, tuple[set[str], set[str]]](_new_keys, _add_keys)

    def refresh(self, nodes: Sequence[NodeInfo]) -> None:
        """Bring the key sets up to `nodes` (only nodes changed since the last call)."""
        self._memo.refresh(nodes, self._node_keys, self._apply)

    def shape(self, pod: Pod, ns_labels: Mapping[str, str]) -> Hashable:
        """The incoming pod as the terms of the last `refresh`'s nodes see it."""
        refs, ns_refs = self._refs, self._ns_refs
        return (
            pod.namespace,
            frozenset(kv for kv in pod.labels.items() if kv[0] in refs),
            frozenset(kv for kv in ns_labels.items() if kv[0] in ns_refs),
        )

    def _node_keys(self, ni: NodeInfo) -> _Keys | None:
        # A node is recomputed when one of its pods changes: only new pods' terms are read
        # (podfold.py). Keys do not depend on the node, so the fold has no scope.
        pods = ni.pods_with_affinity
        if len(pods) <= 1:
            # One pod: nothing to reuse (the fold checks its pods whenever it is used).
            if not pods:
                return None
            one = self._keys_of(pods[0], None)
            return one if one[0] or one[1] else None
        keys, ns_keys = self._fold.fold(ni.name, None, pods, self._keys_of)
        if not keys and not ns_keys:
            return None
        return frozenset(keys), frozenset(ns_keys)

    def _keys_of(self, ep: Pod, _scope: None) -> _Keys:
        keys: set[str] = set()
        ns_keys: set[str] = set()
        for t in self._terms_of(ep):
            if t.label_selector is not None:
                keys.update(r.key for r in t.label_selector.requirements)
            if t.namespace_selector is not None:
                ns_keys.update(r.key for r in t.namespace_selector.requirements)
        return frozenset(keys), frozenset(ns_keys)

    def _apply(self, old: _Keys | None, new: _Keys | None) -> None:
        if new is not None:
            _count(self._refs, new[0], 1)
            _count(self._ns_refs, new[1], 1)
        if old is not None:
            _count(self._refs, old[0], -1)
            _count(self._ns_refs, old[1], -1)


def _new_keys() -> tuple[set[str], set[str]]:
    return set(), set()


def _add_keys(acc: tuple[set[str], set[str]], keys: _Keys) -> None:
    acc[0].update(keys[0])
    acc[1].update(keys[1])


def _count(refs: dict[str, int], keys: frozenset[str], sign: int) -> None:
    for k in keys:
        n = refs.get(k, 0) + sign
        if n:
            refs[k] = n
        else:
            del refs[k]


def required_anti_affinity_terms(pod: Pod) -> tuple[PodAffinityTerm, ...]:
    """The terms Filter's existing anti-affinity counts read (satisfyExistingPodsAntiAffinity)."""
    a = pod.affinity
    pa = a.pod_anti_affinity if a is not None else None
    return pa.required if pa is not None else ()


def scored_terms(pod: Pod) -> tuple[PodAffinityTerm, ...]:
    """The terms of an existing pod that PreScore weighs (processExistingPod): required and
    preferred affinity, preferred anti-affinity. Required affinity is included whatever
    hardPodAffinityWeight is; a key read needlessly only makes the memo key finer."""
    a = pod.affinity
    if a is None:
        return ()
    out: list[PodAffinityTerm] = []
    if a.pod_affinity is not None:
        out += a.pod_affinity.required
        out += (w.term for w in a.pod_affinity.preferred)
    if a.pod_anti_affinity is not None:
        out += (w.term for w in a.pod_anti_affinity.preferred)
    return tuple(out)
