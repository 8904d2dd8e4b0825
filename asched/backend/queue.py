"""The scheduling queue: which pending pod to try next, and when to retry a rejected one.

Mirrors kube-scheduler's PriorityQueue (backend/queue/scheduling_queue.go, with
SchedulerQueueingHints GA and SchedulerPopFromBackoffQ beta and on):
- activeQ: pods ready to be tried, ordered by the QueueSort plugin's `less`;
- backoffQ: pods that failed and wait out their backoff (asched/backend/backoff.py:
  1-second ordering windows, the exponent is the unschedulable or consecutive-error
  count); when activeQ is empty, pop takes a rejected pod from backoffQ at once;
- the unschedulable pool: pods rejected by plugins, waiting for an event one of those
  plugins registered (and its queueing hint approves), or for the 5-minute timeout;
  also pods gated by a PreEnqueue plugin, which only PreEnqueue lets out;
- in-flight pods: popped and being scheduled; events arriving meanwhile are replayed
  when such a pod fails, so nothing that happened mid-cycle is missed.

Guarantees: a pod (by UID) is in at most one of activeQ, backoffQ, the pool and in
flight; every pod entering activeQ has passed PreEnqueue; `pop` never polls, it waits
on an event set by whatever adds to activeQ; time only comes from the injected Clock.
The queue is not thread-safe: every call must come from the event loop that owns it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

import anyio
import anyio.lowlevel
import structlog

from asched.api import Pod
from asched.backend.backoff import (
    ORDERING_WINDOW,
    BackoffQueue,
    align_to_window,
    backing_off,
    backoff_count,
    backoff_duration,
)
from asched.backend.heap import KeyedHeap
from asched.backend.hints import HintIndex, HintMap, Strategy, pod_update_events
from asched.backend.inflight import InFlight
from asched.backend.nominator import Nominator
from asched.backend.unschedulable import ANY_PLUGIN, UnschedulablePool
from asched.base.clock import Clock
from asched.framework.events import (
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    ClusterEvent,
    EventResource,
)
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo

__all__ = [
    "HintMap",
    "LessFn",
    "PreEnqueueFn",
    "QueueClosed",
    "QueueMetrics",
    "SchedulingQueue",
    "backoff_duration",
]

log = structlog.get_logger(__name__)

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


class SchedulingQueue:
    def __init__(
        self,
        less: LessFn,
        clock: Clock,
        *,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        pre_enqueue: PreEnqueueFn,
        hints: HintMap,
        max_unschedulable_duration: float = 300.0,
        metrics: QueueMetrics | None = None,
    ) -> None:
        self._clock = clock
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._pre_enqueue = pre_enqueue
        self._hints = HintIndex(hints)
        self._max_unschedulable = max_unschedulable_duration
        self._metrics = metrics
        self._active: KeyedHeap[QueuedPodInfo] = KeyedHeap(less)
        self._backoff = BackoffQueue(less)
        self._pool = UnschedulablePool(
            metrics.unschedulable_changed if isinstance(metrics, UnschedulableMetrics) else None
        )
        self._inflight = InFlight()
        self._nominator = Nominator()
        # Created lazily: anyio.Event needs a running event loop.
        self._wakeup: anyio.Event | None = None
        self._closed = False
        self._cycle = 0

    # ---- informer-driven changes -------------------------------------------------
    def add(self, pod: Pod) -> None:
        """A new pending pod: PreEnqueue, then activeQ (or the pool, gated)."""
        if pod.uid in self._inflight:
            self._inflight.remember_update(pod.uid, pod)
            return
        known = self._queued(pod.uid)
        if known is not None:
            # A relist re-announced a pod we hold: treat it as an update.
            self.update(known.pod, pod)
            return
        self._move_to_active(self._new_info(pod), POD_ADD)

    def update(self, old: Pod | None, new: Pod) -> None:
        """kube-scheduler PriorityQueue.Update."""
        uid = new.uid
        events = pod_update_events(old, new)
        if self._inflight.record_for_pod(uid, events, old, new):
            # Being scheduled: on failure it is requeued with this version, and the
            # events just logged decide whether the update makes it schedulable.
            self._inflight.remember_update(uid, new)
            return
        qpi = self._active.get(uid)
        if qpi is not None:
            self._replace_pod(qpi, old, new)
            self._active.fix(uid)
            return
        qpi = self._backoff.get(uid)
        if qpi is not None:
            self._replace_pod(qpi, old, new)
            self._backoff.fix(uid)
            return
        qpi = self._pool.get(uid)
        if qpi is None:
            self._move_to_active(self._new_info(new), POD_UPDATE)
            return
        self._replace_pod(qpi, old, new)
        if qpi.gating_plugin:
            self._move_to_active(qpi, POD_UPDATE)
            return
        for event in events:
            strategy = self._hints.strategy(qpi, event, old, new)
            if strategy is not Strategy.SKIP:
                self._requeue(qpi, strategy, str(event))
                return

    def delete(self, pod: Pod) -> None:
        uid = pod.uid
        self._nominator.delete_nominated(pod)
        if self._active.remove(uid) is not None:
            return
        if self._backoff.remove(uid) is not None:
            return
        if self._pool.remove(uid) is not None:
            return
        # In flight: remembered so a failed attempt does not requeue a deleted pod.
        self._inflight.remember_delete(uid)

    def activate(self, pods: Iterable[Pod]) -> int:
        """Move these pods from backoffQ or the pool to activeQ (kube-scheduler Activate).

        A pod that is in flight gets a ForceActivate event, so it is requeued promptly if
        its attempt fails. Returns how many pods entered activeQ.
        """
        moved = 0
        label = str(FORCE_ACTIVATE)
        for pod in pods:
            qpi = self._pool.get(pod.uid)
            from_backoff = qpi is None
            if from_backoff:
                qpi = self._backoff.remove(pod.uid)
            if qpi is not None:
                moved += self._move_to_active(qpi, label, from_backoff=from_backoff)
            else:
                self._inflight.record_for_pod(pod.uid, [FORCE_ACTIVATE], None, pod)
        return moved

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object | None = None,
        new: object | None = None,
        *,
        keep: str = "",
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> int:
        """A cluster event happened: move the pool's pods it may help; returns how many moved.

        Only pods filed under a plugin that registered a matching event are looked at;
        wildcard events (UnschedulableTimeout, ForceActivate) look at every pod. The pod
        with uid *keep*, and pods *pre_check* refuses, are left where they are
        (kube-scheduler's PreEnqueueCheck).
        """
        if not self._hints.of_interest(event):
            return 0
        if event.resource is EventResource.WILDCARD:
            candidates = self._pool.pods()
        else:
            profiles = self._pool.profiles()
            keys = self._hints.plugins_for(profiles, event)
            keys.extend((profile, ANY_PLUGIN) for profile in profiles)
            candidates = self._pool.filed_under(keys, self._scopes(profiles, event, old, new))
        if keep:
            candidates = [qpi for qpi in candidates if qpi.uid != keep]
        if pre_check is not None:
            candidates = [qpi for qpi in candidates if pre_check(qpi.pod)]
        return self._move_pods(candidates, event, old, new)

    def _scopes(
        self, profiles: Iterable[str], event: ClusterEvent, old: object | None, new: object | None
    ) -> dict[tuple[str, str], frozenset[str]]:
        """(profile, plugin) -> the PodGroups this event may help, for scoped registrations."""
        found: dict[tuple[str, str], frozenset[str]] = {}
        for profile in profiles:
            for plugin, scope in self._hints.scopes_for(profile, event).items():
                try:
                    groups = scope(old, new)
                except Exception:
                    # As a failing hint counts as Queue: a failing scope narrows nothing.
                    log.exception("event_scope_failed", plugin=plugin, trigger=str(event))
                    continue
                if groups is not None:
                    found[(profile, plugin)] = groups
        return found

    # ---- the scheduling loop's side ------------------------------------------------
    async def pop(self) -> QueuedPodInfo:
        """Wait for the best pod in activeQ and mark it in flight; QueueClosed after close().

        With activeQ empty, a pod rejected by plugins waiting in backoffQ is taken at
        once (activeQueue.unlockedPop with SchedulerPopFromBackoffQ).
        """
        await anyio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._closed:
                raise QueueClosed
            popped = self._pop_active_or_backoff()
            if popped is not None:
                if self._inflight.start(popped.pod):
                    qpi = popped
                    break
                log.error("pod_popped_twice", pod=popped.pod.key)
                continue
            if self._wakeup is None:
                self._wakeup = anyio.Event()
            await self._wakeup.wait()
        self._cycle += 1
        self._begin_attempt(qpi)
        return qpi

    def _begin_attempt(self, qpi: QueuedPodInfo) -> None:
        qpi.attempts += 1
        # Reset for this attempt; the failure handler fills them in again.
        qpi.unschedulable_plugins = set()
        qpi.pending_plugins = set()
        qpi.moved_during_cycle = False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.now()

    def take(self, uids: Iterable[str]) -> list[QueuedPodInfo]:
        """Pop these pods too, wherever they wait, for the popped pod's group cycle.

        kube-scheduler queues a pod group as one entity; asched queues members one by one
        and, when one is popped, takes its queued siblings with it: from activeQ, backoffQ
        (the group's backoff is the popped member's) and the pool, where a sibling held by
        PreEnqueue comes along only if PreEnqueue now lets it. Each is marked in flight
        and counted as attempted, as pop does.
        """
        taken: list[QueuedPodInfo] = []
        for uid in uids:
            qpi = self._active.remove(uid) or self._backoff.remove(uid)
            if qpi is None:
                pooled = self._pool.get(uid)
                if pooled is None or (pooled.gating_plugin and self._pre_enqueue(pooled.pod)):
                    continue
                self._pool.remove(uid)
                pooled.gating_plugin = ""
                qpi = pooled
            if not self._inflight.start(qpi.pod):
                log.error("pod_popped_twice", pod=qpi.pod.key)
                continue
            self._begin_attempt(qpi)
            taken.append(qpi)
        return taken

    def _pop_active_or_backoff(self) -> QueuedPodInfo | None:
        if self._active:
            return self._active.pop()
        qpi = self._backoff.pop_rejected()
        if qpi is not None:
            self._incoming(ACTIVE, POP_FROM_BACKOFF)
        return qpi

    def done(self, uid: str) -> None:
        """The pod's attempt is over (bound, or requeued); forget its in-flight events."""
        self._inflight.done(uid)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, *, error: bool = False) -> None:
        """Requeue a pod after a failed attempt (kube-scheduler AddUnschedulableIfNotPresent).

        `qpi.unschedulable_plugins` / `pending_plugins` name the plugins that rejected
        it; `error=True` (or no plugin) means an internal error: retried after backoff.
        Otherwise it goes to the pool, unless an event logged while it was in flight
        makes one of its rejecting plugins say Queue: then backoffQ (Unschedulable) or
        straight to activeQ (Pending). Calls done(uid); a no-op after close().
        """
        uid = qpi.uid
        if self._closed:
            return
        try:
            latest, deleted = self._inflight.latest(uid)
            if deleted:
                log.debug("requeue_skipped_deleted", pod=qpi.pod.key)
                return
            if latest is not None:
                qpi.pod = latest
            if qpi.pod.node_name:
                log.debug("requeue_skipped_bound", pod=qpi.pod.key, node=qpi.pod.node_name)
                return
            if self._queued(uid) is not None:
                log.error("requeue_of_queued_pod", pod=qpi.pod.key, where=self.where(uid))
                return
            if error:
                qpi.unschedulable_plugins = set()
                qpi.pending_plugins = set()
            rejected = bool(qpi.unschedulable_plugins or qpi.pending_plugins)
            self._count_failure(qpi, rejected=rejected)
            strategy = self._strategy_after_flight(qpi) if rejected else Strategy.AFTER_BACKOFF
            qpi.moved_during_cycle = rejected and strategy is not Strategy.SKIP
            queue = self._requeue(qpi, strategy, SCHEDULE_ATTEMPT_FAILURE)
            log.debug(
                "pod_requeued",
                pod=qpi.pod.key,
                queue=queue,
                attempts=qpi.attempts,
                unschedulable_count=qpi.unschedulable_count,
                consecutive_errors=qpi.consecutive_errors_count,
                unschedulable=sorted(qpi.unschedulable_plugins),
                pending=sorted(qpi.pending_plugins),
                error=error,
            )
        finally:
            self.done(uid)

    def _count_failure(self, qpi: QueuedPodInfo, *, rejected: bool) -> None:
        """AddUnschedulablePodIfNotPresent's bookkeeping, then getBackoffTime.

        A pod no plugin rejected (an error: the API server, a bind failure, a plugin
        error) counts a consecutive error; a rejected pod counts an unschedulable
        attempt and its errors reset. The expiry is aligned to the ordering window.
        """
        if rejected:
            qpi.unschedulable_count += 1
            qpi.consecutive_errors_count = 0
        else:
            qpi.consecutive_errors_count += 1
        now = self._clock.now()
        qpi.timestamp = now
        count = backoff_count(qpi)
        if self._max_backoff <= 0 or count == 0:
            # podMaxBackoff 0 disables backoff; a pod never tried gets none.
            qpi.backoff_expiry = 0.0
            return
        duration = backoff_duration(count, self._initial_backoff, self._max_backoff)
        qpi.backoff_expiry = align_to_window(now + duration)

    # ---- periodic maintenance ------------------------------------------------------
    async def run(self) -> None:
        """Flush completed backoffs every second and leftovers every 30 s, until close().

        The backoff flush runs on the edges of the 1-second ordering windows, so a whole
        window moves at once (waitUntilAlignedWithOrderingWindow). The owner runs this
        in its task group and cancels it on shutdown.
        """
        last_leftover_flush = self._clock.now()
        while True:
            now = self._clock.now()
            await self._clock.sleep(align_to_window(now + BACKOFF_FLUSH_INTERVAL) - now)
            if self._closed:
                return
            self.flush_backoff_completed()
            now = self._clock.now()
            if now - last_leftover_flush >= LEFTOVER_FLUSH_INTERVAL:
                last_leftover_flush = now
                self.flush_unschedulable_left_over()

    def flush_backoff_completed(self) -> int:
        """Move pods whose backoff expired to activeQ; returns how many entered it.

        flushBackoffQCompleted: PreEnqueue already ran when they entered backoffQ.
        """
        moved = 0
        for qpi in self._backoff.pop_completed(self._clock.now()):
            moved += self._move_to_active(qpi, BACKOFF_COMPLETE, from_backoff=True)
        return moved

    def flush_unschedulable_left_over(self) -> int:
        """Move pods that sat in the pool longer than max_unschedulable_duration."""
        deadline = self._clock.now() - self._max_unschedulable
        stale = [q for q in self._pool.pods() if q.timestamp < deadline]
        if not stale:
            return 0
        return self._move_pods(stale, UNSCHEDULABLE_TIMEOUT, None, None)

    def close(self) -> None:
        """Wake every pop() with QueueClosed; in-flight bookkeeping is dropped."""
        self._closed = True
        self._inflight.clear()
        self._wake()

    # ---- introspection -------------------------------------------------------------
    @property
    def nominator(self) -> Nominator:
        return self._nominator

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def scheduling_cycle(self) -> int:
        """How many pods were popped so far."""
        return self._cycle

    def pending_counts(self) -> dict[str, int]:
        """For scheduler_pending_pods{queue}."""
        gated = self._pool.gated
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff),
            UNSCHEDULABLE: len(self._pool) - gated,
            GATED: gated,
        }

    def where(self, uid: str) -> str | None:
        """Which queue holds the pod: active, backoff, unschedulable, gated, in_flight."""
        if uid in self._active:
            return ACTIVE
        if uid in self._backoff:
            return BACKOFF
        qpi = self._pool.get(uid)
        if qpi is not None:
            return GATED if qpi.gating_plugin else UNSCHEDULABLE
        if uid in self._inflight:
            return IN_FLIGHT
        return None

    def get(self, uid: str) -> QueuedPodInfo | None:
        """The queued (not in-flight) entry of a pod."""
        return self._queued(uid)

    def pending_pods(self) -> list[Pod]:
        return [
            *(q.pod for q in self._active.items()),
            *(q.pod for q in self._backoff.items()),
            *(q.pod for q in self._pool.pods()),
        ]

    def pending_infos(self) -> list[QueuedPodInfo]:
        """Every queued entry with its attempt history (the inspector's pending list)."""
        return [*self._active.items(), *self._backoff.items(), *self._pool.pods()]

    def in_flight_pods(self) -> list[Pod]:
        return self._inflight.pods()

    # ---- internals -----------------------------------------------------------------
    def _new_info(self, pod: Pod) -> QueuedPodInfo:
        return QueuedPodInfo(pod=pod, timestamp=self._clock.now())

    def _queued(self, uid: str) -> QueuedPodInfo | None:
        return self._active.get(uid) or self._backoff.get(uid) or self._pool.get(uid)

    def _replace_pod(self, qpi: QueuedPodInfo, old: Pod | None, new: Pod) -> None:
        previous = qpi.pod
        qpi.pod = new
        self._nominator.update_nominated(old if old is not None else previous, new)

    def _incoming(self, queue: str, event: str) -> None:
        if self._metrics is not None:
            self._metrics.incoming(queue, event)

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    def _backing_off(self, qpi: QueuedPodInfo) -> bool:
        return backing_off(qpi, self._clock.now())

    def _move_to_active(
        self, qpi: QueuedPodInfo, event: str, *, from_backoff: bool = False
    ) -> bool:
        """PreEnqueue, then activeQ; a gated pod is (re)filed in the pool instead.

        kube-scheduler moveToActiveQ. A pod coming straight from backoffQ passed
        PreEnqueue on its way in and skips it. Returns True if the pod entered activeQ.
        """
        uid = qpi.uid
        if not from_backoff and self._gated(qpi, event):
            return False
        qpi.gating_plugin = ""
        if qpi.initial_attempt_timestamp is None:
            # kube-scheduler starts the pod's SLI clock when it first becomes active.
            qpi.initial_attempt_timestamp = self._clock.now()
        self._pool.remove(uid)
        self._backoff.remove(uid)
        self._active.push(uid, qpi)
        self._incoming(ACTIVE, event)
        if event in (POD_ADD, POD_UPDATE):
            self._nominator.add_nominated(qpi.pod)
        self._wake()
        return True

    def _gated(self, qpi: QueuedPodInfo, event: str) -> bool:
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
            self._incoming(UNSCHEDULABLE, event)
        if status.code == Code.ERROR:
            log.warning(
                "pre_enqueue_error", pod=qpi.pod.key, plugin=plugin, message=status.message()
            )
        else:
            log.debug("pod_gated", pod=qpi.pod.key, plugin=plugin, trigger=event)
        return True

    def _requeue(self, qpi: QueuedPodInfo, strategy: Strategy, event: str) -> str:
        """Place a non-gated pod by strategy (kube-scheduler requeuePodWithQueueingStrategy)."""
        if strategy is Strategy.SKIP:
            if self._pool.add(qpi):
                self._incoming(UNSCHEDULABLE, event)
            return UNSCHEDULABLE
        if strategy is Strategy.AFTER_BACKOFF and self._backing_off(qpi):
            return self._move_to_backoff(qpi, event)
        return ACTIVE if self._move_to_active(qpi, event) else GATED

    def _move_to_backoff(self, qpi: QueuedPodInfo, event: str) -> str:
        """kube-scheduler moveToBackoffQ: PreEnqueue runs here, not on the way out.

        Pop may take the pod from backoffQ at once, so it is woken like activeQ's.
        """
        if self._gated(qpi, event):
            return GATED
        qpi.gating_plugin = ""
        self._pool.remove(qpi.uid)
        self._backoff.push(qpi)
        self._incoming(BACKOFF, event)
        self._wake()
        return BACKOFF

    def _move_pods(
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
        for qpi in pods:
            if qpi.gating_plugin:
                if hints.gate_strategy(qpi, event, old, new) is not Strategy.SKIP:
                    moved += self._move_to_active(qpi, label)
                continue
            strategy = hints.strategy(qpi, event, old, new)
            if strategy is not Strategy.SKIP:
                moved += self._requeue(qpi, strategy, label) != GATED
        self._inflight.record(event, old, new)
        if moved:
            log.debug("pods_moved", trigger=label, moved=moved)
        return moved

    def _strategy_after_flight(self, qpi: QueuedPodInfo) -> Strategy:
        """kube-scheduler determineSchedulingHintForInFlightPod."""
        logged = self._inflight.events_since_pop(qpi.uid)
        if logged is None:
            log.error("failed_pod_was_not_in_flight", pod=qpi.pod.key)
            return Strategy.AFTER_BACKOFF
        result = Strategy.SKIP
        for entry in logged:
            strategy = self._hints.strategy(qpi, entry.event, entry.old, entry.new)
            if strategy is Strategy.IMMEDIATELY:
                return strategy
            if strategy is Strategy.AFTER_BACKOFF:
                if not qpi.pending_plugins:
                    return strategy
                result = strategy
        return result
