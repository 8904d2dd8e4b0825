"""EventRecorder: records occurrences without blocking and has them written in the background.

The recorder's side of client-go's events broadcaster (tools/events/event_broadcaster.go):
aggregation into series, the bounded queue, the rate-limited writers, the periodic refresh
of series and the final drain; writing one series is writer.py's.
"""

from __future__ import annotations

import random
from collections import OrderedDict, deque
from typing import Any, NoReturn

import anyio
import structlog

from asched.base.clock import Clock, run_within
from asched.client.protocol import KubeClient
from asched.client.ratelimit import TokenBucket
from asched.metrics import Metrics
from asched.recorder.reference import (
    FIELD_LENGTH_LIMIT,
    NAME_LENGTH_LIMIT,
    NORMAL,
    WARNING,
    object_reference,
    truncate_note,
)
from asched.recorder.series import Reporter, Series, SeriesKey, new_reporter
from asched.recorder.writer import SeriesWriter

log = structlog.get_logger(__name__)


class EventRecorder:
    """Implements asched.framework.handle.EventRecorder; run `run()` in a task group."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        *,
        reporting_controller: str = "asched",
        reporting_instance: str | None = None,
        qps: float = 25.0,
        burst: int = 100,
        max_queued: int = 1000,
        max_series: int = 4096,
        series_window: float = 360.0,
        refresh_interval: float = 30.0,
        max_tries: int = 12,
        retry_interval: float = 10.0,
        writers: int = 100,
        metrics: Metrics | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if max_queued < 1 or max_series < 1 or max_tries < 1 or writers < 1:
            raise ValueError("max_queued, max_series, max_tries and writers must be >= 1")
        self._clock = clock
        self._reporter = new_reporter(reporting_controller, reporting_instance)
        self._views: dict[str, ControllerEvents] = {}
        self._limiter = TokenBucket(qps, burst, clock)
        self._max_queued = max_queued
        self._max_series = max_series
        self._series_window = series_window
        self._refresh_interval = refresh_interval
        self._writers = writers
        self._metrics = metrics
        self._writer = SeriesWriter(
            client,
            clock,
            max_tries=max_tries,
            retry_interval=retry_interval,
            metrics=metrics,
            rng=rng or random.Random(),
            forget=self._forget,
        )
        # Ordered by last occurrence, so the least recently seen series is first to go.
        self._series: OrderedDict[SeriesKey, Series] = OrderedDict()
        self._queue: deque[Series] = deque()
        # One Event per idle writer: an enqueue wakes exactly one, not all 64.
        self._idle: deque[anyio.Event] = deque()
        self._last_name_nanos = 0
        self._dropped = 0
        # run()'s writers, so drain() can stop them before it writes on its own.
        self._writers_scope: anyio.CancelScope | None = None
        self._writers_done: anyio.Event | None = None
        self._draining = False

    @property
    def dropped(self) -> int:
        """Writes dropped because the queue was full."""
        return self._dropped

    @property
    def pending(self) -> int:
        """Writes waiting to be sent."""
        return len(self._queue)

    # ---- the caller's side: never blocks ------------------------------------------------

    def for_controller(self, controller: str, instance: str | None = None) -> ControllerEvents:
        """The recorder of one reporting controller (a profile's schedulerName), sharing
        this one's queue; *instance* defaults to `<controller>-<hostname>` as client-go's."""
        view = self._views.get(controller)
        if view is None:
            view = ControllerEvents(self, new_reporter(controller, instance))
            self._views[controller] = view
        return view

    def event(
        self, regarding: Any, event_type: str, reason: str, action: str, message: str
    ) -> None:
        self._record(regarding, event_type, reason, action, message, reporter=self._reporter)

    def _record(
        self,
        regarding: Any,
        event_type: str,
        reason: str,
        action: str,
        message: str,
        *,
        reporter: Reporter,
    ) -> None:
        if event_type not in (NORMAL, WARNING):
            log.error("event_type_invalid", event_type=event_type, reason=reason)
            return
        try:
            ref = object_reference(regarding)
        except TypeError as err:
            log.error("event_regarding_invalid", error=str(err), reason=reason)
            return
        note = truncate_note(message)
        identity = ref.uid or f"{ref.kind}/{ref.namespace}/{ref.name}"
        key = (reporter.controller, identity, event_type, reason, action, note)
        now, wall = self._clock.now(), self._clock.wall()
        series = self._series.get(key)
        if series is not None:
            series.count += 1
            series.last_observed = wall
            series.last_seen = now
            self._series.move_to_end(key)
            return
        series = Series(
            key=key,
            reporter=reporter,
            ref=ref,
            event_type=event_type,
            reason=reason[:FIELD_LENGTH_LIMIT],
            action=action[:FIELD_LENGTH_LIMIT],
            note=note,
            namespace=ref.namespace or "default",
            name=self._event_name(ref.name, wall),
            event_time=wall,
            last_observed=wall,
            last_seen=now,
        )
        self._series[key] = series
        if len(self._series) > self._max_series:
            self._series.popitem(last=False)
        self._enqueue(series)

    def _event_name(self, regarding_name: str, wall: float) -> str:
        # client-go names an Event "<regarding>.<unix nanos in hex>"; nanos are kept strictly
        # increasing so two Events of one recorder never collide.
        nanos = max(int(wall * 1e9), self._last_name_nanos + 1)
        self._last_name_nanos = nanos
        suffix = f".{nanos:x}"
        return regarding_name[: NAME_LENGTH_LIMIT - len(suffix)] + suffix

    def _enqueue(self, series: Series) -> None:
        if len(self._queue) >= self._max_queued:
            oldest = self._queue.popleft()
            oldest.queued = False
            self._dropped += 1
            if self._metrics is not None:
                self._metrics.event_dropped()
            if not oldest.created:
                # Never written: forget it, so a repeat starts a new Event instead of
                # counting into one that does not exist.
                self._forget(oldest)
        series.queued = True
        self._queue.append(series)
        if self._idle:
            self._idle.popleft().set()

    def _forget(self, series: Series) -> None:
        if self._series.get(series.key) is series:
            del self._series[series.key]

    # ---- the writer's side --------------------------------------------------------------

    async def run(self) -> None:
        """Write Events until cancelled, or until `drain()` stops the writers (then it
        returns). Run it once."""
        self._writers_done = anyio.Event()
        try:
            with anyio.CancelScope() as scope:
                self._writers_scope = scope
                if self._draining:
                    return  # drain() came first: nothing may write beside it
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._refresh_loop)
                    # Several writers: one request at a time is what client-go's sink
                    # does, but on one event loop shared with hundreds of binds a second
                    # each request takes tens of milliseconds, so a single writer fell
                    # behind and the bounded queue dropped most Scheduled events. A series
                    # is only ever with one writer. As many as the client's connections
                    # (the app passes them; 100 by default). With 64 writers and 100
                    # connections, binding at ~600 pods/s on two cores wrote only 70-80 %
                    # of the Scheduled events by the last bind (the rest after it, or
                    # dropped once the queue was full); with every connection busy they
                    # keep up, at the same pods/s (client-go writes each Event from a
                    # goroutine of its own, so it never queues them).
                    for _ in range(self._writers):
                        tg.start_soon(self._send_loop)
        finally:
            self._writers_scope = None
            self._writers_done.set()

    async def drain(self, max_seconds: float = 5.0) -> None:
        """Stop the writers (cancelling `run()`'s, which put back what they were writing)
        and wait until they have stopped, then write pending series and queued Events for
        at most `max_seconds` (on the injected clock). Shielded from cancellation.

        Draining only after every writer stopped is what makes it safe: a writer running
        beside the drain could empty the queue between the drain's check and its pop."""
        self._draining = True
        with anyio.CancelScope(shield=True):
            scope = self._writers_scope
            if scope is not None:
                assert self._writers_done is not None  # set by run() before the scope
                scope.cancel()
                await self._writers_done.wait()
            self._refresh(final=True)
            finished = await run_within(self._clock, max_seconds, self._send_all)
        if not finished:
            log.warning("events_drain_timed_out", unsent=len(self._queue))

    async def _send_all(self) -> None:
        while self._queue:
            await self._limiter.acquire()
            # Checked again after the wait, as _send_loop does: the queue may have
            # overflowed and dropped what was there.
            if self._queue:
                await self._send_next()

    async def _send_loop(self) -> NoReturn:
        while True:
            if not self._queue:
                wakeup = anyio.Event()
                self._idle.append(wakeup)
                try:
                    await wakeup.wait()
                finally:
                    if not wakeup.is_set():
                        self._idle.remove(wakeup)  # cancelled while idle
                continue
            # The token is taken before the head is chosen: while waiting for it, the
            # queue may overflow and drop what was the head.
            await self._limiter.acquire()
            if self._queue:
                await self._send_next()

    async def _send_next(self) -> None:
        series = self._queue.popleft()
        series.queued = False
        series.writing = True
        try:
            await self._writer.send(series)
        except anyio.get_cancelled_exc_class():
            # Cancelled mid-write: put it back so drain() writes it. If the create reached
            # the server, the second one gets 409 and counts as done.
            series.queued = True
            self._queue.appendleft(series)
            raise
        finally:
            series.writing = False

    # ---- series upkeep ------------------------------------------------------------------

    async def _refresh_loop(self) -> NoReturn:
        while True:
            await self._clock.sleep(self._refresh_interval)
            self._refresh()

    def _refresh(self, *, final: bool = False) -> None:
        """Queue series with unwritten occurrences; forget finished ones."""
        now = self._clock.now()
        for series in list(self._series.values()):
            if series.queued or series.writing or not series.created:
                continue  # waiting to be written, or being written right now
            if series.count > series.written:
                self._enqueue(series)
            elif final or now - series.last_seen > self._series_window:
                self._forget(series)


class ControllerEvents:
    """EventRecorder.for_controller: records as one reporting controller; never blocks."""

    __slots__ = ("_recorder", "_reporter")

    def __init__(self, recorder: EventRecorder, reporter: Reporter) -> None:
        self._recorder = recorder
        self._reporter = reporter

    @property
    def reporting_controller(self) -> str:
        return self._reporter.controller

    def event(
        self, regarding: Any, event_type: str, reason: str, action: str, message: str
    ) -> None:
        self._recorder._record(
            regarding, event_type, reason, action, message, reporter=self._reporter
        )
