"""PodGroup status, computed from the members and written in coalesced batches.

Why batched: the gang state machine learns something about a group at nearly every
extension point of every member (PreEnqueue, PreFilter, Permit, PostBind). Writing each of
those would cost one PATCH per pod per cycle, which is how Volcano ended up with seconds-long
gaps between large gangs (volcano #5940). Here `mark()` only notes that a group changed (and
any field only the caller knows, such as scheduleStartTime); `run()` - a coroutine in the
scheduler's task group - asks `source` for the group's current status when the group's slot
comes, at most once per `interval` seconds per group, and writes only the fields that differ
from what was last written (or, before our first write, from what the informer observed).
Computing the status at write time also means counting a group's members once per interval,
not once per pod.

Guarantees: `mark()` never blocks and never raises; a failed write is retried at the
group's next slot; a group that no longer exists (404, or `source` returns None) is
dropped. Phases follow scheduler-plugins' PodGroup controller, plus `Scheduled` (minMember
members bound, fewer running) which our CRD lists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog

from asched.api.podgroup import (
    API_VERSION,
    PHASE_FAILED,
    PHASE_FINISHED,
    PHASE_PENDING,
    PHASE_RUNNING,
    PHASE_SCHEDULED,
    PHASE_SCHEDULING,
    PodGroup,
    PodGroupStatus,
)
from asched.base.clock import Clock
from asched.base.errors import UnexpectedErrors, report_unexpected
from asched.client.protocol import REQUEST_ERRORS, KubeClient, failure_fields, write_target_gone

log = structlog.get_logger(__name__)

DEFAULT_INTERVAL = 1.0
MAX_IN_FLIGHT = 8


@dataclass(slots=True, frozen=True)
class MemberCounts:
    """What the members of one group are doing, as the scheduler sees them."""

    total: int = 0  # members that exist, finished ones included
    scheduled: int = 0  # members with a node (bound, or assumed by this scheduler)
    running: int = 0
    succeeded: int = 0
    failed: int = 0


def phase_for(min_member: int, c: MemberCounts) -> str:
    """scheduler-plugins' controller rules; later rules win, as they do there."""
    need = max(min_member, 1)
    if c.total < need:
        return PHASE_PENDING
    if c.succeeded >= need:
        return PHASE_FINISHED
    if c.failed and c.failed + c.running + c.succeeded >= need:
        return PHASE_FAILED
    if c.running + c.succeeded >= need:
        return PHASE_RUNNING
    if c.scheduled >= need:
        return PHASE_SCHEDULED
    return PHASE_SCHEDULING


def desired_status(pg: PodGroup, c: MemberCounts, start_time: str = "") -> dict[str, Any]:
    """The status fields we own, in the API's spelling."""
    out: dict[str, Any] = {
        "phase": phase_for(pg.min_member, c),
        "scheduled": c.scheduled,
        "running": c.running,
        "succeeded": c.succeeded,
        "failed": c.failed,
    }
    if start_time:
        out["scheduleStartTime"] = start_time
    return out


def _observed(s: PodGroupStatus) -> dict[str, Any]:
    return {
        "phase": s.phase,
        "scheduled": s.scheduled,
        "running": s.running,
        "succeeded": s.succeeded,
        "failed": s.failed,
        "scheduleStartTime": s.schedule_start_time,
    }


# key -> (the PodGroup as last observed, the status fields we want), or None when it is gone.
StatusSource = Callable[[str], "tuple[PodGroup, dict[str, Any]] | None"]


@dataclass(slots=True)
class _Written:
    at: float
    fields: dict[str, Any] = field(default_factory=dict)


