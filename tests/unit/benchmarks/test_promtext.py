"""Reading histograms and counters from a /metrics page."""

from __future__ import annotations

import math

import pytest

from benchmarks.promtext import (
    Histogram,
    counter_by_label,
    counter_delta,
    parse_histogram,
    parse_histograms,
)

PAGE = """\
# HELP lag_seconds loop lag
# TYPE lag_seconds histogram
lag_seconds_bucket{le="0.001"} 50.0
lag_seconds_bucket{le="0.01"} 90.0
lag_seconds_bucket{le="0.1"} 100.0
lag_seconds_bucket{le="+Inf"} 100.0
lag_seconds_count 100.0
lag_seconds_sum 0.9
# HELP scheduler_schedule_attempts_total attempts
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="a",result="scheduled"} 7.0
scheduler_schedule_attempts_total{profile="b",result="scheduled"} 3.0
scheduler_schedule_attempts_total{profile="a",result="unschedulable"} 2.0
"""


def test_parse_histogram_reads_buckets_count_and_sum() -> None:
    h = parse_histogram(PAGE, "lag_seconds")
    assert h == Histogram((0.001, 0.01, 0.1, math.inf), (50.0, 90.0, 100.0, 100.0), 100.0, 0.9)


def test_parse_histogram_absent_is_none() -> None:
    assert parse_histogram(PAGE, "missing_seconds") is None


@pytest.mark.parametrize(
    ("q", "expected"),
    [(0.5, 0.001), (0.25, 0.0005), (0.7, 0.0055), (0.99, 0.091)],
    ids=["rank-at-bucket-edge", "inside-first-bucket", "inside-second", "p99"],
)
def test_quantile_interpolates_like_promql(q: float, expected: float) -> None:
    h = parse_histogram(PAGE, "lag_seconds")
    assert h is not None
    assert h.quantile(q) == pytest.approx(expected)


def test_quantile_in_inf_bucket_is_highest_finite_bound() -> None:
    h = Histogram((0.1, math.inf), (1.0, 10.0), 10.0, 5.0)
    assert h.quantile(0.99) == 0.1


def test_minus_keeps_only_later_observations() -> None:
    early = Histogram((0.1, math.inf), (10.0, 10.0), 10.0, 0.5)
    late = Histogram((0.1, math.inf), (10.0, 20.0), 20.0, 10.5)
    later = late.minus(early)
    assert later.cumulative == (0.0, 10.0)
    assert later.quantile(0.5) == 0.1  # every later observation is above 0.1


def test_quantile_without_observations_is_nan() -> None:
    assert math.isnan(Histogram((0.1, math.inf), (0.0, 0.0), 0.0, 0.0).quantile(0.5))


def test_counter_by_label_sums_other_labels() -> None:
    totals = counter_by_label(PAGE, "scheduler_schedule_attempts_total", "result")
    assert totals == {"scheduled": 10.0, "unschedulable": 2.0}


def test_counter_delta_keeps_moved_keys() -> None:
    assert counter_delta({"a": 5.0, "b": 1.0, "c": 2.0}, {"a": 2.0, "b": 1.0}) == {
        "a": 3.0,
        "c": 2.0,
    }


LABELLED = """\
# HELP pause_seconds pauses
# TYPE pause_seconds histogram
pause_seconds_bucket{generation="0",le="0.001"} 8.0
pause_seconds_bucket{generation="0",le="0.01"} 10.0
pause_seconds_bucket{generation="0",le="+Inf"} 10.0
pause_seconds_count{generation="0"} 10.0
pause_seconds_sum{generation="0"} 0.02
pause_seconds_bucket{generation="2",le="0.001"} 0.0
pause_seconds_bucket{generation="2",le="0.01"} 0.0
pause_seconds_bucket{generation="2",le="+Inf"} 1.0
pause_seconds_count{generation="2"} 1.0
pause_seconds_sum{generation="2"} 0.5
"""


def test_parse_histogram_sums_the_series_of_every_label_value() -> None:
    h = parse_histogram(LABELLED, "pause_seconds")
    assert h == Histogram((0.001, 0.01, math.inf), (8.0, 10.0, 11.0), 11.0, 0.52)


@pytest.mark.parametrize(
    ("cumulative", "expected"),
    [
        ((0.0, 0.0, 0.0), 0.0),  # nothing observed
        ((8.0, 10.0, 10.0), 0.01),  # the largest is in (1 ms, 10 ms]
        ((8.0, 8.0, 8.0), 0.001),
        ((8.0, 10.0, 11.0), 0.01),  # past the last finite bound: that bound, as quantile
    ],
)
def test_max_bound_is_the_bucket_of_the_largest_observation(
    cumulative: tuple[float, float, float], expected: float
) -> None:
    h = Histogram((0.001, 0.01, math.inf), cumulative, cumulative[-1], 0.0)
    assert h.max_bound() == expected


def test_parse_histograms_splits_by_a_label() -> None:
    by_gen = parse_histograms(LABELLED, "pause_seconds", "generation")
    assert by_gen["0"] == Histogram((0.001, 0.01, math.inf), (8.0, 10.0, 10.0), 10.0, 0.02)
    assert by_gen["2"].total == 1.0
    assert parse_histograms(PAGE, "missing_seconds", "generation") == {}
