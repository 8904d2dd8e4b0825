"""StrongestCPU: "run this pod on the node with the most CPU" - the seed's VIP treatment.

Score is the node's allocatable amount of `args.resource` (CPU by default; memory or any
other resource name works the same way), a raw number in the resource's own units.
NormalizeScore then rescales min-max across the nodes being scored (the feasible ones):
the strongest node gets 100, the weakest 0, the others in proportion, and when all are
equally strong each gets 100. Min-max rather than kube-scheduler's proportional
DefaultNormalizeScore, because the wish is a ranking: with proportional scaling a 15-CPU
node would score 94 next to a 16-CPU node and other plugins could easily outvote it.

Fast form: `score_batch` reads the allocatable column (any resource name, extended ones
included) and `normalize_batch` rescales the array; `pod_key` is constant (the score
reads nothing of the pod), which signs every pod alike for opportunistic batching.

Allocatable, not free capacity: the article asks for the strongest machine, not the
emptiest one (NodeResourcesFit's LeastAllocated already scores that).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
from asched.api import Pod
from asched.framework import (
    MAX_NODE_SCORE,
    BatchScoreNormalizer,
    BatchScorePlugin,
    CycleState,
    Int64s,
    NodeColumns,
    NodeInfo,
    NodeScore,
    NodeStaticPlugin,
    PluginSpec,
    PodKey,
    ScoreNormalizer,
    ScorePlugin,
    Status,
)
from asched.framework.handle import Handle
from asched.plugins.helpers import check_fields

from asched_policies.args import read_resource

NAME = "StrongestCPU"


@dataclass(frozen=True, slots=True)
class StrongestCPUArgs:
    # Which allocatable resource makes a node "strong".
    resource: str = "cpu"

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("resource",), path)
        return cls(read_resource(raw, "resource", path, "cpu"))


Args = StrongestCPUArgs


def min_max_normalize(scores: list[NodeScore]) -> None:
    """Rescale in place so the lowest score becomes 0 and the highest MAX_NODE_SCORE."""
    if not scores:
        return
    low = min(s.score for s in scores)
    high = max(s.score for s in scores)
    if high == low:
        for s in scores:
            s.score = MAX_NODE_SCORE
        return
    span = high - low
    for s in scores:
        s.score = (s.score - low) * MAX_NODE_SCORE // span


def min_max_normalize_array(scores: Int64s) -> Int64s:
    """min_max_normalize over an array: the same integer arithmetic."""
    if not scores.size:
        return scores
    low, high = int(scores.min()), int(scores.max())
    if high == low:
        return np.full_like(scores, MAX_NODE_SCORE)
    out: Int64s = (scores - low) * MAX_NODE_SCORE // (high - low)
    return out


class StrongestCPU(
    ScorePlugin,
    ScoreNormalizer,
    BatchScorePlugin,
    BatchScoreNormalizer,
    NodeStaticPlugin,
):
    def __init__(self, args: StrongestCPUArgs | None, handle: Handle) -> None:
        self._resource = (args or StrongestCPUArgs()).resource
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return node_info.allocatable.get(self._resource)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        min_max_normalize(scores)
        return None

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        return cols.allocatable(self._resource, rows)

    def normalize_batch(self, state: CycleState, pod: Pod, scores: Int64s) -> Int64s:
        return min_max_normalize_array(scores)

    def pod_key(self, pod: Pod) -> PodKey:
        return ""


SPEC = PluginSpec(NAME, StrongestCPU, StrongestCPUArgs)
