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

This module is the queue's API and lifecycle; the moves between its parts are
asched/backend/mover.py, the backoff arithmetic asched/backend/backoff.py, the hints
asched/backend/hints.py, and the names, labels and callbacks asched/backend/queue_api.py.

Guarantees: a pod (by UID) is in at most one of activeQ, backoffQ, the pool and in
flight; every pod entering activeQ has passed PreEnqueue; `pop` never polls, it waits
on an event set by whatever adds to activeQ; time only comes from the injected Clock.
The queue is not thread-safe: every call must come from the event loop that owns it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import anyio
import anyio.lowlevel
import structlog

from asched.api import Pod
from asched.backend.backoff import (
    BackoffQueue,
    align_to_window,
    record_failure,
)
from asched.backend.heap import KeyedHeap
from asched.backend.hints import HintIndex, HintMap, Strategy, pod_update_events
from asched.backend.inflight import InFlight
from asched.backend.mover import Mover
from asched.backend.nominator import Nominator
from asched.backend.queue_api import (
    ACTIVE,
    BACKOFF,
    BACKOFF_FLUSH_INTERVAL,
    GATED,
    IN_FLIGHT,
    LEFTOVER_FLUSH_INTERVAL,
    POD_ADD,
    POD_UPDATE,
    POP_FROM_BACKOFF,
    SCHEDULE_ATTEMPT_FAILURE,
    UNSCHEDULABLE,
    LessFn,
    PreEnqueueFn,
    QueueClosed,
    QueueMetrics,
    UnschedulableMetrics,
)
from asched.backend.unschedulable import ANY_PLUGIN, UnschedulablePool
from asched.base.clock import Clock
from asched.framework.events import (
    FORCE_ACTIVATE,
    ClusterEvent,
    EventResource,
)
from asched.framework.types import QueuedPodInfo

__all__ = [
    "HintMap",
    "LessFn",
    "PreEnqueueFn",
    "QueueClosed",
    "QueueMetrics",
    "SchedulingQueue",
]

log = structlog.get_logger(__name__)


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
        self._mover = Mover(
            active=self._active,
            backoff=self._backoff,
            pool=self._pool,
            hints=self._hints,
            inflight=self._inflight,
            nominator=self._nominator,
            pre_enqueue=pre_enqueue,
            clock=clock,
            metrics=metrics,
            wake=self._wake,
        )

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
        self._mover.to_active(self._new_info(pod), POD_ADD)

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
            self._mover.to_active(self._new_info(new), POD_UPDATE)
            return
        self._replace_pod(qpi, old, new)
        if qpi.gating_plugin:
            self._mover.to_active(qpi, POD_UPDATE)
            return
        for event in events:
            strategy = self._hints.strategy(qpi, event, old, new)
            if strategy is not Strategy.SKIP:
                self._mover.requeue(qpi, strategy, str(event))
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
                moved += self._mover.to_active(qpi, label, from_backoff=from_backoff)
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
        return self._mover.move_pods(candidates, event, old, new)

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
        qpi.cycle = self._cycle
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
            self._mover.incoming(ACTIVE, POP_FROM_BACKOFF)
        return qpi

    def done(self, uid: str) -> None:
        """The pod's attempt is over (bound, or requeued); forget its in-flight events."""
        self._inflight.done(uid)

    def add_unschedulable_if_not_present(
        self,
        qpi: QueuedPodInfo,
        *,
        error: bool = False,
        entity_size: int = 1,
        group_siblings: Sequence[str] | None = None,
    ) -> None:
        """Requeue a pod after a failed attempt (kube-scheduler AddUnschedulableIfNotPresent).

        `qpi.unschedulable_plugins` / `pending_plugins` name the plugins that rejected
        it; `error=True` (or no plugin) means an internal error: retried after backoff.
        Otherwise it goes to the pool, unless an event logged while it was in flight
        makes one of its rejecting plugins say Queue: then backoffQ (Unschedulable) or
        straight to activeQ (Pending). Calls done(uid); a no-op after close().
        `entity_size`: how many members of its pod group were tried with it as one entity
        (the native group cycle); their backoff cap grows with its square root.
        `group_siblings`: for a native pod-group member whose attempt ended outside a group
        cycle (its binding cycle failed), the uids of the other members. kube-scheduler
        (addPodGroupMember) adds it to its group's queued entity, where that entity waits,
        or, with none queued, makes it a new entity in activeQ: no backoff. asched queues
        members one by one, so the member goes where a queued sibling is, else to activeQ.
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
            record_failure(
                qpi,
                self._clock.now(),
                rejected=rejected,
                initial=self._initial_backoff,
                maximum=self._max_backoff,
                entity_size=entity_size,
            )
            if group_siblings is not None:
                strategy = self._with_siblings(group_siblings)
            else:
                strategy = self._after_flight(qpi) if rejected else Strategy.AFTER_BACKOFF
            qpi.moved_during_cycle = rejected and strategy is not Strategy.SKIP
            queue = self._mover.requeue(qpi, strategy, SCHEDULE_ATTEMPT_FAILURE)
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
        """Move pods whose backoff expired to activeQ; returns how many entered it."""
        return self._mover.flush_backoff_completed()

    def flush_unschedulable_left_over(self) -> int:
        """Move pods that sat in the pool longer than max_unschedulable_duration."""
        return self._mover.flush_left_over(self._max_unschedulable)

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

    def drained(self) -> bool:
        """Nothing active, backing off or in a scheduling cycle (unschedulable pods may
        wait: they need a cluster event, not the scheduler's time)."""
        return not self._active and not self._backoff and not self._inflight

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

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    def _with_siblings(self, uids: Sequence[str]) -> Strategy:
        """addPodGroupMember's queue for a member: its group's (the first queued sibling's),
        activeQ when none is queued."""
        for uid in uids:
            where = self.where(uid)
            if where == ACTIVE:
                return Strategy.IMMEDIATELY
            if where == BACKOFF:
                return Strategy.AFTER_BACKOFF
            if where in (UNSCHEDULABLE, GATED):
                return Strategy.SKIP
        return Strategy.IMMEDIATELY

    def _after_flight(self, qpi: QueuedPodInfo) -> Strategy:
        logged = self._inflight.events_since_pop(qpi.uid)
        if logged is None:
            log.error("failed_pod_was_not_in_flight", pod=qpi.pod.key)
            return Strategy.AFTER_BACKOFF
        return self._hints.strategy_after_flight(qpi, logged)
