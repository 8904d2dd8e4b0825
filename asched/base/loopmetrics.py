"""Labelled counters and histograms for metrics updated on every pod, without locks.

prometheus_client takes a threading lock on every `inc` and `observe` (about 1.2 and 3 us
here), and the scheduling cycle records some thirty of them per pod: one histogram per
extension point, one evaluation count per plugin and point, the attempt and its duration.
All of asched's updates and its /metrics rendering run on the event loop's one thread, so
these families keep plain numbers per label tuple (0.1-0.4 us an update) and hand them to
the registry as a collector when it renders. The exposition is byte for byte what
prometheus_client's Counter and Histogram print for the same updates
(tests/unit/test_loopmetrics.py holds the two to each other).

Not thread-safe by design: never update these from another thread.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

INF = float("inf")


def _go_float(value: float) -> str:
    """The `le` label text prometheus_client prints for a bound (Go's float formatting)."""
    text: str = floatToGoString(value)  # type: ignore[no-untyped-call]
    return text


class CounterChild:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


class HistogramChild:
    __slots__ = ("_bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        # One count per finite bound, then the +Inf bucket; not cumulative.
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, amount: float) -> None:
        # `le` buckets: the first bound >= amount.
        self.counts[bisect_left(self._bounds, amount)] += 1
        self.total += amount


class LoopCounter:
    """A labelled counter (`name` ends in _total, as for prometheus_client's Counter)."""

    def __init__(
        self, name: str, documentation: str, labels: Sequence[str], registry: CollectorRegistry
    ) -> None:
        self._name = name.removesuffix("_total")
        self._doc = documentation
        self._labels = list(labels)
        self._children: dict[tuple[str, ...], CounterChild] = {}
        registry.register(self)

    def get(self, *values: str) -> CounterChild:
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = CounterChild()
        return child

    def describe(self) -> Iterable[Metric]:
        return [CounterMetricFamily(self._name, self._doc, labels=self._labels)]

    def collect(self) -> Iterable[Metric]:
        family = CounterMetricFamily(self._name, self._doc, labels=self._labels)
        for values, child in list(self._children.items()):
            family.add_metric(list(values), child.value)
        return [family]


class LoopHistogram:
    """A labelled histogram with fixed upper bounds (+Inf is added, as prometheus_client does)."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labels: Sequence[str],
        buckets: Sequence[float],
        registry: CollectorRegistry,
    ) -> None:
        self._name = name
        self._doc = documentation
        self._labels = list(labels)
        bounds = [float(b) for b in buckets]
        if bounds and bounds[-1] == INF:
            bounds.pop()
        self._bounds = tuple(bounds)
        self._names = [_go_float(b) for b in self._bounds] + ["+Inf"]
        self._children: dict[tuple[str, ...], HistogramChild] = {}
        registry.register(self)

    def get(self, *values: str) -> HistogramChild:
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = HistogramChild(self._bounds)
        return child

    def describe(self) -> Iterable[Metric]:
        return [HistogramMetricFamily(self._name, self._doc, labels=self._labels)]

    def collect(self) -> Iterable[Metric]:
        family = HistogramMetricFamily(self._name, self._doc, labels=self._labels)
        for values, child in list(self._children.items()):
            cumulative, running = [], 0
            for le, count in zip(self._names, child.counts, strict=True):
                running += count
                cumulative.append((le, float(running)))
            family.add_metric(list(values), cumulative, child.total)
        return [family]
