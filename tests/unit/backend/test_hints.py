"""Queueing hints: pod update classification and the requeue strategy per event."""

from __future__ import annotations

import pytest

from asched.api import Pod
from asched.backend.hints import (
    POD_GATES_ELIMINATED,
    POD_LABEL_CHANGED,
    POD_OTHER_UPDATE,
    POD_SCALED_DOWN,
    POD_TOLERATION_ADDED,
    HintIndex,
    HintMap,
    Strategy,
    pod_update_events,
)
from asched.framework.events import (
    FORCE_ACTIVATE,
    NODE_ADD,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.types import QueuedPodInfo
from tests.builders import PodBuilder, make_pod

PROFILE = "default-scheduler"
NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelUpdate")
NODE_ANY = ClusterEvent(EventResource.NODE, ActionType.ALL, "NodeAll")
PG_ADD = ClusterEvent(EventResource.POD_GROUP, ActionType.ADD, "PodGroupAdd")


def _skip(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


def _boom(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    raise RuntimeError("boom")


HINTS: HintMap = {
    PROFILE: {
        "A": [ClusterEventWithHint(NODE_ADD)],
        "B": [ClusterEventWithHint(NODE_LABEL)],
        "Skipper": [ClusterEventWithHint(NODE_ADD, _skip)],
        "Broken": [ClusterEventWithHint(NODE_ADD, _boom)],
        "Waiter": [ClusterEventWithHint(PG_ADD)],
    }
}


def _qpi(unschedulable: set[str], pending: set[str] | None = None) -> QueuedPodInfo:
    qpi = QueuedPodInfo(pod=make_pod("p").obj(), timestamp=0.0)
    qpi.unschedulable_plugins = set(unschedulable)
    qpi.pending_plugins = set(pending or ())
    return qpi


def _base() -> PodBuilder:
    return make_pod("p").uid("u").cpu("1").memory("1Gi").request("example.com/gpu", "2")


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        pytest.param(_base().label("a", "b"), _base(), [POD_LABEL_CHANGED], id="label"),
        pytest.param(
            make_pod("p").uid("u").cpu("500m").memory("1Gi").request("example.com/gpu", "2"),
            _base(),
            [POD_SCALED_DOWN],
            id="cpu-down",
        ),
        pytest.param(
            make_pod("p").uid("u").cpu("1").memory("1Gi"),
            _base(),
            [POD_SCALED_DOWN],
            id="extended-resource-removed",
        ),
        pytest.param(_base().cpu("2"), _base(), [POD_OTHER_UPDATE], id="scale-up-is-other"),
        pytest.param(_base(), _base().gate("g"), [POD_GATES_ELIMINATED], id="gates-removed"),
        pytest.param(
            _base().gate("g"),
            _base().gate("g").gate("h"),
            [POD_OTHER_UPDATE],
            id="one-of-two-gates-removed",
        ),
        pytest.param(
            _base().toleration("k", "v", "NoSchedule"),
            _base(),
            [POD_TOLERATION_ADDED],
            id="toleration",
        ),
        pytest.param(_base().annotation("x", "y"), _base(), [POD_OTHER_UPDATE], id="other"),
        pytest.param(
            _base().label("a", "b").toleration("k"),
            _base().gate("g"),
            [POD_LABEL_CHANGED, POD_GATES_ELIMINATED, POD_TOLERATION_ADDED],
            id="several",
        ),
    ],
)
def test_pod_update_events(new: PodBuilder, old: PodBuilder, expected: list[ClusterEvent]) -> None:
    assert pod_update_events(old.obj(), new.obj()) == expected


def test_pod_update_without_old_is_other() -> None:
    assert pod_update_events(None, _base().obj()) == [POD_OTHER_UPDATE]


@pytest.mark.parametrize(
    ("unschedulable", "pending", "event", "expected"),
    [
        pytest.param(set(), set(), NODE_LABEL, Strategy.AFTER_BACKOFF, id="no-rejectors"),
        pytest.param({"A"}, set(), NODE_ADD, Strategy.AFTER_BACKOFF, id="registered-no-hint"),
        pytest.param({"A"}, set(), NODE_LABEL, Strategy.SKIP, id="registered-by-other-plugin"),
        pytest.param({"A", "B"}, set(), NODE_LABEL, Strategy.AFTER_BACKOFF, id="one-of-two"),
        pytest.param({"Skipper"}, set(), NODE_ADD, Strategy.SKIP, id="hint-says-skip"),
        pytest.param({"Broken"}, set(), NODE_ADD, Strategy.AFTER_BACKOFF, id="hint-raises"),
        pytest.param(set(), {"Waiter"}, PG_ADD, Strategy.IMMEDIATELY, id="pending-queue"),
        pytest.param(
            {"A"},
            {"Waiter"},
            NODE_ADD,
            Strategy.AFTER_BACKOFF,
            id="unschedulable-queue-with-pending",
        ),
        pytest.param({"A"}, {"Waiter"}, PG_ADD, Strategy.IMMEDIATELY, id="pending-wins"),
        pytest.param({"A"}, set(), NODE_ANY, Strategy.AFTER_BACKOFF, id="broad-incoming-event"),
        pytest.param({"A"}, set(), UNSCHEDULABLE_TIMEOUT, Strategy.AFTER_BACKOFF, id="wildcard"),
    ],
)
def test_strategy(
    unschedulable: set[str], pending: set[str], event: ClusterEvent, expected: Strategy
) -> None:
    assert HintIndex(HINTS).strategy(_qpi(unschedulable, pending), event, None, None) is expected


@pytest.mark.parametrize(
    ("target_self", "expected"),
    [
        pytest.param(True, Strategy.AFTER_BACKOFF, id="aimed-at-this-pod"),
        pytest.param(False, Strategy.SKIP, id="aimed-at-another-pod"),
    ],
)
def test_targeted_wildcard(target_self: bool, expected: Strategy) -> None:
    qpi = _qpi({"A"})
    target = qpi.pod if target_self else make_pod("other").obj()
    assert HintIndex(HINTS).strategy(qpi, FORCE_ACTIVATE, None, target) is expected


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        pytest.param(NODE_ADD, True, id="registered"),
        pytest.param(NODE_ANY, True, id="overlapping-action"),
        pytest.param(
            ClusterEvent(EventResource.NODE, ActionType.DELETE), False, id="not-registered"
        ),
        pytest.param(UNSCHEDULABLE_TIMEOUT, True, id="wildcard"),
    ],
)
def test_of_interest(event: ClusterEvent, expected: bool) -> None:
    assert HintIndex(HINTS).of_interest(event) is expected


