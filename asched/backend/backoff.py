"""The backoff queue: failed pods waiting out their backoff, in 1-second ordering windows.

Mirrors kube-scheduler's backoffQueue (backend/queue/backoff_queue.go) with
SchedulerPopFromBackoffQ (beta, on in 1.37):
- two heaps: pods rejected by plugins (ordered by backoff expiry, then as activeQ orders
  them within one expiry window), and pods that failed with an error (by expiry alone);
  a pod is in at most one of them;
- the expiry is the failure time plus initial * 2^(count-1), capped, truncated to a
  whole second (alignToWindow); `count` is the pod's unschedulable count, or its
  consecutive-error count when its last attempt was an error (getBackoffTime);
- a pod is still backing off while its expiry is not before the current window's start
  (isEntityBackingoff), so a whole window is flushed at once, on the aligned tick;
- when activeQ is empty, Pop takes the head of the rejected-pods heap (popBackoff);
  errored pods are never popped early, they protect the API server.

Guarantees: one entry per pod UID across both heaps; `backing_off` and `completed` use
only the injected time they are given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

from asched.backend.heap import KeyedHeap
from asched.framework.types import QueuedPodInfo

__all__ = [
    "ORDERING_WINDOW",
    "BackoffQueue",
    "align_to_window",
    "backoff_duration",
    "record_failure",
]

# backoffQOrderingWindowDuration: also the flush interval, so whole windows flush at once.
ORDERING_WINDOW = 1.0


def align_to_window(t: float) -> float:
    """alignToWindow: the start of t's ordering window (time.Truncate(1s))."""
    return math.floor(t / ORDERING_WINDOW) * ORDERING_WINDOW


def backoff_duration(count: int, initial: float, maximum: float, entity_size: int = 1) -> float:
    """calculateBackoffDuration: initial * 2^(count-1), capped at maximum; 0 for count 0.

    A pod group retried as one entity (the native group cycle's members) has its cap
    multiplied by the square root of the entity's size, as Go's backoffQueue does for
    a QueuedPodGroupInfo: longer than a single pod's, but not in proportion."""
    if count <= 0:
        return 0.0
    if entity_size > 1:
        maximum *= math.sqrt(entity_size)
    duration = initial
    for _ in range(1, count):
        if duration > maximum - duration:
            return maximum
        duration += duration
    return duration


def backoff_count(qpi: QueuedPodInfo) -> int:
    """getBackoffTime's exponent: consecutive errors if the last attempt errored, else
    the unschedulable count (bind errors and other errors never raise the latter)."""
    if qpi.consecutive_errors_count > 0:
        return qpi.consecutive_errors_count
    return qpi.unschedulable_count


def record_failure(
    qpi: QueuedPodInfo,
    now: float,
    *,
    rejected: bool,
    initial: float,
    maximum: float,
    entity_size: int = 1,
) -> None:
    """A failed attempt's bookkeeping (AddUnschedulablePodIfNotPresent), then its expiry.

    A pod no plugin rejected (an error: the API server, a bind or PreBind failure, a
    plugin error) counts one more consecutive error and keeps its unschedulable count;
    a pod plugins rejected (Filter, Reserve, Permit, WaitOnPermit: FitErrors) counts one
    more unschedulable attempt, and its errors in a row start again from zero. The
    expiry is getBackoffTime's: failure time + calculateBackoffDuration(backoff_count),
    truncated to its ordering window; 0 (no backoff) when podMaxBackoff is 0.
    `entity_size` > 1: the pod was tried as one of that many members of a pod group
    entity (backoff_duration scales the cap).
    """
    if rejected:
        qpi.unschedulable_count += 1
        qpi.consecutive_errors_count = 0
    else:
        qpi.consecutive_errors_count += 1
    qpi.timestamp = now
    qpi.flush_timestamp = 0.0
    count = backoff_count(qpi)
    if maximum <= 0 or count == 0:
        qpi.backoff_expiry = 0.0
        return
    duration = backoff_duration(count, initial, maximum, entity_size)
    qpi.backoff_expiry = align_to_window(now + duration)


def is_error_entry(qpi: QueuedPodInfo) -> bool:
    """backoffQueue.add: no rejecting plugin means the attempt ended in an error."""
    return not qpi.unschedulable_plugins and not qpi.pending_plugins


class BackoffQueue:
    def __init__(self, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        def by_window_then_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
            # lessBackoffCompletedWithPriority: expiries are aligned, so equal expiries
            # share a window, where activeQ's order decides.
            if a.backoff_expiry != b.backoff_expiry:
                return a.backoff_expiry < b.backoff_expiry
            return less(a, b)

        self._rejected: KeyedHeap[QueuedPodInfo] = KeyedHeap(by_window_then_less)
        self._errored: KeyedHeap[QueuedPodInfo] = KeyedHeap(_by_expiry)

    def __len__(self) -> int:
        return len(self._rejected) + len(self._errored)

    def __contains__(self, uid: object) -> bool:
        return uid in self._rejected or uid in self._errored

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._rejected.get(uid) or self._errored.get(uid)

    def push(self, qpi: QueuedPodInfo) -> None:
        """backoffQueue.add: the heap follows the pod's rejecting plugins."""
        uid = qpi.uid
        if is_error_entry(qpi):
            self._rejected.remove(uid)
            self._errored.push(uid, qpi)
        else:
            self._errored.remove(uid)
            self._rejected.push(uid, qpi)

    def fix(self, uid: str) -> None:
        """Re-place a pod after an update (backoffQueue.update's AddOrUpdate)."""
        self._rejected.fix(uid)
        self._errored.fix(uid)

    def remove(self, uid: str) -> QueuedPodInfo | None:
        found = self._rejected.remove(uid)
        return found if found is not None else self._errored.remove(uid)

    def pop_rejected(self) -> QueuedPodInfo | None:
        """popBackoff: the first pod of the rejected-pods heap, backoff done or not."""
        return self._rejected.pop() if self._rejected else None

    def pop_completed(self, now: float) -> list[QueuedPodInfo]:
        """popAllBackoffCompleted: rejected pods first, then errored ones."""
        out = []
        for heap in (self._rejected, self._errored):
            while True:
                head = heap.peek()
                if head is None or backing_off(head, now):
                    break
                heap.pop()
                out.append(head)
        return out

    def items(self) -> Iterator[QueuedPodInfo]:
        yield from self._rejected.items()
        yield from self._errored.items()


def backing_off(qpi: QueuedPodInfo, now: float) -> bool:
    """isEntityBackingoff: the expiry is not before the start of now's window."""
    return qpi.backoff_expiry >= align_to_window(now)


def _by_expiry(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    return a.backoff_expiry < b.backoff_expiry
