"""LoopCounter and LoopHistogram print exactly what prometheus_client's Counter and
Histogram print for the same updates (they replace them on the per-pod path)."""

from __future__ import annotations

import prometheus_client
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from asched.base.loopmetrics import LoopCounter, LoopHistogram
from asched.metrics import exponential_buckets

BUCKETS = exponential_buckets(0.0001, 2, 12)
LABELS = st.sampled_from(["PreFilter", "Filter", "Score", "a b", 'quote"d'])
AMOUNTS = st.floats(min_value=0.0, max_value=1.0, allow_nan=False) | st.sampled_from(BUCKETS)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(LABELS, LABELS, st.integers(0, 50)), max_size=40),
    st.lists(st.tuples(LABELS, AMOUNTS), max_size=40),
)
def test_exposition_is_identical(
    incs: list[tuple[str, str, int]], observations: list[tuple[str, float]]
) -> None:
    prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
    ref, ours = CollectorRegistry(), CollectorRegistry()
    counter = Counter("x_evaluation_total", "How many.", ["plugin", "point"], registry=ref)
    loop_counter = LoopCounter("x_evaluation_total", "How many.", ["plugin", "point"], ours)
    histogram = Histogram("x_seconds", "How long.", ["point"], buckets=BUCKETS, registry=ref)
    loop_histogram = LoopHistogram("x_seconds", "How long.", ["point"], BUCKETS, ours)
    for plugin, point, n in incs:
        counter.labels(plugin, point).inc(n)
        loop_counter.get(plugin, point).inc(n)
    for point, seconds in observations:
        histogram.labels(point).observe(seconds)
        loop_histogram.get(point).observe(seconds)
    assert generate_latest(ours) == generate_latest(ref)
