"""What every part of the framework runtime shares: the profile, metrics and crash reports.

Framework (runtime.py) is composed of one mixin per group of extension points
(runtime_filter.py, runtime_score.py, runtime_bind.py); each of them builds on this base,
so the extension-point code reads the same helpers kube-scheduler's frameworkImpl uses
(metrics.PluginExecutionDuration sampling, metrics.FrameworkExtensionPointDuration).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import structlog

from asched.base.clock import Clock
from asched.base.errors import report_unexpected
from asched.client.protocol import failure_fields, failure_message
from asched.framework.services import SchedulerServices
from asched.framework.status import Code, Status

log = structlog.get_logger(__name__)

# kube-scheduler samples plugin execution metrics for 10% of cycles.
PLUGIN_METRICS_SAMPLE = 0.10


class ProfileSpec:
    """The resolved plugin lists of one profile (what asched.config produces)."""

    def __init__(
        self,
        scheduler_name: str,
        plugins: Mapping[str, Sequence[tuple[str, int]]],
        plugin_args: Mapping[str, Any],
        percentage_of_nodes_to_score: int | None = None,
    ) -> None:
        self.scheduler_name = scheduler_name
        self.plugins = plugins
        self.plugin_args = plugin_args
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score


def _status_name(st: Status | None) -> str:
    return "Success" if st is None else st.code_name()


class RuntimeBase:
    """The state the runtime mixins share (set by Framework.__init__) and its metric helpers."""

    profile: ProfileSpec
    columnar: bool
    _services: SchedulerServices
    _sample_metrics: bool

    @property
    def profile_name(self) -> str:
        return self.profile.scheduler_name

    @property
    def clock(self) -> Clock:
        return self._services.clock

    # ---- metrics -----------------------------------------------------------------
    def begin_cycle(self) -> None:
        self._sample_metrics = random.random() < PLUGIN_METRICS_SAMPLE

    def _point(self, point: str, status: Status | None, start: float) -> None:
        m = self._services.metrics
        if m is not None:
            m.extension_point(
                point, _status_name(status), self.profile_name, time.perf_counter() - start
            )

    def _plugin(self, plugin: str, point: str, status: Status | None, start: float) -> None:
        m = self._services.metrics
        if m is not None and self._sample_metrics:
            m.plugin_execution(plugin, point, _status_name(status), time.perf_counter() - start)

    def _crashed(self, **where: Any) -> None:
        """Inside `except`: a plugin raised, a bug in it. Logged with the stack and counted
        (asched_unexpected_errors_total{component="plugin"}); the caller turns it into an
        Error status, or carries on where there is no status (Unreserve, PostBind)."""
        report_unexpected(log, self._services.metrics, "plugin", "plugin_error", **where)

    def _request_failed(self, exc: Exception, *, plugin: str, **where: str) -> Status:
        """Inside `except REQUEST_ERRORS`: a plugin's request to the API server failed (a
        cut connection, a timeout, a 409, a 5xx), which is routine, not a bug. It becomes
        an Error status, as any bind error does in kube-scheduler (schedule_one.go
        bindingCycle -> handleBindingCycleError: unreserve, requeue), logged once as a
        warning with its kind; the client has counted it (asched_request_failures_total).
        No stack, no asched_unexpected_errors_total: plugins raise such failures rather
        than each catching them."""
        log.warning("plugin_request_failed", plugin=plugin, **where, **failure_fields(exc))
        return Status(Code.ERROR, (failure_message(exc),), plugin, exc)

    def _evaluated(self, plugin: str, point: str, count: int) -> None:
        m = self._services.metrics
        if m is not None:
            m.plugin_evaluation(plugin, point, self.profile_name, count)
