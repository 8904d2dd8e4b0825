"""The cpu+memory score formulas of scorers.py, over numpy arrays of nodes.

Each function is the array form of a `pair` method there, step for step: the same int64
arithmetic (floor division of non-negative values is Go's truncating division) and the
same float64 operations in the same order, so every element equals the scalar result.
tests/unit/plugins/noderesources/test_array_scorers.py checks that with hypothesis.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from asched.framework.columns import Int64s
from asched.framework.types import MAX_NODE_SCORE

_MAX_UTILIZATION = 100  # scorers._MAX_UTILIZATION


class PairScorer(Protocol):
    def __call__(
        self, r0: Int64s, a0: Int64s, r1: Int64s, a1: Int64s, *, w0: int, w1: int
    ) -> Int64s: ...


def _safe(a: Int64s) -> Int64s:
    """Denominators with 0 replaced by 1; callers mask those rows out."""
    return np.where(a == 0, 1, a)


def least_allocated_pair(
    r0: Int64s, a0: Int64s, r1: Int64s, a1: Int64s, *, w0: int, w1: int
) -> Int64s:
    """LeastAllocated.pair: (capacity - requested) / capacity, weighted mean."""
    s0 = np.where((a0 == 0) | (r0 > a0), 0, (a0 - r0) * MAX_NODE_SCORE // _safe(a0))
    s1 = np.where((a1 == 0) | (r1 > a1), 0, (a1 - r1) * MAX_NODE_SCORE // _safe(a1))
    return _weighted_mean(s0, a0, s1, a1, w0=w0, w1=w1)


def most_allocated_pair(
    r0: Int64s, a0: Int64s, r1: Int64s, a1: Int64s, *, w0: int, w1: int
) -> Int64s:
    """MostAllocated.pair: requested (capped at capacity) / capacity, weighted mean."""
    s0 = np.where(a0 == 0, 0, np.minimum(r0, a0) * MAX_NODE_SCORE // _safe(a0))
    s1 = np.where(a1 == 0, 0, np.minimum(r1, a1) * MAX_NODE_SCORE // _safe(a1))
    return _weighted_mean(s0, a0, s1, a1, w0=w0, w1=w1)


def requested_to_capacity_pair(raw: Callable[[int], int]) -> PairScorer:
    """RequestedToCapacityRatio.pair over arrays. Utilization is an integer in [0, 100],
    so the broken-linear function is tabulated once and looked up per node."""
    lut = np.array([raw(u) for u in range(_MAX_UTILIZATION + 1)], dtype=np.int64)

    def resource(r: Int64s, a: Int64s) -> Int64s:
        util = np.where(
            (a <= 0) | (r <= 0),
            0,
            np.where(r >= a, _MAX_UTILIZATION, r * _MAX_UTILIZATION // _safe(a)),
        )
        # requested > capacity scores as full utilization (_resource_score).
        out: Int64s = np.where(r > a, lut[_MAX_UTILIZATION], lut[util])
        return out

    def pair(r0: Int64s, a0: Int64s, r1: Int64s, a1: Int64s, *, w0: int, w1: int) -> Int64s:
        s0, s1 = resource(r0, a0), resource(r1, a1)
        c0, c1 = (a0 != 0) & (s0 > 0), (a1 != 0) & (s1 > 0)
        score = np.where(c0, s0 * w0, 0) + np.where(c1, s1 * w1, 0)
        weight_sum = np.where(c0, w0, 0) + np.where(c1, w1, 0)
        mean = score.astype(np.float64) / _safe(weight_sum).astype(np.float64)
        rounded = np.where(mean >= 0, np.floor(mean + 0.5), -np.floor(-mean + 0.5))
        out: Int64s = np.where(weight_sum == 0, 0, rounded.astype(np.int64))
        return out

    return pair


def _weighted_mean(s0: Int64s, a0: Int64s, s1: Int64s, a1: Int64s, *, w0: int, w1: int) -> Int64s:
    score = np.where(a0 != 0, s0 * w0, 0) + np.where(a1 != 0, s1 * w1, 0)
    weight_sum = np.where(a0 != 0, w0, 0) + np.where(a1 != 0, w1, 0)
    out: Int64s = np.where(weight_sum == 0, 0, score // _safe(weight_sum))
    return out


def balanced_improvement_pair(
    r0: Int64s, a0: Int64s, r1: Int64s, a1: Int64s, *, p0: int, p1: int
) -> Int64s:
    """scorers.balanced_improvement_pair for every node (r: requested incl. the pod)."""
    half = MAX_NODE_SCORE // 2
    both = (a0 != 0) & (a1 != 0)
    fa0 = _safe(a0).astype(np.float64)
    fa1 = _safe(a1).astype(np.float64)
    f0 = r0.astype(np.float64) / fa0
    f1 = r1.astype(np.float64) / fa1
    g0 = (r0 - p0).astype(np.float64) / fa0
    g1 = (r1 - p1).astype(np.float64) / fa1
    d_with = np.abs(np.minimum(f0, 1.0) - np.minimum(f1, 1.0))
    d_without = np.abs(np.minimum(g0, 1.0) - np.minimum(g1, 1.0))
    top = float(MAX_NODE_SCORE)
    with_pod = np.trunc((1 - d_with / 2) * top).astype(np.int64)
    without_pod = np.trunc((1 - d_without / 2) * top).astype(np.int64)
    diff = half + with_pod - without_pod
    # Go's truncating division by 2 (diff may be negative).
    halved = np.where(diff >= 0, diff // 2, -(-diff // 2))
    out: Int64s = np.where(both, half + halved, half + half // 2)
    return out
