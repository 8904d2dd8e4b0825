"""Kubernetes Events about pods and pod groups, written without slowing or storming anything.

Users read `Scheduled` and `FailedScheduling` in `kubectl describe pod`; those come from
events.k8s.io/v1 Events, which this recorder writes. The scheduling cycle calls `event()`,
which never blocks and never awaits: it records the occurrence in memory and returns. The
`run()` coroutine, owned by the scheduler's task group, writes Events through the
KubeClient.

Guarantees, after client-go's events broadcaster (tools/events/event_broadcaster.go):
- Aggregation. Occurrences with the same regarding object (by uid), type, reason, action
  and message form one series. The first is created as an Event; repeats only bump the
  series count in memory, and a series with new occurrences is written back (a merge PATCH
  of `series {count, lastObservedTime}`) at most once per `refresh_interval`. A series seen
  no more for `series_window` (client-go's 6 minutes) is finished: its last count is
  written and it is forgotten, so the next occurrence starts a new Event. Where client-go
  keys a series without the message, asched keys it with the message (as the core/v1
  recorder's correlator does), so a changed FailedScheduling reason is a new Event rather
  than a count on a stale note. If the Event vanished (404 on PATCH), it is created again
  with the series, as client-go does.
- Rate. Writes go through a token bucket (`qps`, `burst`; default 25/s, burst 100, for
  library use). `asched run` gives it clientConnection's qps and burst, which is all
  kube-scheduler's events client is limited by. Up to `writers` requests are in flight
  (a series is written by one at a time), so Events keep up with bindings.
- Bounded memory. At most `max_queued` writes wait; when full, the oldest is dropped and
  counted (`dropped`, asched_events_dropped_total). At most `max_series` series are kept
  for aggregation; beyond that the least recently seen is forgotten.
- Errors never reach the caller. A rejected write (an ApiError) is logged and not retried,
  as client-go does; a transport failure is retried `max_tries` times, `retry_interval`
  apart with 25% jitter, then logged and dropped. Any other exception is a bug: logged
  with its stack, counted (asched_unexpected_errors_total{component="event_recorder"})
  and the Event dropped.
- `drain()` at shutdown writes what is pending, bounded in time.

Give the recorder its own client (its own qps limiter): kube-scheduler builds a separate
clientset for events, so Event writes never slow bindings.

Reporting controller: kube-scheduler gives each profile its own recorder from one
broadcaster (NewRecorder(schedulerName)), so a profile's Events say
`reportingController: <schedulerName>` and `reportingInstance: <schedulerName>-<hostname>`.
`for_controller(name)` is that recorder: a view that stamps its own names on what it
records, while queue, aggregation, rate limit and drain stay this one recorder's. Events
recorded on the recorder itself carry the names it was built with.
"""

from __future__ import annotations

import random
import socket
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any, NoReturn

import anyio
import structlog

from asched.api import Pod
from asched.api.meta import micro_time
from asched.base.clock import Clock, run_within
from asched.base.errors import report_unexpected
from asched.client.protocol import TRANSPORT_ERRORS, ApiError, KubeClient
from asched.client.ratelimit import TokenBucket
from asched.metrics import Metrics

log = structlog.get_logger(__name__)

NORMAL = "Normal"
WARNING = "Warning"

# events.k8s.io/v1 validation limits (pkg/apis/core/validation/events.go).
NOTE_LENGTH_LIMIT = 1024
_FIELD_LENGTH_LIMIT = 128
_NAME_LENGTH_LIMIT = 253
_MERGE_PATCH = "application/merge-patch+json"


