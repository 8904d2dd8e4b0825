"""EventRecorder: aggregation into series, rate limit, bounded queue, error handling."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
import structlog

from asched.base.clock import FakeClock
from asched.client.protocol import ApiError, TransportError
from asched.metrics import Metrics
from asched.recorder import (
    NOTE_LENGTH_LIMIT,
    EventRecorder,
    ObjectReference,
    micro_time,
    truncate_note,
)
from tests.builders import make_pod

EVENTS = "/apis/events.k8s.io/v1/namespaces/{ns}/events"


class FakeEventsApi:
    """events.k8s.io/v1 in memory: create (409 on a taken name), merge-patch (404 if absent)."""

    def __init__(self) -> None:
        self.events: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str, Any]] = []
        self.failures: list[BaseException] = []  # raised by the next requests, in order
        # The next this many requests are applied, then their answer is lost (raised as a
        # TransportError): the create went through, the connection was cut before the reply.
        self.answers_lost = 0
        self.hang = False

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        self.requests.append((method, path, body))
        if self.hang:
            await anyio.sleep_forever()
        if self.failures:
            raise self.failures.pop(0)
        answer = self._apply(method, path, body, content_type)
        if self.answers_lost:
            self.answers_lost -= 1
            raise TransportError(f"{method} {path}: connection closed before the answer")
        return answer

    def _apply(self, method: str, path: str, body: Any, content_type: str) -> Any:
        if method == "POST":
            key = f"{body['metadata']['namespace']}/{body['metadata']['name']}"
            if key in self.events:
                raise ApiError(409, "AlreadyExists", "exists", method, path)
            self.events[key] = dict(body)
            return body
        if method == "PATCH":
            assert content_type == "application/merge-patch+json"
            ns, name = path.split("/namespaces/")[1].split("/events/")
            event = self.events.get(f"{ns}/{name}")
            if event is None:
                raise ApiError(404, "NotFound", "gone", method, path)
            event.update(body)
            return event
        raise AssertionError(f"unexpected {method} {path}")

    def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        raise NotImplementedError

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        return None

    @property
    def writes(self) -> list[str]:
        return [method for method, _, _ in self.requests]


class NoJitter(random.Random):
    def random(self) -> float:
        return 0.0


def make_recorder(api: FakeEventsApi, clock: FakeClock, **overrides: Any) -> EventRecorder:
    options: dict[str, Any] = {
        "reporting_controller": "asched",
        "reporting_instance": "asched-host-1",
        "rng": NoJitter(),
    }
    options.update(overrides)
    return EventRecorder(api, clock, **options)


async def settle() -> None:
    """Let every task run until all wait. The checkpoints first do the work cheaply;
    wait_all_tasks_blocked then confirms it (it sleeps 0.1 s whenever a task is runnable)."""
    for _ in range(20):
        await anyio.lowlevel.checkpoint()
    await anyio.wait_all_tasks_blocked()


async def advance(clock: FakeClock, seconds: float) -> None:
    clock.advance(seconds)
    await settle()


@dataclass(frozen=True)
class PodGroupRef:
    """Stands for a decoded PodGroup: anything with these attributes can be regarded."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str


# ---- aggregation -------------------------------------------------------------------------


async def test_repeats_before_the_first_write_become_one_create_with_the_series() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)
    pod = make_pod("p").obj()

    for _ in range(10):
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "0/3 nodes are available")
        clock.advance(1.0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        await settle()
        tg.cancel_scope.cancel()

    assert api.writes == ["POST"]
    (event,) = api.events.values()
    assert event["series"] == {"count": 10, "lastObservedTime": micro_time(clock.wall() - 1.0)}


async def test_repeats_after_the_create_are_patched_once_per_refresh() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, refresh_interval=30.0)
    pod = make_pod("p").obj()

    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
        await settle()
        for _ in range(9):
            await advance(clock, 2.0)
            recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
        await settle()
        writes_before_refresh = list(api.writes)
        await advance(clock, 30.0)
        tg.cancel_scope.cancel()

    assert writes_before_refresh == ["POST"]
    assert api.writes == ["POST", "PATCH"]
    _, path, patch = api.requests[1]
    (event,) = api.events.values()
    assert path.endswith("/events/" + event["metadata"]["name"])
    assert patch == {"series": {"count": 10, "lastObservedTime": micro_time(1_700_000_018.0)}}
    assert event["series"]["count"] == 10