def test_for_event_lists_only_matching_plugins() -> None:
    index = HintIndex(HINTS)
    assert set(index.for_event(PROFILE, NODE_ADD)) == {"A", "Skipper", "Broken"}
    assert set(index.for_event(PROFILE, NODE_LABEL)) == {"B"}
    assert set(index.for_event("other-profile", NODE_ADD)) == set()


POD_DELETE = ClusterEvent(EventResource.POD, ActionType.DELETE, "AssignedPodDelete")


def _queue(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    return QueueingHint.QUEUE


@pytest.mark.parametrize(
    ("event", "rejected_by", "expected"),
    [
        # The gate registered the event: every rejector's hint is asked (Fit queues).
        (POD_DELETE, {"Fit"}, Strategy.AFTER_BACKOFF),
        # Only the gate rejected the pod, and its hint always skips.
        (POD_DELETE, set(), Strategy.SKIP),
        # An event the gate did not register never reopens it (GatingPluginEvents).
        (NODE_ADD, {"Fit"}, Strategy.SKIP),
    ],
    ids=["rejector-queues", "gate-alone-skips", "not-the-gates-event"],
)
def test_gated_pod_asks_every_rejector(
    event: ClusterEvent, rejected_by: set[str], expected: Strategy
) -> None:
    """isPodWorthRequeuing for a gated pod: a preemptor held back by DefaultPreemption's
    PreEnqueue (whose AssignedPodDelete hint always skips) is let out by the hint of the
    plugin its preemption was for."""
    index = HintIndex(
        {
            PROFILE: {
                "Preempt": [ClusterEventWithHint(POD_DELETE, _skip)],
                "Fit": [
                    ClusterEventWithHint(POD_DELETE, _queue),
                    ClusterEventWithHint(NODE_ADD, _queue),
                ],
            }
        }
    )
    qpi = QueuedPodInfo(make_pod("p").obj(), 0.0, unschedulable_plugins=rejected_by)
    qpi.gating_plugin = "Preempt"
    assert index.gate_strategy(qpi, event, None, None) == expected


@pytest.mark.parametrize(
    ("rejected_by", "expected"),
    [(set(), Strategy.AFTER_BACKOFF), ({"Fit"}, Strategy.AFTER_BACKOFF)],
    ids=["never-attempted", "rejected-by-its-gate"],
)
def test_gated_pod_whose_gate_queues(rejected_by: set[str], expected: Strategy) -> None:
    """The common gated pod (only its gate to ask) takes a short path with the same answer."""
    index = HintIndex({PROFILE: {"Fit": [ClusterEventWithHint(POD_DELETE, _queue)]}})
    qpi = QueuedPodInfo(make_pod("p").obj(), 0.0, unschedulable_plugins=rejected_by)
    qpi.gating_plugin = "Fit"
    assert index.gate_strategy(qpi, POD_DELETE, None, None) == expected
    assert index.gate_strategy(qpi, NODE_ADD, None, None) == Strategy.SKIP
