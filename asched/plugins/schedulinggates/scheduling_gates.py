"""SchedulingGates: keep a pod out of the active queue while it carries scheduling gates.

Mirrors kube-scheduler plugins/schedulinggates: PreEnqueue answers
UnschedulableAndUnresolvable "waiting for scheduling gates: [a b]" (Go's %v of the gate
names, in spec order) while spec.schedulingGates is non-empty; the pod is re-evaluated
when an update to it removes its gates.
"""

from __future__ import annotations

from collections.abc import Sequence

from asched.api import Pod
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.handle import Handle
from asched.framework.interfaces import EnqueueExtensions, PreEnqueuePlugin
from asched.framework.registry import PluginSpec
from asched.framework.status import Status, unresolvable

NAME = "SchedulingGates"


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle

    @property
    def name(self) -> str:
        return NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.scheduling_gates:
            return None
        return unresolvable(
            f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]", plugin=NAME
        )

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.UNSCHEDULED_POD,
                    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
                ),
                self._after_gates_eliminated,
            ),
        )

    def _after_gates_eliminated(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        return QueueingHint.QUEUE


SPEC = PluginSpec(NAME, SchedulingGates, None)
