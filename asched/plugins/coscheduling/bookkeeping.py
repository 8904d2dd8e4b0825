"""The gang manager's bookkeeping: a group's failure and backoff, Warning events, status.

A failed group is backed off (podGroupBackoffSeconds) and its members activated when the
backoff ends; the same Warning is not repeated within a minute; the status writer
(status.py) is told which groups changed and asks `status_for` (groups.py) what to write.
"""

from __future__ import annotations

from typing import Any

import anyio
import structlog

from asched.api.meta import rfc3339
from asched.api.podgroup import PodGroup
from asched.plugins.coscheduling.groups import GroupBook

log = structlog.get_logger(__name__)

# The same Warning about a group is not repeated more often than this.
EVENT_REPEAT_SECONDS = 60.0


class Bookkeeping(GroupBook):
    """Failure, backoff, events and status of the groups in the book."""

    def _fail_group(self, pg: PodGroup, message: str, reason: str) -> None:
        """`message` goes into the Warning event; `reason`, shorter, to members in backoff."""
        g = self._group(pg.key)
        g.failure = reason
        g.failed_at = self._clock.wall()
        g.capacity_ok_until = 0.0
        g.quorum = False
        if self._backoff > 0:
            g.backoff_until = self._clock.now() + self._backoff
            self.timers.add(g.backoff_until, "backoff", pg.key)
        log.info("podgroup_rejected", podgroup=pg.key, reason=message, backoff=self._backoff)
        self._warn(pg, message)
        self._mark(pg)

    def _warn(self, pg: PodGroup, message: str) -> None:
        g = self._group(pg.key)
        now = self._clock.now()
        last, at = g.last_event
        if last == message and now - at < EVENT_REPEAT_SECONDS:
            return
        g.last_event = (message, now)
        self._handle.events.event(pg.ref(), "Warning", "Unschedulable", "Scheduling", message)

    def _mark(self, pg: PodGroup, *, starting: bool = False) -> None:
        if self.status is None:
            return
        g = self._group(pg.key)
        extra = None
        if starting and not g.started:
            g.started = True
            if not pg.status.schedule_start_time:
                extra = {"scheduleStartTime": rfc3339(self._clock.wall())}
        self.status.mark(pg.key, extra)

    def _backoff_ended(self, key: str) -> None:
        """Activate the unassigned members of a group whose backoff ended."""
        namespace, _, name = key.partition("/")
        pods = [p for p in self._census(namespace, name).live.values() if not p.node_name]
        if pods:
            self._handle.activate(pods)

    async def run(self) -> None:
        """Timers and status writes (owned by the scheduler's task group via the plugin)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.timers.run)
            if self.status is not None:
                tg.start_soon(self.status.run)

    def describe(self) -> dict[str, Any]:
        """A snapshot of the state machine for debugging and tests."""
        return {
            "gate": self.gate_holder,
            "gate_waiters": sorted(p.key for p in self._gate_waiters.values()),
            "backoff": sorted(k for k in self._groups if self.in_backoff(k)),
            "blocked": {k: g.blocked_name for k, g in self._groups.items() if g.blocked_by},
        }
