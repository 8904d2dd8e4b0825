"""InterPodAffinity's PreScore state and scores (kube-scheduler scoring.go).

PreScore sums weights per topology pair (key -> value -> score) over existing pods:
+weight for each of the incoming pod's preferred affinity terms an existing pod matches,
-weight for its preferred anti-affinity terms; +hardPodAffinityWeight for each required
affinity term of an existing pod that the incoming pod matches, and +/-weight for the
existing pod's preferred (anti-)affinity terms that the incoming pod matches. Unless the
incoming pod has preferred terms, only pods with (anti-)affinity can contribute, so only
those are visited. A node's score is the sum over the pairs it carries; NormalizeScore
maps [min, max] onto [0, 100].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from asched.api import Pod
from asched.api.affinity import PodAffinityTerm
from asched.framework.cycle_state import StateKey
from asched.framework.nodeinfo import NodeInfo
from asched.framework.types import MAX_NODE_SCORE, NodeScore
from asched.plugins.interpodaffinity.terms import WeightedTerm, term_matches

# topology key -> topology value -> summed weight
ScoreMap = dict[str, dict[str, int]]


@dataclass(slots=True)
class PreScoreState:
    topology_score: ScoreMap


def _add(m: ScoreMap, labels: Mapping[str, str], key: str, weight: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    values = m.get(key)
    if values is None:
        values = m[key] = {}
    values[value] = values.get(value, 0) + weight


def compute_topology_score(
    pod: Pod,
    *,
    preferred_affinity: Sequence[WeightedTerm],
    preferred_anti_affinity: Sequence[WeightedTerm],
    namespace_labels: Mapping[str, str],
    nodes: Sequence[NodeInfo],
    all_pods: bool,
    hard_pod_affinity_weight: int,
) -> ScoreMap:
    m: ScoreMap = {}
    for ni in nodes:
        node = ni.node
        if node is None or not node.labels:
            continue
        labels = node.labels
        for ep in ni.pods if all_pods else ni.pods_with_affinity:
            # The incoming pod's preferred terms, matched against the existing pod.
            for wt in preferred_affinity:
                if wt.term.matches(ep):
                    _add(m, labels, wt.term.topology_key, wt.weight)
            for wt in preferred_anti_affinity:
                if wt.term.matches(ep):
                    _add(m, labels, wt.term.topology_key, -wt.weight)
            # The existing pod's terms, matched against the incoming pod.
            a = ep.affinity
            if a is None:
                continue
            weighted: list[tuple[int, PodAffinityTerm]] = []
            if a.pod_affinity is not None:
                if hard_pod_affinity_weight > 0:
                    weighted += [(hard_pod_affinity_weight, t) for t in a.pod_affinity.required]
                weighted += [(w.weight, w.term) for w in a.pod_affinity.preferred]
            if a.pod_anti_affinity is not None:
                weighted += [(-w.weight, w.term) for w in a.pod_anti_affinity.preferred]
            for weight, t in weighted:
                if term_matches(t, ep.namespace, pod, namespace_labels):
                    _add(m, labels, t.topology_key, weight)
    return m


def node_score(s: PreScoreState, labels: Mapping[str, str]) -> int:
    score = 0
    for key, values in s.topology_score.items():
        value = labels.get(key)
        if value is not None:
            score += values.get(value, 0)
    return score


def normalize(s: PreScoreState, scores: list[NodeScore]) -> None:
    if not s.topology_score or not scores:
        return
    lo = min(ns.score for ns in scores)
    hi = max(ns.score for ns in scores)
    diff = hi - lo
    for ns in scores:
        # Same float arithmetic as upstream, truncated like Go's int64(float).
        ns.score = int(MAX_NODE_SCORE * ((ns.score - lo) / diff)) if diff > 0 else 0


PRE_SCORE_KEY: StateKey[PreScoreState] = StateKey("PreScoreInterPodAffinity")