class PodGroupStatusWriter:
    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        source: StatusSource,
        *,
        interval: float = DEFAULT_INTERVAL,
        errors: UnexpectedErrors | None = None,
    ) -> None:
        self._client = client
        self._clock = clock
        self._source = source
        self._interval = interval
        self._errors = errors
        # key -> fields only the caller knows (merged over what `source` says).
        self._pending: dict[str, dict[str, Any]] = {}
        self._written: dict[str, _Written] = {}
        # Created by run(): an anyio Event needs a running event loop.
        self._wake: anyio.Event | None = None

    def mark(self, key: str, extra: Mapping[str, Any] | None = None) -> None:
        """The group `namespace/name` changed; write its status when its slot comes."""
        fields = self._pending.setdefault(key, {})
        if extra:
            fields.update(extra)
        if self._wake is not None:
            self._wake.set()

    def forget(self, key: str) -> None:
        """The group is gone: drop what we would write and what we wrote."""
        self._pending.pop(key, None)
        self._written.pop(key, None)

    def pending(self) -> int:
        return len(self._pending)

    def _patch(self, key: str, pg: PodGroup, fields: Mapping[str, Any]) -> dict[str, Any]:
        last = self._written.get(key)
        prev = last.fields if last is not None else {}
        observed = _observed(pg.status)
        return {k: v for k, v in fields.items() if prev.get(k, observed.get(k)) != v}

    def _due(self, now: float) -> tuple[list[str], float | None]:
        """Keys that may be written now, and when the next one may (None: none waiting)."""
        due: list[str] = []
        next_at: float | None = None
        for key in self._pending:
            last = self._written.get(key)
            at = -1.0 if last is None else last.at + self._interval
            if at <= now:
                due.append(key)
            elif next_at is None or at < next_at:
                next_at = at
        return due, next_at

    async def flush(self) -> None:
        """Write every group whose slot has come (what `run()` does on each wake-up)."""
        due, _ = self._due(self._clock.now())
        if not due:
            return
        limiter = anyio.Semaphore(MAX_IN_FLIGHT)
        async with anyio.create_task_group() as tg:
            for key in due:
                extra = self._pending.pop(key)
                current = self._source(key)
                if current is None:
                    self.forget(key)
                    continue
                pg, fields = current
                fields.update(extra)
                patch = self._patch(key, pg, fields)
                if not patch:
                    continue
                await limiter.acquire()
                tg.start_soon(self._send, key, pg, patch, extra, limiter)

    async def run(self) -> None:
        self._wake = anyio.Event()
        while True:
            if not self._pending:
                await self._wake.wait()
            self._wake = anyio.Event()
            await self.flush()
            _, next_at = self._due(self._clock.now())
            if next_at is not None:
                await self._clock.sleep(next_at - self._clock.now())

    async def _send(
        self,
        key: str,
        pg: PodGroup,
        patch: dict[str, Any],
        extra: dict[str, Any],
        limiter: anyio.Semaphore,
    ) -> None:
        now = self._clock.now()
        written = self._written.setdefault(key, _Written(now))
        # The slot is used even if the write fails, so a failing group cannot spin.
        written.at = now
        try:
            body: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "PodGroup", "status": patch}
            if pg.uid:
                # Fails (409) instead of writing to a group recreated under the same name.
                body["metadata"] = {"uid": pg.uid}
            await self._client.request(
                "PATCH",
                f"/apis/{API_VERSION}/namespaces/{pg.namespace}/podgroups/{pg.name}/status",
                body=body,
                content_type="application/merge-patch+json",
            )
            written.fields.update(patch)
            log.debug("podgroup_status_written", podgroup=key, **patch)
        except REQUEST_ERRORS as exc:
            # One classification (asched.client.protocol.FailureKind): a group gone (404)
            # or recreated under the same name (409, the uid precondition) has nothing
            # left to write; any other failure is retried at the group's next slot.
            if write_target_gone(exc):
                self.forget(key)
                return
            log.warning("podgroup_status_update_failed", podgroup=key, **failure_fields(exc))
            self._retry(key, extra)
        except Exception:
            # A bug: retrying would hit it again at every slot. The next change of the
            # group's status queues a fresh write.
            report_unexpected(
                log,
                self._errors,
                "podgroup_status",
                "podgroup_status_update_crashed",
                podgroup=key,
            )
        finally:
            limiter.release()

    def _retry(self, key: str, extra: Mapping[str, Any]) -> None:
        # The caller's fields must survive (newer ones win); the rest comes from `source`.
        pending = self._pending.setdefault(key, {})
        for k, v in extra.items():
            pending.setdefault(k, v)
        if self._wake is not None:
            self._wake.set()
