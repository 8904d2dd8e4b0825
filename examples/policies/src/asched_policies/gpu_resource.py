"""GPUResource: bin-pack GPU pods onto few nodes, or spread them, by the GPUs left free.

A node's free GPUs are its allocatable `args.resourceName` (nvidia.com/gpu) minus what
its pods request (NodeInfo.requested). The score is kube-scheduler's per-resource
formula for the chosen strategy (noderesources mostRequestedScore / leastRequestedScore),
applied to the GPU resource alone, counting the incoming pod's request as placed:

- MostAllocated (pack, the default): 100 * used / allocatable, used capped at
  allocatable. Whole GPU nodes stay free for the pods that need many GPUs.
- LeastAllocated (spread): 100 * (allocatable - used) / allocatable, 0 when over.

Fast form: `score_batch` reads the allocatable and requested columns of the resource
(extended resources have columns too) and applies the same integer formula to arrays.
Not node-static: the score moves with the pods on the node. `sign_pod` signs the one
pod field it reads, the GPU request, so opportunistic batching stays on.

Nodes without the resource score 0 (NodeResourcesFit rejects them for GPU pods anyway).
Pods that request no GPU are not this plugin's business: PreScore answers Skip, and
Score (should PreScore be disabled) returns 0 everywhere, which ranks nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
from asched.api import Pod
from asched.framework import (
    MAX_NODE_SCORE,
    BatchScorePlugin,
    CycleState,
    Int64s,
    NodeColumns,
    NodeInfo,
    PluginSpec,
    PreScorePlugin,
    ScorePlugin,
    SignFragment,
    SignPlugin,
    StateKey,
    Status,
)
from asched.framework.handle import Handle
from asched.framework.signatures import SignResult
from asched.framework.status import skip
from asched.plugins.helpers import check_fields

from asched_policies.args import read_choice, read_resource

NAME = "GPUResource"
MOST_ALLOCATED = "MostAllocated"
LEAST_ALLOCATED = "LeastAllocated"
STRATEGIES = (MOST_ALLOCATED, LEAST_ALLOCATED)
DEFAULT_RESOURCE = "nvidia.com/gpu"

_SKIP = skip(NAME)
_REQUEST_KEY: StateKey[int] = StateKey("PreScore" + NAME)


@dataclass(frozen=True, slots=True)
class GPUResourceArgs:
    strategy: str = MOST_ALLOCATED
    resource_name: str = DEFAULT_RESOURCE

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("strategy", "resourceName"), path)
        return cls(
            read_choice(raw, "strategy", path, MOST_ALLOCATED, STRATEGIES),
            read_resource(raw, "resourceName", path, DEFAULT_RESOURCE, extended_only=True),
        )


Args = GPUResourceArgs


def most_allocated(used: int, allocatable: int) -> int:
    return MAX_NODE_SCORE * min(used, allocatable) // allocatable


def least_allocated(used: int, allocatable: int) -> int:
    if used > allocatable:
        return 0
    return MAX_NODE_SCORE * (allocatable - used) // allocatable


def most_allocated_array(used: Int64s, allocatable: Int64s) -> Int64s:
    safe = np.maximum(allocatable, 1)
    out: Int64s = MAX_NODE_SCORE * np.minimum(used, allocatable) // safe
    return out


def least_allocated_array(used: Int64s, allocatable: Int64s) -> Int64s:
    safe = np.maximum(allocatable, 1)
    out: Int64s = np.where(used > allocatable, 0, MAX_NODE_SCORE * (allocatable - used) // safe)
    return out


class GPUResource(PreScorePlugin, ScorePlugin, BatchScorePlugin, SignPlugin):
    def __init__(self, args: GPUResourceArgs | None, handle: Handle) -> None:
        self._args = args or GPUResourceArgs()
        self._resource = self._args.resource_name
        most = self._args.strategy == MOST_ALLOCATED
        self._formula = most_allocated if most else least_allocated
        self._array_formula = most_allocated_array if most else least_allocated_array
        self._fragment = f"asched.dev/{NAME}.request"
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def _request(self, pod: Pod) -> int:
        return pod.requests.scalar.get(self._resource, 0)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        request = self._request(pod)
        if request <= 0:
            return _SKIP
        state.write(_REQUEST_KEY, request)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        request = state.get(_REQUEST_KEY)
        if request is None:
            # PreScore disabled in this profile: work it out here.
            request = self._request(pod)
        if request <= 0:
            return 0
        allocatable = node_info.allocatable.scalar.get(self._resource, 0)
        if allocatable <= 0:
            return 0
        used = node_info.requested.scalar.get(self._resource, 0) + request
        return self._formula(used, allocatable)

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        request = state.get(_REQUEST_KEY)
        if request is None:
            request = self._request(pod)
        if request <= 0:
            return np.zeros(len(rows), dtype=np.int64)
        allocatable = cols.allocatable(self._resource, rows)
        used = cols.requested(self._resource, rows) + request
        scores = self._array_formula(used, allocatable)
        out: Int64s = np.where(allocatable > 0, scores, 0)
        return out

    def sign_pod(self, pod: Pod) -> SignResult:
        return (SignFragment(self._fragment, self._request(pod)),)


SPEC = PluginSpec(NAME, GPUResource, GPUResourceArgs)
