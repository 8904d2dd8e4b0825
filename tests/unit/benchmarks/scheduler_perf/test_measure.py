"""The throughput collector, its summary and the paired ratios, with an injected clock."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.scheduler_perf.config import Threshold
from benchmarks.scheduler_perf.executor import (
    ThroughputCollector,
    summarize_throughput,
    threshold_check,
)
from benchmarks.scheduler_perf.podstore import PodRecord
from benchmarks.scheduler_perf.run import summarize
from benchmarks.stats import mean_throughput


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def pod(namespace: str, **labels: str) -> PodRecord:
    return PodRecord(namespace, "p", labels, "n1", True)


def test_collector_samples_like_util_go_throughput_collector() -> None:
    clock = Clock()
    c = ThroughputCollector("w", frozenset({"ns"}), {"app": "x"}, clock=clock)
    c.tick()  # nothing scheduled yet: no start
    for _ in range(5):
        c.see(pod("ns", app="x"))
    c.see(pod("other", app="x"))  # another namespace
    c.see(pod("ns", app="y"))  # another label
    clock.now = 1.0
    c.tick()  # first tick that sees pods starts the window
    for _ in range(10):
        c.see(pod("ns", app="x"))
    clock.now = 2.0
    c.tick()
    clock.now = 3.0
    c.tick()  # nothing new: skipped
    for _ in range(4):
        c.see(pod("ns", app="x"))
    clock.now = 4.0
    c.tick()  # 4 pods over 2 s, counted for both ticks
    assert c.scheduled == 19
    assert c.samples == [10.0, 2.0, 2.0]


def test_summary_uses_nearest_rank_percentiles() -> None:
    data = summarize_throughput([float(x) for x in range(1, 11)])
    assert data == {"Average": 5.5, "Perc50": 5.0, "Perc90": 9.0, "Perc95": 10.0, "Perc99": 10.0}
    assert summarize_throughput([]) == {}


@pytest.mark.parametrize(
    ("threshold", "average", "expected"),
    [
        (Threshold(0.0), 10.0, None),
        (Threshold(100.0), 150.0, True),
        (Threshold(100.0), 50.0, False),
        (Threshold(100.0, expect_lower=True), 50.0, True),
        (Threshold(100.0, metric="scheduler_pod_scheduling_duration_seconds"), 50.0, None),
    ],
    ids=["no-threshold", "above", "below", "expect-lower", "other-metric"],
)
def test_threshold_check(threshold: Threshold, average: float, expected: bool | None) -> None:
    assert threshold_check({"Average": average}, threshold) is expected


def run(who: str, rep: int, average: float | None, cpu_ms: float = 1.0) -> dict[str, Any]:
    items = [] if average is None else [{"data": {"Average": average}, "cpu_ms_per_pod": cpu_ms}]
    return {
        "scheduler": who,
        "repetition": rep,
        "outcome": "complete" if items else "failed",
        "items": items,
        "loadavg_before": [4.0, 1.0, 1.0],
    }


def test_paired_ratios_compare_runs_of_the_same_repetition() -> None:
    runs = [
        run("asched", 0, 300.0),
        run("kube-scheduler", 0, 100.0),
        run("kube-scheduler", 1, 200.0),
        run("asched", 1, 200.0),
        run("asched", 2, 500.0),
        run("kube-scheduler", 2, None),  # failed: no pair
    ]
    summary = summarize(runs)
    assert summary["paired_ratios"] == [3.0, 1.0]
    assert summary["paired_ratio_median"] == 2.0
    assert summary["per_scheduler"]["asched"]["pods_per_s"] == 300.0
    assert summary["per_scheduler"]["kube-scheduler"]["complete_runs"] == 2.0


def test_backlog_window_opens_at_the_first_bind_and_counts_the_burst() -> None:
    clock = Clock()
    c = ThroughputCollector("w", frozenset({"ns"}), {}, clock=clock, from_first_bind=True)
    clock.now = 10.0
    c.tick()  # the scheduler is starting; nothing bound yet
    clock.now = 10.5
    for _ in range(301):
        c.see(pod("ns"))  # the burst before the next tick is inside the window
    clock.now = 11.0
    c.tick()
    clock.now = 11.5
    c.see(pod("ns"))
    clock.now = 12.0
    c.tick()
    assert c.started_at == 10.5
    # The first bind opens the window: 300 more in 0.5 s, then 1 in 1 s.
    assert c.samples == [600.0, 1.0]
    assert c.window_pods == 301
    # The side-by-side runner's mean over the same pods: (302 - 1) / (11.5 - 10.5).
    assert mean_throughput(c.bind_times) == 301.0
