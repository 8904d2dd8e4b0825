"""Summary statistics for benchmark samples: percentiles, throughput, medians of runs.

Pure functions over plain numbers, so the numbers in docs/benchmarks.md can be traced to a
definition and unit-tested. Percentiles use linear interpolation between closest ranks
(numpy's default), so p50 of an even count is the mean of the two middle samples.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def percentile(samples: Sequence[float], q: float) -> float:
    """The *q*-th percentile (0..100) of *samples*; NaN when there are none."""
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def mean_throughput(times: Sequence[float]) -> float:
    """Events per second from the first to the last of *times* (wall seconds).

    With n events the rate is (n - 1) / (last - first): the first event opens the window,
    each later one falls inside it. Fewer than two events, or a zero-length window, give NaN.
    """
    if len(times) < 2:
        return math.nan
    span = max(times) - min(times)
    if span <= 0:
        return math.nan
    return (len(times) - 1) / span


def per_second_counts(times: Sequence[float]) -> list[int]:
    """Events in each whole second after the first event; a trailing partial second is dropped.

    kube-scheduler's scheduler_perf samples its throughput the same way (a count per
    one-second tick), so the percentiles of these counts compare with its perc50.
    """
    if not times:
        return []
    start = min(times)
    whole = math.floor(max(times) - start)
    counts = [0] * whole
    for t in times:
        index = math.floor(t - start)
        if index < whole:
            counts[index] += 1
    return counts


def median_or_nan(values: Sequence[float]) -> float:
    """Median of the values that are numbers; NaN when none is."""
    finite = [v for v in values if not math.isnan(v)]
    return statistics.median(finite) if finite else math.nan


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN when either is missing or the denominator is zero."""
    if math.isnan(numerator) or math.isnan(denominator) or denominator == 0:
        return math.nan
    return numerator / denominator