@pytest.mark.parametrize(
    ("second", "expected_events"),
    [
        pytest.param(("p", "Warning", "FailedScheduling", "no fit"), 1, id="identical"),
        pytest.param(("p", "Warning", "FailedScheduling", "other reason"), 2, id="new-message"),
        pytest.param(("q", "Warning", "FailedScheduling", "no fit"), 2, id="other-pod"),
        pytest.param(("p", "Normal", "Scheduled", "no fit"), 2, id="other-reason"),
    ],
)
async def test_series_key_is_object_type_reason_action_and_message(
    second: tuple[str, str, str, str], expected_events: int
) -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)
    pods = {"p": make_pod("p").obj(), "q": make_pod("q").obj()}
    name, event_type, reason, message = second

    recorder.event(pods["p"], "Warning", "FailedScheduling", "Scheduling", "no fit")
    recorder.event(pods[name], event_type, reason, "Scheduling", message)
    await recorder.drain()

    assert len(api.events) == expected_events


async def test_a_series_seen_no_more_for_the_window_ends_and_a_repeat_starts_a_new_event() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, refresh_interval=30.0, series_window=360.0)
    pod = make_pod("p").obj()

    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
        await settle()
        for _ in range(13):  # 390 s of refreshes: past the 6-minute window
            await advance(clock, 30.0)
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
        await settle()
        tg.cancel_scope.cancel()

    assert api.writes == ["POST", "POST"]
    assert len(api.events) == 2
    assert all("series" not in e for e in api.events.values())


async def test_a_vanished_event_is_created_again_with_its_series() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, refresh_interval=30.0)
    pod = make_pod("p").obj()

    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
        await settle()
        api.events.clear()  # the API server's event TTL ran out
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
        await advance(clock, 30.0)
        tg.cancel_scope.cancel()

    assert api.writes == ["POST", "PATCH", "POST"]
    (event,) = api.events.values()
    assert event["series"]["count"] == 2


# ---- the Event written ---------------------------------------------------------------------


async def test_event_from_a_pod_has_the_fields_kubectl_describe_shows() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)
    pod = dataclasses.replace(make_pod("web-1", namespace="shop").obj(), resource_version="42")

    recorder.event(pod, "Normal", "Scheduled", "Binding", "Successfully assigned shop/web-1 to n1")
    await recorder.drain()

    ((method, path, body),) = api.requests
    assert (method, path) == ("POST", EVENTS.format(ns="shop"))
    assert body["metadata"] == {"name": f"web-1.{int(clock.wall() * 1e9):x}", "namespace": "shop"}
    assert body["regarding"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": "shop",
        "name": "web-1",
        "uid": pod.uid,
        "resourceVersion": "42",
    }
    assert {k: body[k] for k in ("type", "reason", "action", "note")} == {
        "type": "Normal",
        "reason": "Scheduled",
        "action": "Binding",
        "note": "Successfully assigned shop/web-1 to n1",
    }
    assert body["reportingController"] == "asched"
    assert body["reportingInstance"] == "asched-host-1"
    assert body["eventTime"] == "2023-11-14T22:13:20.000000Z"
    assert "series" not in body


@pytest.mark.parametrize(
    ("regarding", "namespace", "expected_ref"),
    [
        pytest.param(
            PodGroupRef("scheduling.x-k8s.io/v1alpha1", "PodGroup", "ml", "gang", "u-1"),
            "ml",
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "namespace": "ml",
                "name": "gang",
                "uid": "u-1",
            },
            id="pod-group-like-object",
        ),
        pytest.param(
            ObjectReference("v1", "Node", "", "n1", "u-2"),
            "default",
            {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "u-2"},
            id="cluster-scoped-goes-to-default",
        ),
    ],
)
async def test_event_regarding_other_objects(
    regarding: Any, namespace: str, expected_ref: dict[str, str]
) -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)

    recorder.event(regarding, "Warning", "Unschedulable", "Scheduling", "gang incomplete")
    await recorder.drain()

    ((_, path, body),) = api.requests
    assert path == EVENTS.format(ns=namespace)
    assert body["regarding"] == expected_ref


@pytest.mark.parametrize(
    ("regarding", "event_type"),
    [
        pytest.param(object(), "Warning", id="unreferenceable-object"),
        pytest.param(ObjectReference("v1", "Pod", "ns", "p"), "Error", id="invalid-type"),
    ],
)
async def test_bad_input_is_logged_never_raised_nor_sent(regarding: Any, event_type: str) -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)

    recorder.event(regarding, event_type, "R", "A", "m")
    await recorder.drain()

    assert api.requests == []


@pytest.mark.parametrize(
    ("message", "expected_length"),
    [
        pytest.param("x" * 1024, 1024, id="at-limit-kept"),
        pytest.param("x" * 5000, 1024, id="long-cut-with-marker"),
        pytest.param("a" + "é" * 600, 1023, id="multibyte-cut-on-a-character"),
    ],
)
def test_notes_fit_the_api_limit(message: str, expected_length: int) -> None:
    note = truncate_note(message)

    assert len(note.encode()) == expected_length <= NOTE_LENGTH_LIMIT
    assert note == message or note.endswith(" ...")


# ---- rate and bounds -------------------------------------------------------------------------


async def test_writes_are_paced_by_the_token_bucket() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, qps=1.0, burst=2)
    pods = [make_pod(f"p{i}").obj() for i in range(5)]

    written: list[int] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        for pod in pods:
            recorder.event(pod, "Normal", "Scheduled", "Binding", "ok")
        await settle()
        written.append(len(api.requests))
        for _ in range(3):
            await advance(clock, 1.0)
            written.append(len(api.requests))
        tg.cancel_scope.cancel()

    assert written == [2, 3, 4, 5]


async def test_a_full_queue_drops_the_oldest_and_counts_it() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    metrics = Metrics(process_metrics=False)
    recorder = make_recorder(api, clock, max_queued=3, metrics=metrics)
    pods = [make_pod(f"p{i}").obj() for i in range(5)]

    for pod in pods:
        recorder.event(pod, "Normal", "Scheduled", "Binding", "ok")
    dropped, pending = recorder.dropped, recorder.pending
    await recorder.drain()

    assert (dropped, pending) == (2, 3)
    assert [body["regarding"]["name"] for _, _, body in api.requests] == ["p2", "p3", "p4"]
    assert metrics.registry.get_sample_value("asched_events_dropped_total") == 2.0


async def test_a_dropped_event_is_not_counted_into_by_its_repeats() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, max_queued=1)
    p, q = make_pod("p").obj(), make_pod("q").obj()

    recorder.event(p, "Warning", "FailedScheduling", "Scheduling", "no fit")
    recorder.event(q, "Warning", "FailedScheduling", "Scheduling", "no fit")  # drops p's
    recorder.event(p, "Warning", "FailedScheduling", "Scheduling", "no fit")  # drops q's
    await recorder.drain()

    ((_, _, body),) = api.requests
    assert body["regarding"]["name"] == "p"
    assert "series" not in body


# ---- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "retry_wait", "expected_writes", "expected_events"),
    [
        pytest.param(ApiError(422, "Invalid", "bad note"), 0.0, 1, 0, id="rejected-not-retried"),
        pytest.param(ApiError(404, "NotFound", "no namespace"), 0.0, 1, 0, id="4xx-not-retried"),
        pytest.param(ApiError(500, "InternalError", "etcd"), 10.0, 2, 1, id="5xx-retried"),
        pytest.param(ApiError(503, "ServiceUnavailable", "x"), 10.0, 2, 1, id="503-retried"),
        pytest.param(
            ApiError(429, "TooManyRequests", "slow", retry_after=30.0),
            30.0,
            2,
            1,
            id="429-retried-after-its-retry-after",
        ),
        pytest.param(OSError("connection reset"), 10.0, 2, 1, id="transport-retried"),
    ],
)
async def test_write_failures_never_reach_the_caller(
    failure: BaseException, retry_wait: float, expected_writes: int, expected_events: int
) -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, retry_interval=10.0)
    api.failures.append(failure)

    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        recorder.event(make_pod("p").obj(), "Normal", "Scheduled", "Binding", "ok")
        await settle()
        await advance(clock, retry_wait)
        tg.cancel_scope.cancel()

    assert len(api.requests) == expected_writes
    assert len(api.events) == expected_events


async def test_transport_failures_give_up_after_max_tries() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, retry_interval=1.0, max_tries=3)
    api.failures.extend(OSError("down") for _ in range(5))

    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        recorder.event(make_pod("p").obj(), "Normal", "Scheduled", "Binding", "ok")
        for _ in range(10):
            await advance(clock, 1.0)
        tg.cancel_scope.cancel()

    assert len(api.requests) == 3
    assert recorder.pending == 0


async def test_a_429_is_not_retried_before_its_retry_after() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, retry_interval=10.0)
    api.failures.append(ApiError(429, "TooManyRequests", "slow", retry_after=30.0))

    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        recorder.event(make_pod("p").obj(), "Normal", "Scheduled", "Binding", "ok")
        await settle()
        await advance(clock, 29.0)
        assert api.writes == ["POST"]
        await advance(clock, 1.0)
        tg.cancel_scope.cancel()

    assert api.writes == ["POST", "POST"]


async def test_a_create_whose_answer_was_lost_is_not_dropped_and_its_count_is_patched() -> None:
    # Issue 34 part 2: the retried POST gets 409 AlreadyExists. The writer logged it with
    # event=..., which collides with structlog's own parameter: a TypeError, reported as
    # a crash, and the series forgotten, so its count was never patched.
    api, clock = FakeEventsApi(), FakeClock()
    metrics = Metrics(process_metrics=False)
    recorder = make_recorder(
        api, clock, retry_interval=10.0, refresh_interval=30.0, metrics=metrics
    )
    api.answers_lost = 1
    pod = make_pod("p").obj()

    with structlog.testing.capture_logs() as logs:
        async with anyio.create_task_group() as tg:
            tg.start_soon(recorder.run)
            recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
            await settle()
            recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
            await advance(clock, 10.0)  # the retry: 409
            await advance(clock, 30.0)  # the refresh: PATCH the true count
            tg.cancel_scope.cancel()

    assert api.writes == ["POST", "POST", "PATCH"]
    (event,) = api.events.values()
    assert event["series"]["count"] == 2
    assert not [e for e in logs if e.get("exc_info") or e["log_level"] == "error"]
    assert (
        metrics.registry.get_sample_value(
            "asched_unexpected_errors_total", {"component": "event_recorder"}
        )
        is None
    )


async def test_a_lost_create_of_one_occurrence_is_not_patched_with_a_count_of_one() -> None:
    # Found by the fault suite: the retried POST got 409, and the refresh then PATCHed
    # series.count 1, which the API server refuses (422: should be at least 2).
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, retry_interval=10.0, refresh_interval=30.0)
    api.answers_lost = 1
    pod = make_pod("p").obj()

    with structlog.testing.capture_logs() as logs:
        async with anyio.create_task_group() as tg:
            tg.start_soon(recorder.run)
            recorder.event(pod, "Normal", "Scheduled", "Binding", "bound")
            await settle()
            await advance(clock, 10.0)  # the retry: 409, the Event as created is right
            await advance(clock, 30.0)  # the refresh: nothing to write
            tg.cancel_scope.cancel()

    assert api.writes == ["POST", "POST"]
    (event,) = api.events.values()
    assert "series" not in event or event["series"] is None
    assert not [e for e in logs if e["event"] == "event_rejected"]


# ---- shutdown ----------------------------------------------------------------------------------


async def test_drain_while_the_writers_run_stops_them_first() -> None:
    # Issue 34 part 3: the app drained while the writers still ran. A writer waiting for a
    # token took the last queued Event while the drain waited for the next token; the
    # drain then popped from an empty queue (IndexError), which ended asched with a
    # traceback instead of an orderly exit.
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, qps=1.0, burst=1, writers=1)

    with anyio.fail_after(5):  # a real-time guard only
        async with anyio.create_task_group() as tg:
            tg.start_soon(recorder.run)
            recorder.event(make_pod("a").obj(), "Normal", "Scheduled", "Binding", "ok")
            await settle()  # the writer used the one token
            recorder.event(make_pod("b").obj(), "Normal", "Scheduled", "Binding", "ok")
            await settle()  # the writer waits for the next token, b still queued
            tg.start_soon(recorder.drain, 10.0)
            await settle()
            for _ in range(3):
                await advance(clock, 1.0)
            tg.cancel_scope.cancel()

    assert api.writes == ["POST", "POST"]
    assert len(api.events) == 2
    assert recorder.pending == 0


