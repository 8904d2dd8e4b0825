"""Where a pod goes next: activeQ, backoffQ or the unschedulable pool.

The moves of kube-scheduler's PriorityQueue (moveToActiveQ, moveToBackoffQ,
requeuePodWithQueueingStrategy, movePodsToActiveOrBackoffQueue, and the two periodic
flushes' flushBackoffQCompleted and flushUnschedulableEntitiesLeftover), apart from the
queue's API in asched/backend/queue.py. They keep the queue's invariants: a pod (by UID) sits in
exactly one of activeQ, backoffQ and the pool after any move; PreEnqueue runs on the way
into activeQ (unless the pod comes straight from backoffQ, which ran it on the way in,
SchedulerPopFromBackoffQ) and on the way into backoffQ; every move is counted in
scheduler_queue_incoming_pods_total and wakes a waiting pop() when the pod can be popped.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from asched.backend.backoff import BackoffQueue, backing_off
from asched.backend.heap import KeyedHeap
from asched.backend.hints import HintIndex, Strategy
from asched.backend.inflight import InFlight
from asched.backend.nominator import Nominator
from asched.backend.queue_api import (
    ACTIVE,
    BACKOFF,
    BACKOFF_COMPLETE,
    GATED,
    POD_ADD,
    POD_UPDATE,
    UNSCHEDULABLE,
    PreEnqueueFn,
    QueueMetrics,
)
from asched.backend.unschedulable import UnschedulablePool
from asched.base.clock import Clock
from asched.framework.events import UNSCHEDULABLE_TIMEOUT, ClusterEvent, EventResource
from asched.framework.status import Code
from asched.framework.types import QueuedPodInfo

log = structlog.get_logger(__name__)


class Mover:
    """Moves pods between the queue's parts; owned by one SchedulingQueue."""

    def __init__(
        self,
        *,
        active: KeyedHeap[QueuedPodInfo],
        backoff: BackoffQueue,
        pool: UnschedulablePool,
        hints: HintIndex,
        inflight: InFlight,
        nominator: Nominator,
        pre_enqueue: PreEnqueueFn,
        clock: Clock,
        metrics: QueueMetrics | None,
        wake: Callable[[], None],
    ) -> None:
        self._active = active
        self._backoff = backoff
        self._pool = pool
        self._hints = hints
        self._inflight = inflight
        self._nominator = nominator
        self._pre_enqueue = pre_enqueue
        self._clock = clock
        self._metrics = metrics
        self._wake = wake

    def incoming(self, queue: str, event: str) -> None:
        if self._metrics is not None:
            self._metrics.incoming(queue, event)

    def _backing_off(self, qpi: QueuedPodInfo) -> bool:
        return backing_off(qpi, self._clock.now())

    def to_active(self, qpi: QueuedPodInfo, event: str, *, from_backoff: bool = False) -> bool:
        """PreEnqueue, then activeQ; a gated pod is (re)filed in the pool instead.

        kube-scheduler moveToActiveQ. A pod coming straight from backoffQ passed
        PreEnqueue on its way in and skips it. Returns True if the pod entered activeQ.
        """
        uid = qpi.uid
        if not from_backoff and self.gated(qpi, event):
            return False
        qpi.gating_plugin = ""
        if qpi.initial_attempt_timestamp is None:
            # kube-scheduler starts the pod's SLI clock when it first becomes active.
            qpi.initial_attempt_timestamp = self._clock.now()
        self._pool.remove(uid)
        self._backoff.remove(uid)
        self._active.push(uid, qpi)
        self.incoming(ACTIVE, event)
        if event in (POD_ADD, POD_UPDATE):
            self._nominator.add_nominated(qpi.pod)
        self._wake()
        return True

    def gated(self, qpi: QueuedPodInfo, event: str) -> bool:
        """Run PreEnqueue; a pod it rejects is (re)filed in the pool as gated."""
        gate = self._pre_enqueue(qpi.pod)
        if gate is None:
            return False
        plugin, status = gate
        uid = qpi.uid
        qpi.gating_plugin = plugin
        self._active.remove(uid)
        self._backoff.remove(uid)
        if self._pool.add(qpi):
            self.incoming(UNSCHEDULABLE, event)
        if status.code == Code.ERROR:
            log.warning(
                "pre_enqueue_error", pod=qpi.pod.key, plugin=plugin, message=status.message()
            )
        else:
            log.debug("pod_gated", pod=qpi.pod.key, plugin=plugin, trigger=event)
        return True

    def requeue(self, qpi: QueuedPodInfo, strategy: Strategy, event: str) -> str:
        """Place a non-gated pod by strategy (kube-scheduler requeuePodWithQueueingStrategy)."""
        if strategy is Strategy.SKIP:
            if self._pool.add(qpi):
                self.incoming(UNSCHEDULABLE, event)
            return UNSCHEDULABLE
        if strategy is Strategy.AFTER_BACKOFF and self._backing_off(qpi):
            return self.to_backoff(qpi, event)
        return ACTIVE if self.to_active(qpi, event) else GATED

    def to_backoff(self, qpi: QueuedPodInfo, event: str) -> str:
        """kube-scheduler moveToBackoffQ: PreEnqueue runs here, not on the way out.

        Pop may take the pod from backoffQ at once, so it is woken like activeQ's.
        """
        if self.gated(qpi, event):
            return GATED
        qpi.gating_plugin = ""
        self._pool.remove(qpi.uid)
        self._backoff.push(qpi)
        self.incoming(BACKOFF, event)
        self._wake()
        return BACKOFF

    def move_pods(
        self,
        pods: list[QueuedPodInfo],
        event: ClusterEvent,
        old: object | None,
        new: object | None,
    ) -> int:
        """kube-scheduler movePodsToActiveOrBackoffQueue; also logs the event for flights."""
        label = str(event)
        moved = 0
        hints = self._hints
        # Wildcard events (the leftover flush) re-run PreEnqueue on gated pods too, so a
        # pod a missing hint left gated is not stuck (moveEntitiesToActiveOrBackoffQueue).
        wildcard = event.resource is EventResource.WILDCARD
        for qpi in pods:
            if qpi.gating_plugin:
                if wildcard or hints.gate_strategy(qpi, event, old, new) is not Strategy.SKIP:
                    moved += self.to_active(qpi, label)
                continue
            strategy = hints.strategy(qpi, event, old, new)
            if strategy is not Strategy.SKIP:
                moved += self.requeue(qpi, strategy, label) != GATED
        self._inflight.record(event, old, new)
        if moved:
            log.debug("pods_moved", trigger=label, moved=moved)
        return moved

    def flush_backoff_completed(self) -> int:
        """flushBackoffQCompleted: backoffQ's expired windows to activeQ, PreEnqueue
        skipped (it ran on the way in); returns how many entered activeQ."""
        moved = 0
        for qpi in self._backoff.pop_completed(self._clock.now()):
            moved += self.to_active(qpi, BACKOFF_COMPLETE, from_backoff=True)
        return moved

    def flush_left_over(self, max_unschedulable: float) -> int:
        """flushUnschedulableEntitiesLeftover: pool pods that sat longer than
        max_unschedulable, counted from their last failure or last such flush, whichever
        is later (FlushTimestamp); gated pods run PreEnqueue again."""
        now = self._clock.now()
        deadline = now - max_unschedulable
        stale = [q for q in self._pool.pods() if max(q.timestamp, q.flush_timestamp) < deadline]
        if not stale:
            return 0
        for qpi in stale:
            qpi.flush_timestamp = now
        return self.move_pods(stale, UNSCHEDULABLE_TIMEOUT, None, None)
