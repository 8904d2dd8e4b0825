"""What one profile's runtime reports about its plugins: extension-point and plugin metrics,
plugin crashes and failed plugin requests.

The Framework (runtime.py) owns one PluginReports and calls it around every extension
point, so the metric names and sampling follow kube-scheduler's frameworkImpl
(metrics.FrameworkExtensionPointDuration for every point, metrics.PluginExecutionDuration
sampled for 10% of cycles, metrics.PluginEvaluationTotal) in one place. The metrics sink
is read from the services on every call: it is attached after the profile is built.
"""

from __future__ import annotations

import random
import time
from typing import Any

import structlog

from asched.base.errors import report_unexpected
from asched.client.protocol import failure_fields, failure_message
from asched.framework.services import SchedulerServices
from asched.framework.status import Code, Status

log = structlog.get_logger(__name__)

# kube-scheduler samples plugin execution metrics for 10% of cycles.
PLUGIN_METRICS_SAMPLE = 0.10


def _status_name(st: Status | None) -> str:
    return "Success" if st is None else st.code_name()


class PluginReports:
    """Metrics and failure reports of one profile's plugins."""

    def __init__(self, profile_name: str, services: SchedulerServices) -> None:
        self._profile_name = profile_name
        self._services = services
        # Whether this cycle samples per-plugin durations (begin_cycle).
        self._sample = False

    def begin_cycle(self) -> None:
        """Draws whether the cycle now starting records per-plugin durations."""
        self._sample = random.random() < PLUGIN_METRICS_SAMPLE

    def point(self, point: str, status: Status | None, start: float) -> None:
        """An extension point ran from `start` (time.perf_counter) until now."""
        m = self._services.metrics
        if m is not None:
            m.extension_point(
                point, _status_name(status), self._profile_name, time.perf_counter() - start
            )

    def plugin(self, plugin: str, point: str, status: Status | None, start: float) -> None:
        """One plugin ran at `point` from `start`; recorded in sampled cycles only."""
        m = self._services.metrics
        if m is not None and self._sample:
            m.plugin_execution(plugin, point, _status_name(status), time.perf_counter() - start)

    def evaluated(self, plugin: str, point: str, count: int) -> None:
        """`plugin` was evaluated `count` times at `point` (one per node for Filter/Score)."""
        m = self._services.metrics
        if m is not None:
            m.plugin_evaluation(plugin, point, self._profile_name, count)

    def crashed(self, **where: Any) -> None:
        """Inside `except`: a plugin raised, a bug in it. Logged with the stack and counted
        (asched_unexpected_errors_total{component="plugin"}); the caller turns it into an
        Error status, or carries on where there is no status (Unreserve, PostBind)."""
        report_unexpected(log, self._services.metrics, "plugin", "plugin_error", **where)

    def request_failed(self, exc: Exception, *, plugin: str, **where: str) -> Status:
        """Inside `except REQUEST_ERRORS`: a plugin's request to the API server failed (a
        cut connection, a timeout, a 409, a 5xx), which is routine, not a bug. It becomes
        an Error status, as any bind error does in kube-scheduler (schedule_one.go
        bindingCycle -> handleBindingCycleError: unreserve, requeue), logged once as a
        warning with its kind; the client has counted it (asched_request_failures_total).
        No stack, no asched_unexpected_errors_total: plugins raise such failures rather
        than each catching them."""
        log.warning("plugin_request_failed", plugin=plugin, **where, **failure_fields(exc))
        message = failure_message(exc)
        return Status(Code.ERROR, (message,), plugin, exc)
