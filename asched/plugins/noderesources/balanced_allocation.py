"""NodeResourcesBalancedAllocation: favour nodes whose resource usage the pod balances.

Mirrors kube-scheduler v1.37 plugins/noderesources/balanced_allocation.go:
- PreScore computes the pod's real requests (not the non-zero defaults) per configured
  resource (cpu and memory by default) and answers Skip for a pod that requests none of
  them (kubernetes#129138: scoring best-effort pods piled them onto one node).
- Score compares the balance of the node's usage fractions (1 - their standard
  deviation) with the pod and without it (kubernetes#135573, v1.36+), giving 50..100:
  75 when the pod leaves the balance unchanged. Node requests are the real Requested.
- No normalization, no enqueue events (it never rejects).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from asched.api import Pod
from asched.framework.columns import Int64s, NodeColumns, Unbatchable
from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.handle import Handle
from asched.framework.interfaces import PreScorePlugin, ScorePlugin
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import SignResult
from asched.framework.status import Status, skip
from asched.plugins.deviceclasses import DEVICE_CLASSES
from asched.plugins.noderesources import array_scorers
from asched.plugins.noderesources.allocation import (
    ScoredResource,
    allocatable_and_requested,
    is_cpu_memory,
    pod_requests,
    scored_resources,
)
from asched.plugins.noderesources.args import BalancedAllocationArgs
from asched.plugins.noderesources.dra_totals import DraTotals, dra_totals, for_node
from asched.plugins.noderesources.dra_totals import informers as dra_informers
from asched.plugins.noderesources.rowscores import RowScores
from asched.plugins.noderesources.scorers import (
    balanced_improvement,
    balanced_improvement_pair,
)
from asched.plugins.noderesources.signing import sign_requests

NAME = "NodeResourcesBalancedAllocation"
Args = BalancedAllocationArgs

_PRE_SCORE_KEY: StateKey[tuple[int, ...]] = StateKey("PreScore" + NAME)
_DRA_KEY: StateKey[DraTotals] = StateKey("PreScoreDRA" + NAME)
_SKIP = skip(NAME)


class BalancedAllocation(PreScorePlugin, ScorePlugin):
    def __init__(self, args: BalancedAllocationArgs | None, handle: Handle) -> None:
        self._args = args or BalancedAllocationArgs()
        self._handle = handle
        self._resources: tuple[ScoredResource, ...] = scored_resources(self._args.resources)
        self._cpu_memory = is_cpu_memory(self._resources)
        self._row_scores = RowScores()

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """BalancedAllocation.SignPod."""
        return sign_requests(pod, self._handle, NAME)

    def informers(self) -> Sequence[InformerRequest[Any]]:
        # DeviceClasses: sign_pod asks whether one provides a requested resource.
        scored = dra_informers([r.name for r in self._resources])
        return (DEVICE_CLASSES, *(i for i in scored if i is not DEVICE_CLASSES))

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = pod_requests(pod, self._resources, use_requested=True)
        if not any(requests):
            return _SKIP
        state.write(_PRE_SCORE_KEY, requests)
        if not self._cpu_memory:
            totals = dra_totals(self._handle, [r.name for r in self._resources])
            if totals is not None:
                state.write(_DRA_KEY, totals)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        requests = state.get(_PRE_SCORE_KEY)
        totals = state.get(_DRA_KEY)
        if requests is None:
            # PreScore disabled in this profile: compute here, as kube-scheduler does.
            requests = pod_requests(pod, self._resources, use_requested=True)
            if not any(requests):
                return 0
            totals = dra_totals(self._handle, [r.name for r in self._resources])
        if self._cpu_memory:
            # The default resources: score without building per-resource vectors.
            alloc, used = node_info.allocatable, node_info.requested
            p0, p1 = requests
            return balanced_improvement_pair(
                used.milli_cpu + p0, alloc.milli_cpu, used.memory + p1, alloc.memory, p0=p0, p1=p1
            )
        allocatable, requested = allocatable_and_requested(
            node_info,
            self._resources,
            requests,
            use_requested=True,
            dra=for_node(totals, node_info.node),
        )
        allocated = [
            r - p if a else 0 for a, r, p in zip(allocatable, requested, requests, strict=True)
        ]
        return balanced_improvement(requested, allocated, allocatable)

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        if not self._cpu_memory:
            raise Unbatchable
        requests = state.get(_PRE_SCORE_KEY)
        if requests is None:
            requests = pod_requests(pod, self._resources, use_requested=True)
            if not any(requests):
                return np.zeros(len(rows), dtype=np.int64)
        p0, p1 = requests
        positive = cols.cpu_memory_everywhere

        def compute(at: Int64s) -> Int64s:
            return array_scorers.balanced_improvement_pair(
                cols.req_cpu[at] + p0,
                cols.alloc_cpu[at],
                cols.req_mem[at] + p1,
                cols.alloc_mem[at],
                p0=p0,
                p1=p1,
                positive=positive,
            )

        # Only the rows that changed since a pod with these requests was scored.
        return self._row_scores.scores(
            (p0, p1), cols, rows, per_rows=compute, per_node=lambda ni: self.score(state, pod, ni)
        )


SPEC = PluginSpec(NAME, BalancedAllocation, BalancedAllocationArgs)
