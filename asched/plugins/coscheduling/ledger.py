"""The gang manager's ledger: a group's failure, backoff, Warning events and status marks.

A failed group is backed off (podGroupBackoffSeconds) and its members activated when the
backoff ends; the same Warning is not repeated within a minute; the status writer
(status.py) is told which groups changed and asks the book what to write. The ledger
records what GangManager decided; it decides nothing.
"""

from __future__ import annotations

import structlog

from asched.api.meta import rfc3339
from asched.api.podgroup import PodGroup
from asched.framework.handle import Handle
from asched.plugins.coscheduling.groups import GroupBook
from asched.plugins.coscheduling.status import PodGroupStatusWriter
from asched.plugins.coscheduling.timers import Timers

log = structlog.get_logger(__name__)

# The same Warning about a group is not repeated more often than this.
EVENT_REPEAT_SECONDS = 60.0


class GroupLedger:
    def __init__(
        self,
        handle: Handle,
        book: GroupBook,
        timers: Timers,
        status: PodGroupStatusWriter | None,
        *,
        backoff_seconds: float,
    ) -> None:
        self._handle = handle
        self._clock = handle.clock
        self._book = book
        self._timers = timers
        self._status = status
        self._backoff = backoff_seconds

    def fail(self, pg: PodGroup, message: str, reason: str) -> None:
        """`message` goes into the Warning event; `reason`, shorter, to members in backoff."""
        g = self._book.state(pg.key)
        g.failure = reason
        g.failed_at = self._clock.wall()
        g.capacity_ok_until = 0.0
        g.quorum = False
        if self._backoff > 0:
            g.backoff_until = self._clock.now() + self._backoff
            self._timers.add(g.backoff_until, "backoff", pg.key)
        log.info("podgroup_rejected", podgroup=pg.key, reason=message, backoff=self._backoff)
        self.warn(pg, message)
        self.mark(pg)

    def warn(self, pg: PodGroup, message: str) -> None:
        g = self._book.state(pg.key)
        now = self._clock.now()
        last, at = g.last_event
        if last == message and now - at < EVENT_REPEAT_SECONDS:
            return
        g.last_event = (message, now)
        self._handle.events.event(pg.ref(), "Warning", "Unschedulable", "Scheduling", message)

    def mark(self, pg: PodGroup, *, starting: bool = False) -> None:
        """The group's status may have changed; `starting` records scheduleStartTime once."""
        if self._status is None:
            return
        g = self._book.state(pg.key)
        extra = None
        if starting and not g.started:
            g.started = True
            if not pg.status.schedule_start_time:
                extra = {"scheduleStartTime": rfc3339(self._clock.wall())}
        self._status.mark(pg.key, extra)

    def backoff_ended(self, key: str) -> None:
        """Activate the unassigned members of a group whose backoff ended."""
        g = self._book.peek(key)
        if g is None or g.backoff_until > self._clock.now():
            return
        namespace, _, name = key.partition("/")
        pods = [p for p in self._book.census(namespace, name).live.values() if not p.node_name]
        if pods:
            self._handle.activate(pods)
