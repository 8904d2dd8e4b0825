"""InterPodAffinity's PreScore state and scores (kube-scheduler scoring.go).

PreScore sums weights per topology pair (key -> value -> score) over existing pods:
+weight for each of the incoming pod's preferred affinity terms an existing pod matches,
-weight for its preferred anti-affinity terms; +hardPodAffinityWeight for each required
affinity term of an existing pod that the incoming pod matches, and +/-weight for the
existing pod's preferred (anti-)affinity terms that the incoming pod matches. Unless the
incoming pod has preferred terms, only pods with (anti-)affinity can contribute, so only
those are visited (the sums are computed, and memoized across cycles, in counting.py).
A node's score is the sum over the pairs it carries; NormalizeScore maps [min, max] onto
[0, 100].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from asched.framework.columns import Int64s, NodeColumns
from asched.framework.cycle_state import StateKey
from asched.framework.types import MAX_NODE_SCORE, NodeScore

# topology key -> topology value -> summed weight (sums are computed in counting.py)
ScoreMap = dict[str, dict[str, int]]


@dataclass(slots=True)
class PreScoreState:
    topology_score: ScoreMap


def node_score(s: PreScoreState, labels: Mapping[str, str]) -> int:
    score = 0
    for key, values in s.topology_score.items():
        value = labels.get(key)
        if value is not None:
            score += values.get(value, 0)
    return score


def score_rows(s: PreScoreState, cols: NodeColumns, rows: Int64s) -> Int64s:
    """node_score for many nodes: each key's sums, read through its label column."""
    out = np.zeros(len(rows), dtype=np.int64)
    for key, values in s.topology_score.items():
        out += cols.label(key).counts_at(values, rows)
    return out


def normalize_array(s: PreScoreState, scores: Int64s) -> Int64s:
    """normalize over an array, with the same float arithmetic."""
    if not s.topology_score or not scores.size:
        return scores
    lo, hi = int(scores.min()), int(scores.max())
    diff = hi - lo
    if diff <= 0:
        return np.zeros(len(scores), dtype=np.int64)
    out: Int64s = (MAX_NODE_SCORE * ((scores - lo) / diff)).astype(np.int64)
    return out


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
