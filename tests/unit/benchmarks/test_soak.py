"""The soak's fault plan and its per-window loop-lag figures."""

from __future__ import annotations

import math

import pytest

from benchmarks.promtext import Histogram
from benchmarks.soak import (
    APISERVER_TWICE,
    ASCHED_RESTART,
    ETCD_PAUSE,
    WATCH_EXPIRY,
    Scrape,
    full_gc_summary,
    lag_p99_per_window,
    rss_summary,
    schedule,
)

BOUNDS = (0.001, 0.01, 0.1, math.inf)


def hist(*cumulative: float) -> Histogram:
    return Histogram(BOUNDS, tuple(cumulative), cumulative[-1], 0.0)


def test_an_hour_has_eleven_faults_asched_first_then_the_rotation() -> None:
    plan = schedule(3600, 300)
    assert [at for at, _ in plan] == [300.0 * i for i in range(1, 12)]
    kinds = [kind for _, kind in plan]
    assert kinds[0] == ASCHED_RESTART
    assert kinds[1:4] == [APISERVER_TWICE, ETCD_PAUSE, WATCH_EXPIRY]
    assert kinds.count(ASCHED_RESTART) == 1
    assert {kinds.count(k) for k in (APISERVER_TWICE, ETCD_PAUSE, WATCH_EXPIRY)} == {3, 4}


@pytest.mark.parametrize(("duration", "every", "count"), [(120, 30, 3), (30, 30, 0)])
def test_no_fault_in_the_last_interval(duration: float, every: float, count: int) -> None:
    assert len(schedule(duration, every)) == count


def test_lag_windows_add_up_the_spans_of_each_process_and_skip_a_restart() -> None:
    scrapes = [
        Scrape(0.0, 1, hist(0, 0, 0, 0)),
        Scrape(5.0, 1, hist(100, 100, 100, 100)),  # window 0: 100 fast loops
        Scrape(12.0, 1, hist(100, 100, 100, 200)),  # window 1: 100 slow ones
        # pid 2 started afresh: its counts restart; the pair (1 -> 2) counts nothing.
        Scrape(14.0, 2, hist(0, 0, 0, 0)),
        Scrape(18.0, 2, hist(300, 300, 300, 300)),  # window 1: 300 fast ones
    ]
    fast, slow = lag_p99_per_window(scrapes, 0.0, 20.0, 10.0)
    assert fast == pytest.approx(1.0 * 0.99)  # ms, within the first bucket
    # 400 observations in window 1, 100 of them above 0.1 s: p99 is the top finite bound.
    assert slow == pytest.approx(100.0)


def test_a_window_without_scrapes_is_nan() -> None:
    scrapes = [Scrape(1.0, 1, hist(0, 0, 0, 0)), Scrape(2.0, 1, hist(1, 1, 1, 1))]
    first, second = lag_p99_per_window(scrapes, 0.0, 20.0, 10.0)
    assert not math.isnan(first)
    assert math.isnan(second)


def test_the_full_collections_are_those_of_the_last_scrape() -> None:
    full = Histogram(BOUNDS, (0.0, 1.0, 3.0, 3.0), 3.0, 0.09)
    scrapes = [
        Scrape(1.0, 1, hist(0, 0, 0, 0), Histogram(BOUNDS, (1, 1, 1, 1), 1.0, 0.001), 40.0),
        Scrape(2.0, 2, hist(0, 0, 0, 0), full, 1500.0),
    ]
    assert full_gc_summary(scrapes) == {
        "full_gc_collections": 3,
        "full_gc_seconds_mean": pytest.approx(0.03),
        "full_gc_unreachable_objects": 1500,
    }
    none_yet = full_gc_summary([Scrape(1.0, 1, hist(0, 0, 0, 0))])
    assert none_yet == {
        "full_gc_collections": 0,
        "full_gc_seconds_mean": 0.0,
        "full_gc_unreachable_objects": 0,
    }
    assert full_gc_summary([]) == {}


def test_the_warm_rss_is_the_last_sample_before_the_second_fault() -> None:
    """Not the first one after it: the fault has begun by then and RSS dips."""
    mib = 2**20
    samples = [
        (290.0, 1, 80 * mib),  # the process the first fault (asched's restart) killed
        (310.0, 2, 85 * mib),
        (592.0, 2, 92 * mib),
        (602.0, 2, 89 * mib),  # kube-apiserver killed at 600 s
        (3590.0, 2, 96 * mib),
    ]
    got = rss_summary(samples, 600.0)
    assert (got["rss_warm_at_s"], got["rss_warm_mib"]) == (592.0, 92.0)
    assert got["rss_end_mib"] == 96.0
    assert got["rss_growth_pct"] == pytest.approx(100 * 4 / 92)
    assert got["rss_max_mib"] == 96.0
    assert rss_summary(samples, 0.0)["rss_warm_at_s"] == 310.0
