"""Prometheus metrics with kube-scheduler's names, labels and buckets.

Dashboards and alerts written for kube-scheduler must work unchanged on asched, so every
`scheduler_*` metric here mirrors kubernetes/kubernetes pkg/scheduler/metrics/metrics.go
(v1.37): same name, same label names, same histogram buckets. asched's own additions carry
the `asched_` prefix.

Each `Metrics` owns its CollectorRegistry (not prometheus_client's global one), so tests and
several schedulers in one process never collide. Label children are cached per label tuple:
the scheduling cycle records a handful of observations per pod, and a cached child halves
their cost (about 0.75 us instead of 1.5 us per observation).

Plugin execution durations are recorded by the framework runtime for about 10% of cycles
only, as kube-scheduler does (pluginMetricsSamplePercent = 10 in schedule_one.go): timing
every plugin call of every cycle would cost more than many plugins do. `plugin_execution`
records whatever it is given; the sampling decision belongs to the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

import prometheus_client
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

from asched.base.loopmetrics import LoopCounter, LoopHistogram

# The text exposition format kube-scheduler serves; Prometheus negotiates it everywhere.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Results of a scheduling attempt (label `result`).
SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"

# Queues of `scheduler_pending_pods` (label `queue`).
PENDING_QUEUES = ("active", "backoff", "unschedulable", "gated")


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """component-base's ExponentialBuckets: `count` upper bounds from `start`, each
    `factor` times the previous. Multiplied step by step as Go does, so the `le` labels
    carry the very same floats as kube-scheduler's."""
    if count < 1 or start <= 0 or factor <= 1:
        raise ValueError("exponential_buckets needs count >= 1, start > 0, factor > 1")
    buckets = [float(start)]
    for _ in range(count - 1):
        buckets.append(buckets[-1] * factor)
    return buckets


_M = TypeVar("_M", Counter, Gauge, Histogram)


class _Children(Generic[_M]):
    """A labelled metric with its children cached by label values."""

    __slots__ = ("_children", "_metric")

    def __init__(self, metric: _M) -> None:
        self._metric: _M = metric
        self._children: dict[tuple[str, ...], _M] = {}

    def get(self, *values: str) -> _M:
        child = self._children.get(values)
        if child is None:
            child = self._metric.labels(*values)
            self._children[values] = child
        return child


