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
- `drain()` at shutdown first stops the writers of `run()` and waits for them, then writes
  what is pending, bounded in time; nothing writes beside it.

Give the recorder its own client (its own qps limiter): kube-scheduler builds a separate
clientset for events, so Event writes never slow bindings.

Reporting controller: kube-scheduler gives each profile its own recorder from one
broadcaster (NewRecorder(schedulerName)), so a profile's Events say
`reportingController: <schedulerName>` and `reportingInstance: <schedulerName>-<hostname>`.
`for_controller(name)` is that recorder: a view that stamps its own names on what it
records, while queue, aggregation, rate limit and drain stay this one recorder's. Events
recorded on the recorder itself carry the names it was built with.
The package, one job per module: reference.py (what an Event is about, the API's field
limits), series.py (one aggregated Event and its JSON), writer.py (writing a series: create
or patch, retries, errors), broadcaster.py (EventRecorder: record, queue, writers, refresh,
drain; and its per-controller views).
"""

from asched.api.meta import micro_time
from asched.recorder.broadcaster import ControllerEvents, EventRecorder
from asched.recorder.reference import (
    NORMAL,
    NOTE_LENGTH_LIMIT,
    WARNING,
    ObjectReference,
    object_reference,
    truncate_note,
)

# micro_time is the Event time format; tests have always imported it from here.
__all__ = [
    "NORMAL",
    "NOTE_LENGTH_LIMIT",
    "WARNING",
    "ControllerEvents",
    "EventRecorder",
    "ObjectReference",
    "micro_time",
    "object_reference",
    "truncate_note",
]
