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
        self,
        r0: Int64s,
        a0: Int64s,
        r1: Int64s,
        a1: Int64s,
        *,
        w0: int,
        w1: int,
        positive: bool | None = None,
    ) -> Int64s: ...


def _safe(a: Int64s) -> Int64s:
    """Denominators with 0 replaced by 1; callers mask those rows out."""
    return np.where(a == 0, 1, a)


def _all_positive(a0: Int64s, a1: Int64s, known: bool | None) -> bool:
    """Every node has both allocatables (the usual case): the fast forms below apply.
    `known` is the caller's answer when it has one (NodeColumns.cpu_memory_everywhere
    holds for any rows of the columns); None asks the arrays."""
    if known is not None:
        return known
    return bool(a0.size) and int(a0.min()) > 0 and int(a1.min()) > 0


def least_allocated_pair(
    r0: Int64s,
    a0: Int64s,
    r1: Int64s,
    a1: Int64s,
    *,
    w0: int,
    w1: int,
    positive: bool | None = None,
) -> Int64s:
    """LeastAllocated.pair: (capacity - requested) / capacity, weighted mean."""
    if _all_positive(a0, a1, positive):
        # With capacity > 0, requested > capacity gives a negative floor quotient, which
        # clamps to the 0 the general form picks; a third of the array operations.
        s0 = a0 - r0
        s0 *= MAX_NODE_SCORE
        s0 //= a0
        s1 = a1 - r1
        s1 *= MAX_NODE_SCORE
        s1 //= a1
        return _mean_of_positive(np.maximum(s0, 0, out=s0), np.maximum(s1, 0, out=s1), w0, w1)
    s0 = np.where((a0 == 0) | (r0 > a0), 0, (a0 - r0) * MAX_NODE_SCORE // _safe(a0))
    s1 = np.where((a1 == 0) | (r1 > a1), 0, (a1 - r1) * MAX_NODE_SCORE // _safe(a1))
    return _weighted_mean(s0, a0, s1, a1, w0=w0, w1=w1)


def most_allocated_pair(
    r0: Int64s,
    a0: Int64s,
    r1: Int64s,
    a1: Int64s,
    *,
    w0: int,
    w1: int,
    positive: bool | None = None,
) -> Int64s:
    """MostAllocated.pair: requested (capped at capacity) / capacity, weighted mean."""
    if _all_positive(a0, a1, positive):
        s0 = np.minimum(r0, a0)
        s0 *= MAX_NODE_SCORE
        s0 //= a0
        s1 = np.minimum(r1, a1)
        s1 *= MAX_NODE_SCORE
        s1 //= a1
        return _mean_of_positive(s0, s1, w0, w1)
    s0 = np.where(a0 == 0, 0, np.minimum(r0, a0) * MAX_NODE_SCORE // _safe(a0))
    s1 = np.where(a1 == 0, 0, np.minimum(r1, a1) * MAX_NODE_SCORE // _safe(a1))
    return _weighted_mean(s0, a0, s1, a1, w0=w0, w1=w1)


def requested_to_capacity_pair(raw: Callable[[int], int]) -> PairScorer:
    """RequestedToCapacityRatio.pair over arrays. Utilization is an integer in [0, 100],
    so the broken-linear function is tabulated once and looked up per node. It has one
    form (`positive` is accepted and not needed)."""
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

    def pair(
        r0: Int64s,
        a0: Int64s,
        r1: Int64s,
        a1: Int64s,
        *,
        w0: int,
        w1: int,
        positive: bool | None = None,
    ) -> Int64s:
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


def _mean_of_positive(s0: Int64s, s1: Int64s, w0: int, w1: int) -> Int64s:
    """_weighted_mean where every allocatable is non-zero (both weights always count);
    reuses s0's buffer."""
    weight_sum = w0 + w1
    if weight_sum == 0:
        return np.zeros(len(s0), dtype=np.int64)
    if w0 != 1:
        s0 *= w0
    if w1 != 1:
        s1 *= w1
    s0 += s1
    s0 //= weight_sum
    return s0


def balanced_improvement_pair(
    r0: Int64s,
    a0: Int64s,
    r1: Int64s,
    a1: Int64s,
    *,
    p0: int,
    p1: int,
    positive: bool | None = None,
) -> Int64s:
    """scorers.balanced_improvement_pair for every node (r: requested incl. the pod)."""
    half = MAX_NODE_SCORE // 2
    top = float(MAX_NODE_SCORE)
    if _all_positive(a0, a1, positive):
        # The with-pod and without-pod fractions as one (2, 2, n) array - (with, without)
        # by (cpu, memory) - through the same float64 operations in the same order as
        # below, in a third of the numpy calls.
        requested = np.stack((r0, r1, r0 - p0, r1 - p1)).reshape(2, 2, len(a0))
        fractions = requested / np.stack((a0, a1))
        np.minimum(fractions, 1.0, out=fractions)
        d = fractions[:, 0] - fractions[:, 1]
        np.abs(d, out=d)
        d /= 2
        np.subtract(1, d, out=d)
        d *= top
        # astype truncates toward zero, as Go's int64() does. Requests are never negative
        # (API validation), so each fraction is in [0, 1] and each balance in [50, 100]:
        # diff = half + with - without is in [0, 100], where Go's truncating halving is a
        # shift, and half + diff / 2 is (2 * half + diff) >> 1.
        balances = d.astype(np.int64)
        score: Int64s = balances[0] - balances[1]
        score += 3 * half
        score >>= 1
        return score
    both = (a0 != 0) & (a1 != 0)
    fa0 = _safe(a0).astype(np.float64)
    fa1 = _safe(a1).astype(np.float64)
    f0 = r0.astype(np.float64) / fa0
    f1 = r1.astype(np.float64) / fa1
    g0 = (r0 - p0).astype(np.float64) / fa0
    g1 = (r1 - p1).astype(np.float64) / fa1
    d_with = np.abs(np.minimum(f0, 1.0) - np.minimum(f1, 1.0))
    d_without = np.abs(np.minimum(g0, 1.0) - np.minimum(g1, 1.0))
    with_pod = np.trunc((1 - d_with / 2) * top).astype(np.int64)
    without_pod = np.trunc((1 - d_without / 2) * top).astype(np.int64)
    diff = half + with_pod - without_pod
    # Go's truncating division by 2 (diff may be negative).
    halved = np.where(diff >= 0, diff // 2, -(-diff // 2))
    out: Int64s = np.where(both, half + halved, half + half // 2)
    return out