class Metrics:
    """The scheduler's metrics; one instance per scheduler process (or per test)."""

    def __init__(self, *, process_metrics: bool = True) -> None:
        # kube-scheduler exposes no `_created` series; prometheus_client adds one per counter
        # and histogram unless told not to. The switch is process-wide in prometheus_client.
        prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        if process_metrics:
            # process_cpu_seconds_total and process_resident_memory_bytes, as every Kubernetes
            # component exposes; benchmarks read CPU seconds and RSS from them.
            ProcessCollector(registry=r)

        self._attempts = LoopCounter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            r,
        )
        self._attempt_duration = LoopHistogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            exponential_buckets(0.001, 2, 15),
            r,
        )
        self._algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        # GenericWorkload's pod group metrics (metrics.go podGroupScheduleAttempts, ...).
        self._podgroup_attempts = _Children(
            Counter(
                "scheduler_podgroup_schedule_attempts_total",
                "Number of attempts to schedule pod group, by the result. 'unschedulable' "
                "means a pod group could not be scheduled, while 'error' means an internal "
                "scheduler problem.",
                ["result", "profile"],
                registry=r,
            )
        )
        self._podgroup_attempt_duration = _Children(
            Histogram(
                "scheduler_podgroup_scheduling_attempt_duration_seconds",
                "Pod group scheduling attempt latency in seconds",
                ["result", "profile"],
                buckets=exponential_buckets(0.001, 2, 15),
                registry=r,
            )
        )
        self._podgroup_algorithm_duration = Histogram(
            "scheduler_podgroup_scheduling_algorithm_duration_seconds",
            "Pod group scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self._preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims for preemption initiated by a single pod",
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )
        self._preemption_attempts = Counter(
            "scheduler_preemption_attempts_total",
            "Total preemption attempts in the cluster till now",
            registry=r,
        )
        self._pending = _Children(
            Gauge(
                "scheduler_pending_pods",
                "Number of pending pods, by the queue type. 'active' means number of pods in "
                "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number "
                "of pods in unschedulablePods that the scheduler attempted to schedule and failed; "
                "'gated' is the number of unschedulable pods that the scheduler never attempted to "
                "schedule because they are gated.",
                ["queue"],
                registry=r,
            )
        )
        # Every queue shows up from the first scrape, as in kube-scheduler.
        for queue in PENDING_QUEUES:
            self._pending.get(queue).set(0)
        self._sli_duration = LoopHistogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the "
            "scheduling queue and might involve multiple scheduling attempts.",
            ["attempts"],
            exponential_buckets(0.01, 2, 20),
            r,
        )
        self._pod_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5),
            registry=r,
        )
        self._extension_point = LoopHistogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            exponential_buckets(0.0001, 2, 12),
            r,
        )
        self._plugin_execution = LoopHistogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            exponential_buckets(0.00001, 1.5, 20),
            r,
        )
        self._incoming = LoopCounter(
            "scheduler_queue_incoming_pods_total",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            r,
        )
        self._permit_wait = _Children(
            Histogram(
                "scheduler_permit_wait_duration_seconds",
                "Duration of waiting on permit.",
                ["result"],
                buckets=exponential_buckets(0.001, 2, 15),
                registry=r,
            )
        )
        # asched runs binding cycles as asyncio tasks, not goroutines; the name is kept so
        # kube-scheduler's dashboards read it (operation="binding": Permit wait to PostBind).
        self._goroutines = _Children(
            Gauge(
                "scheduler_goroutines",
                "Number of running goroutines split by the work they do such as binding.",
                ["operation"],
                registry=r,
            )
        )
        self._goroutines.get("binding").set(0)
        self._cache_size = _Children(
            Gauge(
                "scheduler_cache_size",
                "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                ["type"],
                registry=r,
            )
        )
        self._unschedulable = _Children(
            Gauge(
                "scheduler_unschedulable_pods",
                "The number of unschedulable pods broken down by plugin name. A pod will increment "
                "the gauge for all plugins that caused it to not schedule and so this metric have "
                "meaning only when broken down by plugin.",
                ["plugin", "profile"],
                registry=r,
            )
        )
        self._plugin_evaluation = LoopCounter(
            "scheduler_plugin_evaluation_total",
            "Number of attempts to schedule pods by each plugin and the extension point "
            "(available only in PreFilter, Filter, PreScore, and Score).",
            ["plugin", "extension_point", "profile"],
            r,
        )
        # OpportunisticBatching (metrics.go BatchAttemptStats, BatchCacheFlushed,
        # BatchRescoreAttempts).
        self._batch_attempts = LoopCounter(
            "scheduler_batch_attempts_total",
            "Counts of results when we attempt to use batching.",
            ["profile", "result"],
            r,
        )
        self._batch_flushed = LoopCounter(
            "scheduler_batch_cache_flushed_total",
            "Counts of cache flushes by reason.",
            ["profile", "reason"],
            r,
        )
        self._batch_rescore = LoopCounter(
            "scheduler_batch_rescore_attempts_total",
            "Counts of rescore attempts during opportunistic batching.",
            ["profile"],
            r,
        )

        # asched's own: the event loop is the one resource every cycle shares.
        self._loop_lag = Histogram(
            "asched_event_loop_lag_seconds",
            "How late the event loop woke a periodic sleeper: time spent by other work "
            "holding the loop.",
            buckets=exponential_buckets(0.0001, 2, 16),
            registry=r,
        )
        self._loop_lag_net = Histogram(
            "asched_event_loop_lag_net_seconds",
            "Event-loop lag minus the time the loop's thread waited, runnable, for a CPU in "
            "the same interval (Linux schedstat): the part asched's own work held the loop.",
            buckets=exponential_buckets(0.0001, 2, 16),
            registry=r,
        )
        self._gc_pause = _Children(
            Histogram(
                "asched_gc_pause_seconds",
                "How long each garbage collection held the event loop's thread, by "
                "generation (CPython's collector stops the thread that triggered it).",
                ["generation"],
                buckets=exponential_buckets(0.0001, 2, 16),
                registry=r,
            )
        )
        self._gc_full_unreachable = Counter(
            "asched_gc_full_collection_unreachable_objects",
            "Unreachable objects found by the full collections (gctune.Sweeper): "
            "cyclic garbage the young sweeps froze while it was still alive, plus any "
            "found since the last sweep. Its rate is what freezing would leak without it.",
            registry=r,
        )
        self._malloc_trim = Counter(
            "asched_malloc_trim_seconds",
            "Time spent handing the C heap's free pages back to the kernel "
            "(malloctrim.Trimmer, glibc's malloc_trim, about once a second).",
            registry=r,
        )
        self._unexpected_errors = _Children(
            Counter(
                "asched_unexpected_errors_total",
                "Exceptions that were neither an API error nor a transport failure (bugs), "
                "logged with their stack and survived, by the component that caught them.",
                ["component"],
                registry=r,
            )
        )
        self._request_failures = _Children(
            Counter(
                "asched_request_failures_total",
                "Requests to the API server that failed in a routine way (no answer, a "
                "timeout, or a non-2xx answer), by HTTP verb, resource[/subresource] and "
                "kind: transport, timeout, conflict (409), gone (410), invalid (422), "
                "too_many_requests (429), server_error (5xx), client_error (other 4xx). "
                "Counted once by the client, whatever the caller then does.",
                ["verb", "resource", "kind"],
                registry=r,
            )
        )
        self._events_dropped = Counter(
            "asched_events_dropped_total",
            "Kubernetes Events dropped because the recorder's bounded queue was full.",
            registry=r,
        )

    # ---- scheduling attempts ------------------------------------------------------------

    def observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        """One scheduling attempt ended: `result` is scheduled, unschedulable or error."""
        self._attempts.get(result, profile).inc()
        self._attempt_duration.get(result, profile).observe(seconds)

    def observe_algorithm(self, seconds: float) -> None:
        self._algorithm_duration.observe(seconds)

    def observe_pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        """One group cycle ended: scheduled, unschedulable or error."""
        self._podgroup_attempts.get(result, profile).inc()
        self._podgroup_attempt_duration.get(result, profile).observe(seconds)

    def observe_pod_group_algorithm(self, seconds: float) -> None:
        self._podgroup_algorithm_duration.observe(seconds)

    def pod_scheduled(self, attempts: int, sli_seconds: float) -> None:
        """A pod was bound after `attempts` attempts, `sli_seconds` after it was first queued."""
        self._pod_attempts.observe(attempts)
        self._sli_duration.get(str(attempts)).observe(sli_seconds)

    # ---- framework ----------------------------------------------------------------------

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        """All plugins of one extension point ran; `status` is the Status code's name."""
        self._extension_point.get(point, status, profile).observe(seconds)

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """One plugin at one extension point (the runtime calls this for sampled cycles)."""
        self._plugin_execution.get(plugin, point, status).observe(seconds)

    def plugin_evaluation(self, plugin: str, point: str, profile: str, count: int = 1) -> None:
        """`plugin` ran `count` times at `point` (PreFilter, Filter, PreScore, Score): once
        per cycle at the Pre points, once per node at Filter and Score."""
        self._plugin_evaluation.get(plugin, point, profile).inc(count)

    def goroutines(self, operation: str, delta: int) -> None:
        """Work of `operation` (binding) started (+1) or ended (-1)."""
        self._goroutines.get(operation).inc(delta)

    def permit_wait(self, result: str, seconds: float) -> None:
        """A pod waited `seconds` at Permit; `result` is the final Status code's name."""
        self._permit_wait.get(result).observe(seconds)

    def batch_attempt(self, profile: str, result: str) -> None:
        """A pod's node hint: no_hint, hint_used or hint_not_used."""
        self._batch_attempts.get(profile, result).inc()

    def batch_flushed(self, profile: str, reason: str) -> None:
        """The kept ranking could not serve a pod (or was dropped), and why."""
        self._batch_flushed.get(profile, reason).inc()

    def batch_rescore(self, profile: str) -> None:
        """The node chosen last was rescored to compete for the next hint."""
        self._batch_rescore.get(profile).inc()

    # ---- queue and cache ----------------------------------------------------------------

    def set_pending(self, counts: Mapping[str, int]) -> None:
        """Pending pods per queue; queues missing from `counts` keep their last value."""
        for queue, count in counts.items():
            self._pending.get(queue).set(count)

    def incoming(self, queue: str, event: str) -> None:
        """A pod entered `queue` because of `event` (the queue's QueueMetrics Protocol)."""
        self._incoming.get(queue, event).inc()

    def unschedulable_changed(self, plugins: Sequence[str], profile: str, delta: int) -> None:
        """A pod entered (+1) or left (-1) the unschedulable pool, rejected by `plugins`."""
        for plugin in plugins:
            self._unschedulable.get(plugin, profile).inc(delta)

    def set_cache_size(self, nodes: int, pods: int, assumed_pods: int) -> None:
        self._cache_size.get("nodes").set(nodes)
        self._cache_size.get("pods").set(pods)
        self._cache_size.get("assumed_pods").set(assumed_pods)

    # ---- preemption ---------------------------------------------------------------------

    def preemption_attempt(self) -> None:
        self._preemption_attempts.inc()

    def preemption_victims(self, count: int) -> None:
        self._preemption_victims.observe(count)

    # ---- asched's own -------------------------------------------------------------------

    def loop_lag(self, seconds: float) -> None:
        self._loop_lag.observe(seconds)

    def loop_lag_net(self, seconds: float) -> None:
        self._loop_lag_net.observe(seconds)

    def gc_pause(self, generation: int, seconds: float) -> None:
        self._gc_pause.get(str(generation)).observe(seconds)

    def gc_full_collection(self, unreachable: int) -> None:
        self._gc_full_unreachable.inc(unreachable)

    def malloc_trim(self, seconds: float) -> None:
        self._malloc_trim.inc(seconds)

    def event_dropped(self) -> None:
        self._events_dropped.inc()

    def request_failed(self, verb: str, resource: str, kind: str) -> None:
        """A request failed in a routine way (asched.client.protocol.FailureCounter)."""
        self._request_failures.get(verb, resource, kind).inc()

    def unexpected_error(self, component: str) -> None:
        """A bug was caught and survived (asched.base.errors.UnexpectedErrors)."""
        self._unexpected_errors.get(component).inc()

    # ---- exposition ---------------------------------------------------------------------

    def render(self) -> bytes:
        """All metrics in the Prometheus text format (CONTENT_TYPE)."""
        data: bytes = generate_latest(self.registry)
        return data
