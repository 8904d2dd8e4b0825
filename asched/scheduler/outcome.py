"""How a scheduling attempt ends: the one owner of a pod's in-flight lifecycle.

A pod popped from the queue is *in flight* (the queue remembers events for it) until its
attempt ends. Every ending goes through `Outcomes`, and only Outcomes tells the queue
(`done`, or the requeue that implies it), so no path can leave a pod in flight or end it
twice:
- `bound`: the binding cycle finished; the SLI and attempt metrics are recorded;
- `failed`: kube-scheduler's handleSchedulingFailure: requeue (pool, backoff or active),
  a FailedScheduling event, the PodScheduled=False condition, the nomination;
- `dropped`: nothing to do (deleted, bound by someone else, or not ours).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

import structlog

from asched.api import Pod
from asched.base.clock import Clock
from asched.framework.handle import EventRecorder
from asched.framework.types import QueuedPodInfo

log = structlog.get_logger(__name__)

SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"


class AttemptMetrics(Protocol):
    def observe_attempt(self, result: str, profile: str, seconds: float) -> None: ...

    def pod_scheduled(self, attempts: int, sli_seconds: float) -> None: ...


class Nominator(Protocol):
    def add_nominated(self, pod: Pod, node_name: str) -> None: ...

    def delete_nominated(self, pod: Pod) -> None: ...


class RequeueQueue(Protocol):
    """The queue operations that end an attempt."""

    @property
    def nominator(self) -> Nominator: ...

    def done(self, uid: str) -> None: ...

    def add_unschedulable_if_not_present(
        self,
        qpi: QueuedPodInfo,
        *,
        error: bool = False,
        entity_size: int = 1,
        group_siblings: Sequence[str] | None = None,
    ) -> None: ...


class ConditionWriter(Protocol):
    def set_unschedulable(
        self, pod: Pod, reason: str, message: str, nominated: str | None
    ) -> None: ...


class Outcomes:
    def __init__(
        self,
        *,
        queue: RequeueQueue,
        current_pod: Callable[[str], Pod | None],
        events: Callable[[str], EventRecorder],
        conditions: ConditionWriter,
        clock: Clock,
        metrics: AttemptMetrics | None = None,
    ) -> None:
        """`current_pod(key)` is the informer's view; `events(profile)` its recorder."""
        self._queue = queue
        self._current = current_pod
        self._events = events
        self._conditions = conditions
        self._clock = clock
        self._metrics = metrics

    def dropped(self, qpi: QueuedPodInfo) -> None:
        self._queue.done(qpi.uid)

    def bound(self, qpi: QueuedPodInfo, profile: str, start: float) -> None:
        self._queue.done(qpi.uid)
        if self._metrics is None:
            return
        self._metrics.observe_attempt(SCHEDULED, profile, time.perf_counter() - start)
        if qpi.initial_attempt_timestamp is not None:
            self._metrics.pod_scheduled(
                qpi.attempts, self._clock.now() - qpi.initial_attempt_timestamp
            )

    def attempted(self, result: str, profile: str, start: float) -> None:
        """Count an attempt that did not bind (no requeue: see failed)."""
        if self._metrics is not None:
            self._metrics.observe_attempt(result, profile, time.perf_counter() - start)

    def failed(
        self,
        qpi: QueuedPodInfo,
        profile: str,
        start: float,
        message: str,
        *,
        error: bool,
        nominated: str | None = None,
        entity_size: int = 1,
        group_siblings: Sequence[str] | None = None,
    ) -> None:
        """kube-scheduler handleSchedulingFailure: requeue, event, condition, nomination.

        `nominated`: None leaves the nomination alone, "" clears it, a name sets it.
        `entity_size`: the size of the pod group entity it was tried in (backoff).
        `group_siblings`: a native group member failing outside a group cycle (the queue's
        add_unschedulable_if_not_present).
        """
        self.attempted(ERROR if error else UNSCHEDULABLE, profile, start)
        pod = qpi.pod
        current = self._current(pod.key)
        if current is None or current.uid != pod.uid or current.node_name:
            # Deleted, or bound by someone else, meanwhile: nothing to requeue.
            self._queue.done(pod.uid)
            return
        qpi.pod = current
        # Ends the flight.
        self._queue.add_unschedulable_if_not_present(
            qpi, error=error, entity_size=entity_size, group_siblings=group_siblings
        )
        if nominated:
            self._queue.nominator.add_nominated(current, nominated)
        elif nominated == "":
            self._queue.nominator.delete_nominated(current)
        reason = "SchedulerError" if error else "Unschedulable"
        log.info(
            "pod_schedule_error" if error else "pod_unschedulable",
            pod=pod.key,
            reason=reason,
            message=message,
            attempts=qpi.attempts,
        )
        self._events(profile).event(current, "Warning", "FailedScheduling", "Scheduling", message)
        self._conditions.set_unschedulable(current, reason, message, nominated)
