"""What a plugin may use of the scheduler: the Handle (kube-scheduler framework.Handle).

Plugins get a Handle at construction. It is a Protocol so plugins depend on the contract,
not on the scheduler, and unit tests can build a small one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from asched.api import Pod
from asched.base.clock import Clock
from asched.client.protocol import KubeClient
from asched.framework.cycle_state import CycleState
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister
from asched.framework.nodeinfo import NodeInfo
from asched.framework.prebinding import PodsInPreBind
from asched.framework.status import Status
from asched.framework.waiting import WaitingPods


class EventRecorder(Protocol):
    def event(
        self,
        regarding: Any,
        event_type: str,
        reason: str,
        action: str,
        message: str,
    ) -> None:
        """Record an event about `regarding` (a Pod, or an ObjectRef); never blocks."""
        ...


@runtime_checkable
class ControllerRecorders(Protocol):
    """Optional: an EventRecorder that records as another reporting controller.

    kube-scheduler gives each profile a recorder whose Events name the profile's
    schedulerName as reportingController; asched.recorder.EventRecorder has this."""

    def for_controller(self, controller: str) -> EventRecorder:
        """This recorder, reporting as `controller`."""
        ...


def profile_events(events: EventRecorder, profile: str) -> EventRecorder:
    """`events` as the recorder of one profile, when it can be one."""
    return events.for_controller(profile) if isinstance(events, ControllerRecorders) else events


class Handle(Protocol):
    """What a plugin may use of the scheduler (kube-scheduler framework.Handle), given at
    construction. Everything here is read on the event loop; the lists and objects it
    returns are shared with the scheduler and must not be mutated."""

    @property
    def profile_name(self) -> str:
        """The schedulerName of the plugin's profile."""
        ...

    @property
    def clock(self) -> Clock:
        """The scheduler's clock: use it, never time.* directly, so tests can move it."""
        ...

    @property
    def client(self) -> KubeClient:
        """The API client, for PreBind, Bind, PostFilter and background tasks; never
        awaited in the scheduling cycle's synchronous points."""
        ...

    @property
    def snapshot(self) -> SnapshotLister:
        """The current cycle's snapshot (valid during a scheduling cycle)."""
        ...

    @property
    def waiting_pods(self) -> WaitingPods:
        """The profile's pods parked at Permit (Wait): allow or reject them here."""
        ...

    @property
    def pods_in_pre_bind(self) -> PodsInPreBind:
        """Pods whose PreBind runs now; preemption may cancel them (CancelPod)."""
        ...

    @property
    def events(self) -> EventRecorder:
        """Records Kubernetes Events as the profile's scheduler."""
        ...

    @property
    def parallelism(self) -> int:
        """The configured parallelism: how many API calls a plugin may have in flight at
        once (preemption evicts that many victims at a time)."""
        ...

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        """The cache of a resource a plugin asked for in `informers()`."""
        ...

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        """All known pods of a namespace, assigned or not (informer view)."""
        ...

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]:
        """The pods of `namespace` in PodGroup `name` (asched.api.podgroup.pod_group_name),
        assigned, assumed or pending, like `pods_in_namespace`; indexed, not scanned."""
        ...

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]:
        """The pods of `namespace` whose spec.schedulingGroup names the native PodGroup
        `name`, with assumed placements, like `pods_in_group`."""
        ...

    def scheduling_group_size(self, namespace: str, name: str) -> int:
        """len(pods_in_scheduling_group(...)) without building the list (GangScheduling's
        PreEnqueue asks it for every new member; kube-scheduler's AllPodsCount)."""
        ...

    def scheduled_in_scheduling_group(self, namespace: str, name: str) -> int:
        """How many of those pods are on a node, bound or assumed, without listing them
        (GangScheduling's Permit asks it for every member; ScheduledPodsCount)."""
        ...

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        """The pods preemption nominated to `node_name`, not yet bound."""
        ...

    def activate(self, pods: Sequence[Pod]) -> None:
        """Move these pods from backoff or the unschedulable pool to the active queue."""
        ...

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """The profile's Filter plugins on one node, counting its nominated pods as
        kube-scheduler does (for preemption's dry runs; RunFilterPluginsWithNominatedPods)."""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Every PreFilter plugin's AddPod (those not skipped for the pod), on `state`."""
        ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Every PreFilter plugin's RemovePod (those not skipped for the pod), on `state`."""
        ...
