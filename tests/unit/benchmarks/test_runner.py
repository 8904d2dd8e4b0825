"""Run ordering and the medians and ratios a benchmark reports."""

from __future__ import annotations

import math
from typing import Any

import pytest

from asched.metrics import Metrics
from benchmarks.runner import _metrics_summary, rotate, summarize


@pytest.mark.parametrize(
    ("by", "expected"),
    [(0, ["a", "b", "c"]), (1, ["b", "c", "a"]), (4, ["b", "c", "a"])],
    ids=["first-run", "second-run", "wraps"],
)
def test_rotate(by: int, expected: list[str]) -> None:
    assert rotate(["a", "b", "c"], by) == expected


def _run(who: str, pods_per_s: float, **extra: Any) -> dict[str, Any]:
    return {
        "scheduler": who,
        "pods_per_s": pods_per_s,
        "outcome": "complete",
        "loadavg_before": [1.0, 1.0, 1.0],
        **extra,
    }


def test_summarize_takes_medians_and_ratios() -> None:
    runs = [
        _run("kube-scheduler", 100.0),
        _run("kube-scheduler", 300.0),
        _run("kube-scheduler", 200.0),
        _run("asched", 50.0),
        _run("asched", 150.0),
        _run("asched", 100.0),
        _run("bare-bind", 400.0),
    ]
    summary = summarize(runs)
    assert summary["per_scheduler"]["kube-scheduler"]["pods_per_s"] == 200.0
    assert summary["per_scheduler"]["asched"]["pods_per_s"] == 100.0
    assert summary["ratios"]["asched/kube pods_per_s"] == 0.5
    assert summary["ratios"]["asched/ceiling pods_per_s"] == 0.25


def test_summarize_counts_incomplete_runs_and_violations() -> None:
    runs = [
        _run("asched", 10.0, checks={"violations": 2}),
        {**_run("asched", 20.0), "outcome": "timeout"},
    ]
    per = summarize(runs)["per_scheduler"]["asched"]
    assert (per["runs"], per["complete_runs"], per["violations"]) == (2, 1, 2)
    assert math.isnan(per["cpu_seconds"])
    assert summarize(runs)["ratios"] == {}


def test_loop_lag_and_its_net_come_from_the_run_window_of_the_metrics_page() -> None:
    m = Metrics(process_metrics=False)
    m.loop_lag(0.5)  # before the run: the baseline takes it off
    baseline = m.render().decode()
    for _ in range(99):
        m.loop_lag(0.001)
        m.loop_lag_net(0.001)
    m.loop_lag(0.09)
    m.loop_lag_net(0.002)
    out = _metrics_summary(baseline, m.render().decode())
    # Buckets double from 0.1 ms; 1 ms samples sit in (0.8, 1.6] ms, interpolated there.
    # The 500 ms before the run is gone, and the one 90 ms sample is past the 99th rank.
    for key in ("loop_lag_p50_ms", "loop_lag_p99_ms", "loop_lag_net_p99_ms"):
        assert 0.8 < out[key] <= 1.6, key
    assert out["loop_lag_mean_ms"] == pytest.approx((99 * 1 + 90) / 100)


def test_gc_pauses_come_from_the_run_window_summed_over_generations() -> None:
    m = Metrics(process_metrics=False)
    m.gc_pause(2, 0.4)  # before the run
    baseline = m.render().decode()
    m.gc_pause(0, 0.002)
    m.gc_pause(1, 0.012)
    out = _metrics_summary(baseline, m.render().decode())
    # Buckets double from 0.1 ms: 12 ms sits in (6.4, 12.8] ms.
    assert out["gc_pause_max_ms"] == pytest.approx(12.8)
    assert out["gc_pause_total_ms"] == pytest.approx(14.0)
    # By generation: [collections, ms in all, longest at most]; the baseline's gen 2 is gone.
    by_gen = out["gc_by_generation"]
    assert by_gen["0"] == [1.0, 2.0, pytest.approx(3.2)]
    assert by_gen["1"] == [1.0, 12.0, pytest.approx(12.8)]
    assert by_gen["2"][0] == 0.0


def test_malloc_trim_time_is_summed_from_start_up() -> None:
    m = Metrics(process_metrics=False)
    m.malloc_trim(0.001)  # before /readyz: counted too
    baseline = m.render().decode()
    m.malloc_trim(0.0025)
    out = _metrics_summary(baseline, m.render().decode())
    assert out["malloc_trim_ms"] == pytest.approx(3.5)
