"""The Handle plugins receive: what a plugin may reach of the scheduler, and nothing more.

kube-scheduler keeps framework.Handle (listers, client, clock, waiting pods, nominator,
parallelizer, and the PluginsRunner that preemption uses) apart from frameworkImpl's
Run* methods. So does asched: a plugin gets a `PluginHandle`, never the Framework, so it
cannot run another extension point or reach the scheduler's queue or cache. The few
runner calls preemption needs (Filter with nominated pods, the PreFilter extensions) go
through a `PluginsRunner`, which the Framework implements.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from asched.api import Pod
from asched.api.podgroup import pod_group_name
from asched.base.clock import Clock
from asched.client.protocol import KubeClient
from asched.framework.cycle_state import CycleState
from asched.framework.extenders import HasExtenders, PreemptionExtenders
from asched.framework.handle import EventRecorder, profile_events
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister
from asched.framework.nodeinfo import NodeInfo
from asched.framework.prebinding import PodsInPreBind
from asched.framework.services import PodGroupIndex, SchedulerServices, SchedulingGroupIndex
from asched.framework.status import Status
from asched.framework.waiting import WaitingPods


class PluginsRunner(Protocol):
    """The runtime calls a plugin may make (kube-scheduler framework.PluginsRunner)."""

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None: ...


class PluginHandle:
    """asched.framework.handle.Handle for one profile, delegating to the scheduler."""

    def __init__(
        self,
        profile_name: str,
        services: SchedulerServices,
        waiting: WaitingPods,
        runner: PluginsRunner,
        pre_bind: PodsInPreBind | None = None,
    ) -> None:
        self._profile_name = profile_name
        self._services = services
        self._waiting = waiting
        self._pre_bind = pre_bind or PodsInPreBind()
        self._runner = runner
        # Checked once: isinstance against a runtime Protocol is slow for a per-pod call.
        self._group_index = services if isinstance(services, PodGroupIndex) else None
        self._scheduling_group_index = (
            services if isinstance(services, SchedulingGroupIndex) else None
        )
        self._extenders = services.extenders if isinstance(services, HasExtenders) else None

    @property
    def extenders(self) -> PreemptionExtenders | None:
        """The scheduler's extenders (HasExtenders), None without any."""
        return self._extenders

    @property
    def profile_name(self) -> str:
        return self._profile_name

    @property
    def clock(self) -> Clock:
        return self._services.clock

    @property
    def client(self) -> KubeClient:
        return self._services.client

    @property
    def snapshot(self) -> SnapshotLister:
        return self._services.snapshot

    @property
    def waiting_pods(self) -> WaitingPods:
        return self._waiting

    @property
    def pods_in_pre_bind(self) -> PodsInPreBind:
        return self._pre_bind

    @property
    def events(self) -> EventRecorder:
        """The profile's recorder: its Events name the profile as reportingController."""
        return profile_events(self._services.events, self._profile_name)

    @property
    def parallelism(self) -> int:
        return self._services.parallelism

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        return self._services.store(request)

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return self._services.pods_in_namespace(namespace)

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]:
        if self._group_index is not None:
            return self._group_index.pods_in_group(namespace, name)
        pods = self._services.pods_in_namespace(namespace)
        return [p for p in pods if pod_group_name(p) == name]

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]:
        if self._scheduling_group_index is not None:
            return self._scheduling_group_index.pods_in_scheduling_group(namespace, name)
        pods = self._services.pods_in_namespace(namespace)
        return [p for p in pods if p.scheduling_group == name]

    def scheduling_group_size(self, namespace: str, name: str) -> int:
        if self._scheduling_group_index is not None:
            return self._scheduling_group_index.scheduling_group_size(namespace, name)
        return len(self.pods_in_scheduling_group(namespace, name))

    def scheduled_in_scheduling_group(self, namespace: str, name: str) -> int:
        if self._scheduling_group_index is not None:
            return self._scheduling_group_index.scheduled_in_scheduling_group(namespace, name)
        return sum(1 for p in self.pods_in_scheduling_group(namespace, name) if p.node_name)

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self._services.nominated_pods_for_node(node_name)

    def activate(self, pods: Sequence[Pod]) -> None:
        self._services.activate(pods)

    def unexpected_error(self, component: str) -> None:
        """Count a plugin's bug (asched.base.errors.UnexpectedErrors), if metrics count them."""
        metrics = self._services.metrics
        if metrics is not None:
            metrics.unexpected_error(component)

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        return await self._runner.run_filter_plugins_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._runner.run_pre_filter_extension_add_pod(
            state, pod_to_schedule, pod_to_add, node_info
        )

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._runner.run_pre_filter_extension_remove_pod(
            state, pod_to_schedule, pod_to_remove, node_info
        )