async def test_drain_during_an_outage_with_writes_in_flight_is_bounded() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, writers=2)
    api.hang = True
    drained = False

    async def drain() -> None:
        nonlocal drained
        await recorder.drain(5.0)
        drained = True

    with anyio.fail_after(5):  # a real-time guard only
        async with anyio.create_task_group() as tg:
            tg.start_soon(recorder.run)
            for name in ("a", "b", "c"):
                recorder.event(make_pod(name).obj(), "Normal", "Scheduled", "Binding", "ok")
            await settle()  # two writes hang in flight, one waits in the queue
            tg.start_soon(drain)
            await settle()
            await advance(clock, 5.0)
            assert drained
            tg.cancel_scope.cancel()

    # The writes cut off by the stop went back to the queue; the drain's own write hung
    # until its deadline: nothing was lost track of, nothing raised.
    assert recorder.pending == 3


async def test_drain_sends_pending_series_counts() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, refresh_interval=30.0)
    pod = make_pod("p").obj()

    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
        await settle()
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit")
        tg.cancel_scope.cancel()
    await recorder.drain()

    assert api.writes == ["POST", "PATCH"]
    (event,) = api.events.values()
    assert event["series"]["count"] == 3


async def test_drain_is_bounded_in_time_when_the_api_hangs() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)
    recorder.event(make_pod("p").obj(), "Normal", "Scheduled", "Binding", "ok")
    api.hang = True

    # A real-time guard only: drain must return as soon as the fake clock passes its bound.
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(recorder.drain, 5.0)
            await settle()
            await advance(clock, 5.0)

    assert len(api.requests) == 1
    assert recorder.pending == 1  # the interrupted write stays queued


async def test_writers_overlap_up_to_their_number_and_none_loses_an_event() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    gate = anyio.Event()
    in_flight = [0, 0]  # now, most at once
    plain = api.request

    async def slow(method: str, path: str, **kw: Any) -> Any:
        in_flight[0] += 1
        in_flight[1] = max(in_flight[1], in_flight[0])
        await gate.wait()
        in_flight[0] -= 1
        return await plain(method, path, **kw)

    api.request = slow  # type: ignore[method-assign]
    recorder = make_recorder(api, clock, writers=4, qps=0.0, burst=0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        for i in range(10):
            recorder.event(make_pod(f"p{i}").obj(), "Normal", "Scheduled", "Binding", "ok")
        await settle()
        assert in_flight == [4, 4]
        gate.set()
        await settle()
        tg.cancel_scope.cancel()
    assert sorted(b["regarding"]["name"] for m, _, b in api.requests if m == "POST") == sorted(
        f"p{i}" for i in range(10)
    )


async def test_a_series_being_written_is_not_queued_again_by_the_refresh() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock, writers=4, refresh_interval=1.0)
    pod = make_pod("p").obj()
    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no")
        await settle()  # created
        api.hang = True
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no")
        await advance(clock, 1.0)  # the PATCH hangs in one writer
        recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", "no")
        await advance(clock, 1.0)  # the next refresh must leave it to that writer
        tg.cancel_scope.cancel()
    assert api.writes == ["POST", "PATCH"]


async def test_an_event_wakes_one_idle_writer_not_all_of_them() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    api.hang = True
    recorder = make_recorder(api, clock, writers=8, qps=0.0, burst=0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.run)
        await settle()
        idle_before = list(recorder._idle)
        assert len(idle_before) == 8
        recorder.event(make_pod("p").obj(), "Normal", "Scheduled", "Binding", "ok")
        await settle()
        # One writer holds the hanging request; the other seven never woke up: they
        # still wait on the very wakeups they registered.
        assert len(api.requests) == 1
        assert sum(w.is_set() for w in idle_before) == 1
        assert list(recorder._idle) == [w for w in idle_before if not w.is_set()]
        tg.cancel_scope.cancel()
    assert not recorder._idle  # cancelled idle writers deregister
