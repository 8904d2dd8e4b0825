"""Writing one series to the API: create the Event, or patch its series, with retries.

Follows client-go's events broadcaster (tools/events eventBroadcasterImpl.attemptRecording
and recordEvent): a rejected write is logged and not retried; a failure that may pass
(FailureKind.retriable: no answer, a timeout, 429, 5xx, which client-go's rest client
retries before the broadcaster sees them) is retried with jitter, waiting at least the
server's Retry-After; and an Event that vanished is created again with its series. An
interrupted create that did reach the server comes back as 409 AlreadyExists on the retry:
the Event exists, and the next refresh PATCHes its true count.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import structlog

from asched.api.meta import micro_time
from asched.base.clock import Clock
from asched.base.errors import report_unexpected
from asched.client.protocol import (
    REQUEST_ERRORS,
    ApiError,
    KubeClient,
    failure_fields,
    failure_kind,
)
from asched.metrics import Metrics
from asched.recorder.series import Series, describe, series_json

log = structlog.get_logger(__name__)

_MERGE_PATCH = "application/merge-patch+json"


class SeriesWriter:
    """Sends a series; never raises but on cancellation, and calls `forget` for a series
    whose Event was never created, so a repeat starts a new one."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        *,
        max_tries: int,
        retry_interval: float,
        metrics: Metrics | None,
        rng: random.Random,
        forget: Callable[[Series], None],
    ) -> None:
        self._client = client
        self._clock = clock
        self._max_tries = max_tries
        self._retry_interval = retry_interval
        self._metrics = metrics
        self._rng = rng
        self._forget = forget

    async def send(self, series: Series) -> None:
        tries = 0
        while True:
            try:
                await self._write(series)
                return
            except REQUEST_ERRORS as err:
                kind = failure_kind(err)
                assert kind is not None  # every REQUEST_ERRORS member has a kind
                if not kind.retriable:
                    # The server judged the Event; sending it again would be judged the same.
                    self._rejected(series, err)
                    return
                # No answer, throttled, or a server error: client-go's rest client retries
                # these (request.go checkWait) and its broadcaster retries what is left.
                tries += 1
                if tries >= self._max_tries:
                    if not series.created:
                        self._forget(series)
                    log.warning("event_write_gave_up", **_about(series, err), tries=tries)
                    return
                if tries == 1:  # once per series: an outage would otherwise flood the log
                    log.info("event_write_retrying", **_about(series, err))
                # wait.Jitter(sleepDuration, 0.25), so recorders do not retry in lockstep;
                # a server that named its wait (Retry-After) gets at least that.
                delay = self._retry_interval * (1 + 0.25 * self._rng.random())
                retry_after = err.retry_after if isinstance(err, ApiError) else None
                await self._clock.sleep(max(delay, retry_after or 0.0))
            except Exception:
                # A bug (in building the Event, or in the client): retrying would only
                # repeat it. The Event is dropped and the recorder goes on, since Events
                # are best effort and must never stop the scheduler.
                if not series.created:
                    self._forget(series)
                report_unexpected(
                    log,
                    self._metrics,
                    "event_recorder",
                    "event_write_crashed",
                    regarding=describe(series.ref),
                    reason=series.reason,
                )
                return

    def _rejected(self, series: Series, err: Exception) -> None:
        # The series' state first: the log line below must not be what decides it.
        if series.created:
            series.written = series.count
        else:
            self._forget(series)
        log.warning("event_rejected", **_about(series, err))

    async def _write(self, series: Series) -> None:
        count = series.count
        collection = f"/apis/events.k8s.io/v1/namespaces/{series.namespace}/events"
        if series.created:
            patch = {"series": series_json(count, series.last_observed)}
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

    async def _create(self, collection: str, series: Series, count: int) -> bool:
        """POST the Event; False when it already existed (its count is then unknown)."""
        try:
            await self._client.request("POST", collection, body=self._body(series, count))
        except ApiError as err:
            if not err.conflict:
                raise
            # AlreadyExists: an earlier, interrupted attempt got through. Leaving `written`
            # behind `count` makes the next refresh PATCH the true count. An Event of one
            # occurrence is just what that attempt created: nothing is left to write, and
            # a series PATCH could not say it (the server refuses series.count < 2: 422).
            log.debug("event_already_exists", event_name=series.name)
            return count < 2
        return True

    def _body(self, series: Series, count: int) -> dict[str, Any]:
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
            body["series"] = series_json(count, series.last_observed)
        return body


def _about(series: Series, err: Exception) -> dict[str, str]:
    """The key-values of a log line about a failed write: the Event, the failure's kind."""
    return {"regarding": describe(series.ref), "reason": series.reason, **failure_fields(err)}
