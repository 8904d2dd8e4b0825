"""One aggregated Event (a series): its identity, what was written and what was seen since.

client-go's events broadcaster keeps the same record per series (tools/events
eventBroadcasterImpl.eventCache): a key, the Event as first written, and the count and
last observed time that a refresh patches.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

from asched.api.meta import micro_time
from asched.recorder.reference import FIELD_LENGTH_LIMIT, ObjectReference

# (reporting controller, regarding identity, type, reason, action, note)
SeriesKey = tuple[str, str, str, str, str, str]


@dataclass(slots=True, frozen=True)
class Reporter:
    """The reportingController and reportingInstance a recorder stamps on its Events."""

    controller: str
    instance: str


@dataclass(slots=True)
class Series:
    """One aggregated Event: what was written so far and what was observed since."""

    key: SeriesKey
    reporter: Reporter
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


def new_reporter(controller: str, instance: str | None) -> Reporter:
    """*instance* defaults to `<controller>-<hostname>`, as client-go's NewRecorder."""
    if instance is None:
        instance = f"{controller}-{socket.gethostname()}"
    return Reporter(controller[:FIELD_LENGTH_LIMIT], instance[:FIELD_LENGTH_LIMIT])


def series_json(count: int, last_observed: float) -> dict[str, Any]:
    return {"count": count, "lastObservedTime": micro_time(last_observed)}


def describe(ref: ObjectReference) -> str:
    return f"{ref.kind}/{ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind}/{ref.name}"
