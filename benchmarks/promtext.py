"""Read histograms out of a Prometheus /metrics page and estimate their quantiles.

A scheduler's event-loop lag is only visible through its own /metrics. The benchmark
scrapes the page when the scheduler is ready and again when all pods are bound, subtracts
the two (so start-up is not counted) and estimates quantiles the way PromQL's
histogram_quantile does: linear interpolation inside the bucket that holds the rank.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


@dataclass(frozen=True, slots=True)
class Histogram:
    """Cumulative bucket counts by upper bound (the last bound is +Inf), plus the sum."""

    bounds: tuple[float, ...]
    cumulative: tuple[float, ...]
    total: float
    sum: float

    def minus(self, earlier: Histogram) -> Histogram:
        """Observations made after *earlier* was scraped (same metric, same buckets)."""
        if self.bounds != earlier.bounds:
            raise ValueError("histograms have different buckets")
        return Histogram(
            self.bounds,
            tuple(a - b for a, b in zip(self.cumulative, earlier.cumulative, strict=True)),
            self.total - earlier.total,
            self.sum - earlier.sum,
        )

    def plus(self, other: Histogram) -> Histogram:
        """Both histograms' observations (same metric, same buckets): the soak adds up
        the spans of one window that two scheduler processes served."""
        if self.bounds != other.bounds:
            raise ValueError("histograms have different buckets")
        return Histogram(
            self.bounds,
            tuple(a + b for a, b in zip(self.cumulative, other.cumulative, strict=True)),
            self.total + other.total,
            self.sum + other.sum,
        )

    def max_bound(self) -> float:
        """The upper bound of the bucket holding the largest observation (0.0 without any;
        the highest finite bound when it is in the +Inf bucket, as quantile says)."""
        previous = 0.0
        top = 0.0
        for bound, count in zip(self.bounds, self.cumulative, strict=True):
            if count > previous:
                top = bound
            previous = count
        if math.isinf(top):
            return max((b for b in self.bounds if not math.isinf(b)), default=0.0)
        return top

    def quantile(self, q: float) -> float:
        """histogram_quantile(q): NaN without observations; the highest finite bound if
        the rank falls in the +Inf bucket (PromQL does the same)."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"quantile must be within 0..1, got {q}")
        if self.total <= 0:
            return math.nan
        rank = q * self.total
        lower_bound, lower_count = 0.0, 0.0
        for bound, count in zip(self.bounds, self.cumulative, strict=True):
            if count >= rank:
                if math.isinf(bound):
                    return lower_bound
                if count == lower_count:
                    return bound
                return lower_bound + (bound - lower_bound) * (rank - lower_count) / (
                    count - lower_count
                )
            lower_bound, lower_count = bound, count
        return lower_bound


def parse_histogram(text: str, name: str) -> Histogram | None:
    """The histogram *name* from a /metrics page, summed over its label values (the
    GC pauses of every generation); None when absent."""
    return parse_histograms(text, name).get("")


def parse_histograms(text: str, name: str, by: str | None = None) -> dict[str, Histogram]:
    """The histogram *name* per value of its label *by* (all series summed under "" when
    *by* is None); empty when absent."""
    buckets: dict[str, dict[float, float]] = {}
    totals: dict[str, list[float]] = {}
    for family in text_string_to_metric_families(text):
        if family.name != name:
            continue
        for sample in family.samples:
            key = sample.labels.get(by, "") if by is not None else ""
            count_sum = totals.setdefault(key, [0.0, 0.0])
            if sample.name == f"{name}_bucket":
                le = float(sample.labels["le"])
                mine = buckets.setdefault(key, {})
                mine[le] = mine.get(le, 0.0) + sample.value
            elif sample.name == f"{name}_count":
                count_sum[0] += sample.value
            elif sample.name == f"{name}_sum":
                count_sum[1] += sample.value
    out = {}
    for key, mine in buckets.items():
        bounds = tuple(sorted(mine))
        total, total_sum = totals[key]
        out[key] = Histogram(bounds, tuple(mine[b] for b in bounds), total, total_sum)
    return out


def counter_by_label(text: str, name: str, *labels: str) -> dict[str, float]:
    """Sum of counter *name* per value of *labels* (joined by spaces; e.g. attempts by
    result, or API requests by "verb resource subresource")."""
    totals: dict[str, float] = {}
    base = name.removesuffix("_total")
    for family in text_string_to_metric_families(text):
        if family.name != base:
            continue
        for sample in family.samples:
            if sample.name == f"{base}_total":
                key = " ".join(sample.labels.get(label, "") for label in labels).strip()
                totals[key] = totals.get(key, 0.0) + sample.value
    return totals


def counter_delta(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    """after - before per key, keeping only keys that moved."""
    moved = {k: v - before.get(k, 0.0) for k, v in after.items()}
    return {k: v for k, v in sorted(moved.items()) if v}
