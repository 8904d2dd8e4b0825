"""Percentiles, throughput and per-second counts behind the numbers in docs/benchmarks.md."""

from __future__ import annotations

import math

import pytest

from benchmarks.stats import (
    mean_throughput,
    median_or_nan,
    per_second_counts,
    percentile,
    ratio,
)


@pytest.mark.parametrize(
    ("samples", "q", "expected"),
    [
        ([5.0], 50, 5.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
        ([4.0, 1.0, 3.0, 2.0], 0, 1.0),
        ([4.0, 1.0, 3.0, 2.0], 100, 4.0),
        ([float(i) for i in range(101)], 99, 99.0),
        ([0.0, 10.0], 99, 9.9),
    ],
    ids=[
        "one-sample",
        "even-count-interpolates",
        "p0-is-min",
        "p100-is-max",
        "p99-of-0-to-100",
        "interpolates-between-two",
    ],
)
def test_percentile(samples: list[float], q: float, expected: float) -> None:
    assert percentile(samples, q) == pytest.approx(expected)


def test_percentile_of_nothing_is_nan() -> None:
    assert math.isnan(percentile([], 50))


def test_percentile_rejects_out_of_range() -> None:
    with pytest.raises(ValueError, match=r"0\.\.100"):
        percentile([1.0], 101)


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        ([10.0, 11.0, 12.0], 1.0),
        ([0.0, 0.5, 1.0, 1.5, 2.0], 2.0),
        ([3.0, 1.0, 2.0], 1.0),
    ],
    ids=["one-per-second", "two-per-second", "unsorted"],
)
def test_mean_throughput(times: list[float], expected: float) -> None:
    assert mean_throughput(times) == pytest.approx(expected)


@pytest.mark.parametrize("times", [[], [1.0], [2.0, 2.0]], ids=["none", "one", "zero-span"])
def test_mean_throughput_undefined(times: list[float]) -> None:
    assert math.isnan(mean_throughput(times))


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        ([0.0, 0.1, 0.9, 1.0, 1.5, 2.2], [3, 2]),
        ([5.0, 5.5], []),
        ([], []),
        ([0.0, 3.0], [1, 0, 0]),
    ],
    ids=["partial-tail-dropped", "under-a-second", "empty", "idle-seconds-count-zero"],
)
def test_per_second_counts(times: list[float], expected: list[int]) -> None:
    assert per_second_counts(times) == expected


def test_median_ignores_nan() -> None:
    assert median_or_nan([1.0, math.nan, 3.0]) == 2.0
    assert math.isnan(median_or_nan([math.nan]))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [(3.0, 2.0, 1.5), (1.0, 0.0, math.nan), (math.nan, 1.0, math.nan)],
    ids=["plain", "zero-denominator", "missing"],
)
def test_ratio(a: float, b: float, expected: float) -> None:
    got = ratio(a, b)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected
