"""Metrics: kube-scheduler's names, labels and buckets, in the text exposition format."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from prometheus_client.parser import text_string_to_metric_families

from asched.metrics import Metrics, exponential_buckets

Call = Callable[[Metrics], None]


def samples(metrics: Metrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """What a Prometheus scrape of render() reads: (sample name, labels) -> value."""
    parsed = text_string_to_metric_families(metrics.render().decode())
    return {
        (s.name, frozenset(s.labels.items())): s.value for family in parsed for s in family.samples
    }


def key(name: str, **labels: str) -> tuple[str, frozenset[tuple[str, str]]]:
    return name, frozenset(labels.items())


def preempt(m: Metrics) -> None:
    m.preemption_attempt()
    m.preemption_victims(3)


def enter_and_leave_unschedulable(m: Metrics) -> None:
    m.unschedulable_changed(["NodeResourcesFit", "TaintToleration"], "p", 1)
    m.unschedulable_changed(["TaintToleration"], "p", -1)


def bindings(m: Metrics) -> None:
    m.goroutines("binding", +2)
    m.goroutines("binding", -1)


def asched_own(m: Metrics) -> None:
    m.loop_lag(0.003)
    m.unexpected_error("pod_status")


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        pytest.param(
            lambda m: m.observe_attempt("scheduled", "default-scheduler", 0.003),
            {
                key(
                    "scheduler_schedule_attempts_total",
                    result="scheduled",
                    profile="default-scheduler",
                ): 1.0,
                key(
                    "scheduler_scheduling_attempt_duration_seconds_bucket",
                    result="scheduled",
                    profile="default-scheduler",
                    le="0.004",
                ): 1.0,
                key(
                    "scheduler_scheduling_attempt_duration_seconds_bucket",
                    result="scheduled",
                    profile="default-scheduler",
                    le="0.002",
                ): 0.0,
            },
            id="schedule-attempt",
        ),
        pytest.param(
            lambda m: m.extension_point("Filter", "Success", "p1", 0.00015),
            {
                key(
                    "scheduler_framework_extension_point_duration_seconds_bucket",
                    extension_point="Filter",
                    status="Success",
                    profile="p1",
                    le="0.0002",
                ): 1.0,
                key(
                    "scheduler_framework_extension_point_duration_seconds_count",
                    extension_point="Filter",
                    status="Success",
                    profile="p1",
                ): 1.0,
            },
            id="extension-point",
        ),
        pytest.param(
            lambda m: m.plugin_execution("NodeResourcesFit", "Filter", "Unschedulable", 2e-5),
            {
                # 1e-5 * 1.5 * 1.5 in float64, printed as Go's strconv prints it.
                key(
                    "scheduler_plugin_execution_duration_seconds_bucket",
                    plugin="NodeResourcesFit",
                    extension_point="Filter",
                    status="Unschedulable",
                    le="2.2500000000000005e-05",
                ): 1.0,
                key(
                    "scheduler_plugin_execution_duration_seconds_bucket",
                    plugin="NodeResourcesFit",
                    extension_point="Filter",
                    status="Unschedulable",
                    le="1e-05",
                ): 0.0,
            },
            id="plugin-execution",
        ),
        pytest.param(
            lambda m: m.set_pending({"active": 3, "backoff": 1}),
            {
                key("scheduler_pending_pods", queue="active"): 3.0,
                key("scheduler_pending_pods", queue="backoff"): 1.0,
                key("scheduler_pending_pods", queue="unschedulable"): 0.0,
                key("scheduler_pending_pods", queue="gated"): 0.0,
            },
            id="pending-pods",
        ),
        pytest.param(
            lambda m: m.incoming("active", "PodAdd"),
            {key("scheduler_queue_incoming_pods_total", queue="active", event="PodAdd"): 1.0},
            id="queue-incoming",
        ),
        pytest.param(
            lambda m: m.pod_scheduled(attempts=3, sli_seconds=0.5),
            {
                key("scheduler_pod_scheduling_attempts_bucket", le="4.0"): 1.0,
                key("scheduler_pod_scheduling_attempts_bucket", le="2.0"): 0.0,
                key(
                    "scheduler_pod_scheduling_sli_duration_seconds_bucket", attempts="3", le="0.64"
                ): 1.0,
            },
            id="pod-scheduled",
        ),
        pytest.param(
            preempt,
            {
                key("scheduler_preemption_attempts_total"): 1.0,
                key("scheduler_preemption_victims_bucket", le="4.0"): 1.0,
                key("scheduler_preemption_victims_bucket", le="2.0"): 0.0,
            },
            id="preemption",
        ),
        pytest.param(
            lambda m: m.permit_wait("Success", 0.01),
            {key("scheduler_permit_wait_duration_seconds_count", result="Success"): 1.0},
            id="permit-wait",
        ),
        pytest.param(
            enter_and_leave_unschedulable,
            {
                key("scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile="p"): 1.0,
                key("scheduler_unschedulable_pods", plugin="TaintToleration", profile="p"): 0.0,
            },
            id="unschedulable-by-plugin",
        ),
        pytest.param(
            lambda m: m.set_cache_size(nodes=5, pods=40, assumed_pods=2),
            {
                key("scheduler_cache_size", type="nodes"): 5.0,
                key("scheduler_cache_size", type="assumed_pods"): 2.0,
            },
            id="cache-size",
        ),
        pytest.param(
            bindings,
            {key("scheduler_goroutines", operation="binding"): 1.0},
            id="binding-goroutines",
        ),
        pytest.param(
            asched_own,
            {
                key("asched_unexpected_errors_total", component="pod_status"): 1.0,
                key("asched_event_loop_lag_seconds_bucket", le="0.0032"): 1.0,
                key("asched_event_loop_lag_seconds_bucket", le="0.0016"): 0.0,
            },
            id="asched-own",
        ),
    ],
)
def test_calls_show_up_under_kube_scheduler_names(
    call: Call, expected: dict[tuple[str, frozenset[tuple[str, str]]], float]
) -> None:
    metrics = Metrics(process_metrics=False)

    call(metrics)

    scraped = samples(metrics)
    assert {k: scraped.get(k) for k in expected} == expected


def test_no_created_series_and_help_text_present() -> None:
    metrics = Metrics(process_metrics=False)
    metrics.observe_attempt("error", "p", 0.1)

    text = metrics.render().decode()

    assert "_created" not in text
    assert "# TYPE scheduler_schedule_attempts_total counter" in text
    assert "# HELP scheduler_framework_extension_point_duration_seconds" in text


def test_instances_do_not_share_state() -> None:
    a, b = Metrics(process_metrics=False), Metrics(process_metrics=False)

    a.incoming("backoff", "NodeAdd")

    incoming = key("scheduler_queue_incoming_pods_total", queue="backoff", event="NodeAdd")
    assert samples(a).get(incoming) == 1.0
    assert incoming not in samples(b)


def test_process_metrics_are_exposed_when_asked() -> None:
    assert "process_cpu_seconds_total" in Metrics().render().decode()


@pytest.mark.parametrize(
    ("start", "factor", "count", "expected"),
    [
        pytest.param(0.001, 2, 3, [0.001, 0.002, 0.004], id="attempt-duration-start"),
        pytest.param(1, 2, 5, [1, 2, 4, 8, 16], id="pod-scheduling-attempts"),
    ],
)
def test_exponential_buckets(
    start: float, factor: float, count: int, expected: list[float]
) -> None:
    assert exponential_buckets(start, factor, count) == pytest.approx(expected)


def test_exponential_buckets_rejects_degenerate_shapes() -> None:
    with pytest.raises(ValueError, match="factor > 1"):
        exponential_buckets(1, 1, 3)
