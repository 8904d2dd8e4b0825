"""The scheduling queue's vocabulary: queue names, metric labels, callbacks, errors.

Kept apart from asched/backend/queue.py so the queue's collaborators (the scheduler, the
metrics, the tests) can name these without the queue's machinery. The names and labels
are kube-scheduler's (scheduler_pending_pods{queue}, scheduler_queue_incoming_pods_total
{queue, event}), so dashboards built for kube-scheduler read asched's metrics unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from asched.api import Pod
from asched.backend.backoff import ORDERING_WINDOW
from asched.framework.status import Status
from asched.framework.types import QueuedPodInfo

LessFn = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
# Runs the pod's profile's PreEnqueue plugins: (plugin, status) of the first that
# rejects, or None when all pass.
PreEnqueueFn = Callable[[Pod], tuple[str, Status] | None]

# Queue names, as in scheduler_pending_pods{queue} / scheduler_queue_incoming_pods_total.
ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"
IN_FLIGHT = "in_flight"

# Event labels of scheduler_queue_incoming_pods_total besides ClusterEvent labels.
POD_ADD = "PodAdd"
POD_UPDATE = "PodUpdate"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF = "PopFromBackoffQ"

# kube-scheduler's Run: backoffQ flushed every second, on the ordering windows' edges,
# leftovers every 30 seconds.
BACKOFF_FLUSH_INTERVAL = ORDERING_WINDOW
LEFTOVER_FLUSH_INTERVAL = 30.0


class QueueClosed(Exception):
    """pop() on a closed queue: the scheduler is shutting down."""


class QueueMetrics(Protocol):
    def incoming(self, queue: str, event: str) -> None:
        """scheduler_queue_incoming_pods_total{queue, event} += 1."""
        ...


@runtime_checkable
class UnschedulableMetrics(Protocol):
    """Optional: scheduler_unschedulable_pods{plugin, profile}, fed by the pool."""

    def unschedulable_changed(self, plugins: Sequence[str], profile: str, delta: int) -> None: ...
