"""The coalescing status writer behind PodStatusWriter and PodGroupConditionWriter.

Cycles must not await the network, so they record the status they want here and `run()`
(owned by the scheduler's task group) sends it as a strategic-merge PATCH. Updates to one
object coalesce (latest wins: one patch per change, not one per cycle), at most
`max_in_flight` patches are in flight, and at most one per object: a newer update waits
until the object's patch in flight has finished, so two of its patches are never
reordered (kube-scheduler's callQueue keeps one call per object in flight the same way,
backend/api_dispatcher/call_queue.go). A failure is logged, never raised: a status only
informs users, and raising would end run() and with it the scheduler; the next cycle of
the object writes again. A 404 or a uid-precondition conflict (409) means the object is
gone and is silent; so is a refusal the writer's `moot(item, error)` expects (logged at
debug).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
from structlog.typing import FilteringBoundLogger

from asched.base.clock import Clock
from asched.base.errors import UnexpectedErrors, report_unexpected
from asched.client.protocol import REQUEST_ERRORS, ApiError, KubeClient, failure_fields

T = TypeVar("T")

STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"


@dataclass(frozen=True, slots=True)
class PatchNames:
    """How one writer's failures are logged: its logger, the events and the object's field."""

    log: Any
    failed: str  # e.g. pod_status_update_failed
    area: str  # report_unexpected's area, e.g. pod_status
    crashed: str  # e.g. pod_status_update_crashed
    field: str  # the log field naming the object, e.g. pod


class CoalescingPatcher(Generic[T]):
    def __init__(
        self,
        client: KubeClient,
        errors: UnexpectedErrors | None,
        names: PatchNames,
        *,
        max_in_flight: int,
        render: Callable[[T], tuple[str, Mapping[str, object]]],
        where: Callable[[T], str],
        on_failure: Callable[[T], object] | None = None,
        moot: Callable[[T, ApiError], bool] | None = None,
    ) -> None:
        """`render(item)` gives the PATCH path and body; `where(item)` the object's
        "namespace/name"; `on_failure(item)` runs when a patch was not written;
        `moot(item, error)` says a refusal was expected (the patch no longer mattered)."""
        self._client = client
        self._errors = errors
        self._names = names
        self._max = max_in_flight
        self._render = render
        self._where = where
        self._on_failure = on_failure
        self._moot = moot
        self.pending: dict[str, T] = {}
        #: Objects with a patch in flight, each set when that patch has finished.
        self._in_flight: dict[str, anyio.Event] = {}
        self._wake = anyio.Event()

    def put(self, key: str, item: T) -> None:
        self.pending[key] = item
        self._wake.set()

    def wake(self) -> None:
        """A pending item was changed in place."""
        self._wake.set()

    async def sent(self, key: str, clock: Clock, within: float) -> bool:
        """Wait until no patch for *key* is in flight, at most `within` seconds on
        `clock`; whether none is."""
        done = self._in_flight.get(key)
        return done is None or await clock.wait(done, within)

    async def run(self) -> None:
        limiter = anyio.Semaphore(self._max)
        async with anyio.create_task_group() as tg:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                while ready := [k for k in self.pending if k not in self._in_flight]:
                    for key in ready:
                        await limiter.acquire()
                        # An update may have been withdrawn while this loop waited.
                        item = self.pending.pop(key, None)
                        if item is None:
                            limiter.release()
                            continue
                        self._in_flight[key] = anyio.Event()
                        tg.start_soon(self._send, key, item, limiter)

    def _failed(self, item: T) -> None:
        if self._on_failure is not None:
            self._on_failure(item)

    async def _send(self, key: str, item: T, limiter: anyio.Semaphore) -> None:
        n = self._names
        log: FilteringBoundLogger = n.log
        where = {n.field: self._where(item)}
        try:
            path, body = self._render(item)
            await self._client.request("PATCH", path, body=body, content_type=STRATEGIC_MERGE_PATCH)
        except REQUEST_ERRORS as exc:
            self._failed(item)
            fields = failure_fields(exc)
            if isinstance(exc, ApiError) and self._moot is not None and self._moot(item, exc):
                log.debug(n.failed, **where, **fields, moot=True)
            elif not (isinstance(exc, ApiError) and (exc.not_found or exc.conflict)):
                log.warning(n.failed, **where, **fields)
        except Exception:
            # A bug, not the network: dropped rather than raised (see the module doc).
            self._failed(item)
            report_unexpected(log, self._errors, n.area, n.crashed, **where)
        finally:
            limiter.release()
            self._in_flight.pop(key).set()
            if key in self.pending:
                # An update that arrived while this one was in flight goes out now.
                self._wake.set()
