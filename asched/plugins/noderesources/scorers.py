"""The node-resources score formulas, as pure functions over per-resource vectors.

Each takes `requested` (the node's requests plus the pod's) and `allocatable`, aligned
with the configured resources; entries whose allocatable is 0 were zeroed by the caller
and are skipped, as kube-scheduler does. Integer arithmetic matches Go's int64 (including
truncating division), so scores equal kube-scheduler's on the same inputs:
- least_allocated / most_allocated: least_allocated.go, most_allocated.go;
- requested_to_capacity_ratio: requested_to_capacity_ratio.go with helper
  BuildBrokenLinearFunction (a resource scoring 0 does not count in the weight sum;
  the mean is rounded half away from zero, like math.Round);
- balanced_score: balanced_allocation.go, (1 - std of the fractions) * 100.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

from asched.framework.types import MAX_NODE_SCORE
from asched.plugins.helpers import go_div


class Scorer(Protocol):
    """A strategy's score of one node from its per-resource vectors."""

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int: ...

    def pair(self, r0: int, a0: int, r1: int, a1: int) -> int:
        """The same score for exactly two resources (the default cpu and memory)."""
        ...


_MAX_UTILIZATION = 100


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    # Requests may exceed capacity because pods without requests count default amounts.
    requested = min(requested, capacity)
    return requested * MAX_NODE_SCORE // capacity


class LeastAllocated:
    """(capacity - requested) / capacity, weighted mean (least_allocated.go)."""

    __slots__ = ("_w0", "_w1", "_weights")

    def __init__(self, weights: Sequence[int]) -> None:
        self._weights = tuple(weights)
        self._w0, self._w1 = (*self._weights, 0, 0)[:2]

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, self._weights, strict=True):
            if cap == 0:
                continue
            node_score += least_requested_score(req, cap) * weight
            weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    def pair(self, r0: int, a0: int, r1: int, a1: int) -> int:
        """The same for exactly two resources, without building vectors."""
        node_score = weight_sum = 0
        if a0:
            node_score += (0 if r0 > a0 else (a0 - r0) * MAX_NODE_SCORE // a0) * self._w0
            weight_sum += self._w0
        if a1:
            node_score += (0 if r1 > a1 else (a1 - r1) * MAX_NODE_SCORE // a1) * self._w1
            weight_sum += self._w1
        return node_score // weight_sum if weight_sum else 0


class MostAllocated:
    """requested / capacity (capped at 1), weighted mean (most_allocated.go)."""

    __slots__ = ("_w0", "_w1", "_weights")

    def __init__(self, weights: Sequence[int]) -> None:
        self._weights = tuple(weights)
        self._w0, self._w1 = (*self._weights, 0, 0)[:2]

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, self._weights, strict=True):
            if cap == 0:
                continue
            node_score += most_requested_score(req, cap) * weight
            weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    def pair(self, r0: int, a0: int, r1: int, a1: int) -> int:
        return self((r0, r1), (a0, a1))


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction over (utilization, score) points."""
    points = tuple(shape)

    def f(p: int) -> int:
        for i, (util, score) in enumerate(points):
            if p <= util:
                if i == 0:
                    return score
                prev_util, prev_score = points[i - 1]
                return prev_score + go_div((score - prev_score) * (p - prev_util), util - prev_util)
        return points[-1][1]

    return f


def scaled_utilization(requested: int, capacity: int, top: int) -> int:
    """requested * top / capacity, with requested clamped to [0, capacity]."""
    if capacity <= 0 or requested <= 0:
        return 0
    if requested >= capacity:
        return top
    return requested * top // capacity


def round_half_away(x: float) -> int:
    """Go's math.Round for the non-negative means we compute."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


class RequestedToCapacityRatio:
    """A broken-linear function of utilization, weighted mean of the non-zero scores."""

    __slots__ = ("_raw", "_weights")

    def __init__(self, weights: Sequence[int], shape: Sequence[tuple[int, int]]) -> None:
        self._weights = tuple(weights)
        self._raw = broken_linear(shape)

    @property
    def raw(self) -> Callable[[int], int]:
        """The broken-linear score of a utilization in [0, 100]."""
        return self._raw

    def _resource_score(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return self._raw(_MAX_UTILIZATION)
        return self._raw(scaled_utilization(requested, capacity, _MAX_UTILIZATION))

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, self._weights, strict=True):
            if cap == 0:
                continue
            rs = self._resource_score(req, cap)
            if rs > 0:
                node_score += rs * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return round_half_away(float(node_score) / float(weight_sum))

    def pair(self, r0: int, a0: int, r1: int, a1: int) -> int:
        return self((r0, r1), (a0, a1))


def balanced_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """(1 - std) * MaxNodeScore over the used fractions, truncated like Go's int64()."""
    fractions: list[float] = []
    total = 0.0
    for req, cap in zip(requested, allocatable, strict=True):
        if cap == 0:
            continue
        fraction = min(float(req) / float(cap), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    n = len(fractions)
    if n == 2:
        # The common cpu+memory case: the std of two values is half their distance.
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = total / n
        acc = 0.0
        for fraction in fractions:
            acc = acc + (fraction - mean) * (fraction - mean)
        std = math.sqrt(acc / n)
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_improvement(
    requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
) -> int:
    """Score the change in balance the pod brings (kubernetes#135573, v1.36+).

    Without the pod and with it, each balance is in [50, 100]; no change scores 75,
    perfectly balanced to perfectly unbalanced 50, the reverse 100.
    """
    with_pod = balanced_score(requested, allocatable)
    without_pod = balanced_score(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + go_div(half + with_pod - without_pod, 2)


def balanced_improvement_pair(r0: int, a0: int, r1: int, a1: int, *, p0: int, p1: int) -> int:
    """balanced_improvement for two resources (p0/p1: the pod's requests), inlined.

    The std of two fractions is half their distance; with fewer than two non-zero
    allocatables there is no spread and both balances are 100. Written without builtin
    calls: this runs for every scored node.
    """
    half = MAX_NODE_SCORE // 2
    if not (a0 and a1):
        return half + half // 2
    fa0, fa1 = float(a0), float(a1)
    f0, f1 = r0 / fa0, r1 / fa1
    g0, g1 = (r0 - p0) / fa0, (r1 - p1) / fa1
    d_with = (f0 if f0 < 1.0 else 1.0) - (f1 if f1 < 1.0 else 1.0)
    d_without = (g0 if g0 < 1.0 else 1.0) - (g1 if g1 < 1.0 else 1.0)
    if d_with < 0:
        d_with = -d_with
    if d_without < 0:
        d_without = -d_without
    top = float(MAX_NODE_SCORE)
    # int() truncates toward zero like Go's int64(); both values are in [50, 100].
    diff = half + int((1 - d_with / 2) * top) - int((1 - d_without / 2) * top)
    return half + (diff // 2 if diff >= 0 else -(-diff // 2))
