"""PodHandler: the PodGroup member index, and which event an assigned pod's update is."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from asched.api import Pod
from asched.backend.cache import Cache
from asched.framework import events as ev
from asched.framework.events import ActionType, ClusterEvent
from asched.scheduler.handlers import PodHandler, assigned_pod_update
from tests.builders import PodBuilder, make_native_pod_group, make_pod


class RecordingQueue:
    def __init__(self) -> None:
        self.moves: list[ClusterEvent] = []
        self.added: list[str] = []
        self.pre_checks: list[Callable[[Pod], bool] | None] = []

    def add(self, pod: Pod) -> None:
        self.added.append(pod.name)

    def update(self, old: Pod, new: Pod) -> None:
        pass

    def delete(self, pod: Pod) -> None:
        pass

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object | None,
        new: object | None,
        *,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> int:
        self.moves.append(event)
        self.pre_checks.append(pre_check)
        return 0


def handler() -> tuple[PodHandler, RecordingQueue]:
    queue = RecordingQueue()
    return PodHandler(Cache(), queue, lambda p: True, lambda p: None, lambda k, e: None), queue


def pod(name: str, group: str = "", ns: str = "ns") -> PodBuilder:
    b = make_pod(name, ns).uid(f"uid-{name}")
    return b.pod_group(group) if group else b


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(
            pod("p").node("n1").cpu("1").phase("Running"),
            ActionType.UPDATE_OTHER,
            id="status-only-is-other",
        ),
        pytest.param(
            pod("p").node("n1").cpu("1").label("k", "v"), ActionType.UPDATE_POD_LABEL, id="label"
        ),
        pytest.param(
            pod("p").node("n1").cpu("500m"), ActionType.UPDATE_POD_SCALE_DOWN, id="scale-down"
        ),
        pytest.param(
            pod("p").node("n1").cpu("500m").label("k", "v"),
            ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_SCALE_DOWN,
            id="label-and-scale-down",
        ),
    ],
)
def test_assigned_pod_update_names_what_changed(new: PodBuilder, want: ActionType) -> None:
    old = pod("p").node("n1").cpu("1").obj()
    event = assigned_pod_update(old, new.obj())
    assert event.action == want
    assert event.label == "AssignedPodUpdate"


def test_status_update_of_assigned_pod_does_not_match_specific_registrations() -> None:
    """kube-scheduler AssignedPodOtherUpdate: a plugin that registered only label or
    scale-down updates (Coscheduling, NodeResourcesFit) is not woken by Pending -> Running."""
    h, queue = handler()
    old = pod("p").node("n1").cpu("1").obj()
    h.on_add(old)
    queue.moves.clear()
    h.on_update(old, pod("p").node("n1").cpu("1").phase("Running").obj())
    [event] = queue.moves
    specific = ClusterEvent(
        ev.EventResource.POD, ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_SCALE_DOWN
    )
    assert not specific.matches(event)
    assert ClusterEvent(ev.EventResource.POD, ActionType.UPDATE).matches(event)


def test_binding_is_an_assigned_pod_add() -> None:
    """kube-scheduler addAssignedPodToCache: the assigned-pod view sees the bound pod arrive."""
    h, queue = handler()
    pending = pod("p").cpu("1").obj()
    h.on_add(pending)
    h.on_update(pending, pod("p").cpu("1").node("n1").obj())
    # The pending pod's own add told the queue first (addPodToSchedulingQueue).
    assert queue.moves == [ev.UNSCHEDULED_POD_ADD, ev.ASSIGNED_POD_ADD]


def test_pending_pod_being_deleted_is_queued() -> None:
    # addPodToSchedulingQueue does not look at deletionTimestamp: the pod is queued, and
    # skipPodSchedule answers it with "skip schedule deleting pod" when it is popped.
    h, queue = handler()
    h.on_add(dataclasses.replace(pod("going").obj(), deletion_timestamp=1.0))
    assert queue.added == ["going"]


def test_nomination_change_and_nominated_delete_wake_lower_or_equal_priority_pods() -> None:
    # updatePodInSchedulingQueue / deletePodFromSchedulingQueue: AssignedPodDelete for
    # the old nominated node, with getLEPriorityPreCheck.
    h, queue = handler()
    old = pod("pre").priority(100).nominated("n1").obj()
    h.on_add(old)
    h.on_update(old, pod("pre").priority(100).nominated("n2").obj())
    assert [m.label for m in queue.moves] == ["UnscheduledPodAdd", "AssignedPodDelete"]
    check = queue.pre_checks[-1]
    assert check is not None
    assert check(pod("low").priority(10).obj())
    assert check(pod("same").priority(100).obj())
    assert not check(pod("high").priority(1000).obj())
    h.on_delete(pod("pre").priority(100).nominated("n2").obj())
    assert [m.label for m in queue.moves] == [
        "UnscheduledPodAdd",
        "AssignedPodDelete",
        "AssignedPodDelete",
    ]
    assert queue.pre_checks[-1] is not None
    # No nomination, no event.
    h.on_update(pod("x").obj(), pod("x").label("k", "v").obj())
    h.on_delete(pod("x").obj())
    assert len(queue.moves) == 3


def test_an_object_that_does_not_decode_is_reported_with_its_field() -> None:
    from asched.api import DecodeError
    from asched.api.workload import decode_native_podgroup
    from asched.framework.events import EventResource
    from asched.scheduler.handlers import ResourceHandler

    raw = make_native_pod_group("g", "ns").raw()
    raw["spec"]["schedulingPolicy"] = {"gang": {"minCount": 0}}
    with pytest.raises(DecodeError) as info:
        decode_native_podgroup(raw)
    seen: list[tuple[str, str, str]] = []
    h = ResourceHandler(
        EventResource.SCHEDULING_POD_GROUP,
        lambda: None,  # type: ignore[arg-type,return-value]
        lambda key, err: seen.append((key, err.kind, err.field)),
    )
    h.on_decode_error("ns/g", info.value)
    assert seen == [("ns/g", "PodGroup", "spec.schedulingPolicy.gang.minCount")]