@dataclass(slots=True, frozen=True)
class ObjectReference:
    """What an Event is about (core/v1 ObjectReference, the fields Events use)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""

    def to_json(self) -> dict[str, str]:
        ref = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name}
        if self.namespace:
            ref["namespace"] = self.namespace
        if self.uid:
            ref["uid"] = self.uid
        if self.resource_version:
            ref["resourceVersion"] = self.resource_version
        return ref


def object_reference(obj: Any) -> ObjectReference:
    """A reference to a Pod, an ObjectReference, or any object exposing kind, namespace,
    name, uid and api_version (pod groups); raises TypeError for anything else."""
    if isinstance(obj, ObjectReference):
        return obj
    if isinstance(obj, Pod):
        return ObjectReference("v1", "Pod", obj.namespace, obj.name, obj.uid, obj.resource_version)
    try:
        return ObjectReference(
            api_version=str(obj.api_version),
            kind=str(obj.kind),
            namespace=str(obj.namespace),
            name=str(obj.name),
            uid=str(obj.uid),
            resource_version=str(getattr(obj, "resource_version", "")),
        )
    except AttributeError as err:
        raise TypeError(f"cannot reference {type(obj).__name__} in an Event: {err}") from None


def truncate_note(message: str) -> str:
    """Cut a message to the API's 1024-byte note limit, as kube-scheduler's truncateMessage."""
    raw = message.encode()
    if len(raw) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    cut = raw[: NOTE_LENGTH_LIMIT - len(suffix)].decode(errors="ignore")
    return cut + suffix


# (reporting controller, regarding identity, type, reason, action, note)
_SeriesKey = tuple[str, str, str, str, str, str]


@dataclass(slots=True, frozen=True)
class _Reporter:
    controller: str
    instance: str


@dataclass(slots=True)
class _Series:
    """One aggregated Event: what was written so far and what was observed since."""

    key: _SeriesKey
    reporter: _Reporter
    ref: ObjectReference
    event_type: str
    reason: str
    action: str
    note: str
    namespace: str
    name: str
    event_time: float  # wall clock of the first occurrence
    last_observed: float  # wall clock of the latest occurrence
    last_seen: float  # monotonic clock of the latest occurrence
    count: int = 1
    written: int = 0  # the count the API server holds
    created: bool = False
    queued: bool = False
    writing: bool = False  # a writer has it in flight; nobody else may write it now


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
        writers: int = 64,
        metrics: Metrics | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if max_queued < 1 or max_series < 1 or max_tries < 1 or writers < 1:
            raise ValueError("max_queued, max_series, max_tries and writers must be >= 1")
        self._client = client
        self._clock = clock
        self._reporter = _reporter(reporting_controller, reporting_instance)
        self._views: dict[str, ControllerEvents] = {}
        self._limiter = TokenBucket(qps, burst, clock)
        self._max_queued = max_queued
        self._max_series = max_series
        self._series_window = series_window
        self._refresh_interval = refresh_interval
        self._max_tries = max_tries
        self._retry_interval = retry_interval
        self._writers = writers
        self._metrics = metrics
        self._rng = rng or random.Random()
        # Ordered by last occurrence, so the least recently seen series is first to go.
        self._series: OrderedDict[_SeriesKey, _Series] = OrderedDict()
        self._queue: deque[_Series] = deque()
        # One Event per idle writer: an enqueue wakes exactly one, not all 64.
        self._idle: deque[anyio.Event] = deque()
        self._last_name_nanos = 0
        self._dropped = 0

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
            view = ControllerEvents(self, _reporter(controller, instance))
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
        reporter: _Reporter,
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
        series = _Series(
            key=key,
            reporter=reporter,
            ref=ref,
            event_type=event_type,
            reason=reason[:_FIELD_LENGTH_LIMIT],
            action=action[:_FIELD_LENGTH_LIMIT],
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
        return regarding_name[: _NAME_LENGTH_LIMIT - len(suffix)] + suffix

    def _enqueue(self, series: _Series) -> None:
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

    def _forget(self, series: _Series) -> None:
        if self._series.get(series.key) is series:
            del self._series[series.key]

    # ---- the writer's side --------------------------------------------------------------

    async def run(self) -> NoReturn:
        """Write Events until cancelled; then call `drain()` to flush."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._refresh_loop)
            # Several writers: one request at a time is what client-go's sink does, but
            # on one event loop shared with hundreds of binds a second each request takes
            # tens of milliseconds, so a single writer fell behind and the bounded queue
            # dropped most Scheduled events. A series is only ever with one writer.
            for _ in range(self._writers - 1):
                tg.start_soon(self._send_loop)
            await self._send_loop()
        raise AssertionError("unreachable")  # _send_loop only ends by cancellation

    async def drain(self, max_seconds: float = 5.0) -> None:
        """Write pending series and queued Events for at most `max_seconds` (on the
        injected clock). Call after `run()` has stopped; shielded from cancellation."""
        self._refresh(final=True)
        with anyio.CancelScope(shield=True):
            finished = await run_within(self._clock, max_seconds, self._send_all)
        if not finished:
            log.warning("events_drain_timed_out", unsent=len(self._queue))

    async def _send_all(self) -> None:
        while self._queue:
            await self._limiter.acquire()
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
            await self._send(series)
        except anyio.get_cancelled_exc_class():
            # Cancelled mid-write: put it back so drain() writes it. If the create reached
            # the server, the second one gets 409 and counts as done.
            series.queued = True
            self._queue.appendleft(series)
            raise
        finally:
            series.writing = False

    async def _send(self, series: _Series) -> None:
        tries = 0
        while True:
            try:
                await self._write(series)
                return
            except ApiError as err:
                # The server judged the Event; sending it again would be judged the same.
                log.warning(
                    "event_rejected",
                    regarding=_describe(series.ref),
                    reason=series.reason,
                    status=err.status,
                    error=err.message,
                )
                if series.created:
                    series.written = series.count
                else:
                    self._forget(series)
                return
            except TRANSPORT_ERRORS as err:
                # No answer: client-go retries these, and so do we.
                tries += 1
                if tries >= self._max_tries:
                    log.error(
                        "event_write_gave_up",
                        regarding=_describe(series.ref),
                        reason=series.reason,
                        tries=tries,
                        error=repr(err),
                    )
                    if not series.created:
                        self._forget(series)
                    return
                log.warning(
                    "event_write_failed",
                    regarding=_describe(series.ref),
                    reason=series.reason,
                    tries=tries,
                    error=repr(err),
                )
                # wait.Jitter(sleepDuration, 0.25), so recorders do not retry in lockstep.
                await self._clock.sleep(self._retry_interval * (1 + 0.25 * self._rng.random()))
            except Exception:
                # A bug (in building the Event, or in the client): retrying would only
                # repeat it. The Event is dropped and the recorder goes on, since Events
                # are best effort and must never stop the scheduler.
                report_unexpected(
                    log,
                    self._metrics,
                    "event_recorder",
                    "event_write_crashed",
                    regarding=_describe(series.ref),
                    reason=series.reason,
                )
                if not series.created:
                    self._forget(series)
                return

    async def _write(self, series: _Series) -> None:
        count = series.count
        collection = f"/apis/events.k8s.io/v1/namespaces/{series.namespace}/events"
        if series.created:
            patch = {"series": _series_json(count, series.last_observed)}
            try:
                await self._client.request(
                    "PATCH", f"{collection}/{series.name}", body=patch, content_type=_MERGE_PATCH
                )
                series.written = count
                return
            except ApiError as err:
                if not err.not_found:
                    raise
                # The Event expired or was deleted while the series went on: create it anew.
        if await self._create(collection, series, count):
            series.written = count
        series.created = True

    async def _create(self, collection: str, series: _Series, count: int) -> bool:
        """POST the Event; False when it already existed (its count is then unknown)."""
        try:
            await self._client.request("POST", collection, body=self._body(series, count))
        except ApiError as err:
            if not err.conflict:
                raise
            # AlreadyExists: an earlier, interrupted attempt got through. Leaving `written`
            # behind `count` makes the next refresh PATCH the true count.
            log.debug("event_already_exists", event=series.name)
            return False
        return True

    def _body(self, series: _Series, count: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": series.name, "namespace": series.namespace},
            "eventTime": micro_time(series.event_time),
            "reportingController": series.reporter.controller,
            "reportingInstance": series.reporter.instance,
            "action": series.action,
            "reason": series.reason,
            "regarding": series.ref.to_json(),
            "note": series.note,
            "type": series.event_type,
        }
        if count >= 2:
            body["series"] = _series_json(count, series.last_observed)
        return body

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

    def __init__(self, recorder: EventRecorder, reporter: _Reporter) -> None:
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


def _reporter(controller: str, instance: str | None) -> _Reporter:
    if instance is None:
        instance = f"{controller}-{socket.gethostname()}"
    return _Reporter(controller[:_FIELD_LENGTH_LIMIT], instance[:_FIELD_LENGTH_LIMIT])


def _series_json(count: int, last_observed: float) -> dict[str, Any]:
    return {"count": count, "lastObservedTime": micro_time(last_observed)}


def _describe(ref: ObjectReference) -> str:
    return f"{ref.kind}/{ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind}/{ref.name}"
