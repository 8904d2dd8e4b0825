"""Pods being scheduled, and the cluster events that arrived while they were.

Mirrors kube-scheduler's activeQueue inFlightPods / inFlightEvents. A pod popped from
the queue is "in flight" until `done`. Events that could move pods are logged while any
pod is in flight; when an in-flight pod fails, the queue replays the events logged
since it was popped against its rejecting plugins, so a node added mid-cycle is never
missed. Events older than the oldest in-flight pod are pruned, so the log stays bounded
by what in-flight pods can still need.

Also remembered per in-flight pod: the newest version the informer delivered and
whether it was deleted, so a failed pod goes back with its latest spec, or not at all.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from asched.api import Pod
from asched.framework.events import ClusterEvent


@dataclass(slots=True)
class _Flight:
    pod: Pod
    # Events with a sequence number above this one arrived after the pod was popped.
    since: int
    updated: Pod | None = None
    deleted: bool = False


@dataclass(slots=True, frozen=True)
class LoggedEvent:
    seq: int
    event: ClusterEvent
    old: object | None
    new: object | None


class InFlight:
    def __init__(self) -> None:
        self._seq = 0
        # Insertion order is pop order, so the first value is the oldest flight.
        self._pods: dict[str, _Flight] = {}
        self._events: deque[LoggedEvent] = deque()

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    @property
    def logged_events(self) -> int:
        return len(self._events)

    def pods(self) -> list[Pod]:
        return [f.pod for f in self._pods.values()]

    def start(self, pod: Pod) -> bool:
        """Track a popped pod; False if it is already in flight."""
        if pod.uid in self._pods:
            return False
        self._pods[pod.uid] = _Flight(pod, self._seq)
        return True

    def record(self, event: ClusterEvent, old: object | None, new: object | None) -> bool:
        """Log an event for every in-flight pod; False (not logged) when none is in flight."""
        if not self._pods:
            return False
        self._seq += 1
        self._events.append(LoggedEvent(self._seq, event, old, new))
        return True

    def record_for_pod(
        self, uid: str, events: list[ClusterEvent], old: object | None, new: object | None
    ) -> bool:
        """Log events about one pod if it is in flight (kube-scheduler addEventsIfPodInFlight).

        Like kube-scheduler, the events go to the shared log; hint functions of other
        pods see a pod object that is not theirs and skip it.
        """
        if uid not in self._pods:
            return False
        for event in events:
            self.record(event, old, new)
        return True

    def events_since_pop(self, uid: str) -> list[LoggedEvent] | None:
        """Events logged since the pod was popped, oldest first; None if not in flight."""
        flight = self._pods.get(uid)
        if flight is None:
            return None
        out = []
        for logged in reversed(self._events):
            if logged.seq <= flight.since:
                break
            out.append(logged)
        out.reverse()
        return out

    def remember_update(self, uid: str, pod: Pod) -> None:
        flight = self._pods.get(uid)
        if flight is not None:
            flight.updated = pod

    def remember_delete(self, uid: str) -> None:
        flight = self._pods.get(uid)
        if flight is not None:
            flight.deleted = True

    def latest(self, uid: str) -> tuple[Pod | None, bool]:
        """(newest version seen while in flight or None, deleted while in flight)."""
        flight = self._pods.get(uid)
        if flight is None:
            return None, False
        return flight.updated, flight.deleted

    def done(self, uid: str) -> None:
        """The pod's cycle is over; drop events no remaining in-flight pod can need."""
        if self._pods.pop(uid, None) is None:
            return
        if not self._pods:
            self._events.clear()
            return
        oldest = next(iter(self._pods.values())).since
        events = self._events
        while events and events[0].seq <= oldest:
            events.popleft()

    def clear(self) -> None:
        self._pods.clear()
        self._events.clear()
