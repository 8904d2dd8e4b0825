"""InFlight: which events each in-flight pod saw, and pruning of the event log."""

from __future__ import annotations

from asched.backend.inflight import InFlight
from asched.framework.events import NODE_ADD, NODE_DELETE
from tests.builders import make_pod


def test_events_are_seen_only_by_pods_popped_before_them() -> None:
    flights = InFlight()
    a, b = make_pod("a").obj(), make_pod("b").obj()
    assert flights.record(NODE_ADD, None, None) is False  # nobody in flight: not logged
    flights.start(a)
    flights.record(NODE_ADD, None, "n1")
    flights.start(b)
    flights.record(NODE_DELETE, "n2", None)
    seen_a = flights.events_since_pop(a.uid)
    seen_b = flights.events_since_pop(b.uid)
    assert seen_a is not None
    assert seen_b is not None
    assert [e.event for e in seen_a] == [NODE_ADD, NODE_DELETE]
    assert [(e.event, e.old) for e in seen_b] == [(NODE_DELETE, "n2")]
    assert flights.events_since_pop("unknown") is None


def test_done_prunes_events_no_flight_needs() -> None:
    flights = InFlight()
    a, b = make_pod("a").obj(), make_pod("b").obj()
    flights.start(a)
    flights.record(NODE_ADD, None, None)
    flights.start(b)
    flights.record(NODE_DELETE, None, None)
    flights.done(b.uid)
    assert flights.logged_events == 2  # a still needs both
    flights.start(b)
    flights.done(a.uid)
    assert flights.logged_events == 0  # b was re-popped after both
    flights.done(b.uid)
    assert (len(flights), flights.logged_events) == (0, 0)


def test_start_twice_is_refused_and_versions_are_remembered() -> None:
    flights = InFlight()
    pod = make_pod("p").obj()
    assert flights.start(pod) is True
    assert flights.start(pod) is False
    newer = make_pod("p").uid(pod.uid).label("v", "2").obj()
    flights.remember_update(pod.uid, newer)
    assert flights.latest(pod.uid) == (newer, False)
    flights.remember_delete(pod.uid)
    assert flights.latest(pod.uid) == (newer, True)
